"""Avazu: the official CSV streamed once into parquet, validated, for the events stage.

The Avazu experiment of Zamanlooy, Diaz & Asoodeh (2025) treats a device (``device_id``) as a
user and a website (``site_id``) as an item. Each anonymised attribute (``C1``, ``C14`` … ``C21``)
splits the rows into subcategories, one per value. Within a subcategory:

1. the websites are the ``top_sites`` (100) with the most clicks (``site_rank_by="clicks"``;
   ties broken by ascending ``site_id``, which is what pandas' ``nlargest`` on a sorted group-by
   does in the published code);
2. a device is kept if it has at least ``min_rows`` (20) rows — impressions
   (``user_activity="impressions"``, published code) or clicks (``"clicks"``, paper text) —
   counted over the whole file before anything else (``activity_scope="global"``, published
   code) or over the subcategory's top websites (``activity_scope="top_sites"``);
3. its private ``p`` is its normalised impression counts over the top websites; the public
   ``q`` is the mean of the kept devices' ``p``;
4. a subcategory is kept if it has at least ``min_users`` (100; the arXiv version says 1000)
   devices.

Device ``a99f214a`` is a placeholder shared by most rows; by default it is one user like any
other (published code); ``exclude_placeholder_device=True`` drops its rows first.

:func:`convert_avazu_to_parquet` streams the (gzipped) CSV once into parquet, reading only
``device_id, site_id, click, C1, C14..C21`` with explicit types (ids as strings, the rest as
integers), validating the header and every value on the way, so that the 40 M-row file is never
held as Python objects.

The pipeline reads the converted parquet as an events table: its histogram jobs run
:func:`ldpsample.events.build_event_histograms` with the rules above as events options
(docs/own-data.md) and :mod:`ldpsample.experiments.avazu.tables` restates the results in the Avazu
layout. The tests' oracle (``tests/real_data_oracle.py``) builds the same histograms
independently.

Malformed input, case by case:

* missing file → ``FileNotFoundError`` naming it;
* header without the needed columns → ``ValueError`` naming file, line 1 and the missing names;
* a row with the wrong number of fields → ``ValueError`` naming file, line and counts
  (``on_bad_rows="error"``, default), or skipped, counted and logged with its line
  (``on_bad_rows="skip"``);
* a non-integer (or empty) value in an integer column, ``click`` not 0/1, an empty
  ``device_id``/``site_id`` → always ``ValueError`` naming file, line, column and value: such a
  file is not Avazu and no result computed from it could be trusted;
"""

from __future__ import annotations

import gzip
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from ldpsample.datasets.registry import OFFICIAL_ROW_COUNTS
from ldpsample.pipeline.io import atomic_path

__all__ = [
    "AVAZU_ATTRIBUTES",
    "AVAZU_COLUMNS",
    "AVAZU_INTEGER_COLUMNS",
    "PLACEHOLDER_DEVICE_ID",
    "ConversionStats",
    "convert_avazu_to_parquet",
    "placeholder_share",
]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

#: Header of the official ``train`` file (24 columns).
AVAZU_COLUMNS: tuple[str, ...] = (
    "id",
    "click",
    "hour",
    "C1",
    "banner_pos",
    "site_id",
    "site_domain",
    "site_category",
    "app_id",
    "app_domain",
    "app_category",
    "device_id",
    "device_ip",
    "device_model",
    "device_type",
    "device_conn_type",
    "C14",
    "C15",
    "C16",
    "C17",
    "C18",
    "C19",
    "C20",
    "C21",
)

#: The attributes whose values define subcategories.
AVAZU_ATTRIBUTES: tuple[str, ...] = ("C1", "C14", "C15", "C16", "C17", "C18", "C19", "C20", "C21")

#: Integer columns kept in the parquet (``click`` and the attributes).
AVAZU_INTEGER_COLUMNS: tuple[str, ...] = ("click", *AVAZU_ATTRIBUTES)

_STRING_COLUMNS = ("device_id", "site_id")
_KEPT_COLUMNS = ("device_id", "site_id", *AVAZU_INTEGER_COLUMNS)

#: The device_id shared by most rows (a placeholder, not a device).
PLACEHOLDER_DEVICE_ID = "a99f214a"

_INT_PATTERN = r"^-?[0-9]+$"


# --------------------------------------------------------------------------------------------
# CSV → parquet
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConversionStats:
    """What :func:`convert_avazu_to_parquet` read and wrote."""

    source: Path
    destination: Path
    rows: int
    skipped_rows: int
    partial: bool
    header_is_official: bool


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def _read_header(path: Path) -> list[str]:
    opener = gzip.open if _is_gzip(path) else open
    try:
        with opener(path, "rb") as handle:
            line = handle.readline()
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path}: cannot read the header: {exc}") from exc
    if not line.strip():
        raise ValueError(f"{path}, line 1: empty file or empty header line")
    return line.decode("utf-8", errors="replace").rstrip("\r\n").split(",")


def convert_avazu_to_parquet(
    src: PathLike,
    dst: PathLike,
    *,
    on_bad_rows: Literal["error", "skip"] = "error",
    block_size: int = 1 << 24,
    row_group_rows: int = 1_000_000,
    compression: str = "zstd",
) -> ConversionStats:
    """Stream an Avazu CSV (gzipped or not) into parquet once, with validation.

    Only ``device_id, site_id`` (strings) and ``click, C1, C14..C21`` (Int64) are kept, in file
    order. The CSV is read in blocks (``pyarrow.csv.open_csv`` over a gzip stream, one thread),
    so memory stays at a few blocks whatever the file size; the parquet is written to a
    temporary file and renamed onto ``dst`` when complete.

    Parameters
    ----------
    src
        ``train.gz``, ``train.csv`` or any CSV with the official header (gzip is detected
        from the content, not the name).
    dst
        Parquet file to write.
    on_bad_rows
        What to do with a row whose number of fields differs from the header's: ``"error"``
        (default) raises ``ValueError`` naming the file and line; ``"skip"`` drops it, logs
        its line and counts it in :attr:`ConversionStats.skipped_rows`.
    block_size
        Bytes of CSV parsed per block.
    row_group_rows
        Rows per parquet row group (blocks are gathered up to this size).
    compression
        Parquet compression codec.

    Returns
    -------
    ConversionStats
        Rows written, rows skipped, whether the file looks partial (fewer rows than the
        official 40,428,967) and whether the header is exactly the official one.

    Raises
    ------
    FileNotFoundError
        If ``src`` does not exist.
    ValueError
        For a header without the needed columns, a malformed row (see above), a non-integer
        value in an integer column, ``click`` outside {0, 1}, an empty id, or a corrupted
        (e.g. truncated gzip) file. The message names the file, line and column.
    """
    src, dst = Path(src), Path(dst)
    if on_bad_rows not in ("error", "skip"):
        raise ValueError(f"on_bad_rows must be 'error' or 'skip', got {on_bad_rows!r}")
    if not src.is_file():
        raise FileNotFoundError(f"Avazu file not found: {src}")
    official = _check_header(src)
    invalid = _InvalidRows(src, on_bad_rows)
    schema = pa.schema(
        [(c, pa.string()) for c in _STRING_COLUMNS]
        + [(c, pa.int8() if c == "click" else pa.int64()) for c in AVAZU_INTEGER_COLUMNS]
    )
    with atomic_path(dst) as tmp:
        rows = _write_parquet(
            src,
            tmp,
            schema,
            invalid,
            block_size=block_size,
            row_group_rows=row_group_rows,
            compression=compression,
        )
    partial = rows < OFFICIAL_ROW_COUNTS[("avazu", "train")]
    _log_conversion(src, dst, rows, skipped=len(invalid.skipped_lines), partial=partial)
    return ConversionStats(src, dst, rows, len(invalid.skipped_lines), partial, official)


def _check_header(src: Path) -> bool:
    """Check the header has the kept columns once each; whether it is the official one."""
    header = _read_header(src)
    missing = [c for c in _KEPT_COLUMNS if c not in header]
    if missing:
        raise ValueError(
            f"{src}, line 1: the header lacks the columns {missing}; expected the official "
            f"Avazu header {','.join(AVAZU_COLUMNS)}, got {','.join(header)[:300]!r}"
        )
    duplicated = sorted({c for c in header if header.count(c) > 1})
    if duplicated:
        raise ValueError(f"{src}, line 1: duplicated header columns {duplicated}")
    official = tuple(header) == AVAZU_COLUMNS
    if not official:
        log.info("%s: header differs from the official one but has the needed columns", src)
    return official


class _InvalidRows:
    """pyarrow's handler of rows with the wrong field count (``on_bad_rows``), and the error
    that names the file and line when reading fails."""

    def __init__(self, src: Path, on_bad_rows: str) -> None:
        self.src = src
        self.on_bad_rows = on_bad_rows
        self.skipped_lines: list[int] = []
        self.first_invalid: list[pacsv.InvalidRow] = []
        # empty lines with no data row after them so far: harmless if the file ends there
        self.empty_lines_at_end: list[int] = []

    def __call__(self, row: pacsv.InvalidRow) -> str:
        if self.on_bad_rows == "error":
            # Raising here would be swallowed by pyarrow: remember the row, let it fail.
            self.first_invalid.append(row)
            return "error"
        self.skipped_lines.append(row.number if row.number is not None else -1)
        if len(self.skipped_lines) <= 10:
            log.warning(
                "%s, line %s: skipped a row with %d fields instead of %d: %r",
                self.src,
                row.number,
                row.actual_columns,
                row.expected_columns,
                row.text[:200],
            )
        return "skip"

    def error(self, exc: Exception, rows: int) -> ValueError:
        """The ValueError for a read that failed after ``rows`` data rows."""
        if self.first_invalid:
            row = self.first_invalid[0]
            return ValueError(
                f"{self.src}, line {row.number}: expected {row.expected_columns} fields, got "
                f"{row.actual_columns}: {row.text!r:.200}"
            )
        # the line of the last data row read (1, the header, before any)
        last = _line_of(rows - 1, 0, self.skipped_lines) if rows else 1
        if isinstance(exc, pa.ArrowInvalid):
            # pyarrow counts rows as lines of the file, header included ("Row #4")
            row = re.search(r"Row #(\d+)", str(exc))
            where = f", line {row.group(1)}" if row else f" after line {last}"
            return ValueError(f"{self.src}{where}: cannot parse the CSV: {exc}")
        return ValueError(
            f"{self.src}: cannot read after line {last} (data row {rows}; corrupted or "
            f"truncated file?): {exc}"
        )


def _open_csv(
    stream: pa.NativeFile, invalid: _InvalidRows, block_size: int
) -> pacsv.CSVStreamingReader:
    """A one-thread pyarrow CSV reader of the kept columns, as strings."""
    return pacsv.open_csv(
        stream,
        read_options=pacsv.ReadOptions(use_threads=False, block_size=block_size),
        parse_options=pacsv.ParseOptions(
            invalid_row_handler=invalid, ignore_empty_lines=False, quote_char=False
        ),
        convert_options=pacsv.ConvertOptions(
            include_columns=list(_KEPT_COLUMNS),
            column_types={c: pa.string() for c in _KEPT_COLUMNS},
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    )


def _write_parquet(
    src: Path,
    tmp: Path,
    schema: pa.Schema,
    invalid: _InvalidRows,
    *,
    block_size: int,
    row_group_rows: int,
    compression: str,
) -> int:
    """Read ``src`` block by block, validate and convert each block, write row groups of about
    ``row_group_rows`` rows to ``tmp``; the number of data rows written."""
    rows = 0
    pending: list[pa.RecordBatch] = []
    pending_rows = 0
    stream = None
    writer = pq.ParquetWriter(str(tmp), schema, compression=compression)
    try:
        try:
            stream = pa.input_stream(str(src), compression="gzip" if _is_gzip(src) else None)
            reader = _open_csv(stream, invalid, block_size)
        except (pa.ArrowInvalid, OSError) as exc:
            raise invalid.error(exc, rows) from exc
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except (pa.ArrowInvalid, OSError) as exc:
                raise invalid.error(exc, rows) from exc
            batch = _drop_empty_lines(src, batch, first_row=rows, invalid=invalid)
            converted = _convert_batch(
                src, batch, schema, first_row=rows, skipped=invalid.skipped_lines
            )
            rows += converted.num_rows
            pending.append(converted)
            pending_rows += converted.num_rows
            if pending_rows >= row_group_rows:
                writer.write_table(pa.Table.from_batches(pending, schema=schema))
                pending, pending_rows = [], 0
        if pending:
            writer.write_table(pa.Table.from_batches(pending, schema=schema))
        if invalid.empty_lines_at_end:
            log.info(
                "%s: ignored %d empty line(s) at the end of the file (from line %d)",
                src,
                len(invalid.empty_lines_at_end),
                invalid.empty_lines_at_end[0],
            )
        if rows == 0:
            writer.write_table(schema.empty_table())
    finally:
        writer.close()
        if stream is not None:
            stream.close()
    return rows


def _log_conversion(src: Path, dst: Path, rows: int, *, skipped: int, partial: bool) -> None:
    if skipped:
        log.warning("%s: skipped %d malformed rows in total", src, skipped)
    if partial:
        log.warning(
            "%s is a PARTIAL copy: %d of %d official rows (%.3f %%); results are not the paper's",
            src,
            rows,
            OFFICIAL_ROW_COUNTS[("avazu", "train")],
            100 * rows / OFFICIAL_ROW_COUNTS[("avazu", "train")],
        )
    log.info("converted %s → %s: %d rows", src, dst, rows)


def _line_of(first_row: int, index: int, skipped: list[int]) -> int:
    """Physical line (1-based, header = line 1) of data row ``first_row + index``."""
    target = first_row + index  # 0-based among kept rows
    line = target + 2
    for skipped_line in sorted(s for s in skipped if s > 0):
        if skipped_line <= line:
            line += 1
        else:
            break
    return line


def _drop_empty_lines(
    src: Path, batch: pa.RecordBatch, *, first_row: int, invalid: _InvalidRows
) -> pa.RecordBatch:
    """Drop the rows pyarrow reads from empty lines (a row of empty fields).

    Empty lines at the end of the file are harmless (kept in ``invalid.empty_lines_at_end``
    until a data row follows, if one does); an empty line followed by data is a malformed row,
    an error or skipped as ``on_bad_rows`` says.
    """
    skipped = invalid.skipped_lines
    empty = None
    if pc.any(pc.equal(pc.utf8_length(batch.column("device_id")), 0)).as_py():
        for name in _KEPT_COLUMNS:  # (fast path above: an empty line has an empty device_id)
            is_empty = pc.equal(pc.utf8_length(batch.column(name)), 0)
            empty = is_empty if empty is None else pc.and_(empty, is_empty)
    mask = np.zeros(batch.num_rows, dtype=bool) if empty is None else empty.to_numpy(False)
    data = np.flatnonzero(~mask)
    if invalid.empty_lines_at_end and data.size:
        _malformed_empty_lines(src, invalid.empty_lines_at_end, invalid)
        invalid.empty_lines_at_end = []
    indices = np.flatnonzero(mask)
    if not indices.size:
        return batch
    last_data = data[-1] if data.size else -1
    lines = [(int(i) < last_data, _line_of(first_row, int(i), skipped)) for i in indices]
    _malformed_empty_lines(src, [line for inside, line in lines if inside], invalid)
    invalid.empty_lines_at_end += [line for inside, line in lines if not inside]
    return batch.filter(pc.invert(empty))


def _malformed_empty_lines(src: Path, lines: list[int], invalid: _InvalidRows) -> None:
    """Empty lines followed by data: an error (``on_bad_rows="error"``) or skipped rows."""
    if lines and invalid.on_bad_rows == "error":
        raise ValueError(f"{src}, line {lines[0]}: empty line (expected 24 fields)")
    for line in lines:
        if len(invalid.skipped_lines) < 10:
            log.warning("%s, line %d: skipped an empty line", src, line)
        invalid.skipped_lines.append(line)


def _convert_batch(
    src: Path, batch: pa.RecordBatch, schema: pa.Schema, *, first_row: int, skipped: list[int]
) -> pa.RecordBatch:
    arrays = []
    for field in schema:
        column = batch.column(field.name)
        if field.name in _STRING_COLUMNS:
            empty = pc.equal(pc.utf8_length(column), 0)
            if pc.any(empty).as_py():
                index = pc.index(empty, True).as_py()
                raise ValueError(
                    f"{src}, line {_line_of(first_row, index, skipped)}, column "
                    f"{field.name!r}: empty value"
                )
            arrays.append(column)
            continue
        try:
            values = pc.cast(column, pa.int64())
        except pa.ArrowInvalid as exc:
            # Only on failure: find the first offending value to name its line.
            ok = pc.match_substring_regex(column, _INT_PATTERN)
            if not pc.all(ok).as_py():
                index = pc.index(ok, False).as_py()
                raise ValueError(
                    f"{src}, line {_line_of(first_row, index, skipped)}, column "
                    f"{field.name!r}: expected an integer, got {column[index].as_py()!r}"
                ) from None
            raise ValueError(
                f"{src}, rows {first_row + 1}..{first_row + len(column)}, column "
                f"{field.name!r}: integer out of range ({exc})"
            ) from exc
        if field.name == "click":
            valid = pc.is_in(values, pa.array([0, 1], pa.int64()))
            if not pc.all(valid).as_py():
                index = pc.index(valid, False).as_py()
                raise ValueError(
                    f"{src}, line {_line_of(first_row, index, skipped)}, column 'click': "
                    f"expected 0 or 1, got {values[index].as_py()!r}"
                )
            values = pc.cast(values, pa.int8())
        arrays.append(values)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def placeholder_share(parquet: PathLike) -> dict[str, float | int]:
    """Rows, devices and the placeholder device's share of the rows of a converted file."""
    summary = (
        pl.scan_parquet(parquet)
        .select(
            pl.len().alias("rows"),
            pl.col("device_id").n_unique().alias("devices"),
            (pl.col("device_id") == PLACEHOLDER_DEVICE_ID).sum().alias("placeholder_rows"),
        )
        .collect()
        .row(0, named=True)
    )
    rows = summary["rows"]
    summary["placeholder_share"] = summary["placeholder_rows"] / rows if rows else float("nan")
    return summary
