"""Which bucket each user is in: the ``B - 1`` boundaries of the users' sorted (text) ids, from
a strided sample of the user column (:func:`bucket_boundaries`, the first map/reduce step), and
the bucket of each row (:func:`bucket_of`, used by the split).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

import numpy as np
import polars as pl

from ldpsample.events.reading.files import TableFiles, estimated_rows
from ldpsample.events.reading.scan import (
    EventsTableError,
    polars_reason,
    raise_csv_faults,
    scan_events,
    table_files,
)
from ldpsample.pipeline.progress import phase

__all__ = ["SAMPLE_ROWS", "bucket_boundaries", "bucket_of"]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

#: Rows of the user column sampled for the boundaries (about; every k-th row, k from the files'
#: sizes): a few hundred per bucket place the boundaries within about 5 % of the rows.
SAMPLE_ROWS = 200_000


def bucket_boundaries(
    source: PathLike | TableFiles, *, key: str, user: str, buckets: int
) -> list[str]:
    """The ``buckets - 1`` user ids (or fewer, if the sample has fewer distinct users) that
    split the users into ranges: bucket ``b`` holds the users ``u`` with ``b`` boundaries
    ``<= u`` (text order). Quantiles of every ``k``-th row's user (``k`` from the files' sizes,
    :data:`SAMPLE_ROWS`), so that buckets hold about as many rows; one streaming scan of the
    user column. A CSV's records are not checked here (a faulty row barely moves a boundary;
    the split job of its file names it or skips it), unless polars cannot read a file."""
    if buckets < 1:
        raise ValueError(f"buckets must be >= 1, got {buckets!r}")
    files = table_files(source, key=f"{key}.path")
    every = max(1, estimated_rows(files) // SAMPLE_ROWS)
    # the ids in their own type (text from a CSV) until sampled: only the sample is cast
    lf = scan_events(
        files, [(user, f"{key}.user")], key=f"{key}.path", text=[user], check_lines=False
    )
    try:
        with phase(log, f"{key}: sampling every {every}th user id of {files.path}"):
            sample = (
                lf.select(
                    pl.col(user).gather_every(every).drop_nulls().cast(pl.String).alias("user")
                )
                .collect(engine="streaming")["user"]
                .sort()
            )
    except pl.exceptions.PolarsError as exc:
        raise_csv_faults(files, key=f"{key}.path")  # an unclosed quote, named by its line
        raise EventsTableError(
            f"{files.path}: cannot read the events table (config key {key}.path): "
            f"{polars_reason(exc)}"
        ) from exc
    if buckets == 1 or sample.len() == 0:
        return []
    positions = (np.arange(1, buckets) * sample.len()) // buckets
    return sample.gather(positions).unique(maintain_order=True).to_list()


def bucket_of(boundaries: Sequence[str]) -> pl.Expr:
    """The bucket of each row's ``user`` (UInt32): how many boundaries are ``<= user``."""
    return (
        pl.lit(pl.Series(list(boundaries), dtype=pl.String))
        .search_sorted(pl.col("user"), side="right")
        .alias("_bucket")
    )
