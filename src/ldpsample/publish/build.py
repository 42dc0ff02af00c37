"""Building a release's spec from public inputs only: a public prior table (its pooled counts per
subcategory, its items), a listed domain with the uniform prior, or an earlier spec
(:func:`build_spec`). No private table is read: its files are only compared with the public table's
(same file after resolving links, or same bytes), so that the events table cannot be its own
"public" prior. May use :mod:`ldpsample.publish.spec` (the spec and its files),
:mod:`ldpsample.publish.exactness` (the floor on q), :mod:`ldpsample.events.reading.files` (a
table's files), :mod:`ldpsample.events.counting.public_priors` (reading a public table's masses) and
:mod:`ldpsample.events.schemas`.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from ldpsample.events.counting.public_priors import public_prior_masses
from ldpsample.events.reading.files import list_table_files
from ldpsample.events.schemas import ALL
from ldpsample.publish.exactness import check_sampling_floor
from ldpsample.publish.ledger import DEFAULT_POPULATION
from ldpsample.publish.spec import (
    DOMAIN_SCHEMA,
    JOINT,
    JOINT_LABEL,
    PER_SUBCATEGORY,
    RELEASE_MODES,
    PathLike,
    ReleaseSpec,
    SpecError,
    file_sha256,
    read_spec,
    spec_sha256,
)

__all__ = ["build_spec"]

log = logging.getLogger(__name__)


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
    population: str | None = None,
    private_files: Sequence[str | os.PathLike[str]] = (),
    release_mode: str | None = None,
    subcategory_shares: str | Mapping[str, Mapping[str, float]] | None = None,
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
    population
        The operator's name for the people released (the ledger's key with the user id);
        None: the reused spec's, or ``"default"``.
    private_files
        The events table's files: a public prior table that is one of them (the same file
        after resolving links, or the same bytes) is refused.
    release_mode
        ``"per_subcategory"`` (one draw per subcategory) or ``"joint"`` (one draw per attribute
        on its joint (subcategory, item) domain); None: the reused spec's, or
        ``"per_subcategory"``. A reused spec keeps its mode.
    subcategory_shares
        With ``"joint"``: the public shares ``π`` of the prior ``π(s) q_s(i)``. None: the
        public table's (each subcategory's pooled count on its domain over the attribute's),
        uniform with the uniform prior, the reused spec's; ``"uniform"``; or attribute ->
        subcategory -> a positive weight (normalised per attribute; every released
        subcategory listed).

    Raises
    ------
    SpecError
        Naming the config key: a domain that is not public (uniform prior without ``items``),
        a listed subcategory absent from the public table, a subcategory without public mass
        on its items, a reused spec for other attributes, a duplicate ε, a prior table that is
        the events table, a positive q below the sampling floor
        (:func:`~ldpsample.publish.exactness.check_sampling_floor`; with ``"joint"`` on the
        joint domain), a joint release with public attributes, shares that are not positive
        or do not list the released subcategories, a mode other than the reused spec's.
    """
    names = list(attributes) or [ALL]
    eps = tuple(sorted(float(e) for e in epsilons))
    if len(set(eps)) != len(eps):
        raise SpecError(
            f"config key {key}.epsilons: {list(epsilons)!r} lists an ε twice; each ε is "
            "released once per user (list it once, or raise samples)"
        )
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
        if population is None:
            population = read_spec(prior["spec"]).population
        provenance["prior"] = {
            "kind": "spec",
            "path": _portable_path(prior["spec"]),
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
        _refuse_private_prior(prior["path"], private_files, key=key)
        frame = _public_table_domain(
            prior, key=key, attributes=list(attributes), items=item_list, top_items=top_items
        )
        provenance["prior"] = {
            "kind": "public table",
            "path": _portable_path(prior["path"]),
            "sha256": _table_sha256(prior["path"], key=key),
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
    mode, shares = _release_mode(
        frame,
        key=key,
        release_mode=release_mode,
        subcategory_shares=subcategory_shares,
        prior=prior,
        reused=reused,
        attributes_public=attributes_public,
        provenance=provenance,
    )
    domain = _ordered_domain(frame, prior_smoothing, normalise=not reused)
    if shares is None:
        check_sampling_floor(domain, epsilons=eps, key=key)
    zero = domain.filter(pl.col("q") == 0).height
    if zero:
        log.warning(
            "%s: %d items of the spec have q = 0 and are never released; users holding mass "
            "there are counted in the release report (%s.prior_smoothing > 0 gives them mass)",
            key,
            zero,
            key,
        )
    spec = ReleaseSpec(
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
        population=DEFAULT_POPULATION if population is None else str(population),
        release_mode=mode,
        shares=shares,
    )
    if shares is not None:  # the joint kernels draw from π(s) q_s(i): its floor
        try:
            check_sampling_floor(
                spec.joint_domain().with_columns(pl.lit(JOINT_LABEL).alias("subcategory")),
                epsilons=eps,
                key=key,
            )
        except SpecError as error:
            raise SpecError(
                f"{error} (joint release: q = π(s) q_s(i), so a small subcategory share "
                f"lowers it too; {key}.subcategory_shares can raise the smallest)"
            ) from None
    return spec


def _release_mode(
    frame: pl.DataFrame,
    *,
    key: str,
    release_mode: str | None,
    subcategory_shares: str | Mapping[str, Mapping[str, float]] | None,
    prior: str | Mapping[str, Any],
    reused: bool,
    attributes_public: bool,
    provenance: dict[str, Any],
) -> tuple[str, dict[str, dict[str, float]] | None]:
    """The spec's release mode and, when joint, its shares ``π`` per attribute (recorded in
    ``provenance["subcategory_shares"]``); see :func:`build_spec`."""
    if release_mode is not None and release_mode not in RELEASE_MODES:
        raise SpecError(
            f"config key {key}.release_mode: {release_mode!r} is not one of {list(RELEASE_MODES)}"
        )
    earlier = read_spec(prior["spec"]) if reused else None
    if earlier is not None:
        if release_mode is not None and release_mode != earlier.release_mode:
            raise SpecError(
                f"config key {key}.release_mode: {release_mode!r}, but the reused spec "
                f"{prior['spec']} releases {earlier.release_mode!r} (a reused spec keeps its "
                "mode: set release_mode: null)"
            )
        mode = earlier.release_mode
    else:
        mode = release_mode or PER_SUBCATEGORY
    if mode != JOINT:
        if subcategory_shares is not None:
            raise SpecError(
                f"config key {key}.subcategory_shares: only a joint release uses shares "
                "(release_mode: joint); set subcategory_shares: null"
            )
        return mode, None
    if attributes_public:
        raise SpecError(
            f"config key {key}.release_mode: a joint release keeps membership hidden (one draw "
            "per attribute from every user); set attributes_public: false or release_mode: "
            "per_subcategory"
        )
    mass = (
        frame.group_by("attribute", "subcategory", maintain_order=True)
        .agg(pl.col("mass").sum())
        .sort("attribute", "subcategory")
    )
    if earlier is not None:
        if subcategory_shares is not None:
            raise SpecError(
                f"config key {key}.subcategory_shares: a reused spec keeps its shares; set "
                "subcategory_shares: null"
            )
        kept = earlier.shares or {}
        weights = {(a, s): float(kept.get(a, {}).get(s, 0.0)) for a, s, _ in mass.iter_rows()}
        kind: dict[str, Any] = {"kind": "spec"}
    elif subcategory_shares == "uniform" or (subcategory_shares is None and prior == "uniform"):
        weights = {(a, s): 1.0 for a, s, _ in mass.iter_rows()}
        kind = {"kind": "uniform"}
    elif subcategory_shares is None:
        weights = {(a, s): float(m) for a, s, m in mass.iter_rows()}
        kind = {"kind": "public table", "of": "pooled counts on each subcategory's items"}
    elif isinstance(subcategory_shares, Mapping):
        given = {
            (str(a), str(s)): v for a, subs in subcategory_shares.items() for s, v in subs.items()
        }
        wanted = {(a, s) for a, s, _ in mass.iter_rows()}
        missing = sorted(wanted - set(given))
        extra = sorted(set(given) - wanted)
        if missing or extra:
            raise SpecError(
                f"config key {key}.subcategory_shares: list a share for every released "
                f"subcategory and no other (missing {missing[:5]}, not released {extra[:5]})"
            )
        weights = {k: given[k] for k in sorted(wanted)}
        kind = {"kind": "config"}
    else:
        raise SpecError(
            f"config key {key}.subcategory_shares: {subcategory_shares!r} is not null, "
            "'uniform' or attribute -> subcategory -> share"
        )
    bad = [
        (k, v)
        for k, v in weights.items()
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < math.inf
    ]
    if bad:
        (attribute, sub), value = bad[0]
        raise SpecError(
            f"config key {key}.subcategory_shares: {attribute}={sub!r} has share {value!r}; "
            "every released subcategory needs a positive, finite public share"
        )
    shares: dict[str, dict[str, float]] = {}
    for (attribute, sub), value in weights.items():
        shares.setdefault(attribute, {})[sub] = float(value)
    for attribute, subs in shares.items():
        total = math.fsum(subs.values())
        shares[attribute] = {s: v / total for s, v in subs.items()}
    provenance["subcategory_shares"] = kind
    return mode, shares


def _portable_path(path: str | os.PathLike[str]) -> str:
    """A provenance path that names no operator folder: relative to the working folder when
    inside it, else only its last two parts."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(*resolved.parts[-2:]).as_posix()


def _table_files(path: str | os.PathLike[str], *, key: str) -> list[Path]:
    """The files of a table (a file, folder, glob or hive dataset)."""
    if Path(path).is_file():
        return [Path(path)]
    return [Path(f) for f in list_table_files(path, key=key).files]


def _table_sha256(path: str | os.PathLike[str], *, key: str) -> str:
    """sha256 of a public table: its one file's, or of its files' paths and sha256s."""
    files = _table_files(path, key=f"{key}.prior.path")
    if len(files) == 1 and Path(path).is_file():
        return file_sha256(path)
    lines = "".join(
        f"{f.relative_to(Path(path)) if f.is_relative_to(Path(path)) else f.name} "
        f"{file_sha256(f)}\n"
        for f in files
    )
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def _refuse_private_prior(
    public: str | os.PathLike[str], private: Sequence[str | os.PathLike[str]], *, key: str
) -> None:
    """Refuse a public prior table with a file of the events table (same file after resolving,
    or same size and sha256)."""
    if not private:
        return
    public_files = _table_files(public, key=f"{key}.prior.path")
    private_files = [Path(f) for f in private]
    resolved = {f.resolve(): f for f in private_files}
    sizes: dict[int, list[Path]] = {}
    for f in private_files:
        if f.is_file():  # a table another rule has not made yet cannot be a copy
            sizes.setdefault(f.stat().st_size, []).append(f)
    hashes: dict[Path, str] = {}
    for f in public_files:
        same = resolved.get(f.resolve())
        if same is None:
            for candidate in sizes.get(f.stat().st_size, []):
                if candidate not in hashes:
                    hashes[candidate] = file_sha256(candidate)
                if hashes[candidate] == file_sha256(f):
                    same = candidate
                    break
        if same is not None:
            raise SpecError(
                f"config key {key}.prior.path: {f} is the events table's file {same} (same file "
                "or same bytes): a release's prior must be public data, not the users being "
                "released (the spec would move with them)"
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
