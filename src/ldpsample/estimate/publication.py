"""Reading a publication folder (``publish/``) into the spec and one table of released draws,
checked against each other; the only module of :mod:`ldpsample.estimate` that knows the folder's
layout.

Layout (docs/publishing.md, written whole by :func:`ldpsample.publish.publish_release`):
``release.json`` (the index: the spec's sha256 and each spec file's, and per released file its
ε, row count and sha256), ``spec/domain.csv`` and ``spec/manifest.json``
(:func:`ldpsample.publish.read_spec` checks the domain's sha256) and
``released/eps~<ε>.parquet`` (``epsilon, user, attribute, subcategory, sample, item``). Every
file the index lists must exist with its recorded sha256; a file's ε is read from its
``epsilon`` column, the index and its name, which must agree.
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


def _release_index(root: Path) -> dict[str, dict]:
    """Released file (relative to ``root``) -> its entry in ``release.json``, after checking
    that the index names this spec and that every spec file has its recorded sha256."""
    index_path = root / "release.json"
    if not index_path.is_file():
        raise PublicationError(f"{index_path}: not found (every publication has its index)")
    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
        files = {str(name): dict(entry) for name, entry in index["files"].items()}
        spec_entry = dict(index["spec"])
        recorded = str(spec_entry["sha256"])
        spec_files = {str(name): str(digest) for name, digest in spec_entry["files"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise PublicationError(f"{index_path}: not a release index ({error})") from error
    spec_folder = root / "spec"
    if recorded != spec_sha256(spec_folder):
        raise PublicationError(
            f"{index_path}: spec sha256 {recorded!r} is not the sha256 of "
            f"{spec_folder / 'manifest.json'} (the released files belong to another spec)"
        )
    for name, digest in sorted(spec_files.items()):
        path = root / name
        if not path.is_file() or file_sha256(path) != digest:
            raise PublicationError(f"{path}: missing or its sha256 differs from release.json's")
    if not files:
        raise PublicationError(f"{index_path}: lists no released file")
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


def _read_released(path: Path, entry: dict) -> pl.DataFrame:
    if not path.is_file():
        raise PublicationError(f"{path}: listed in release.json but missing")
    if file_sha256(path) != entry.get("sha256"):
        raise PublicationError(f"{path}: sha256 differs from the one in release.json")
    frame = pl.read_parquet(path)
    missing = sorted(set(DRAW_SCHEMA) - {"epsilon"} - set(frame.columns))
    if missing:
        raise PublicationError(f"{path}: released file without columns {missing}")
    if "rows" in entry and int(entry["rows"]) != frame.height:
        raise PublicationError(
            f"{path}: {frame.height} rows, release.json says {int(entry['rows'])}"
        )
    eps = _epsilon_of(path, entry, frame)
    return frame.select(
        pl.lit(eps, dtype=pl.Float64).alias("epsilon"),
        *(pl.col(name).cast(dtype) for name, dtype in DRAW_SCHEMA.items() if name != "epsilon"),
    )


def read_publication(folder: PathLike) -> Publication:
    """The spec and draws of a ``publish/`` folder, checked: the index belongs to this spec,
    each file has its recorded sha256 and rows, one ε per file, and every
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
    listed = _release_index(root)
    paths = {name: root / name for name in sorted(listed)}
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
