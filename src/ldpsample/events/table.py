"""Reading an events table lazily and checking it: the one place that knows file formats.

An events table has one row per event (or per aggregated event when a ``count`` column holds
weights): a user column, an item column, optional weight/ranking/activity columns and the
attribute columns whose values define subcategories. CSV, gzipped CSV and parquet are read with
polars; every column the experiment uses is named in the errors together with the file and the
config key it came from.

Uses: polars, ldpsample.events.files; no Snakemake.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from ldpsample.events.files import TableFiles, list_table_files

__all__ = ["EventsTableError", "locate_row", "scan_events", "table_columns", "table_files"]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]


class EventsTableError(ValueError):
    """A problem with an events (or public prior) table; the message's first line names the
    file, the config key and the value."""


Source = PathLike | TableFiles


def table_files(source: Source, *, key: str = "path") -> TableFiles:
    """The files of a table (:func:`ldpsample.events.files.list_table_files`), with an unknown
    format or mixed files raised as :class:`EventsTableError`."""
    if isinstance(source, TableFiles):
        return source
    try:
        return list_table_files(source, key=key)
    except ValueError as exc:
        raise EventsTableError(str(exc)) from None


def _separator(file: str) -> str:
    return "\t" if ".tsv" in Path(file).name.lower() else ","


def _file_columns(file: str, kind: str, *, key: str) -> list[str]:
    sep = _separator(file)
    try:
        if kind == "parquet":
            return list(pl.scan_parquet(file).collect_schema().names())
        if kind == "csv":
            return list(pl.scan_csv(file, separator=sep, n_rows=0).collect_schema().names())
        return list(pl.read_csv(file, separator=sep, n_rows=1).columns)
    except (pl.exceptions.PolarsError, OSError) as exc:  # a damaged file (truncated, not gzip)
        raise EventsTableError(
            f"{file}: cannot read the events table (config key {key}): {type(exc).__name__}: {exc}"
        ) from exc


def table_columns(source: Source, *, key: str = "path") -> list[str]:
    """Column names of a table (headers only; nothing else is read): the first file's, plus
    the hive columns of a partitioned dataset."""
    files = table_files(source, key=key)
    return _file_columns(files.files[0], files.format, key=key) + files.hive_columns


def scan_events(
    source: Source,
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
    source
        The table: a path (one file, a folder, a glob or a hive-partitioned dataset, see
        :mod:`ldpsample.events.files`) or its :class:`~ldpsample.events.files.TableFiles` (one
        partition of a table, for instance). Files are CSV (``.csv``/``.tsv``), gzipped CSV
        (``.csv.gz``; read eagerly, the format cannot be scanned) or parquet; their rows are
        concatenated in the files' order, and a hive dataset's folder columns are text.
    columns
        ``(column, config key)`` pairs: each column must exist in every file; the key is named
        otherwise.
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
        If the table does not exist (naming it and ``key``).
    EventsTableError
        If a column is missing (naming the file, the column and its key).
    """
    files = table_files(source, key=key)
    hive = files.hive_columns
    for file in files.files:
        present = _file_columns(file, files.format, key=key) + hive
        for column, column_key in columns:
            if column not in present:
                raise EventsTableError(
                    f"{file}: column {column!r} (config key {column_key}) not found; the table "
                    f"has columns {present[:30]}"
                )
    names = list(dict.fromkeys(c for c, _ in columns))
    own = [c for c in names if c not in hive]
    overrides = {c: pl.String() for c in dict.fromkeys([*strings, *text, *numbers]) if c in own}
    kind = files.format
    # one scan of every file (a lone file as itself, as before partitioned tables existed)
    every = files.files[0] if len(files.files) == 1 else list(files.files)
    if kind == "parquet" and not hive:
        frames = [pl.scan_parquet(every).select(own)]
    elif kind == "csv" and not hive:
        frames = [
            pl.scan_csv(
                every, separator=_separator(files.files[0]), schema_overrides=overrides
            ).select(own)
        ]
    else:
        frames = []
        for index, file in enumerate(files.files):
            if kind == "parquet":
                lf = pl.scan_parquet(file).select(own)
            elif kind == "csv":
                lf = pl.scan_csv(
                    file, separator=_separator(file), schema_overrides=overrides
                ).select(own)
            else:
                log.info(
                    "%s: gzipped CSV is read eagerly (convert a large one to parquet once)", file
                )
                lf = pl.read_csv(
                    file, separator=_separator(file), columns=own, schema_overrides=overrides
                ).lazy()
            values = files.hive[index] if hive else {}
            frames.append(
                lf.with_columns(pl.lit(values[c], dtype=pl.String).alias(c) for c in hive)
            )
    lf = frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical")
    return lf.select(names).with_columns(pl.col(c).cast(pl.String) for c in dict.fromkeys(strings))


def locate_row(source: Source, row: int, *, key: str = "path") -> tuple[str, int]:
    """``(file, row within it)`` of data row ``row`` (0-based) of a table's rows in file order:
    the table itself for one file; for several, their row counts are read (parquet metadata,
    or a scan of a CSV) to find the file."""
    files = table_files(source, key=key)
    if len(files.files) == 1:
        return str(source if not isinstance(source, TableFiles) else files.files[0]), row
    start = 0
    for file in files.files:
        if files.format == "parquet":
            rows = pl.scan_parquet(file).select(pl.len()).collect().item()
        elif files.format == "csv":
            rows = pl.scan_csv(file, separator=_separator(file)).select(pl.len()).collect().item()
        else:
            rows = pl.read_csv(file, separator=_separator(file), columns=[0]).height
        if row < start + rows:
            return file, row - start
        start += rows
    return str(files.path), row
