"""Reading raw text files so that every fault names the file (and the line where known).

Shared by the MovieLens and Gowalla readers: :func:`read_raw_bytes` turns a truncated or
corrupt gzip stream and an empty file into a ``ValueError`` naming the file, and
:func:`first_bad_line` finds the first line whose field count or field types are wrong, so a
fast columnar parse that fails can be explained by file, line and content.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["first_bad_line", "read_raw_bytes"]


def read_raw_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a text file, gunzipped if it is gzip data.

    Raises
    ------
    FileNotFoundError
        If the file does not exist (naming it).
    ValueError
        If the gzip stream is truncated or corrupt, or the file holds no data.
    """
    path = Path(path)
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as exc:
            raise ValueError(
                f"{path}: truncated or corrupt gzip file ({exc}); download or copy it again"
            ) from None
    if not data.strip():
        raise ValueError(f"{path}: empty file (no data lines)")
    return data


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
    """
    shown = sep if shown_sep is None else shown_sep
    for lineno, line in enumerate(text.splitlines(), start=1):
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
