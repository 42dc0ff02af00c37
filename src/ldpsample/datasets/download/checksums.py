"""Digests of downloaded files and the recorded sha256 (``<file>.sha256``).

GroupLens publishes md5 sums (checked by :func:`~ldpsample.datasets.download.http.download_file`);
Kaggle and SNAP publish none, so :func:`record_sha256` writes the sha256 of the first download
next to the file (``sha256sum`` format) and checks every later download against it. A mismatch
says where the record is and how to accept a new version of the file (:func:`record_hint`).

Uses the standard library, :mod:`~ldpsample.datasets.download.errors` and the atomic writer of
:mod:`ldpsample.pipeline.io`.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from ldpsample.datasets.download.errors import ChecksumError
from ldpsample.pipeline.io import write_text

__all__ = ["file_digest", "read_recorded_sha256", "record_hint", "record_sha256"]

#: The package's one logger, named for the package (as the job logs and
#: scripts/download_dataset.py, which sends it to the console, know it).
log = logging.getLogger("ldpsample.datasets.download")

PathLike = str | os.PathLike[str]


def file_digest(path: PathLike, algorithm: str = "sha256", *, chunk_size: int = 1 << 20) -> str:
    """Hex digest of a file's bytes (``algorithm`` is any :mod:`hashlib` name)."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def _sha256_record_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def read_recorded_sha256(path: Path) -> str | None:
    """The sha256 recorded in ``<path>.sha256``, or ``None`` where there is no record.

    Raises
    ------
    ChecksumError
        If the record is not a ``sha256sum`` line.
    """
    record = _sha256_record_path(path)
    if not record.exists():
        return None
    text = record.read_text(encoding="utf-8").split()
    if not text or len(text[0]) != 64:
        raise ChecksumError(f"{record}: not a sha256sum line: {record.read_text()!r:.200}")
    return text[0].lower()


def record_sha256(path: PathLike) -> str:
    """Record ``path``'s sha256 in ``<path>.sha256`` or check it against an existing record.

    Used for downloads without a published checksum (Kaggle, SNAP): the first download pins
    the digest, every later one must match it.

    Returns
    -------
    str
        The sha256 of ``path``.

    Raises
    ------
    ChecksumError
        If a record exists and differs from the file's digest.
    """
    path = Path(path)
    actual = file_digest(path, "sha256")
    recorded = read_recorded_sha256(path)
    if recorded is None:
        write_text(f"{actual}  {path.name}\n", _sha256_record_path(path))
        log.info("recorded sha256 %s of %s in %s", actual, path, _sha256_record_path(path))
    elif recorded != actual:
        raise ChecksumError(
            f"{path}: sha256 {actual} differs from the one recorded at the first download "
            f"({recorded}); the file changed or is corrupted; {record_hint(path)}"
        )
    return actual


def record_hint(path: Path, dataset: str | None = None) -> str:
    """How to accept a new version of a file checked against its recorded sha256."""
    record = _sha256_record_path(path)
    key = f"downloads.{dataset}.sha256" if dataset else "downloads.<dataset>.sha256"
    return (
        f"the expected digest is the one recorded in {record}: if the new file is right (its "
        f"source published a new version), delete {record} to download again and record the "
        f"new digest, or set the config key {key} to it"
    )
