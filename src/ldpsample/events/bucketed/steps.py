"""The histograms of an events table too large for one job, as map/reduce steps in which every
job holds its share of the table: the same results as
:func:`~ldpsample.events.counting.histograms.build_event_histograms`.

Users are split into ``B`` *buckets*, ranges of their ids in sorted (text) order, so that a
bucket holds every row of its users and the buckets, concatenated in order, list the users in
sorted order. The steps (one Snakemake rule each, ``workflow/rules/events_buckets.smk``):

1. :func:`~ldpsample.events.bucketed.bounds.bucket_boundaries` (one job): the ``B - 1`` boundaries,
   quantiles of a strided sample of the user column (every ``k``-th row), so that buckets hold about
   as many rows;
2. :func:`~ldpsample.events.bucketed.split.split_partition` (one job per file of the table, the
   *partitions*): the checks of its rows, its rows per subcategory and, where the item ranking sums
   every row, its ranking's partial sums; its rows, filtered and renamed, streamed into one file per
   bucket;
3. :func:`~ldpsample.events.bucketed.ranks.bucket_ranks` (one job per bucket, only when the ranking
   counts the users kept by the global activity filter, ``activity_scope: global`` with
   ``min_user_count > 0``): the ranking's partial sums of the bucket's kept users;
4. :func:`~ldpsample.events.bucketed.merge.merge_partials` (one small job): the checks of the whole
   table, its rows per subcategory, and the ``top_items`` of every subcategory from the summed
   ranking;
5. :func:`~ldpsample.events.bucketed.bucket_histograms.bucket_histograms` (one job per bucket):
   its users' sums per (subcategory, user, item) over every partition, the activity filters and
   the histograms on the top items, and per subcategory its kept users, items and pooled counts;
6. :func:`~ldpsample.events.bucketed.bucket_priors.attribute_priors` (one job per attribute): the
   subcategories table (``min_users`` counts the users of every bucket) and every kept subcategory's
   prior ``q`` on its items (:class:`ldpsample.events.counting.data_priors.UserMeanFold` folds a
   ``user_mean`` prior over the buckets in user order); then the metrics of each (attribute, bucket)
   and the combined tables.

Exactness: with integer weights (every row counting 1, or integer counts; checked as the
one-job path does), every sum is a sum of integers below 2**53, exact in any grouping and
order, so the histograms, rankings, counts and pooled priors are those of the one job bit for
bit, for any number of partitions and buckets; the ``user_mean`` prior is folded user by user
in sorted order as ``P.mean(axis=0)`` does. With fractional weights, partial sums per partition
and bucket can round differently from the one job's sums over rows (about 1e-16 relative).

This module runs every step in one process (:func:`histograms_in_buckets`); the steps live in
:mod:`~ldpsample.events.bucketed.bounds` (boundaries, each row's bucket),
:mod:`~ldpsample.events.bucketed.split` (the map step), :mod:`~ldpsample.events.bucketed.partials`
(what it writes and reading it back), :mod:`~ldpsample.events.bucketed.ranks`,
:mod:`~ldpsample.events.bucketed.merge` (the merge),
:mod:`~ldpsample.events.bucketed.bucket_histograms` and
:mod:`~ldpsample.events.bucketed.bucket_priors` (the reduce step), the schemas in
:mod:`~ldpsample.events.schemas`. The workflow's scripts import every step from here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from ldpsample.events.bucketed.bounds import SAMPLE_ROWS as SAMPLE_ROWS
from ldpsample.events.bucketed.bounds import bucket_boundaries
from ldpsample.events.bucketed.bounds import bucket_of as bucket_of
from ldpsample.events.bucketed.bucket_histograms import bucket_histograms
from ldpsample.events.bucketed.bucket_priors import attribute_priors
from ldpsample.events.bucketed.merge import merge_partials
from ldpsample.events.bucketed.partials import Partials, _options
from ldpsample.events.bucketed.partials import read_checks as read_checks
from ldpsample.events.bucketed.partials import write_partials as write_partials
from ldpsample.events.bucketed.ranks import bucket_ranks, ranks_need_activity
from ldpsample.events.bucketed.split import BATCH_ROWS as BATCH_ROWS
from ldpsample.events.bucketed.split import split_partition
from ldpsample.events.options import attribute_prior
from ldpsample.events.reading.files import TableFiles
from ldpsample.events.reading.scan import table_files
from ldpsample.events.schemas import (
    BUCKET_STATS_SCHEMA,
    ITEM_STATS_SCHEMA,
    RANK_SCHEMA,
    ROWS_SCHEMA,
    SUBCATEGORY_SCHEMA,
)
from ldpsample.pipeline.io import write_parquet

__all__ = [
    "BUCKET_STATS_SCHEMA",
    "ITEM_STATS_SCHEMA",
    "RANK_SCHEMA",
    "ROWS_SCHEMA",
    "BucketedHistograms",
    "Partials",
    "attribute_priors",
    "bucket_boundaries",
    "bucket_histograms",
    "bucket_ranks",
    "histograms_in_buckets",
    "merge_partials",
    "ranks_need_activity",
    "split_partition",
]

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class BucketedHistograms:
    """What :func:`histograms_in_buckets` returns: the files of every step and the tables."""

    boundaries: list[str]
    histograms: list[str]  # per bucket, in order
    subcategories: pl.DataFrame
    priors: pl.DataFrame


def histograms_in_buckets(
    path: PathLike | TableFiles,
    *,
    buckets: int,
    workdir: PathLike,
    prior: str | Mapping[str, Any] | None = None,
    options: Mapping[str, Any],
) -> BucketedHistograms:
    """Every map/reduce step of the histograms, one after the other in this process (what the
    workflow's jobs run side by side), with their files under ``workdir``: for tests, and to see
    the steps from Python. ``options`` are
    :func:`~ldpsample.events.counting.histograms.build_event_histograms`' keywords (with
    ``top_items``, ``min_users``, ``activity_scope``, ...); ``prior`` as
    :func:`~ldpsample.events.bucketed.bucket_priors.attribute_priors` (None: the options' prior)."""
    work = os.fspath(workdir)
    os.makedirs(work, exist_ok=True)
    opts = _options(options)
    if prior is None:
        prior = opts.prior
    key = opts.key
    files = table_files(path, key=f"{key}.path")
    boundaries = bucket_boundaries(files, key=key, user=opts.user, buckets=buckets)
    rank_rows = not ranks_need_activity(
        activity_scope=opts.activity_scope,
        min_user_count=opts.min_user_count,
        top_items=opts.evaluation_top_items,
        release=options.get("domain") is not None,
    )
    split = [
        [os.path.join(work, f"part~{p}_bucket~{b}.parquet") for b in range(buckets)]
        for p in range(len(files.files))
    ]
    partials = [
        split_partition(
            files.partition(p),
            boundaries=boundaries,
            outputs=split[p],
            rank_rows=rank_rows,
            options=options,
        )
        for p in range(len(files.files))
    ]
    bucket_files = [[split[p][b] for p in range(len(split))] for b in range(buckets)]
    ranks = (
        [p.ranks for p in partials]
        if rank_rows
        else [bucket_ranks(bucket_files[b], options=options) for b in range(buckets)]
    )
    checks, rows, tops = merge_partials(
        [p.checks for p in partials],
        [p.rows for p in partials],
        ranks,
        path=files.path,
        options=options,
    )
    histograms, users, items = [], [], []
    for b in range(buckets):
        hist, bucket_users, bucket_items = bucket_histograms(bucket_files[b], tops, options=options)
        histograms.append(os.path.join(work, f"bucket~{b}_histograms.parquet"))
        write_parquet(hist, histograms[-1])
        users.append(bucket_users)
        items.append(bucket_items)
    names = list(opts.attributes) or ["all"]
    tables, priors = [], []
    for name in names:
        table, q = attribute_priors(
            name,
            rows=rows,
            users=users,
            items=items,
            histograms=histograms,
            checks=checks,
            prior=attribute_prior(prior, attributes=opts.attributes, attribute=name),
            options=options,
        )
        tables.append(table)
        priors.append(q)
    subcategories = (
        pl.concat(tables).sort("attribute", "status", "subcategory")
        if tables
        else pl.DataFrame(schema=SUBCATEGORY_SCHEMA)
    )
    return BucketedHistograms(
        boundaries,
        histograms,
        subcategories,
        pl.concat(priors).sort("attribute", "subcategory", "item"),
    )
