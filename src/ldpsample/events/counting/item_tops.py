"""Each subcategory's items: the ``top_items`` of its item ranking (ties by ascending item, as
the published Avazu code), every item, or a release spec's items. The one job ranks the whole
table (:mod:`ldpsample.events.counting.histograms`); the buckets rank the summed partial rankings
(:func:`ldpsample.events.bucketed.merge.merge_partials`).
"""

from __future__ import annotations

import polars as pl

__all__ = ["item_tops"]


def item_tops(
    ranked: pl.DataFrame,
    name: str,
    *,
    top_items: int | None,
    domain: pl.DataFrame | None,
) -> pl.DataFrame:
    """``a:<name>, item`` of each subcategory's items: the ``top_items`` with the largest
    ``rank`` of ``ranked`` (``a:<name>, item, rank`` rows), ties by ascending item (every item
    with ``top_items=None``); a release spec's items, whatever the data, with ``domain``."""
    a = f"a:{name}"
    if domain is not None:  # the spec's items, whatever the data
        return domain.filter(pl.col("attribute") == name).select(
            pl.col("subcategory").alias(a), "item"
        )
    ordered = ranked.sort([a, "rank", "item"], descending=[False, True, False])
    top = ordered.group_by(a, maintain_order=True).head(top_items) if top_items else ordered
    return top.select(a, "item")
