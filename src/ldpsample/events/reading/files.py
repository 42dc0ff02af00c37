"""Which files an events table is: one file, a folder, a glob or a hive-partitioned dataset.

The standard library only: the workflow loads this module by path at parse time (to check
``events.<name>.path`` before any job and to plan one job per partition), and
:mod:`ldpsample.events.reading.scan` reads the files it lists with polars.

``path`` of an events table (or of a public prior table) may be

* one file: ``.parquet``/``.pq``, ``.csv``/``.tsv``/``.txt`` or gzipped CSV (``.gz``);
* a folder: every table file under it, at any depth, in sorted order of their paths
  relative to it; names starting with ``.`` or ``_`` (``_SUCCESS``, ``.crc`` files, hidden
  folders) and files of other suffixes are skipped;
* a glob (``*``, ``?``, ``[...]``; ``**`` spans folders): the matching files, sorted;
* a hive-partitioned dataset: a folder (or a glob) whose sub-folders are named
  ``<column>=<value>``; each such segment of a file's path below the folder (or below the
  glob's first wildcard) is a column of that file's rows, holding the value as text
  (percent-decoded, as Spark and polars write it).

Each file is one *partition*; the table's rows are the files' rows in that order. All files
must have one format (parquet, CSV or gzipped CSV) and, for a hive dataset, the same columns.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote

__all__ = [
    "ROWS_PER_BUCKET",
    "TableFiles",
    "auto_buckets",
    "estimated_rows",
    "is_pattern",
    "list_table_files",
    "parquet_rows",
    "table_format",
]

PathLike = str | os.PathLike[str]

#: Suffix -> format. ``.gz`` is gzipped CSV (``.csv.gz``, ``.tsv.gz``).
_FORMATS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".gz": "csv.gz",
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
}
#: Rows per bucket of ``buckets: auto`` (:func:`auto_buckets`): a bucket's histogram job held
#: about 2.4 GB for 10 million rows of the generated benchmark table (docs/scale.md).
ROWS_PER_BUCKET = 10_000_000
#: Rough bytes per row of each text format for the generated benchmark table's shape (an id
#: pair and a category; the estimate that ``buckets: auto`` starts from for CSV files, see
#: :func:`estimated_rows`; parquet files record their row counts).
BYTES_PER_ROW = {"parquet": 8.0, "csv": 24.0, "csv.gz": 8.0}


def table_format(path: PathLike) -> str | None:
    """``parquet``, ``csv`` or ``csv.gz`` by the file's suffix; None for another suffix."""
    return _FORMATS.get(Path(path).suffix.lower())


def is_pattern(path: PathLike) -> bool:
    """Whether ``path`` is a glob (holds ``*``, ``?`` or ``[``)."""
    return glob.has_magic(str(path))


def _hidden(part: str) -> bool:
    return part.startswith((".", "_"))


class TableFiles(NamedTuple):
    """The files of one table (its partitions), in order (a named tuple, not a dataclass: the
    workflow loads this module by path, outside the package).

    Attributes
    ----------
    path
        The configured path (file, folder or glob), for messages.
    files
        The files, as strings, in the table's order.
    format
        ``parquet``, ``csv`` or ``csv.gz``.
    hive
        Per file, its hive columns (``<column>=<value>`` folders below the dataset's root) as
        ``{column: value}``; every file has the same columns (none for a plain table).
    """

    path: str
    files: tuple[str, ...]
    format: str
    hive: tuple[dict[str, str], ...] = ()

    @property
    def hive_columns(self) -> list[str]:
        """The hive column names (in path order), [] for a plain table."""
        return list(self.hive[0]) if self.hive else []

    def partition(self, index: int) -> TableFiles:
        """The table made of file ``index`` alone (with its hive columns)."""
        return TableFiles(
            self.path,
            (self.files[index],),
            self.format,
            (self.hive[index],) if self.hive else (),
        )

    def total_bytes(self) -> int:
        """The files' total size on disk."""
        return sum(os.path.getsize(f) for f in self.files)


def _root_of_pattern(pattern: str) -> str:
    """The folder before a glob's first wildcard (hive segments are read below it)."""
    parts = Path(pattern).parts
    fixed = []
    for part in parts:
        if glob.has_magic(part):
            break
        fixed.append(part)
    return str(Path(*fixed)) if fixed else "."


def _hive_values(file: str, root: str, *, key: str) -> dict[str, str]:
    relative = Path(os.path.relpath(file, root)).parts[:-1]
    values: dict[str, str] = {}
    for part in relative:
        if "=" in part:
            column, value = part.split("=", 1)
            if column in values:
                raise FileNotFoundError(
                    f"{file}: hive column {column!r} appears twice in the path (config key {key})"
                )
            values[unquote(column)] = unquote(value)
    return values


def list_table_files(path: PathLike, *, key: str = "path") -> TableFiles:
    """The files of the table at ``path`` (a file, folder or glob; see the module docstring).

    Raises
    ------
    FileNotFoundError
        If the file or folder does not exist, a folder holds no table file or a glob matches
        none (the message names ``path`` and ``key``).
    ValueError
        If a file has an unknown suffix (a single file or a glob's match), the files mix
        formats, or hive folders differ in their columns (naming two files).
    """
    text = str(path)
    if is_pattern(text):
        root = _root_of_pattern(text)
        matches = sorted(
            m
            for m in glob.glob(text, recursive=True)
            if os.path.isfile(m) and not any(_hidden(p) for p in Path(m).parts[-1:])
        )
        if not matches:
            raise FileNotFoundError(
                f"{text}: no file matches this pattern (config key {key}; relative paths are "
                "read from the working directory)"
            )
        unknown = [m for m in matches if table_format(m) is None]
        if unknown:
            raise ValueError(
                f"{unknown[0]}: unknown table format (config key {key}: {text!r} matches it); "
                "use .csv, .csv.gz or .parquet files"
            )
        files = matches
    elif os.path.isdir(text):
        root = text
        found = []
        for folder, dirs, names in os.walk(text):
            dirs[:] = [d for d in dirs if not _hidden(d)]
            found += [
                os.path.join(folder, n)
                for n in names
                # .txt only when named: a folder's notes are not table rows
                if not _hidden(n) and table_format(n) is not None and not n.endswith(".txt")
            ]
        files = sorted(found, key=lambda f: Path(os.path.relpath(f, root)).parts)
        if not files:
            raise FileNotFoundError(
                f"{text}: the folder holds no table file (.parquet, .csv, .tsv, .csv.gz) "
                f"(config key {key})"
            )
    elif os.path.isfile(text):
        if table_format(text) is None:
            raise ValueError(
                f"{text}: unknown table format (config key {key}); use .csv, .csv.gz or .parquet"
            )
        return TableFiles(text, (text,), table_format(text) or "")
    else:
        raise FileNotFoundError(
            f"{text}: events table not found (config key {key}; a file, a folder or a glob, "
            "relative paths are read from the working directory)"
        )
    formats = {table_format(f) for f in files}
    if len(formats) > 1:
        first = {}
        for f in files:
            first.setdefault(table_format(f), f)
        examples = ", ".join(sorted(first.values())[:2])
        raise ValueError(
            f"{text}: the table's files mix formats {sorted(formats)} (config key {key}), "
            f"e.g. {examples}; use one format"
        )
    hive = tuple(_hive_values(f, root, key=key) for f in files)
    if any(hive):
        columns = list(hive[0])
        for f, values in zip(files, hive, strict=True):
            if list(values) != columns:
                raise ValueError(
                    f"{f}: hive folders {list(values)} differ from {columns} of {files[0]} "
                    f"(config key {key}); every file needs the same <column>=<value> folders"
                )
    else:
        hive = ()
    return TableFiles(text, tuple(files), formats.pop() or "", hive)


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """An unsigned LEB128 varint of ``data`` at ``at``: (value, next position)."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _skip(data: bytes, at: int, kind: int) -> int:
    """The position after one Thrift compact-protocol value of type ``kind`` at ``at``."""
    if kind in (1, 2):  # bool inside a struct's field header
        return at
    if kind == 3:  # byte
        return at + 1
    if kind in (4, 5, 6):  # zigzag varint integers
        return _varint(data, at)[1]
    if kind == 7:  # double
        return at + 8
    if kind == 8:  # binary / string
        size, at = _varint(data, at)
        return at + size
    if kind in (9, 10):  # list / set
        header = data[at]
        at += 1
        size, element = header >> 4, header & 0x0F
        if size == 15:
            size, at = _varint(data, at)
        for _ in range(size):
            at = at + 1 if element in (1, 2) else _skip(data, at, element)
        return at
    if kind == 11:  # map
        size, at = _varint(data, at)
        if size:
            types = data[at]
            at += 1
            for _ in range(size):
                at = _skip(data, at, types >> 4)
                at = _skip(data, at, types & 0x0F)
        return at
    if kind == 12:  # struct
        while True:
            header = data[at]
            at += 1
            if header == 0:
                return at
            if header >> 4 == 0:  # long form: the field id follows as a zigzag varint
                at = _varint(data, at)[1]
            at = _skip(data, at, header & 0x0F)
    raise ValueError(f"unknown Thrift compact type {kind}")


def parquet_rows(path: PathLike) -> int:
    """The row count a parquet file's footer records (``FileMetaData.num_rows``, field 3),
    read with the standard library: no row is read. ``ValueError`` when the file is no
    parquet file."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size < 12:
            raise ValueError(f"{path}: too short for a parquet file")
        handle.seek(size - 8)
        tail = handle.read(8)
        if tail[4:] != b"PAR1":
            raise ValueError(f"{path}: no parquet footer")
        length = int.from_bytes(tail[:4], "little")
        if length > size - 12:
            raise ValueError(f"{path}: a parquet footer longer than the file")
        handle.seek(size - 8 - length)
        data = handle.read(length)
    at, field = 0, 0
    try:
        while True:
            header = data[at]
            at += 1
            if header == 0:
                break
            delta, kind = header >> 4, header & 0x0F
            if delta:
                field += delta
            else:
                raw, at = _varint(data, at)
                field = (raw >> 1) ^ -(raw & 1)
            if field == 3 and kind == 6:
                raw, at = _varint(data, at)
                return (raw >> 1) ^ -(raw & 1)
            at = _skip(data, at, kind)
    except IndexError as error:
        raise ValueError(f"{path}: a truncated parquet footer") from error
    raise ValueError(f"{path}: the parquet footer records no row count")


def estimated_rows(files: TableFiles) -> int:
    """The table's row count for choosing the number of buckets without reading the table:
    exact for parquet files (their footers, :func:`parquet_rows`), else rough from the files'
    sizes (:data:`BYTES_PER_ROW`; also for a parquet file whose footer cannot be read, which
    its reading job will then name)."""
    if files.format == "parquet":
        try:
            return sum(parquet_rows(f) for f in files.files)
        except (OSError, ValueError):
            pass
    return int(files.total_bytes() / BYTES_PER_ROW[files.format])


def auto_buckets(files: TableFiles) -> int:
    """The number of buckets of ``buckets: auto``: one per :data:`ROWS_PER_BUCKET` estimated
    rows (:func:`estimated_rows`), at least 1."""
    return max(1, -(-estimated_rows(files) // ROWS_PER_BUCKET))
