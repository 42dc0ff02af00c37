"""The public half of a release: its *spec* (what it holds, and its files). Built from public
inputs only by :func:`ldpsample.publish.build.build_spec`; this module may use the package's
I/O helpers (:mod:`ldpsample.pipeline.io`) and nothing of :mod:`ldpsample.events`.

A spec fixes everything a user's client needs to privatise its own data, and nothing that
depends on any user's data: per subcategory the item domain in full and in order, the prior
``q`` on it, the ε values, the samples per ε, the smoothing, whether subcategory membership is
declared public, the release mode (:data:`PER_SUBCATEGORY`: one draw per subcategory; or
:data:`JOINT`: one draw per attribute on the joint (subcategory, item) domain under the prior
``π(s) q_s(i)``, with the public subcategory shares ``π`` recorded), and where every part came
from (a public table and its sha256, a list in the
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
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from ldpsample import __version__
from ldpsample.pipeline.io import write_json, write_text
from ldpsample.publish.device import (
    DEVICE_FORMAT,
    JOINT,
    JOINT_LABEL,
    PER_SUBCATEGORY,
    RELEASE_MODES,
    SpecError,
    file_sha256,
    read_manifest,
)

__all__ = [
    "DOMAIN_FILE",
    "DOMAIN_SCHEMA",
    "JOINT",
    "JOINT_LABEL",
    "MANIFEST_FILE",
    "PER_SUBCATEGORY",
    "RELEASE_MODES",
    "SPEC_FORMAT",
    "ReleaseSpec",
    "SpecError",
    "file_sha256",
    "read_spec",
    "spec_sha256",
    "write_spec",
]

PathLike = str | os.PathLike[str]

SPEC_FORMAT = DEVICE_FORMAT  # one format, read by the core install too (publish/device.py)
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
JOINT_MECHANISM = (
    "joint release (release_mode: joint): per attribute, one draw per sample and epsilon from "
    "the same sampler on the attribute's joint (subcategory, item) domain with prior "
    "q(s, i) = pi(s) q_s(i), pi the public subcategory shares (subcategory_shares); the "
    "user's histogram is its own (subcategory, item) counts, p := q when it has none"
)
MEMBERSHIP_HIDDEN = (
    "hidden: every user of the table releases in every subcategory of this spec (p := q where "
    "the user has no data there), so the released rows reveal only that the user is in the table"
)
MEMBERSHIP_PUBLIC = (
    "public (attributes_public: true): a user releases only in the subcategories where it has "
    "data, so the released rows disclose each user's subcategories"
)


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
    population
        The operator's name for the people released (the ledger keys spend by population and
        user; a reused spec passes it on).
    release_mode
        :data:`PER_SUBCATEGORY` or :data:`JOINT` (a reused spec passes it on).
    shares
        With :data:`JOINT`: attribute -> subcategory -> its public share ``π(s)`` (positive,
        summing to 1 per attribute); None otherwise.
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
    population: str = "default"
    release_mode: str = PER_SUBCATEGORY
    shares: Mapping[str, Mapping[str, float]] | None = None

    def __post_init__(self) -> None:
        if self.release_mode not in RELEASE_MODES:
            raise SpecError(
                f"spec {self.name!r}: release_mode {self.release_mode!r} is not one of "
                f"{list(RELEASE_MODES)}"
            )
        if self.joint and (self.shares is None or self.attributes_public):
            raise SpecError(
                f"spec {self.name!r}: a joint release needs subcategory shares and hidden "
                "membership (attributes_public: false)"
            )

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
    def joint(self) -> bool:
        """Whether the spec releases one draw per attribute on the joint domain."""
        return self.release_mode == JOINT

    @property
    def draw_units(self) -> int:
        """How many draws per (user, ε, sample) a run makes at most: one per subcategory, or
        with :data:`JOINT` one per attribute."""
        return len(self.attributes) if self.joint else len(self.subcategories)

    @property
    def budget_bound(self) -> float:
        """The most ε one run of this spec costs any user: subcategories × Σε × samples (every
        user's draws, in every subcategory, at every ε, each ``samples`` times); with
        :data:`JOINT`, attributes × Σε × samples."""
        return self.draw_units * float(sum(self.epsilons)) * self.samples

    def joint_domain(self) -> pl.DataFrame:
        """With :data:`JOINT`: ``attribute, subcategory, item, q`` of every attribute's joint
        domain in spec order, ``q = π(s) q_s(i)`` (sums to 1 per attribute).

        Raises
        ------
        ValueError
            For a per-subcategory spec.
        """
        if not self.joint or self.shares is None:
            raise ValueError(f"spec {self.name!r} is not a joint release (release_mode: joint)")
        shares = pl.DataFrame(
            [(a, s, float(v)) for a, subs in self.shares.items() for s, v in subs.items()],
            schema={"attribute": pl.String(), "subcategory": pl.String(), "share": pl.Float64()},
            orient="row",
        )
        return self.domain.join(
            shares, on=["attribute", "subcategory"], how="left", maintain_order="left"
        ).select("attribute", "subcategory", "item", (pl.col("q") * pl.col("share")).alias("q"))

    def manifest(self) -> dict[str, Any]:
        """The manifest's content without the domain file's checksum (:func:`write_spec` adds
        it)."""
        return {
            "format": SPEC_FORMAT,
            "name": self.name,
            "mechanism": MECHANISM if not self.joint else f"{MECHANISM}; {JOINT_MECHANISM}",
            "release_mode": self.release_mode,
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
            "population": self.population,
            **(
                {
                    "subcategory_shares": {
                        a: {s: float(v) for s, v in subs.items()} for a, subs in self.shares.items()
                    }
                }
                if self.joint and self.shares is not None
                else {}
            ),
        }


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
    manifest, domain_path = read_manifest(path)  # format and sha256 checked
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
        population=str(manifest.get("population", "default")),
        release_mode=str(manifest.get("release_mode", PER_SUBCATEGORY)),
        shares=manifest.get("subcategory_shares"),
    )
