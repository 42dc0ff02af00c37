"""The client on a user's own device (ldpsample.publish.device): the spec read with the standard
library equals read_spec's, and each user's draws equal release_items' for the same uniforms."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from ldpsample.events import PrivacyAuditError
from ldpsample.publish import (
    ReleaseSpec,
    SeededUniforms,
    SpecError,
    read_device_spec,
    read_spec,
    release_items,
    release_on_device,
    write_spec,
)
from ldpsample.publish.client import RELEASED_SCHEMA
from ldpsample.publish.spec import DOMAIN_SCHEMA


def _domain(rng: np.random.Generator) -> pl.DataFrame:
    """Two subcategories of country with a skewed prior each (ascending q, as a spec stores)."""
    frames = []
    for subcategory, n in (("de", 7), ("fr", 4)):
        q = np.sort(rng.dirichlet(np.full(n, 0.5)))
        frames.append(
            pl.DataFrame(
                {
                    "attribute": "country",
                    "subcategory": subcategory,
                    "position": np.arange(n, dtype=np.int64),
                    "item": [f"{subcategory}-item,{i}" for i in range(n)],  # a comma: quoted
                    "q": q,
                },
                schema=DOMAIN_SCHEMA,
            )
        )
    return pl.concat(frames)


def _spec(tmp_path, *, attributes_public=False, samples=2):
    spec = ReleaseSpec(
        name="demo",
        attributes=("country",),
        domain=_domain(np.random.default_rng(4)),
        epsilons=(0.5, 2.0),
        samples=samples,
        attributes_public=attributes_public,
        seeded=True,
    )
    folder = tmp_path / "spec"
    write_spec(spec, folder)
    return folder


def _histograms(n_users: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        for subcategory, n in (("de", 7), ("fr", 4)):
            if rng.random() < 0.4:
                continue  # no data here: p := q (or no draw with public attributes)
            for i in rng.choice(n + 1, size=rng.integers(1, 4), replace=False):
                item = f"{subcategory}-item,{i}" if i < n else "elsewhere"  # outside the domain
                rows.append((f"u{u}", "country", subcategory, item, float(rng.integers(1, 5))))
    return pl.DataFrame(
        rows, schema=["user", "attribute", "subcategory", "item", "count"], orient="row"
    )


def release_on_devices(device, hist: pl.DataFrame, *, users, seed: int) -> pl.DataFrame:
    """Every user of ``users`` releases on its own device from its rows of ``hist`` (summed per
    item) with ``SeededUniforms(seed)``: the rows of all, as release_items' frame is sorted."""
    got = []
    for user in users:
        counts: dict[tuple[str, str], dict[str, float]] = {}
        for row in hist.filter(pl.col("user") == user).iter_rows(named=True):
            cell = counts.setdefault((row["attribute"], row["subcategory"]), {})
            cell[row["item"]] = cell.get(row["item"], 0.0) + row["count"]
        got += release_on_device(device, counts, user=user, uniforms=SeededUniforms(seed))
    return pl.DataFrame(got, schema=RELEASED_SCHEMA).sort(
        "epsilon", "attribute", "subcategory", "user", "sample"
    )


def test_device_spec_equals_read_spec(tmp_path):
    folder = _spec(tmp_path)
    full, light = read_spec(folder), read_device_spec(folder)
    assert light.name == full.name and light.epsilons == full.epsilons
    assert light.samples == full.samples and light.seeded and light.budget_bound == 10.0
    assert light.budget_bound == full.budget_bound
    assert list(light.domains) == full.subcategories
    for key, (items, q) in light.domains.items():
        want_items, want_q = full.prior_of(*key)
        assert list(items) == want_items.to_list()
        assert np.array_equal(q, want_q)  # the CSV's text parsed to the same float64 bits


@pytest.mark.parametrize("attributes_public", [False, True])
def test_each_users_draws_on_device_equal_release_items(tmp_path, attributes_public):
    folder = _spec(tmp_path, attributes_public=attributes_public)
    hist = _histograms(40, seed=2)
    want = release_items(read_spec(folder), hist, uniforms=SeededUniforms(9)).released
    users = sorted(set(hist["user"]))
    got_frame = release_on_devices(read_device_spec(folder), hist, users=users, seed=9)
    assert got_frame.height == want.height > 0
    assert got_frame.equals(want)


def test_a_user_without_data_draws_from_q_everywhere_when_membership_is_hidden(tmp_path):
    light = read_device_spec(_spec(tmp_path, samples=1))
    rows = release_on_device(light, {}, user="nobody", uniforms=SeededUniforms(1))
    assert [(r["epsilon"], r["subcategory"]) for r in rows] == [
        (0.5, "de"),
        (0.5, "fr"),
        (2.0, "de"),
        (2.0, "fr"),
    ]
    public = read_device_spec(_spec(tmp_path / "public", attributes_public=True))
    assert release_on_device(public, {}, user="nobody", uniforms=SeededUniforms(1)) == []


def test_a_changed_domain_or_format_is_refused_with_the_file_named(tmp_path):
    folder = _spec(tmp_path)
    domain = folder / "domain.csv"
    domain.write_text(domain.read_text().replace("de-item", "xx-item", 1))
    with pytest.raises(SpecError, match=r"domain\.csv: sha256 differs from the one in"):
        read_device_spec(folder)
    with pytest.raises(SpecError, match=r"domain\.csv: sha256 differs from the one in"):
        read_spec(folder)  # one error class and message for both readers
    manifest = folder / "manifest.json"
    content = json.loads(manifest.read_text())
    content["format"] = "something-else/9"
    manifest.write_text(json.dumps(content))
    with pytest.raises(SpecError, match="format 'something-else/9' is not"):
        read_device_spec(folder)
    with pytest.raises(SpecError, match="release spec not found"):
        read_device_spec(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("count", "error"),
    [(-1.0, ValueError), (float("nan"), ValueError), (np.inf, ValueError), ("3", TypeError)],
)
def test_a_bad_count_names_the_subcategory_and_item(tmp_path, count, error):
    light = read_device_spec(_spec(tmp_path))
    with pytest.raises(error, match=r"counts\[\('country', 'de'\)\]\['de-item,1'\]"):
        release_on_device(
            light, {("country", "de"): {"de-item,1": count}}, user="u", uniforms=SeededUniforms(1)
        )


def test_numpy_counts_are_numbers(tmp_path):
    light = read_device_spec(_spec(tmp_path))
    counts = {("country", "de"): {"de-item,1": np.int64(2), "de-item,3": np.float32(1.5)}}
    as_numpy = release_on_device(light, counts, user="u", uniforms=SeededUniforms(3))
    plain = {("country", "de"): {"de-item,1": 2, "de-item,3": 1.5}}
    assert as_numpy == release_on_device(light, plain, user="u", uniforms=SeededUniforms(3))


def test_a_broken_kernel_is_caught_by_the_same_audit(tmp_path, monkeypatch):
    """The device path audits the kernel it draws from: a leaky one (RR at 2ε) releases nothing."""
    from ldpsample import minimax_coefficients
    from ldpsample.events.scoring import release_kernel as release_module

    light = read_device_spec(_spec(tmp_path))
    honest = release_on_device(light, {}, user="u", uniforms=SeededUniforms(1))
    assert len(honest) == 8

    def leaky(q, *, epsilon):
        return minimax_coefficients(q, epsilon=2 * epsilon)

    monkeypatch.setattr(release_module, "minimax_release_kernel", leaky)
    with pytest.raises(PrivacyAuditError, match="privacy audit FAILED for release of demo"):
        release_on_device(light, {}, user="u", uniforms=SeededUniforms(1))
