"""A publication folder made by the real library client (build_spec, publish_release with
seeded uniforms), for the estimation tests: publish/spec/ and publish/released/ as the workflow
writes them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from ldpsample.publish import SeededUniforms, build_spec, publish_release, write_spec

ITEMS = [f"i{k}" for k in range(8)]


def public_table(path: Path, *, countries=("de", "fr"), seed=1) -> dict:
    """A public prior table: every item in every country, Zipf-like masses."""
    rng = np.random.default_rng(seed)
    rows = [
        (f"p{c}{k}", item, float(rng.integers(1, 4) * 60 / (k + 1)), country)
        for c, country in enumerate(countries)
        for k, item in enumerate(ITEMS)
    ]
    pl.DataFrame(rows, schema=["user", "item", "n", "country"], orient="row").write_parquet(path)
    return {
        "path": str(path),
        "user": "user",
        "item": "item",
        "count": "n",
        "attributes": ["country"],
    }


def private_histograms(users: int, *, seed: int = 0, countries=("de", "fr")) -> pl.DataFrame:
    """Users in one country each, skewed towards the first items; a tenth without data."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(users):
        if u % 10 == 9:
            continue
        country = countries[u % len(countries)]
        for item in rng.choice(len(ITEMS), size=rng.integers(1, 4), p=_skew()):
            rows.append((f"u{u:04d}", "country", country, ITEMS[item], float(rng.integers(1, 5))))
    return (
        pl.DataFrame(
            rows, schema=["user", "attribute", "subcategory", "item", "count"], orient="row"
        )
        .group_by("user", "attribute", "subcategory", "item")
        .agg(pl.col("count").sum())
        .sort("user", "attribute", "subcategory", "item")
    )


def _skew() -> np.ndarray:
    w = np.array([8, 6, 1, 1, 1, 1, 1, 1], dtype=float)
    return w / w.sum()


def make_publication(
    folder: Path,
    *,
    users: int = 400,
    epsilons=(1.0, 4.0),
    samples: int = 1,
    seed: int = 3,
    prior: str | dict | None = None,
    items: list[str] | None = None,
    extra_rows: list[tuple] = (),
    release_mode: str | None = None,
) -> tuple[Path, pl.DataFrame, list[str]]:
    """Release ``users`` users; return the publish/ folder, the private histograms and the
    roster. ``prior``: a public table by default, or "uniform" (every item, q uniform);
    ``items``: the domain (default: the prior's); ``extra_rows``: histogram rows added;
    ``release_mode``: as :func:`ldpsample.publish.build_spec`'s."""
    folder.mkdir(parents=True, exist_ok=True)
    if prior is None:
        prior = public_table(folder / "public.parquet")
    options = (
        {"items": ITEMS, "subcategories": {"country": ["de", "fr"]}} if prior == "uniform" else {}
    )
    if items is not None:
        options["items"] = items
    spec = build_spec(
        name="t",
        key="events.t",
        attributes=["country"],
        prior=prior,
        epsilons=list(epsilons),
        samples=samples,
        seeded=True,
        release_mode=release_mode,
        **options,
    )
    publish = folder / "publish"
    write_spec(spec, folder / "work" / "spec")
    hist = private_histograms(users)
    if extra_rows:
        hist = pl.concat([hist, pl.DataFrame(list(extra_rows), schema=hist.schema, orient="row")])
    roster = [f"u{u:04d}" for u in range(users)]
    publish_release(
        spec,
        hist,
        spec_folder=folder / "work" / "spec",
        uniforms=SeededUniforms(seed),
        ledger=folder / "privacy" / "ledger.sqlite",
        budget=None,
        key="events.t",
        folder=publish,
        users=roster,
        project=folder,
    )
    return publish, hist, roster
