"""The official sources, one function each, and :func:`download_dataset`, the pipeline's one
entry point.

* :func:`download_movielens` -- a GroupLens zip, checked against its published md5, extracted.
* :func:`download_gowalla` -- SNAP's check-in file, checked against the sha256 recorded at its
  first download.
* Avazu comes through the Kaggle CLI
  (:func:`~ldpsample.datasets.download.kaggle.download_avazu`).

Uses the other modules of :mod:`ldpsample.datasets.download` and
:mod:`ldpsample.datasets.registry`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ldpsample.datasets.download.archives import extract_zip
from ldpsample.datasets.download.checksums import (
    read_recorded_sha256,
    record_hint,
    record_sha256,
)
from ldpsample.datasets.download.errors import ChecksumError
from ldpsample.datasets.download.http import download_file
from ldpsample.datasets.download.kaggle import download_avazu
from ldpsample.datasets.registry import DATASETS, DOWNLOADS, dataset_folder, locate_dataset_files

__all__ = [
    "MOVIELENS_ARCHIVES",
    "download_dataset",
    "download_gowalla",
    "download_movielens",
]

PathLike = str | os.PathLike[str]

#: The files each official MovieLens archive must hold (under ``<name>/``): the first file
#: name of every role of :data:`DATASETS`.
MOVIELENS_ARCHIVES: dict[str, tuple[str, ...]] = {
    name: tuple(names[0] for names in DATASETS[name][1].values()) for name in ("ml-100k", "ml-1m")
}


def download_movielens(
    name: str,
    dest_dir: PathLike,
    *,
    url: str | None = None,
    md5: str | None = None,
    sha256: str | None = None,
    keep_archive: bool = True,
    retries: int = 2,
    timeout: float = 60.0,
    progressbar: bool = False,
) -> Path:
    """Download and extract an official MovieLens archive into ``dest_dir/<name>/``.

    The zip (``dest_dir/<name>.zip``) is checked against ``md5``/``sha256`` (default: the
    md5 GroupLens publishes, :data:`DOWNLOADS`); with neither given for a custom ``url``,
    the first download's sha256 is recorded and checked later (:func:`record_sha256`).
    The folder may already exist (the pipeline's marker file lives in it): its files are
    replaced by the archive's.

    Parameters
    ----------
    name
        ``"ml-100k"`` or ``"ml-1m"``.
    dest_dir
        Folder receiving ``<name>.zip`` and the extracted ``<name>/``.
    url, md5, sha256
        Override the GroupLens URL and checksum (a mirror, a lab cache).
    keep_archive
        Keep the verified zip next to the folder (a re-run then skips the download).
    retries, timeout, progressbar
        As for :func:`download_file`.

    Returns
    -------
    pathlib.Path
        The extracted folder, holding the official files.
    """
    if name not in MOVIELENS_ARCHIVES:
        raise ValueError(f"unknown MovieLens archive {name!r}; known: {sorted(MOVIELENS_ARCHIVES)}")
    official = DOWNLOADS[name]
    if url is None and md5 is None and sha256 is None:
        md5 = official["md5"]
    url = url or str(official["url"])
    dest_dir = Path(dest_dir)
    archive = dest_dir / f"{name}.zip"
    _download_verified(
        name,
        url,
        archive,
        md5=md5,
        sha256=sha256,
        retries=retries,
        timeout=timeout,
        progressbar=progressbar,
    )
    try:
        target = extract_zip(archive, dest_dir, folder=name, required=MOVIELENS_ARCHIVES[name])
    except ValueError as exc:
        archive.unlink()  # unusable: the next run downloads it again
        raise ValueError(f"{exc} (downloaded from {url}; the archive was deleted)") from exc
    if not keep_archive:
        archive.unlink()
    return target


def download_gowalla(
    dest_dir: PathLike,
    *,
    url: str | None = None,
    sha256: str | None = None,
    md5: str | None = None,
    retries: int = 2,
    timeout: float = 60.0,
    progressbar: bool = False,
) -> Path:
    """Download SNAP's Gowalla check-ins into ``dest_dir/gowalla/``.

    SNAP publishes no checksum: unless ``sha256``/``md5`` is given, the first download's
    sha256 is written next to the file (``<file>.sha256``) and a later download must match it.
    """
    url = url or str(DOWNLOADS["gowalla"]["url"])
    dest = Path(dest_dir) / "gowalla" / DATASETS["gowalla"][1]["checkins"][0]
    _download_verified(
        "gowalla",
        url,
        dest,
        md5=md5,
        sha256=sha256,
        retries=retries,
        timeout=timeout,
        progressbar=progressbar,
    )
    return dest


def _download_verified(
    dataset: str,
    url: str,
    dest: Path,
    *,
    md5: str | None,
    sha256: str | None,
    **options: Any,
) -> None:
    """:func:`download_file` against ``md5``/``sha256``, or without either against the sha256
    recorded at the first download (recorded now if there is none). A mismatch with the record
    says where it is and how to accept a new version."""
    if md5 is not None or sha256 is not None:
        download_file(url, dest, md5=md5, sha256=sha256, **options)
        return
    try:
        download_file(url, dest, sha256=read_recorded_sha256(dest), **options)
    except ChecksumError as exc:
        raise ChecksumError(f"{exc}; {record_hint(dest, dataset)}") from exc
    record_sha256(dest)


def download_dataset(
    dataset: str,
    dest_dir: PathLike,
    *,
    url: str | None = None,
    md5: str | None = None,
    sha256: str | None = None,
    progressbar: bool = False,
) -> dict[str, Path]:
    """Download ``dataset`` into ``dest_dir`` in the official layout; return its files by role.

    The pipeline's single entry point for downloads: GroupLens zips for ``"ml-100k"`` and
    ``"ml-1m"``, the Kaggle CLI for ``"avazu"`` (credentials needed), SNAP for ``"gowalla"``.
    ``url``, ``md5`` and ``sha256`` override the defaults of :data:`DOWNLOADS` (the config's
    ``downloads.<dataset>`` keys). On failure, an empty ``dest_dir/<dataset>/`` folder (which
    Snakemake creates for the rule's marker file) is removed, so nothing is left behind.
    """
    options = {"url": url, "md5": md5, "sha256": sha256, "progressbar": progressbar}
    folder = Path(dest_dir) / dataset_folder(dataset)
    try:
        if dataset in MOVIELENS_ARCHIVES:
            download_movielens(dataset, dest_dir, **options)
        elif dataset == "avazu":
            download_avazu(dest_dir)
        else:
            download_gowalla(dest_dir, **options)
    except BaseException:
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        raise
    return locate_dataset_files(dest_dir, dataset)
