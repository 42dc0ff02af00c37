"""The item ranking where it needs each user's total activity first (``activity_scope: global``
with a positive ``min_user_count``): whether it does (:func:`ranks_need_activity`), and then
one bucket's ranking partial sums among its kept users (:func:`bucket_ranks`) instead of each
partition's among all its rows.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ldpsample.events.bucketed.partials import _bucket_triples, _scan_bucket
from ldpsample.events.schemas import RANK_SCHEMA

__all__ = ["bucket_ranks", "ranks_need_activity"]

PathLike = str | os.PathLike[str]


def ranks_need_activity(
    *, activity_scope: str, min_user_count: float, top_items: int | None, release: bool
) -> bool:
    """Whether the item ranking needs each user's total activity first (global scope with a
    positive threshold: items are ranked among the kept users' rows, as the published Avazu
    code), so that it is summed per bucket (:func:`bucket_ranks`) and not per partition."""
    return (
        not release and top_items is not None and activity_scope == "global" and min_user_count > 0
    )


def bucket_ranks(files: Sequence[PathLike], *, options: Mapping[str, Any]) -> pl.DataFrame:
    """:data:`~ldpsample.events.schemas.RANK_SCHEMA` partial sums of one bucket: the item ranking
    among the rows of the users kept by the global activity filter (``activity_scope:
    global``)."""
    _, generated = _bucket_triples(_scan_bucket(files), options)
    frames = []
    for name, _triples, kept in generated:
        a = f"a:{name}"
        frames.append(
            kept.group_by(a, "item")
            .agg(pl.col("rank").sum())
            .select(pl.lit(name).alias("attribute"), pl.col(a).alias("subcategory"), "item", "rank")
        )
    return pl.concat(frames).cast(RANK_SCHEMA) if frames else pl.DataFrame(schema=RANK_SCHEMA)
