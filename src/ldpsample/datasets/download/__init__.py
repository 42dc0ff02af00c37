"""Getting the raw data: verified downloads and the official folder layout.

Two ways in, both ending in the same layout under one folder (``data_dir``)::

    data_dir/
      ml-100k/   u.data u.item u.user u.genre ...           (official ml-100k.zip, extracted)
      ml-1m/     ratings.dat[.gz] movies.dat users.dat ...  (official ml-1m.zip, extracted)
      avazu/     train.gz | train.csv | train.csv.gz | train  (Kaggle avazu-ctr-prediction)
      gowalla/   loc-gowalla_totalCheckins.txt[.gz]         (SNAP)

* **Download** (:func:`download_movielens`, :func:`download_avazu`, :func:`download_gowalla`).
  HTTP goes through `pooch <https://www.fatiando.org/pooch/>`_: a temporary file, the
  checksum checked before the file gets its name, retries after a dropped connection and a
  progress bar. A checksum mismatch raises :class:`ChecksumError` naming the URL and both
  digests, an HTTP error :class:`DownloadError` naming the URL; nothing is kept from either.
  GroupLens publishes md5 sums (the defaults, :data:`~ldpsample.datasets.registry.DOWNLOADS`);
  Kaggle and SNAP publish none, so the sha256 of the first download is recorded next to the
  file (``<file>.sha256``, ``sha256sum`` format) and every later download is checked
  against it. URL and checksum can be overridden (a lab mirror or cache).
* **Pre-placed** (:func:`locate_dataset_files`): a folder holding the official layout is read
  as it is (never written). Partial copies are accepted; :func:`dataset_completeness` compares
  row counts with the official ones and logs a warning when a copy is partial.

The layout, URLs, checksums and row counts live in :mod:`ldpsample.datasets.registry`
(standard library only, which the workflow loads at parse time). Avazu needs the official
Kaggle CLI.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from ldpsample.datasets.download.archives import extract_zip
from ldpsample.datasets.download.checksums import (
    file_digest,
    read_recorded_sha256,
    record_hint,
    record_sha256,
)
from ldpsample.datasets.download.completeness import (
    Completeness,
    count_lines,
    dataset_completeness,
)
from ldpsample.datasets.download.errors import (
    ChecksumError,
    DownloadError,
    KaggleUnavailableError,
)
from ldpsample.datasets.download.http import download_file
from ldpsample.datasets.download.kaggle import download_avazu, kaggle_credential_sources
from ldpsample.datasets.registry import (
    AVAZU_COMPETITION,
    DATASETS,
    DOWNLOADS,
    OFFICIAL_ROW_COUNTS,
    dataset_folder,
    locate_dataset_files,
)

__all__ = [
    "AVAZU_COMPETITION",
    "DATASETS",
    "DOWNLOADS",
    "MOVIELENS_ARCHIVES",
    "OFFICIAL_ROW_COUNTS",
    "ChecksumError",
    "Completeness",
    "DownloadError",
    "KaggleUnavailableError",
    "count_lines",
    "dataset_completeness",
    "download_avazu",
    "download_dataset",
    "download_file",
    "download_gowalla",
    "download_movielens",
    "extract_zip",
    "file_digest",
    "kaggle_credential_sources",
    "locate_dataset_files",
    "record_sha256",
]

log = logging.getLogger(__name__)

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
