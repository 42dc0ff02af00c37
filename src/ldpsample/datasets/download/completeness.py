"""Dataset completeness: the row counts of a copy against the official release's.

A partial copy (such as ../shared/data's ML-1M ratings) is accepted: :func:`dataset_completeness`
logs it as a warning, never an error.

Uses the standard library and :data:`ldpsample.datasets.registry.OFFICIAL_ROW_COUNTS`.
"""

from __future__ import annotations

import gzip
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ldpsample.datasets.registry import OFFICIAL_ROW_COUNTS

__all__ = ["Completeness", "count_lines", "dataset_completeness"]

#: The package's one logger, named for the package (as the job logs and
#: scripts/download_dataset.py, which sends it to the console, know it).
log = logging.getLogger("ldpsample.datasets.download")

PathLike = str | os.PathLike[str]

#: Data files that start with a header line (not counted as a row).
_HEADER_ROLES = {("avazu", "train")}


def _open_maybe_gzip(path: Path) -> Any:
    with open(path, "rb") as handle:
        magic = handle.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def count_lines(path: PathLike) -> int:
    """Number of lines of a (possibly gzipped) text file; a last line without newline counts."""
    count = 0
    last = b"\n"
    with _open_maybe_gzip(Path(path)) as handle:
        while chunk := handle.read(1 << 22):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


@dataclass(frozen=True)
class Completeness:
    """Row counts of one dataset file against the official release."""

    dataset: str
    role: str
    path: Path
    rows: int
    official_rows: int

    @property
    def partial(self) -> bool:
        """True if the file has fewer rows than the official one."""
        return self.rows < self.official_rows


def dataset_completeness(
    dataset: str, files: Mapping[str, PathLike], *, roles: tuple[str, ...] | None = None
) -> list[Completeness]:
    """Count the rows of ``files`` and compare them with :data:`OFFICIAL_ROW_COUNTS`.

    A partial copy is accepted: it is logged as a warning (never an error). Counting reads
    the file once (the full Avazu file takes about a minute; convert it with
    :func:`ldpsample.experiments.avazu.data.convert_avazu_to_parquet`, which counts as it goes).
    """
    out = []
    for role, path in files.items():
        key = (dataset, role)
        if key not in OFFICIAL_ROW_COUNTS or (roles is not None and role not in roles):
            continue
        rows = count_lines(path) - (1 if key in _HEADER_ROLES else 0)
        info = Completeness(dataset, role, Path(path), rows, OFFICIAL_ROW_COUNTS[key])
        if info.partial:
            log.warning(
                "%s %s (%s) is a PARTIAL copy: %d of %d official rows (%.1f %%); results "
                "computed from it are not the paper's",
                dataset,
                role,
                path,
                rows,
                info.official_rows,
                100 * rows / info.official_rows,
            )
        elif rows > info.official_rows:
            log.warning(
                "%s %s (%s) has %d rows, more than the official %d",
                dataset,
                role,
                path,
                rows,
                info.official_rows,
            )
        out.append(info)
    return out
