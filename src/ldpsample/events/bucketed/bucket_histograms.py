"""One bucket's histograms (:func:`bucket_histograms`): its users' sums per (subcategory, user,
item) over every partition, the activity filters, the histograms on each subcategory's items,
and per subcategory its kept users and the items they hold with their count sums.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ldpsample.events.bucketed.partials import _bucket_triples, _options, _scan_bucket
from ldpsample.events.counting.kept_users import histogram_rows, kept_histograms
from ldpsample.events.schemas import BUCKET_STATS_SCHEMA, HISTOGRAM_SCHEMA, ITEM_STATS_SCHEMA

__all__ = ["bucket_histograms"]

PathLike = str | os.PathLike[str]


def bucket_histograms(
    files: Sequence[PathLike],
    tops: pl.DataFrame,
    *,
    options: Mapping[str, Any],
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """One bucket's histograms: ``(histograms, users, items)``.

    ``files`` are the bucket's file of every partition
    (:func:`~ldpsample.events.bucketed.split.split_partition`), ``tops`` the items of each
    subcategory (:func:`~ldpsample.events.bucketed.merge.merge_partials`; empty: every item).
    Returns the kept users' :data:`~ldpsample.events.schemas.HISTOGRAM_SCHEMA` rows of every
    subcategory (sorted by attribute, subcategory, user, item; ``min_users`` is applied later, to
    all buckets' users), the kept users per subcategory
    (:data:`~ldpsample.events.schemas.BUCKET_STATS_SCHEMA`) and the items they hold with their count
    sums (:data:`~ldpsample.events.schemas.ITEM_STATS_SCHEMA`).
    """
    opts = _options(options)
    activity_scope, min_user_count = opts.activity_scope, opts.min_user_count
    restrict = (
        bool(options.get("release"))
        or options.get("domain") is not None
        or opts.evaluation_top_items is not None
    )
    _, generated = _bucket_triples(_scan_bucket(files), options)
    hist_frames, user_frames, item_frames = {}, [], []
    for name, _triples, kept in generated:
        a = f"a:{name}"
        if restrict:
            top = tops.filter(pl.col("attribute") == name).select(
                pl.col("subcategory").alias(a), "item"
            )
            kept = kept.join(top, on=[a, "item"], how="semi")
        hist = kept_histograms(
            kept.select(a, "user", "item", "count", "activity"),
            name,
            activity_scope=activity_scope,
            min_user_count=min_user_count,
        )
        user_frames.append(
            hist.group_by("subcategory").agg(
                pl.lit(name).alias("attribute"),
                pl.col("user").n_unique().cast(pl.Int64).alias("kept_users"),
            )
        )
        item_frames.append(
            hist.group_by("subcategory", "item").agg(
                pl.lit(name).alias("attribute"), pl.col("count").sum().alias("mass")
            )
        )
        hist_frames[name] = histogram_rows(name, hist)
    histograms = (
        pl.concat([hist_frames[n] for n in sorted(hist_frames)])
        if hist_frames
        else pl.DataFrame(schema=HISTOGRAM_SCHEMA)
    )
    users = pl.concat(user_frames).select(list(BUCKET_STATS_SCHEMA)).cast(BUCKET_STATS_SCHEMA)
    items = pl.concat(item_frames).select(list(ITEM_STATS_SCHEMA)).cast(ITEM_STATS_SCHEMA)
    return (
        histograms,
        users.sort("attribute", "subcategory"),
        items.sort("attribute", "subcategory", "item"),
    )
