"""Real datasets: acquisition and parsing (the experiments run them through
:mod:`ldpsample.events`).

* :mod:`~ldpsample.datasets.registry` -- layouts, official URLs, checksums and row counts
  (standard library only).
* :mod:`~ldpsample.datasets.download` -- verified, resumable downloads (GroupLens, SNAP, the
  Kaggle CLI) and :func:`locate_dataset_files` for pre-placed copies in the official layout.
* :mod:`~ldpsample.datasets.gowalla` -- the Gowalla check-ins.

The experiments' readers live with their experiments (:mod:`ldpsample.experiments.movielens`,
:mod:`ldpsample.experiments.avazu`); their public names are exported here too.

See ``docs/data.md`` for layouts, partial copies, credentials and paper-vs-code options.

Names below load their module on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ldpsample._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "AGE_GROUPS": "ldpsample.experiments.movielens.data",
    "AVAZU_ATTRIBUTES": "ldpsample.experiments.avazu.data",
    "COMMON_GENRES": "ldpsample.experiments.movielens.data",
    "ChecksumError": "ldpsample.datasets.download",
    "ConversionStats": "ldpsample.experiments.avazu.data",
    "DownloadError": "ldpsample.datasets.download",
    "KaggleUnavailableError": "ldpsample.datasets.download",
    "PLACEHOLDER_DEVICE_ID": "ldpsample.experiments.avazu.data",
    "convert_avazu_to_parquet": "ldpsample.experiments.avazu.data",
    "dataset_completeness": "ldpsample.datasets.download",
    "download_avazu": "ldpsample.datasets.download",
    "download_file": "ldpsample.datasets.download",
    "download_gowalla": "ldpsample.datasets.download",
    "download_movielens": "ldpsample.datasets.download",
    "generate_avazu_like": "ldpsample.experiments.avazu.synthetic",
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
    from ldpsample.experiments.avazu.data import (
        AVAZU_ATTRIBUTES,
        PLACEHOLDER_DEVICE_ID,
        ConversionStats,
        convert_avazu_to_parquet,
    )
    from ldpsample.experiments.avazu.synthetic import generate_avazu_like
    from ldpsample.experiments.movielens.data import (
        AGE_GROUPS,
        COMMON_GENRES,
    )
