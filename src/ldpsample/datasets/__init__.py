"""Real datasets: acquisition, parsing and the histograms the real-data experiments use.

* :mod:`~ldpsample.datasets.download` -- verified, resumable downloads (GroupLens, SNAP, the
  Kaggle CLI) and :func:`locate_dataset_files` for pre-placed copies in the official layout.
* :mod:`~ldpsample.datasets.movielens` -- ML-1M private genre histograms, age-group priors.
* :mod:`~ldpsample.datasets.avazu` -- Avazu CSV → parquet, per-subcategory site histograms.
* :mod:`~ldpsample.datasets.avazu_synthetic` -- an Avazu-shaped generator for tests and
  benchmarks.

See ``docs/data.md`` for layouts, partial copies, credentials and paper-vs-code options.
"""

from ldpsample.datasets.avazu import (
    AVAZU_ATTRIBUTES,
    PLACEHOLDER_DEVICE_ID,
    ConversionStats,
    avazu_user_matrix,
    build_avazu_histograms,
    convert_avazu_to_parquet,
)
from ldpsample.datasets.avazu_synthetic import generate_avazu_like
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
from ldpsample.datasets.movielens import (
    AGE_GROUPS,
    COMMON_GENRES,
    MovieLensData,
    build_movielens_data,
)

__all__ = [
    "AGE_GROUPS",
    "AVAZU_ATTRIBUTES",
    "COMMON_GENRES",
    "PLACEHOLDER_DEVICE_ID",
    "ChecksumError",
    "ConversionStats",
    "DownloadError",
    "KaggleUnavailableError",
    "MovieLensData",
    "avazu_user_matrix",
    "build_avazu_histograms",
    "build_movielens_data",
    "convert_avazu_to_parquet",
    "dataset_completeness",
    "download_avazu",
    "download_file",
    "download_gowalla",
    "download_movielens",
    "generate_avazu_like",
    "locate_dataset_files",
    "record_sha256",
]
