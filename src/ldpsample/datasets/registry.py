"""Where each dataset comes from and how its files are laid out (standard library only).

This module is what the workflow needs at parse time: the official layout of every dataset
(:data:`DATASETS`), the official download addresses and checksums (:data:`DOWNLOADS`, the
defaults of the config's ``downloads:`` section), the official row counts,
:func:`locate_dataset_files` and where a run reads each dataset from (:class:`DataLocations`).
It imports nothing outside the standard library, so Snakemake can load it without pulling
numpy, scipy, polars or pyarrow into every invocation and cluster job
(``workflow/rules/common.smk`` loads it by path).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

__all__ = [
    "AVAZU_ATTRIBUTES",
    "AVAZU_COMPETITION",
    "AVAZU_PLACEHOLDER_DEVICE_ID",
    "DATASETS",
    "DOWNLOADS",
    "OFFICIAL_ROW_COUNTS",
    "DataLocations",
    "dataset_folder",
    "locate_dataset_files",
]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

#: Official download of each dataset fetched over HTTP: URL and published checksum
#: (GroupLens publishes md5 sums; SNAP publishes none, so Gowalla's sha256 is recorded at the
#: first download). The config's ``downloads.<dataset>`` keys override these.
DOWNLOADS: dict[str, dict[str, str | None]] = {
    "ml-100k": {
        "url": "https://files.grouplens.org/datasets/movielens/ml-100k.zip",
        "md5": "0e33842e24a9c977be4e0107933c0723",
    },
    "ml-1m": {
        "url": "https://files.grouplens.org/datasets/movielens/ml-1m.zip",
        "md5": "c4d9eecfca2ab87c1945afe126590906",
    },
    "gowalla": {
        "url": "https://snap.stanford.edu/data/loc-gowalla_totalCheckins.txt.gz",
        "sha256": None,
    },
}

#: The Kaggle competition holding Avazu's ``train.gz`` (downloaded with the Kaggle CLI).
AVAZU_COMPETITION = "avazu-ctr-prediction"

#: Avazu's attribute columns whose values define subcategories, in the official column order
#: (the same as :data:`ldpsample.experiments.avazu.data.AVAZU_ATTRIBUTES`; here for the workflow's
#: parse time).
AVAZU_ATTRIBUTES: tuple[str, ...] = ("C1", "C14", "C15", "C16", "C17", "C18", "C19", "C20", "C21")

#: The device_id shared by most Avazu rows, a placeholder rather than a device (the same as
#: :data:`ldpsample.experiments.avazu.data.PLACEHOLDER_DEVICE_ID`).
AVAZU_PLACEHOLDER_DEVICE_ID = "a99f214a"

#: Data rows (lines without a header) of the official files, used to detect partial copies.
OFFICIAL_ROW_COUNTS: dict[tuple[str, str], int] = {
    ("ml-100k", "ratings"): 100_000,
    ("ml-100k", "users"): 943,
    ("ml-100k", "items"): 1_682,
    ("ml-1m", "ratings"): 1_000_209,
    ("ml-1m", "users"): 6_040,
    ("ml-1m", "movies"): 3_883,
    ("avazu", "train"): 40_428_967,
    ("gowalla", "checkins"): 6_442_890,
}

#: Per dataset: folder under ``data_dir`` and, per role, the file names accepted (first found
#: wins). Glob patterns (containing ``*``) are a last resort and mark the copy as partial.
DATASETS: dict[str, tuple[str, dict[str, tuple[str, ...]]]] = {
    "ml-100k": (
        "ml-100k",
        {
            "ratings": ("u.data", "u.data.gz"),
            "items": ("u.item", "u.item.gz"),
            "users": ("u.user", "u.user.gz"),
            "genres": ("u.genre",),
        },
    ),
    "ml-1m": (
        "ml-1m",
        {
            "ratings": ("ratings.dat", "ratings.dat.gz"),
            "movies": ("movies.dat", "movies.dat.gz"),
            "users": ("users.dat", "users.dat.gz"),
        },
    ),
    "avazu": ("avazu", {"train": ("train.gz", "train.csv", "train.csv.gz", "train")}),
    "gowalla": (
        "gowalla",
        {
            "checkins": (
                "loc-gowalla_totalCheckins.txt.gz",
                "loc-gowalla_totalCheckins.txt",
                "loc-gowalla_totalCheckins.first-*-lines.txt",
            )
        },
    ),
}


def _check_dataset(dataset: str) -> None:
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; known: {sorted(DATASETS)}")


def dataset_folder(dataset: str) -> str:
    """Name of a dataset's folder in the official layout (``"ml-1m"``, ``"avazu"``, ...)."""
    _check_dataset(dataset)
    return DATASETS[dataset][0]


def locate_dataset_files(data_dir: PathLike, dataset: str) -> dict[str, Path]:
    """Paths of a dataset's files in a folder holding the official layout (read only).

    Parameters
    ----------
    data_dir
        Folder holding ``ml-100k/``, ``ml-1m/``, ``avazu/`` and/or ``gowalla/``.
    dataset
        One of :data:`DATASETS`: ``"ml-100k"``, ``"ml-1m"``, ``"avazu"``, ``"gowalla"``.

    Returns
    -------
    dict
        Role → path, e.g. ``{"ratings": ..., "movies": ..., "users": ...}`` for ``ml-1m``.
        For every role the first existing name of :data:`DATASETS` is used (an official
        uncompressed file before its ``.gz``).

    Raises
    ------
    FileNotFoundError
        Naming every missing role, the names looked for and the folder.
    """
    _check_dataset(dataset)
    folder_name, roles = DATASETS[dataset]
    folder = Path(data_dir) / folder_name
    found: dict[str, Path] = {}
    missing: list[str] = []
    for role, names in roles.items():
        path = _first_existing(folder, names)
        if path is None:
            missing.append(f"{role} (looked for {', '.join(names)})")
        else:
            found[role] = path
            if "*" in names[-1] and path.name not in names:
                log.warning("%s: using %s, a partial copy, for %s", dataset, path, role)
    if missing:
        where = folder if folder.is_dir() else f"{folder} (folder does not exist)"
        raise FileNotFoundError(f"{dataset}: missing in {where}: " + "; ".join(missing))
    log.info("%s files: %s", dataset, {k: str(v) for k, v in found.items()})
    return found


def _first_existing(folder: Path, names: tuple[str, ...]) -> Path | None:
    for name in names:
        if "*" in name:
            matches = (
                sorted(p for p in folder.glob(name) if p.is_file() and ".austin" not in p.name)
                if folder.is_dir()
                else []
            )
            if matches:
                return matches[0]
        elif (folder / name).is_file():
            return folder / name
    return None


class DataLocations:
    """Where a run reads each dataset's raw files from: ``data_dir`` when it holds them (read
    only), else ``download_dir``, where the workflow's download rule puts them and then writes
    its marker ``download.done`` (:meth:`download_marker`).

    ``data_dir`` is scanned once per dataset (:func:`locate_dataset_files`). A copy in
    ``data_dir`` that is the pipeline's own finished download (``data_dir`` is the download
    folder and the marker exists) counts as the download, not as data the user placed there:
    its marker keeps standing for the files, so the choice of inputs never flips between runs.
    """

    def __init__(self, data_dir: PathLike, download_dir: PathLike) -> None:
        self.data_dir = str(data_dir)
        self.download_dir = str(download_dir)
        self._scans: dict[str, dict[str, str] | None] = {}

    def download_marker(self, dataset: str) -> str:
        """``<download_dir>/<folder>/download.done``: written once a download is complete."""
        return f"{self.download_dir}/{dataset_folder(dataset)}/download.done"

    def is_own_download(self, dataset: str) -> bool:
        """Whether ``data_dir``'s copy of ``dataset`` is the pipeline's own download:
        ``data_dir`` is the download folder and the download finished (its marker exists)."""
        return (
            Path(self.data_dir).resolve() == Path(self.download_dir).resolve()
            and Path(self.download_marker(dataset)).exists()
        )

    def _scan(self, dataset: str) -> dict[str, str] | None:
        """Role -> path of ``dataset``'s files in ``data_dir``, None if any is missing (one
        scan per dataset)."""
        if dataset not in self._scans:
            try:
                found = locate_dataset_files(self.data_dir, dataset)
            except FileNotFoundError:
                self._scans[dataset] = None
            else:
                self._scans[dataset] = {role: str(path) for role, path in found.items()}
        return self._scans[dataset]

    def _placed(self, dataset: str) -> dict[str, str] | None:
        """Role -> path of the files the user placed in ``data_dir``; None if absent or if
        they are the pipeline's own download (its marker stands for them)."""
        if self.is_own_download(dataset):
            return None
        found = self._scan(dataset)
        return None if found is None else dict(found)

    def dataset_paths(self, dataset: str) -> dict[str, str]:
        """Role -> path of ``dataset``'s raw files: the placed copy, else where the download
        puts them (each role's first official name under ``download_dir``)."""
        placed = self._placed(dataset)
        if placed is not None:
            return placed
        folder, roles = DATASETS[dataset]
        return {role: f"{self.download_dir}/{folder}/{names[0]}" for role, names in roles.items()}

    def data_dir_files(self, dataset: str) -> list[str]:
        """``dataset``'s files inside ``data_dir`` (never ``download_dir``), sorted; where a
        role is missing, each role's first official name: what an "auto" toggle waits for."""
        found = self._scan(dataset)
        if found is None:
            folder, roles = DATASETS[dataset]
            return [os.path.join(self.data_dir, folder, names[0]) for names in roles.values()]
        return sorted(found.values())

    def dataset_inputs(self, dataset: str) -> list[str]:
        """Rule inputs standing for ``dataset``: its placed files (sorted), else the download's
        marker."""
        placed = self._placed(dataset)
        if placed is not None:
            return sorted(placed.values())
        return [self.download_marker(dataset)]
