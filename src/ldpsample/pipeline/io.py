"""Atomic file output: a reader never sees a half-written result.

Every writer writes to a temporary file in the destination folder and then renames it over
the destination with :func:`os.replace`, which is atomic on POSIX file systems. If writing
fails, the temporary file is removed and the destination is left as it was.

Results are written 0666 less the umask (readable by the others sharing the folder); a
*private* file (``private=True``: a ledger's totals, users' histograms, per-user tables, a
roster) keeps the temporary file's 0600 and its folder is made 0700, so users' data is never
readable by anyone but the operator.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

__all__ = [
    "atomic_path",
    "concat_parquet",
    "default_permissions",
    "write_csv",
    "write_figure",
    "write_json",
    "write_parquet",
    "write_text",
]


def default_permissions(path: str | os.PathLike[str]) -> None:
    """Give a file the permissions a plain ``open()`` would (0666 less the umask, e.g. 0644).

    Temporary files (``tempfile.mkstemp``, which pooch's downloads go through too) are 0600:
    renamed into place, a result or a download would be unreadable to others sharing the
    folder.
    """
    umask = os.umask(0)
    os.umask(umask)
    Path(path).chmod(0o666 & ~umask)


@contextlib.contextmanager
def atomic_path(
    path: str | os.PathLike[str], *, fsync: bool = True, private: bool = False
) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success.

    ``private``: the file stays 0600 and its folder becomes 0700 (see the module docstring);
    otherwise the file gets :func:`default_permissions`.

    The temporary name keeps the destination's suffix, so libraries that choose a format by
    suffix (matplotlib, polars) behave as for the real name. With ``fsync`` (default) the
    temporary file's content is flushed to disk before the rename, so a crash cannot leave a
    renamed but empty file behind.
    """
    dest = Path(path)
    dest.parent.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
    if private:  # also a folder Snakemake made for the output (with the umask's mode)
        dest.parent.chmod(0o700)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{dest.name}.", suffix=f".tmp{dest.suffix}", dir=dest.parent
    )
    os.close(fd)
    tmp = Path(tmp_name)
    if not private:
        default_permissions(tmp)  # mkstemp creates 0600
    try:
        yield tmp
        if fsync and tmp.exists():
            with open(tmp, "rb") as handle:
                os.fsync(handle.fileno())
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def concat_parquet(
    paths: str | os.PathLike[str] | list[str | os.PathLike[str]],
    *,
    sort_by: list[str] | None = None,
) -> pl.DataFrame:
    """Read parquet parts of one schema and concatenate them, sorted for byte-stable output.

    ``sort_by`` names the sort columns; None sorts by every column, in the table's order. A
    single path (Snakemake passes a lone input as a string) is one part.
    """
    parts = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    frame = pl.concat([pl.read_parquet(path) for path in parts])
    return frame.sort(frame.columns if sort_by is None else sort_by)


def write_parquet(
    frame: pl.DataFrame, path: str | os.PathLike[str], *, private: bool = False
) -> None:
    """Write ``frame`` to parquet atomically (``private``: 0600, see :func:`atomic_path`)."""
    with atomic_path(path, private=private) as tmp:
        frame.write_parquet(tmp)


def write_csv(frame: pl.DataFrame, path: str | os.PathLike[str], *, private: bool = False) -> None:
    """Write ``frame`` to CSV atomically (``private``: 0600, see :func:`atomic_path`)."""
    with atomic_path(path, private=private) as tmp:
        frame.write_csv(tmp)


def write_figure(figure: Any, path: str | os.PathLike[str], **savefig_kwargs: Any) -> None:
    """Save a matplotlib figure atomically (format from the suffix of ``path``)."""
    fmt = Path(path).suffix.lstrip(".") or None
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format=fmt, **savefig_kwargs)


def write_text(text: str, path: str | os.PathLike[str], *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding=encoding)


def write_json(obj: Any, path: str | os.PathLike[str]) -> None:
    """Write ``obj`` as indented, key-sorted JSON atomically (byte-stable for equal input)."""
    write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n", path)
