"""The record-level faults of a CSV file that its parsed columns cannot show: rows with a field
missing or a field too many, and a quote that is never closed, each with its line and text.

A CSV reader fills a short row's absent fields with nulls and stops on a long one (or, told to
truncate, drops its extra fields silently), and an unclosed quote swallows the rest of the file
into one field. :func:`csv_faults` reads the file once more, line by line (one string column,
no quoting), counts each record's separators outside quoted text, and returns the records whose
field count differs from the header's: their data rows (so a scan can skip them) and the first
one's line and text (so an error can name it). A quoted field may span lines (its quotes are
balanced over them); a record is named by its first line.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

__all__ = ["CsvFaults", "csv_faults"]

#: A byte that no text table holds: the line scan's separator, so that a line is one field.
_NO_SEPARATOR = "\x1f"
#: Characters of a faulty line shown in a message.
SHOWN = 120


@dataclass(frozen=True)
class CsvFaults:
    """The faulty records of one CSV file.

    Attributes
    ----------
    fields
        The header's field count.
    missing, extra
        0-based data rows (the header's next record is row 0) with fewer or more fields than
        the header, sorted.
    first
        ``(cause, line, text)`` of the first faulty record in file order (``cause`` is
        ``missing field``, ``extra field`` or ``unclosed quote``; ``line`` 1-based), or None.
    unclosed
        Whether a quote opened on ``first``'s line is never closed (the rows after it cannot be
        read, so it is never skipped).
    """

    fields: int
    missing: np.ndarray
    extra: np.ndarray
    first: tuple[str, int, str] | None
    unclosed: bool

    @property
    def rows(self) -> np.ndarray:
        """Every faulty data row, sorted."""
        return np.union1d(self.missing, self.extra)


def _fields(text: pl.Expr, separator: str) -> pl.Expr:
    """Fields of a record: its separators outside quoted text, plus one."""
    return text.str.replace_all(r'"[^"]*"', "").str.count_matches(separator, literal=True) + 1


def _shown(text: str | None) -> str:
    text = "" if text is None else text
    return text if len(text) <= SHOWN else text[:SHOWN] + "..."


def csv_faults(file: str, *, separator: str) -> CsvFaults:
    """The faulty records of ``file`` (plain or gzipped CSV with a header line).

    One streaming pass keeps the lines whose field count differs from the header's or that hold
    an odd number of quotes (the first and last line of a quoted field that spans lines); the
    quotes pair up line by line, a pair's lines are one record, and an odd one out is an
    unclosed quote. Blank lines are records of one field (a CSV reader reads them as rows of
    nulls).
    """
    reader = dict(has_header=False, separator=_NO_SEPARATOR, quote_char=None, new_columns=["l"])
    if file.lower().endswith(".gz"):
        lines = pl.read_csv(file, **reader).lazy()
    else:
        lines = pl.scan_csv(file, **reader)
    header = lines.head(1).collect()
    if header.height == 0:
        return CsvFaults(0, np.zeros(0, np.int64), np.zeros(0, np.int64), None, False)
    fields = header.select(_fields(pl.col("l"), separator)).item()
    text = pl.col("l").fill_null("")
    flagged = (
        lines.with_row_index("line")
        .with_columns(
            _fields(text, separator).alias("fields"),
            (text.str.count_matches('"', literal=True) % 2 == 1).alias("odd"),
        )
        .filter((pl.col("fields") != fields) | pl.col("odd"))
        .collect(engine="streaming")
    )
    line = flagged["line"].to_numpy().astype(np.int64)
    count = flagged["fields"].to_numpy().astype(np.int64)
    odd = flagged["odd"].to_numpy()
    texts = flagged["l"].to_list()
    opens = line[odd]
    unclosed_line = int(opens[-1]) if len(opens) % 2 else None
    starts, ends = opens[0 : len(opens) - (len(opens) % 2) : 2], opens[1::2]
    # lines inside a quoted field that spans lines are no records of their own
    span = np.searchsorted(starts, line, side="left") - 1  # the last span starting before
    inside = (span >= 0) & (line <= ends[np.maximum(span, 0)]) if len(starts) else line < 0
    if unclosed_line is not None:
        inside |= line >= unclosed_line
    records = _spanning_records(lines, starts, ends, separator) if len(starts) else []
    own = np.flatnonzero(~inside & ~np.isin(line, starts) & (count != fields))
    records += [(int(line[i]), int(count[i]), texts[i]) for i in own]
    records = [r for r in records if r[1] != fields]
    records.sort()
    # a record's data row: its first line, less the header and the continuation lines before it
    continued = np.cumsum(np.r_[0, ends - starts])
    record_lines = np.array([r[0] for r in records], np.int64)
    before = continued[np.searchsorted(ends, record_lines, side="left")]
    rows = record_lines - 1 - before
    counts = np.array([r[1] for r in records], np.int64)
    missing, extra = rows[counts < fields], rows[counts > fields]
    first = None
    if records:
        n, c, t = records[0]
        first = ("missing field" if c < fields else "extra field", n + 1, _shown(t))
    if unclosed_line is not None and (first is None or unclosed_line < first[1] - 1):
        index = int(np.flatnonzero(line == unclosed_line)[0])
        first = ("unclosed quote", unclosed_line + 1, _shown(texts[index]))
    return CsvFaults(int(fields), missing, extra, first, unclosed_line is not None)


def _spanning_records(
    lines: pl.LazyFrame, starts: np.ndarray, ends: np.ndarray, separator: str
) -> list[tuple[int, int, str]]:
    """``(first line, fields, text)`` of each record whose quoted field spans the lines
    ``starts[i]`` to ``ends[i]``: their lines joined, read by a second scan of those lines only."""
    span = pl.DataFrame({"start": starts, "end": ends})
    joined = (
        lines.with_row_index("line")
        .with_columns(pl.col("line").cast(pl.Int64))
        .join_where(span.lazy(), pl.col("line") >= pl.col("start"), pl.col("line") <= pl.col("end"))
        .group_by("start")
        .agg(pl.col("l").sort_by("line").fill_null("").str.join("\n"))
        .with_columns(_fields(pl.col("l"), separator).alias("fields"))
        .sort("start")
        .collect()
    )
    return [
        (int(s), int(f), t)
        for s, f, t in zip(joined["start"], joined["fields"], joined["l"], strict=True)
    ]
