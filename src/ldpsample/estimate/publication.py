"""Reading a publication folder (``publish/``: ``spec/`` and ``released/``) into the spec and
one table of released draws, checked against each other; the only module of
:mod:`ldpsample.estimate` that knows the folder's layout.

Uses: json, polars, ldpsample.publish.spec.

Layout (docs/publishing.md): ``spec/domain.csv`` and ``spec/manifest.json``
(:func:`ldpsample.publish.read_spec` checks the domain's sha256), ``released/release.json``
(the spec's sha256 and, per file name, its ε and row count, and a sha256 where the release
records one: in the file's entry or in a top-level ``sha256`` table of file names) and
``released/eps~<ε>.parquet`` (``user, attribute, subcategory, sample, item``, and ``epsilon``
where the release writes that column). A file's ε is read from its ``epsilon``
column when present, else from ``release.json``, else from its name; all sources present must
agree. Without ``release.json`` every ``eps~<ε>.parquet`` of ``released/`` is read.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ldpsample.publish.spec import ReleaseSpec, SpecError, file_sha256, read_spec, spec_sha256

__all__ = ["DRAW_SCHEMA", "Publication", "PublicationError", "read_publication"]

PathLike = str | os.PathLike[str]

#: The released draws of a publication, every ε in one table.
DRAW_SCHEMA: dict[str, pl.DataType] = {
    "epsilon": pl.Float64(),
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "user": pl.String(),
    "sample": pl.Int64(),
    "item": pl.String(),
}
_FILE_NAME = re.compile(r"^eps~([0-9]+(?:\.[0-9]+)?)\.parquet$")


class PublicationError(ValueError):
    """A publication folder cannot be read; the message's first line names the file."""


@dataclass(frozen=True)
class Publication:
    """A publication's spec and its draws (:data:`DRAW_SCHEMA`), read by
    :func:`read_publication`."""

    folder: Path
    spec: ReleaseSpec
    draws: pl.DataFrame


def _release_manifest(released: Path, spec_folder: Path) -> dict[str, dict]:
    """File name -> its entry in ``release.json`` ({} without one), after checking that the
    release names this spec's sha256."""
    manifest_path = released / "release.json"
    if not manifest_path.is_file():
        return {}
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        files = {name: dict(entry) for name, entry in manifest["files"].items()}
        checksums = dict(manifest.get("sha256") or {})
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise PublicationError(f"{manifest_path}: not a release manifest ({error})") from error
    recorded = manifest.get("spec_sha256")
    if recorded is not None and recorded != spec_sha256(spec_folder):
        raise PublicationError(
            f"{manifest_path}: spec_sha256 {recorded!r} is not the sha256 of "
            f"{spec_folder / 'manifest.json'} (the released files belong to another spec)"
        )
    for name, digest in checksums.items():  # a top-level {file: sha256} table, if any
        if name in files:
            files[name].setdefault("sha256", digest)
    return files


def _epsilon_of(path: Path, entry: dict | None, frame: pl.DataFrame) -> float:
    sources: dict[str, float] = {}
    match = _FILE_NAME.match(path.name)
    if match:
        sources["file name"] = float(match.group(1))
    if entry is not None and "epsilon" in entry:
        sources["release.json"] = float(entry["epsilon"])
    if "epsilon" in frame.columns:
        values = frame["epsilon"].unique().to_list()
        if len(values) != 1:
            raise PublicationError(f"{path}: column epsilon holds {sorted(values)!r}, not one ε")
        sources["epsilon column"] = float(values[0])
    if not sources:
        raise PublicationError(f"{path}: no ε (no epsilon column, release.json entry or eps~<ε>)")
    if len(set(sources.values())) > 1:
        raise PublicationError(f"{path}: its ε sources disagree: {sources!r}")
    return next(iter(sources.values()))


def _read_released(path: Path, entry: dict | None) -> pl.DataFrame:
    if not path.is_file():
        raise PublicationError(f"{path}: listed in release.json but missing")
    recorded = None if entry is None else entry.get("sha256")
    if recorded is not None and file_sha256(path) != recorded:
        raise PublicationError(f"{path}: sha256 differs from the one in release.json")
    frame = pl.read_parquet(path)
    missing = sorted(set(DRAW_SCHEMA) - {"epsilon"} - set(frame.columns))
    if missing:
        raise PublicationError(f"{path}: released file without columns {missing}")
    if entry is not None and "rows" in entry and int(entry["rows"]) != frame.height:
        raise PublicationError(
            f"{path}: {frame.height} rows, release.json says {int(entry['rows'])}"
        )
    eps = _epsilon_of(path, entry, frame)
    return frame.select(
        pl.lit(eps, dtype=pl.Float64).alias("epsilon"),
        *(pl.col(name).cast(dtype) for name, dtype in DRAW_SCHEMA.items() if name != "epsilon"),
    )


def read_publication(folder: PathLike) -> Publication:
    """The spec and draws of a ``publish/`` folder, checked: the release belongs to this spec,
    each file has its recorded rows (and sha256, where recorded), one ε per file, and every
    released item is in its subcategory's domain with ``q > 0``.

    Raises
    ------
    PublicationError
        Naming the file at fault (a missing folder or file, a mismatch).
    """
    root = Path(folder)
    spec_folder, released = root / "spec", root / "released"
    for needed in (spec_folder, released):
        if not needed.is_dir():
            raise PublicationError(f"{needed}: not found (a publication holds spec/ and released/)")
    try:
        spec = read_spec(spec_folder)
    except SpecError as error:
        raise PublicationError(str(error)) from error
    listed = _release_manifest(released, spec_folder)
    if listed:
        paths = {name: released / name for name in sorted(listed)}
    else:
        paths = {p.name: p for p in sorted(released.glob("eps~*.parquet"))}
    if not paths:
        raise PublicationError(f"{released}: no released file (eps~<ε>.parquet)")
    frames = [_read_released(path, listed.get(name)) for name, path in paths.items()]
    draws = pl.concat(frames, how="vertical")
    epsilons = draws["epsilon"].unique().sort().to_list()
    if len(epsilons) != len(frames):
        raise PublicationError(f"{released}: two released files hold the same ε")
    unknown = sorted(set(epsilons) - set(spec.epsilons))
    if unknown:
        raise PublicationError(f"{released}: ε {unknown} are not in the spec's {spec.epsilons}")
    domain = spec.domain.filter(pl.col("q") > 0).select("attribute", "subcategory", "item")
    outside = draws.join(domain, on=["attribute", "subcategory", "item"], how="anti")
    if outside.height:
        first = outside.row(0, named=True)
        raise PublicationError(
            f"{released}: {outside.height} released rows are not items of q > 0 in the spec's "
            f"domain, first: {first!r}"
        )
    draws = draws.sort("epsilon", "attribute", "subcategory", "user", "sample")
    return Publication(folder=root, spec=spec, draws=draws)
