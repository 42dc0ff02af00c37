"""Reading an events table lazily and checking it: the one place that knows file formats.

An events table has one row per event (or per aggregated event when a ``count`` column holds
weights): a user column, an item column, optional weight/ranking/activity columns and the
attribute columns whose values define subcategories. CSV, gzipped CSV and parquet are read with
polars; every column the experiment uses is named in the errors together with the file and the
config key it came from.

A CSV file's records with a field missing or too many, or an unclosed quote
(:mod:`ldpsample.events.reading.csv_lines`), stop the scan with the file, line and text
(``on_bad_rows="error"``) or are skipped and counted (``"skip"``; an unclosed quote always stops:
the rows after it cannot be read).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from ldpsample.events.options import OnBadRows
from ldpsample.events.reading.csv_lines import csv_faults
from ldpsample.events.reading.files import TableFiles, list_table_files
from ldpsample.pipeline.progress import phase

__all__ = [
    "BAD_ROWS",
    "EventsTableError",
    "locate_row",
    "polars_reason",
    "raise_csv_faults",
    "scan_events",
    "table_columns",
    "table_files",
]

#: What ``on_bad_rows`` may be: a faulty row stops the job, or is skipped and counted.
BAD_ROWS = tuple(OnBadRows)

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

#: Per CSV file, the data rows its last scan with ``on_bad_rows="skip"`` left out (sorted), so
#: that :func:`locate_row` names a later fault by its row in the file.
_SKIPPED: dict[str, np.ndarray] = {}


class EventsTableError(ValueError):
    """A problem with an events (or public prior) table; the message's first line names the
    file, the config key and the value."""


Source = PathLike | TableFiles


def table_files(source: Source, *, key: str = "path") -> TableFiles:
    """The files of a table (:func:`ldpsample.events.reading.files.list_table_files`), with an
    unknown format or mixed files raised as :class:`EventsTableError`."""
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
        # the header only: a faulty record further down is csv_lines.py's to name
        return list(pl.read_csv(file, separator=sep, n_rows=1, truncate_ragged_lines=True).columns)
    except (pl.exceptions.PolarsError, OSError) as exc:  # a damaged file (truncated, not gzip)
        raise EventsTableError(
            f"{file}: cannot read the events table (config key {key}): {polars_reason(exc)}"
        ) from exc


def polars_reason(exc: BaseException) -> str:
    """``<type>: <first line>`` of a polars (or OS) error: its later lines suggest reader
    options (``truncate_ragged_lines``, ``ignore_errors``) that a config cannot set."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


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
    on_bad_rows: OnBadRows | str = OnBadRows.ERROR,
    check_lines: bool = True,
) -> pl.LazyFrame:
    """A lazy frame of the named columns of a table, checked for presence and, in a CSV, for
    records with a field missing or too many and unclosed quotes.

    Parameters
    ----------
    source
        The table: a path (one file, a folder, a glob or a hive-partitioned dataset, see
        :mod:`ldpsample.events.reading.files`) or its
        :class:`~ldpsample.events.reading.files.TableFiles` (one partition of a table, for
        instance). Files are CSV (``.csv``/``.tsv``), gzipped CSV (``.csv.gz``; read eagerly, the
        format cannot be scanned) or parquet; their rows are concatenated in the files' order, and a
        hive dataset's folder columns are text.
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
    on_bad_rows
        ``"error"``: a CSV record with a field missing or too many stops the scan (naming the
        file, the line and its text); ``"skip"``: such records are left out and counted per
        cause in a WARNING. An unclosed quote stops the scan either way.
    check_lines
        False reads a CSV's records as polars does (a short one's absent fields null, a long
        one's extra fields dropped) without the line check's pass over the files: for a
        sample that a faulty row does not spoil (the buckets' boundaries); a file polars
        cannot read is named by :func:`raise_csv_faults`.

    Raises
    ------
    FileNotFoundError
        If the table does not exist (naming it and ``key``).
    EventsTableError
        If a column is missing (naming the file, the column and its key), or a CSV record is
        faulty (above).
    """
    if on_bad_rows not in BAD_ROWS:
        raise ValueError(
            f"config key {_entry_key(key)}.on_bad_rows: {on_bad_rows!r} is not error or skip"
        )
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
    checked = kind != "parquet" and check_lines
    skipped = _csv_skipped(files, key=key, on_bad_rows=on_bad_rows) if checked else {}
    # one scan of every file (a lone file as itself)
    every = files.files[0] if len(files.files) == 1 else list(files.files)
    ragged = {"truncate_ragged_lines": True} if skipped or not check_lines else {}
    if kind == "parquet" and not hive:
        frames = [pl.scan_parquet(every).select(own)]
    elif kind == "csv" and not hive and not skipped:
        frames = [
            pl.scan_csv(
                every, separator=_separator(files.files[0]), schema_overrides=overrides, **ragged
            ).select(own)
        ]
    else:
        frames = []
        for index, file in enumerate(files.files):
            if kind == "parquet":
                lf = pl.scan_parquet(file).select(own)
            elif kind == "csv":
                lf = pl.scan_csv(
                    file, separator=_separator(file), schema_overrides=overrides, **ragged
                ).select(own)
            else:
                log.info(
                    "%s: gzipped CSV is read eagerly (convert a large one to parquet once)", file
                )
                lf = pl.read_csv(
                    file,
                    separator=_separator(file),
                    columns=own,
                    schema_overrides=overrides,
                    **ragged,
                ).lazy()
            if file in skipped:
                lf = (
                    lf.with_row_index("_row")
                    .filter(~pl.col("_row").cast(pl.Int64).is_in(_rows(skipped[file])))
                    .drop("_row")
                )
            values = files.hive[index] if hive else {}
            frames.append(
                lf.with_columns(pl.lit(values[c], dtype=pl.String).alias(c) for c in hive)
            )
    lf = frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical")
    return lf.select(names).with_columns(pl.col(c).cast(pl.String) for c in dict.fromkeys(strings))


def _rows(rows: list[int]) -> pl.Expr:
    return pl.lit(pl.Series(rows, dtype=pl.Int64).implode())


def _entry_key(key: str) -> str:
    """``events.<name>`` of a path's key ``events.<name>.path``."""
    return key.removesuffix(".path")


def raise_csv_faults(source: Source, *, key: str) -> None:
    """Raise the first faulty record of a CSV table's files (as :func:`scan_events` does), if
    any: the message for a scan made with ``check_lines=False`` that polars could not read."""
    files = table_files(source, key=key)
    if files.format != "parquet":
        _csv_skipped(files, key=key, on_bad_rows="error")


def _csv_skipped(files: TableFiles, *, key: str, on_bad_rows: str) -> dict[str, list[int]]:
    """Per CSV file with faulty records (:func:`~ldpsample.events.reading.csv_lines.csv_faults`),
    the data rows to leave out; raises on the first fault unless ``on_bad_rows`` is ``skip``."""
    skipped: dict[str, list[int]] = {}
    entry = _entry_key(key)
    for file in files.files:
        with phase(log, f"{file}: reading its lines for faulty records"):
            faults = csv_faults(file, separator=_separator(file))
        _SKIPPED.pop(file, None)
        if faults.first is None:
            continue
        cause, line, text = faults.first
        counts = (
            f"{len(faults.missing)} with a field missing, {len(faults.extra)} with one too many"
        )
        if faults.unclosed:
            raise EventsTableError(
                f"{file}, line {line}: unclosed quote in {text!r} (config key {key}); the "
                "rows after it cannot be read: close or remove the quote"
            )
        if on_bad_rows == "error":
            raise EventsTableError(
                f"{file}, line {line}: {cause} in {text!r} (the header has {faults.fields} "
                f"fields; config key {key}); {counts}; {entry}.on_bad_rows: skip skips them"
            )
        skipped[file] = faults.rows.tolist()
        _SKIPPED[file] = faults.rows
        log.warning(
            "%s: skipped %d rows (%s; first at line %d: %r; %s.on_bad_rows: skip)",
            file,
            len(skipped[file]),
            counts,
            line,
            text,
            entry,
        )
    return skipped


def locate_row(source: Source, row: int, *, key: str = "path") -> tuple[str, int]:
    """``(file, row within it)`` of data row ``row`` (0-based) of a table's rows in file order:
    the table itself for one file; for several, their row counts are read (parquet metadata,
    or a scan of a CSV) to find the file."""
    files = table_files(source, key=key)
    if len(files.files) == 1:
        return files.files[0], _in_file(files.files[0], row)
    start = 0
    for file in files.files:
        if files.format == "parquet":
            rows = pl.scan_parquet(file).select(pl.len()).collect().item()
        elif files.format == "csv":
            rows = (
                pl.scan_csv(file, separator=_separator(file), truncate_ragged_lines=True)
                .select(pl.len())
                .collect()
                .item()
            )
        else:
            rows = pl.read_csv(
                file, separator=_separator(file), columns=[0], truncate_ragged_lines=True
            ).height
        rows -= len(_SKIPPED.get(file, ()))
        if row < start + rows:
            return file, _in_file(file, row - start)
        start += rows
    return str(files.path), row


def _in_file(file: str, kept: int) -> int:
    """The row in ``file`` of its ``kept``-th row after the rows a skip left out."""
    skipped = _SKIPPED.get(file)
    if skipped is None or not len(skipped):
        return kept
    # the kept rows before skipped[i] are skipped[i] - i
    return kept + int(np.searchsorted(skipped - np.arange(len(skipped)), kept, side="right"))
