"""Real datasets: acquisition and parsing (the experiments run them through
:mod:`ldpsample.events`).

Uses: ldpsample._lazy; its own modules on first use.

* :mod:`~ldpsample.datasets.registry` -- layouts, official URLs, checksums and row counts
  (standard library only).
* :mod:`~ldpsample.datasets.download` -- verified, resumable downloads (GroupLens, SNAP, the
  Kaggle CLI) and :func:`locate_dataset_files` for pre-placed copies in the official layout.
* :mod:`~ldpsample.datasets.movielens` -- ML-100K/ML-1M readers, common genres, age groups,
  per-user genre masses (the input of :mod:`ldpsample.events.movielens`).
* :mod:`~ldpsample.datasets.avazu` -- Avazu CSV → validated parquet (an events table).
* :mod:`~ldpsample.datasets.avazu_synthetic` -- an Avazu-shaped generator for tests and
  benchmarks.

See ``docs/data.md`` for layouts, partial copies, credentials and paper-vs-code options.

Names below load their module on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ldpsample._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "AGE_GROUPS": "ldpsample.datasets.movielens",
    "AVAZU_ATTRIBUTES": "ldpsample.datasets.avazu",
    "COMMON_GENRES": "ldpsample.datasets.movielens",
    "ChecksumError": "ldpsample.datasets.download",
    "ConversionStats": "ldpsample.datasets.avazu",
    "DownloadError": "ldpsample.datasets.download",
    "KaggleUnavailableError": "ldpsample.datasets.download",
    "PLACEHOLDER_DEVICE_ID": "ldpsample.datasets.avazu",
    "convert_avazu_to_parquet": "ldpsample.datasets.avazu",
    "dataset_completeness": "ldpsample.datasets.download",
    "download_avazu": "ldpsample.datasets.download",
    "download_file": "ldpsample.datasets.download",
    "download_gowalla": "ldpsample.datasets.download",
    "download_movielens": "ldpsample.datasets.download",
    "generate_avazu_like": "ldpsample.datasets.avazu_synthetic",
    "locate_dataset_files": "ldpsample.datasets.download",
    "record_sha256": "ldpsample.datasets.download",
}

__all__ = [
    "AGE_GROUPS",
    "AVAZU_ATTRIBUTES",
    "COMMON_GENRES",
    "PLACEHOLDER_DEVICE_ID",
    "ChecksumError",
    "ConversionStats",
    "DownloadError",
    "KaggleUnavailableError",
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


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


if TYPE_CHECKING:  # static analysers see the eager imports
    from ldpsample.datasets.avazu import (
        AVAZU_ATTRIBUTES,
        PLACEHOLDER_DEVICE_ID,
        ConversionStats,
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
    )
