"""Reading raw text files so that every fault names the file (and the line where known).

Shared by the MovieLens and Gowalla readers: :func:`read_raw_bytes` turns a truncated or
corrupt gzip stream and an empty file into a ``ValueError`` naming the file,
:func:`read_text_table` parses a headerless table with polars, line numbers kept and blank
lines (harmless, often one at the end) dropped, and :func:`first_bad_line` finds the first
line whose field count or field types are wrong, so a fast columnar parse that fails can be
explained by file, line and content.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

__all__ = ["first_bad_line", "read_raw_bytes", "read_text_table"]


def read_raw_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a text file, gunzipped if it is gzip data.

    Raises
    ------
    FileNotFoundError
        If the file does not exist (naming it).
    ValueError
        If the gzip stream is truncated or corrupt (naming the line where it breaks off), or
        the file holds no data.
    """
    path = Path(path)
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as exc:
            raise ValueError(
                f"{path}, line {_readable_lines(data) + 1}: truncated or corrupt gzip file "
                f"({exc}); download or copy it again"
            ) from None
    if not data.strip():
        raise ValueError(f"{path}: empty file (no data lines)")
    return data


def _readable_lines(data: bytes) -> int:
    """Complete lines a damaged gzip stream yields before it breaks off."""
    stream = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        return stream.decompress(data).count(b"\n")
    except zlib.error:
        return 0


def read_text_table(
    data: bytes, columns: dict[str, pl.DataType], *, separator: str
) -> pl.DataFrame:
    """Parse a headerless text table with polars, with a column ``line`` (1-based line number).

    Blank lines are dropped wherever they are (a trailing one is common and harmless; polars
    reads one as a row of nulls). Other rows with empty or missing fields keep their nulls, for
    the caller's check, which can name the line with :func:`first_bad_line`; a line polars
    cannot parse raises polars' error.
    """
    blank = len(data) - len(data.lstrip())
    start = data.rfind(b"\n", 0, blank) + 1  # the first line that is not blank
    body = data[start:]
    frame = pl.read_csv(
        io.BytesIO(body), separator=separator, has_header=False, schema=columns, quote_char=None
    )
    nulls = pl.sum_horizontal(pl.col(list(columns)).is_null())
    frame = frame.with_row_index("line", offset=data.count(b"\n", 0, start) + 1)
    empty = frame.filter(nulls == len(columns))["line"]
    if empty.len():
        lines = data.split(b"\n")
        blank_rows = pl.Series([not lines[number - 1].strip() for number in empty])
        frame = frame.filter(~pl.col("line").is_in(empty.filter(blank_rows).implode()))
    return frame


def first_bad_line(
    path: str | os.PathLike[str],
    text: str,
    *,
    sep: str,
    fields: Sequence[tuple[str, Callable[[str], object]]],
    shown_sep: str | None = None,
) -> ValueError | None:
    """The error for the first line of ``text`` with the wrong field count or a bad field.

    Parameters
    ----------
    path
        The file, for the message.
    text
        Its decoded content.
    sep
        Field separator.
    fields
        ``(name, parse)`` per field, e.g. ``("user_id", int)``; ``parse`` raises
        ``ValueError`` on a bad value.
    shown_sep
        Separator shown in the message (when ``text`` was rewritten from another one).

    Returns
    -------
    ValueError or None
        ``"<path>, line <n>: ..."`` for the first bad line, or None if every line parses.
        Blank lines are skipped (a trailing one is harmless); line numbers count them.
    """
    shown = sep if shown_sep is None else shown_sep
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        values = line.split(sep)
        if len(values) != len(fields):
            return ValueError(
                f"{path}, line {lineno}: expected {len(fields)} fields separated by "
                f"{shown!r}, got {len(values)}: {line.replace(sep, shown)!r:.200}"
            )
        for (name, parse), value in zip(fields, values, strict=True):
            try:
                parse(value)
            except ValueError:
                kind = getattr(parse, "__name__", "")
                kind = {"int": "an integer", "float": "a number"}.get(kind, f"a valid {kind}")
                return ValueError(
                    f"{path}, line {lineno}, field {name!r}: expected {kind}, got {value!r}"
                )
    return None
