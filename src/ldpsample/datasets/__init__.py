"""Real datasets: acquisition, parsing and the histograms the real-data experiments use.

* :mod:`~ldpsample.datasets.download` -- verified downloads (GroupLens, SNAP, Kaggle CLI) and
  :func:`locate_dataset_files` for pre-placed copies in the official layout.
* :mod:`~ldpsample.datasets.movielens` -- ML-1M private genre histograms, age-group priors.
* :mod:`~ldpsample.datasets.avazu` -- Avazu CSV → parquet, per-subcategory site histograms.
* :mod:`~ldpsample.datasets.avazu_synthetic` -- an Avazu-shaped generator for tests and
  benchmarks.

See ``docs/data.md`` for layouts, partial copies, credentials and paper-vs-code options.
"""

from ldpsample.datasets.download import (
    ChecksumError,
    DownloadError,
    KaggleUnavailableError,
    dataset_completeness,
    download_avazu,
    download_file,
    download_gowalla,
    download_movielens,
    locate_dataset_files,
    record_sha256,
)

__all__ = [
    "ChecksumError",
    "DownloadError",
    "KaggleUnavailableError",
    "dataset_completeness",
    "download_avazu",
    "download_file",
    "download_gowalla",
    "download_movielens",
    "locate_dataset_files",
    "record_sha256",
]
