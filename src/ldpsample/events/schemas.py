"""The layouts of the events stage's tables (polars schemas) and the names they hold.

The one-job histograms, priors and subcategories tables
(:mod:`ldpsample.events.counting.histograms`), the partial tables of the map/reduce steps
(:mod:`ldpsample.events.bucketed.steps`), the methods and their divergences and the audit table
(:mod:`ldpsample.events.scoring.metrics`). Kept apart so that the published tables
(:mod:`ldpsample.events.outputs.tables`, and so :mod:`ldpsample.experiments.movielens.tables` and
:mod:`ldpsample.experiments.avazu.tables`) name the methods and the audit columns without importing
the metrics' mechanisms (scipy, cvxpy).
"""

from __future__ import annotations

import polars as pl

__all__ = [
    "ALL",
    "AUDIT_SCHEMA",
    "BUCKET_STATS_SCHEMA",
    "HISTOGRAM_SCHEMA",
    "ITEM_STATS_SCHEMA",
    "METHODS",
    "PRIOR_SCHEMA",
    "RANK_SCHEMA",
    "ROWS_SCHEMA",
    "SUBCATEGORY_SCHEMA",
]


#: Kept (attribute, subcategory, user, item) with the user's total count there (> 0).
HISTOGRAM_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "user": pl.String(),
    "item": pl.String(),
    "count": pl.Float64(),
}

#: A public table's prior per kept subcategory (``prior: {path: ...}`` only).
PRIOR_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "item": pl.String(),
    "q": pl.Float64(),
}

#: Every subcategory met in the table, kept or skipped, and why.
SUBCATEGORY_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "rows": pl.Int64(),
    "kept_users": pl.Int64(),
    "items": pl.Int64(),
    "status": pl.String(),
    "reason": pl.String(),
}

#: Subcategory name of ``attributes: []`` (the whole table is one subcategory).
ALL = "all"

#: Rows per subcategory of a partition (summed over partitions by
#: :func:`~ldpsample.events.bucketed.merge.merge_partials`).
ROWS_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "rows": pl.Int64(),
}

#: Partial sums of the item ranking (``rank_items_by``, or the count) per subcategory item.
RANK_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "item": pl.String(),
    "rank": pl.Float64(),
}

#: Kept users per subcategory of a bucket (buckets hold disjoint users: the counts add up).
BUCKET_STATS_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "kept_users": pl.Int64(),
}

#: The items kept users of a bucket hold per subcategory, with their counts' sum (the pooled
#: prior's partial sums).
ITEM_STATS_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "item": pl.String(),
    "mass": pl.Float64(),
}

#: Method -> the divergences it is scored with.
METHODS: dict[str, tuple[str, ...]] = {
    "minimax": ("tv", "kl"),
    "mollifier_tv": ("tv",),
    "mollifier_kl": ("kl",),
    "randomized_response": ("tv", "kl"),
}

#: One row per kernel the metrics used: its realised ε against the claimed ε (checked by
#: :func:`ldpsample.events.outputs.tables.check_audit`).
AUDIT_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "epsilon": pl.Float64(),
    "kernel": pl.String(),
    "n_items": pl.Int64(),
    "realized_epsilon": pl.Float64(),
}
