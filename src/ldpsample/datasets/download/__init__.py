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

Modules, each named for what it holds (the names below are re-exported here):

* :mod:`~ldpsample.datasets.download.errors` -- :class:`DownloadError`,
  :class:`ChecksumError`, :class:`KaggleUnavailableError`;
* :mod:`~ldpsample.datasets.download.checksums` -- digests and the recorded sha256
  (:func:`file_digest`, :func:`record_sha256`);
* :mod:`~ldpsample.datasets.download.http` -- :func:`download_file` through pooch, its retries
  and their log lines;
* :mod:`~ldpsample.datasets.download.archives` -- :func:`extract_zip`;
* :mod:`~ldpsample.datasets.download.kaggle` -- the Kaggle CLI (:func:`download_avazu`,
  :func:`kaggle_credential_sources`);
* :mod:`~ldpsample.datasets.download.completeness` -- :func:`count_lines` and
  :func:`dataset_completeness`;
* :mod:`~ldpsample.datasets.download.sources` -- :func:`download_movielens`,
  :func:`download_gowalla` and :func:`download_dataset`, the pipeline's one entry point.

All of them log to the logger ``ldpsample.datasets.download``. Importing the package loads its
modules, :mod:`ldpsample.datasets.registry` and :mod:`ldpsample.pipeline.io`; pooch, requests
and tqdm load at the first download.
"""

from __future__ import annotations

from ldpsample.datasets.download.archives import extract_zip
from ldpsample.datasets.download.checksums import file_digest, record_sha256
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
from ldpsample.datasets.download.sources import (
    MOVIELENS_ARCHIVES,
    download_dataset,
    download_gowalla,
    download_movielens,
)
from ldpsample.datasets.registry import (
    AVAZU_COMPETITION,
    DATASETS,
    DOWNLOADS,
    OFFICIAL_ROW_COUNTS,
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
