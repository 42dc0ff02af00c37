"""The public half of a release: its *spec*, built from public inputs only.

A spec fixes everything a user's client needs to privatise its own data, and nothing that
depends on any user's data: per subcategory the item domain in full and in order, the prior
``q`` on it, the ε values, the samples per ε, the smoothing, whether subcategory membership is
declared public, and where every part came from (a public table and its sha256, a list in the
config, the uniform prior, an earlier spec). Because no private table is read, adding, changing
or removing private users leaves the spec byte-identical, and a spec can be reused to release
new users later (``prior: {spec: <folder>}``).

On disk a spec is a folder of two files: ``domain.csv`` (``attribute, subcategory, position,
item, q``; within a subcategory the items in ascending ``q``, ties by item text, which is also
the minimax kernel's sorted order) and ``manifest.json`` (everything else, with the sha256 of
``domain.csv``). The spec's identity is the sha256 of ``manifest.json``
(:func:`spec_sha256`), which the ledger records with every draw.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from ldpsample import __version__
from ldpsample.events.histograms import ALL, public_prior_masses
from ldpsample.pipeline.io import write_json, write_text

__all__ = [
    "DOMAIN_FILE",
    "DOMAIN_SCHEMA",
    "MANIFEST_FILE",
    "SPEC_FORMAT",
    "ReleaseSpec",
    "SpecError",
    "build_spec",
    "file_sha256",
    "read_spec",
    "spec_sha256",
    "write_spec",
]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

SPEC_FORMAT = "ldpsample-release-spec/1"
DOMAIN_FILE = "domain.csv"
MANIFEST_FILE = "manifest.json"
#: Columns of ``domain.csv``: one row per (subcategory, item), the items of a subcategory in
#: their position order (ascending q, ties by item text).
DOMAIN_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "position": pl.Int64(),
    "item": pl.String(),
    "q": pl.Float64(),
}
MECHANISM = (
    "minimax-optimal epsilon-LDP sampler K_{q,epsilon} with qK = q (Zamanlooy, Diaz & Asoodeh, "
    "Locally Private Sampling with Public Data, AISTATS 2025, Algorithm 1): a user with "
    "histogram p over a subcategory's domain releases one item drawn from pK per sample and "
    "epsilon; a user with no data there releases a draw from qK = q"
)
MEMBERSHIP_HIDDEN = (
    "hidden: every user of the table releases in every subcategory of this spec (p := q where "
    "the user has no data there), so the released rows reveal only that the user is in the table"
)
MEMBERSHIP_PUBLIC = (
    "public (attributes_public: true): a user releases only in the subcategories where it has "
    "data, so the released rows disclose each user's subcategories"
)


class SpecError(ValueError):
    """A spec cannot be built or read; the first line names the config key or file."""


@dataclass(frozen=True)
class ReleaseSpec:
    """A release's public mechanism (see the module docstring).

    Attributes
    ----------
    name
        The events table's name (``events.<name>``).
    attributes
        Attribute names in order (``("all",)`` for a table without attributes).
    domain
        :data:`DOMAIN_SCHEMA` rows, sorted by attribute, subcategory, position.
    epsilons
        ε values, ascending; every draw at each.
    samples
        Draws per (user, subcategory, ε).
    prior_smoothing
        α of ``q = (1 - α) q_public + α / n`` (already applied to ``domain``'s q).
    attributes_public
        Whether subcategory membership is declared public.
    participation
        Participation rule on users' own data (``min_user_count``...), only with public
        attributes; None when every user releases.
    seeded
        True when the draws come from a ``release_seed`` (reproducible: not for publication).
    provenance
        Where the prior, items and subcategories came from.
    """

    name: str
    attributes: tuple[str, ...]
    domain: pl.DataFrame
    epsilons: tuple[float, ...]
    samples: int = 1
    prior_smoothing: float = 0.0
    attributes_public: bool = False
    participation: Mapping[str, Any] | None = None
    seeded: bool = False
    provenance: Mapping[str, Any] = field(default_factory=dict)

    @property
    def subcategories(self) -> list[tuple[str, str]]:
        """``(attribute, subcategory)`` of every subcategory, in spec order."""
        keys = self.domain.select("attribute", "subcategory").unique(maintain_order=True)
        return list(keys.iter_rows())

    def prior_of(self, attribute: str, subcategory: str) -> tuple[pl.Series, NDArray[np.float64]]:
        """The domain's items (in position order) and ``q`` of one subcategory."""
        rows = self.domain.filter(
            (pl.col("attribute") == attribute) & (pl.col("subcategory") == subcategory)
        )
        if rows.height == 0:
            raise KeyError(f"no subcategory {attribute}={subcategory!r} in spec {self.name!r}")
        return rows["item"], rows["q"].to_numpy()

    @property
    def budget_bound(self) -> float:
        """The most ε one run of this spec costs any user: subcategories × Σε × samples (every
        user's draws, in every subcategory, at every ε, each ``samples`` times)."""
        return len(self.subcategories) * float(sum(self.epsilons)) * self.samples

    def manifest(self) -> dict[str, Any]:
        """The manifest's content without the domain file's checksum (:func:`write_spec` adds
        it)."""
        return {
            "format": SPEC_FORMAT,
            "name": self.name,
            "mechanism": MECHANISM,
            "ldpsample": __version__,
            "attributes": list(self.attributes),
            "subcategories": len(self.subcategories),
            "items": self.domain.height,
            "epsilons": [float(e) for e in self.epsilons],
            "samples": int(self.samples),
            "prior_smoothing": float(self.prior_smoothing),
            "epsilon_per_user_per_release": self.budget_bound,
            "attributes_public": bool(self.attributes_public),
            "membership": MEMBERSHIP_PUBLIC if self.attributes_public else MEMBERSHIP_HIDDEN,
            "participation": None if self.participation is None else dict(self.participation),
            "randomness": (
                {
                    "source": "release_seed",
                    "publishable": False,
                    "note": "reproducible, not for publication: whoever knows the seed "
                    "recomputes every draw",
                }
                if self.seeded
                else {
                    "source": "os.urandom (the operating system's secure source), never stored",
                    "publishable": True,
                }
            ),
            "provenance": dict(self.provenance),
        }


def file_sha256(path: PathLike) -> str:
    """sha256 of a file's bytes (hex), read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _manifest_path(path: PathLike) -> Path:
    path = Path(path)
    return path / MANIFEST_FILE if path.is_dir() or path.suffix != ".json" else path


def spec_sha256(path: PathLike) -> str:
    """The spec's identity: sha256 of its ``manifest.json`` (``path``: the folder or file)."""
    return file_sha256(_manifest_path(path))


def write_spec(spec: ReleaseSpec, folder: PathLike) -> str:
    """Write ``domain.csv`` and ``manifest.json`` into ``folder`` (each atomically, the domain
    first); return the spec's sha256. Equal specs give byte-identical files."""
    folder = Path(folder)
    domain_text = spec.domain.select(list(DOMAIN_SCHEMA)).write_csv()
    write_text(domain_text, folder / DOMAIN_FILE)
    manifest = spec.manifest()
    manifest["domain"] = {
        "file": DOMAIN_FILE,
        "columns": list(DOMAIN_SCHEMA),
        "sha256": hashlib.sha256(domain_text.encode("utf-8")).hexdigest(),
    }
    write_json(manifest, folder / MANIFEST_FILE)
    return spec_sha256(folder)


def read_spec(path: PathLike) -> ReleaseSpec:
    """A spec written by :func:`write_spec` (``path``: its folder or ``manifest.json``).

    Raises
    ------
    SpecError
        If a file is missing, the domain's sha256 differs from the manifest's, or the format
        is unknown.
    """
    manifest_path = _manifest_path(path)
    if not manifest_path.is_file():
        raise SpecError(f"{manifest_path}: release spec not found (no {MANIFEST_FILE})")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if manifest.get("format") != SPEC_FORMAT:
        raise SpecError(
            f"{manifest_path}: format {manifest.get('format')!r} is not {SPEC_FORMAT!r}"
        )
    domain_path = manifest_path.parent / manifest["domain"]["file"]
    if not domain_path.is_file():
        raise SpecError(f"{domain_path}: the spec's domain file is missing")
    if file_sha256(domain_path) != manifest["domain"]["sha256"]:
        raise SpecError(
            f"{domain_path}: sha256 differs from the one in {manifest_path} (the spec was "
            "changed after it was written)"
        )
    domain = pl.read_csv(domain_path, schema=DOMAIN_SCHEMA)
    return ReleaseSpec(
        name=manifest["name"],
        attributes=tuple(manifest["attributes"]),
        domain=domain,
        epsilons=tuple(float(e) for e in manifest["epsilons"]),
        samples=int(manifest["samples"]),
        prior_smoothing=float(manifest["prior_smoothing"]),
        attributes_public=bool(manifest["attributes_public"]),
        participation=manifest["participation"],
        seeded=not manifest["randomness"]["publishable"],
        provenance=manifest["provenance"],
    )


def _ordered_domain(
    frame: pl.DataFrame, prior_smoothing: float, *, normalise: bool = True
) -> pl.DataFrame:
    """``(attribute, subcategory, item, mass)`` -> :data:`DOMAIN_SCHEMA`: q normalised per
    subcategory (unless ``normalise`` is False: a reused spec's q, kept bit for bit), mixed with
    the uniform by ``prior_smoothing``, items in ascending q (ties by item text) with their
    positions."""
    by = ["attribute", "subcategory"]
    n = pl.len().over(by)
    q = pl.col("mass") / pl.col("mass").sum().over(by) if normalise else pl.col("mass")
    if prior_smoothing:
        q = (1.0 - prior_smoothing) * q + prior_smoothing / n
    return (
        frame.with_columns(q.alias("q"))
        .sort([*by, "q", "item"])
        .with_columns(pl.int_range(pl.len()).over(by).cast(pl.Int64).alias("position"))
        .select(list(DOMAIN_SCHEMA))
        .cast(DOMAIN_SCHEMA)
    )


def build_spec(
    *,
    name: str,
    key: str,
    attributes: Sequence[str],
    prior: str | Mapping[str, Any],
    epsilons: Sequence[float],
    items: Sequence[Any] | None = None,
    top_items: int | None = None,
    subcategories: Mapping[str, Sequence[Any]] | None = None,
    samples: int = 1,
    prior_smoothing: float = 0.0,
    attributes_public: bool = False,
    participation: Mapping[str, Any] | None = None,
    seeded: bool = False,
) -> ReleaseSpec:
    """A release's spec from public inputs only (no private table is read).

    Parameters
    ----------
    name, key
        The table's name and its config key ``events.<name>`` (named in errors).
    attributes
        Attribute columns; none makes one subcategory ``"all"`` of attribute ``"all"``.
    prior
        ``"uniform"``; a public table ``{path, user, item, count, attributes}`` whose pooled
        counts per subcategory are ``q``; or ``{spec: <folder or manifest.json>}``, an earlier
        spec whose domain and ``q`` are reused.
    epsilons, samples
        ε values and draws per (user, subcategory, ε).
    items
        The item domain of every subcategory, in full (q may be 0 on some: never released).
        None: the public table's items of each subcategory (its ``top_items`` by public count,
        ties by item text, or all), or the reused spec's.
    top_items
        With a public table and no ``items``: keep its most frequent items per subcategory.
    subcategories
        Attribute -> its released subcategory values (required with the uniform prior and
        attributes; with a public table or a spec it restricts theirs).
    prior_smoothing
        α in ``[0, 1]``: ``q = (1 - α) q + α / n`` (α > 0 gives every item mass).
    attributes_public, participation, seeded
        Recorded in the manifest (see :class:`ReleaseSpec`).

    Raises
    ------
    SpecError
        Naming the config key: a domain that is not public (uniform prior without ``items``),
        a listed subcategory absent from the public table, a subcategory without public mass
        on its items, a reused spec for other attributes.
    """
    names = list(attributes) or [ALL]
    eps = tuple(sorted(float(e) for e in epsilons))
    wanted = {str(a): [str(v) for v in values] for a, values in (subcategories or {}).items()}
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        raise SpecError(
            f"config key {key}.subcategories: {unknown} are not attributes of the table "
            f"({list(attributes)})"
        )
    provenance: dict[str, Any] = {
        "epsilons": "config",
        "samples": "config",
        "prior_smoothing": "config",
    }
    item_list = None if items is None else sorted({str(i) for i in items})
    reused = isinstance(prior, Mapping) and "spec" in prior
    if reused:
        frame = _reused_domain(prior["spec"], key=key, names=names)
        provenance["prior"] = {
            "kind": "spec",
            "path": str(prior["spec"]),
            "sha256": spec_sha256(prior["spec"]),
        }
        if item_list is not None:
            raise SpecError(
                f"config key {key}.items: a reused spec fixes the domain (prior: {{spec: ...}}); "
                "set items: null"
            )
        provenance["items"] = {"kind": "spec"}
        provenance["subcategories"] = {"kind": "config" if wanted else "spec"}
    elif isinstance(prior, Mapping):
        frame = _public_table_domain(
            prior, key=key, attributes=list(attributes), items=item_list, top_items=top_items
        )
        provenance["prior"] = {
            "kind": "public table",
            "path": str(prior["path"]),
            "sha256": file_sha256(prior["path"]),
            "columns": {k: prior.get(k) for k in ("user", "item", "count", "attributes")},
        }
        provenance["items"] = (
            {"kind": "config", "values": len(item_list)}
            if item_list is not None
            else {"kind": "public table", "top_items": top_items, "ranked_by": "public count"}
        )
        provenance["subcategories"] = {"kind": "config" if wanted else "public table"}
    elif prior == "uniform":
        if item_list is None:
            raise SpecError(
                f"config key {key}.items: the item domain of a release must be public: list "
                "the items, or give a public prior table (prior: {path: ...})"
            )
        missing = [a for a in names if a != ALL and a not in wanted]
        if missing:
            raise SpecError(
                f"config key {key}.subcategories: the released subcategories must be public: "
                f"list the values of {missing} (subcategories: {{{missing[0]}: [...]}}), or "
                "give a public prior table (prior: {path: ...})"
            )
        frame = pl.DataFrame(
            [
                (attribute, sub, item, 1.0)
                for attribute in names
                for sub in (wanted.get(attribute) or [ALL])
                for item in item_list
            ],
            schema={
                "attribute": pl.String(),
                "subcategory": pl.String(),
                "item": pl.String(),
                "mass": pl.Float64(),
            },
            orient="row",
        )
        provenance["prior"] = {"kind": "uniform"}
        provenance["items"] = {"kind": "config", "values": len(item_list)}
        provenance["subcategories"] = {"kind": "config" if wanted else "none (attributes: [])"}
    else:
        raise SpecError(
            f"config key {key}.prior: {prior!r} is computed from the users being released; a "
            "release needs a public prior: uniform (with items), a public table "
            "{path, user, item, count, attributes} or an earlier spec {spec: <folder>}"
        )
    frame = _restrict_subcategories(frame, wanted, key=key)
    mass = frame.group_by("attribute", "subcategory").agg(pl.col("mass").sum())
    empty = mass.filter(~(pl.col("mass") > 0)).sort("attribute", "subcategory")
    if empty.height:
        attribute, sub, _ = empty.row(0)
        raise SpecError(
            f"config key {key}.prior: subcategory {attribute}={sub!r} has no public mass on its "
            f"items ({empty.height} such subcategories); list other items or drop it"
        )
    domain = _ordered_domain(frame, prior_smoothing, normalise=not reused)
    zero = domain.filter(pl.col("q") == 0).height
    if zero:
        log.warning(
            "%s: %d items of the spec have q = 0 and are never released; users holding mass "
            "there are counted in the release report (%s.prior_smoothing > 0 gives them mass)",
            key,
            zero,
            key,
        )
    return ReleaseSpec(
        name=name,
        attributes=tuple(names),
        domain=domain,
        epsilons=eps,
        samples=int(samples),
        prior_smoothing=float(prior_smoothing),
        attributes_public=bool(attributes_public),
        participation=None if participation is None else dict(participation),
        seeded=bool(seeded),
        provenance=provenance,
    )


def _public_table_domain(
    prior: Mapping[str, Any],
    *,
    key: str,
    attributes: list[str],
    items: list[str] | None,
    top_items: int | None,
) -> pl.DataFrame:
    """``(attribute, subcategory, item, mass)`` of a public table."""
    masses = pl.collect_all(public_prior_masses(prior, key=key, attributes=attributes, items=items))
    frames = []
    for name, frame in zip(attributes or [ALL], masses, strict=True):
        frame = frame.with_columns(pl.col("subcategory").cast(pl.String))
        if items is not None:
            subs = frame.select("subcategory").unique()
            grid = subs.join(pl.DataFrame({"item": items}), how="cross")
            frame = grid.join(frame, on=["subcategory", "item"], how="left").with_columns(
                pl.col("mass").fill_null(0.0)
            )
        else:
            frame = frame.filter(pl.col("mass") > 0).sort(
                ["subcategory", "mass", "item"], descending=[False, True, False]
            )
            if top_items is not None:
                frame = frame.group_by("subcategory", maintain_order=True).head(top_items)
        frames.append(frame.select(pl.lit(name).alias("attribute"), "subcategory", "item", "mass"))
    return pl.concat(frames).cast(
        {"attribute": pl.String, "subcategory": pl.String, "item": pl.String, "mass": pl.Float64}
    )


def _reused_domain(path: PathLike, *, key: str, names: list[str]) -> pl.DataFrame:
    """``(attribute, subcategory, item, mass)`` of an earlier spec (its q as the mass)."""
    try:
        spec = read_spec(path)
    except SpecError as exc:
        raise SpecError(f"config key {key}.prior.spec: {exc}") from None
    if list(spec.attributes) != names:
        raise SpecError(
            f"config key {key}.prior.spec: the spec {path} is for attributes "
            f"{list(spec.attributes)}, this table has {names}"
        )
    return spec.domain.select("attribute", "subcategory", "item", pl.col("q").alias("mass"))


def _restrict_subcategories(
    frame: pl.DataFrame, wanted: Mapping[str, list[str]], *, key: str
) -> pl.DataFrame:
    """Keep only the listed subcategories of each attribute listed; a listed value without
    rows is an error."""
    for attribute, values in wanted.items():
        present = set(frame.filter(pl.col("attribute") == attribute)["subcategory"].to_list())
        missing = [v for v in values if v not in present]
        if missing:
            raise SpecError(
                f"config key {key}.subcategories.{attribute}: {missing[:5]} not in the public "
                f"prior ({len(missing)} listed values missing)"
            )
        frame = frame.filter(
            (pl.col("attribute") != attribute) | pl.col("subcategory").is_in(values)
        )
    return frame
