"""Zip archives: :func:`extract_zip` checks an archive's members, extracts them beside the
target and moves the folder into place.

Standard library only.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
import zlib
from pathlib import Path

__all__ = ["extract_zip"]

PathLike = str | os.PathLike[str]


def extract_zip(
    archive: PathLike, dest_dir: PathLike, *, folder: str, required: tuple[str, ...] = ()
) -> Path:
    """Extract ``folder/`` from a zip archive into ``dest_dir/folder``.

    The members are checked first (``folder/<name>`` for each of ``required``, no unsafe
    paths), extracted into a temporary folder beside the target and then moved into place:
    an empty or absent target (Snakemake creates a rule's output folder before the job) is
    replaced as a whole by one rename; files of a non-empty target are replaced one by one.

    Raises
    ------
    ValueError
        If the archive is not a readable zip, lacks a required member (named in the
        message) or has a member with an unsafe path.
    """
    archive, dest_dir = Path(archive), Path(dest_dir)
    target = dest_dir / folder
    dest_dir.mkdir(parents=True, exist_ok=True)
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"{archive}: not a readable zip archive ({exc})") from exc
    with zf:
        names = zf.namelist()
        missing = [f"{folder}/{name}" for name in required if f"{folder}/{name}" not in names]
        if not any(n.startswith(folder + "/") for n in names):
            raise ValueError(f"{archive}: no member under {folder}/ (members: {names[:5]})")
        if missing:
            raise ValueError(f"{archive}: the archive lacks {', '.join(missing)}")
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder}.", suffix=".tmp", dir=dest_dir))
        try:
            root = tmp.resolve()
            for name in names:
                resolved = (tmp / name).resolve()
                if root not in resolved.parents and resolved != root:
                    raise ValueError(f"{archive}: unsafe member path {name!r}")
            try:
                zf.extractall(tmp)
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
                raise ValueError(f"{archive}: corrupt zip archive ({exc})") from exc
            if target.is_dir() and not any(target.iterdir()):
                target.rmdir()
            if not target.exists():
                os.replace(tmp / folder, target)
            else:
                for path in sorted((tmp / folder).rglob("*")):
                    if path.is_file():
                        dest = target / path.relative_to(tmp / folder)
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        os.replace(path, dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target
