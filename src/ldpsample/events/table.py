"""Reading an events table lazily and checking it: the one place that knows file formats.

An events table has one row per event (or per aggregated event when a ``count`` column holds
weights): a user column, an item column, optional weight/ranking/activity columns and the
attribute columns whose values define subcategories. CSV, gzipped CSV and parquet are read with
polars; every column the experiment uses is named in the errors together with the file and the
config key it came from.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

import polars as pl

__all__ = ["EventsTableError", "scan_events", "table_columns"]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]


class EventsTableError(ValueError):
    """A problem with an events (or public prior) table; the message's first line names the
    file, the config key and the value."""


def _kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".parquet") or name.endswith(".pq"):
        return "parquet"
    if name.endswith(".csv.gz") or name.endswith(".tsv.gz") or name.endswith(".gz"):
        return "csv.gz"
    if name.endswith(".csv") or name.endswith(".tsv") or name.endswith(".txt"):
        return "csv"
    raise EventsTableError(
        f"{path}: unknown table format (config key {{key}}); use .csv, .csv.gz or .parquet"
    )


def table_columns(path: PathLike, *, key: str = "path") -> list[str]:
    """Column names of a table (header only; nothing else is read)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: events table not found (config key {key})")
    try:
        kind = _kind(path)
    except EventsTableError as exc:
        raise EventsTableError(str(exc).replace("{key}", key)) from None
    sep = "\t" if ".tsv" in path.name.lower() else ","
    try:
        if kind == "parquet":
            return list(pl.scan_parquet(path).collect_schema().names())
        if kind == "csv":
            return list(pl.scan_csv(path, separator=sep, n_rows=0).collect_schema().names())
        return list(pl.read_csv(path, separator=sep, n_rows=1).columns)
    except (pl.exceptions.PolarsError, OSError) as exc:  # a damaged file (truncated, not gzip)
        raise EventsTableError(
            f"{path}: cannot read the events table (config key {key}): {type(exc).__name__}: {exc}"
        ) from exc


def scan_events(
    path: PathLike,
    columns: Sequence[tuple[str, str]],
    *,
    key: str,
    strings: Sequence[str] = (),
    text: Sequence[str] = (),
    numbers: Sequence[str] = (),
) -> pl.LazyFrame:
    """A lazy frame of the named columns of a table, checked for presence.

    Parameters
    ----------
    path
        CSV (``.csv``/``.tsv``), gzipped CSV (``.csv.gz``; read eagerly, the format cannot be
        scanned) or parquet.
    columns
        ``(column, config key)`` pairs: each column must exist; the key is named otherwise.
    key
        Config key of the path (for messages), e.g. ``events.demo.path``.
    strings
        Columns returned as strings (ids; a CSV's are never inferred as numbers, so ``007``
        stays ``007``).
    text
        Columns read as text from a CSV (not inferred) but left in their type in parquet
        (attribute values: grouping on integers is faster; cast them after aggregating).
    numbers
        Numeric columns (weights): read as text from a CSV and left for the caller to cast
        (``strict=False``), so that a value that is not a number, wherever it is in the file,
        becomes a null the caller counts and names by its config key, instead of a parse error
        of the whole file (polars infers a CSV column's type from its first rows).

    Raises
    ------
    FileNotFoundError
        If the file does not exist (naming it and ``key``).
    EventsTableError
        If a column is missing (naming the file, the column and its key).
    """
    path = Path(path)
    present = table_columns(path, key=key)
    for column, column_key in columns:
        if column not in present:
            raise EventsTableError(
                f"{path}: column {column!r} (config key {column_key}) not found; the table has "
                f"columns {present[:30]}"
            )
    names = list(dict.fromkeys(c for c, _ in columns))
    kind = _kind(path)
    overrides = {c: pl.String() for c in dict.fromkeys([*strings, *text, *numbers])}
    sep = "\t" if ".tsv" in path.name.lower() else ","
    if kind == "parquet":
        lf = pl.scan_parquet(path).select(names)
    elif kind == "csv":
        lf = pl.scan_csv(path, separator=sep, schema_overrides=overrides).select(names)
    else:
        log.info("%s: gzipped CSV is read eagerly (convert a large one to parquet once)", path)
        lf = pl.read_csv(path, separator=sep, columns=names, schema_overrides=overrides).lazy()
    return lf.with_columns(pl.col(c).cast(pl.String) for c in dict.fromkeys(strings))
