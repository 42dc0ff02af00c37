"""The kept users' histograms of one attribute: the activity filter over a subcategory's items
(``activity_scope: top_items``), positive counts only, and the rows of
:data:`~ldpsample.events.schemas.HISTOGRAM_SCHEMA` in their sorted order. Shared by the one job
and the bucket histograms (:mod:`ldpsample.events.bucketed.bucket_histograms`).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ldpsample.events.schemas import HISTOGRAM_SCHEMA

__all__ = ["histogram_rows", "kept_histograms"]


def kept_histograms(
    hist: pl.DataFrame, name: str, *, activity_scope: str, min_user_count: float
) -> pl.DataFrame:
    """``subcategory, user, item, count, activity`` of the kept users: ``hist`` (``a:<name>,
    user, item, count, activity`` rows of the users kept by the global activity filter, on the
    subcategories' items), with the subcategory as text, filtered by activity over the
    subcategory's items (``activity_scope="top_items"``) and to positive counts."""
    a = f"a:{name}"
    hist = hist.rename({a: "subcategory"}).with_columns(pl.col("subcategory").cast(pl.String))
    if activity_scope == "top_items" and min_user_count > 0:  # activity >= 0 >= the threshold
        enough = (
            hist.group_by("subcategory", "user")
            .agg(pl.col("activity").sum())
            .filter(pl.col("activity") >= min_user_count)
            .select("subcategory", "user")
        )
        hist = hist.join(enough, on=["subcategory", "user"], how="semi")
    return hist.filter(pl.col("count") > 0)


def histogram_rows(name: str, hist: pl.DataFrame) -> pl.DataFrame:
    """:data:`~ldpsample.events.schemas.HISTOGRAM_SCHEMA` rows of attribute ``name``
    (``subcategory, user, item, count`` in ``hist``), sorted by subcategory, user and item (a
    constant attribute key would cost a third of the sort)."""
    rows = hist.select(
        pl.lit(name).alias("attribute"), "subcategory", "user", "item", "count"
    ).cast(HISTOGRAM_SCHEMA)
    return rows.sort(_sort_key(rows, ("subcategory", "user", "item")))


def _sort_key(frame: pl.DataFrame, columns: Sequence[str]) -> pl.Expr | list[str]:
    """What sorts ``frame`` by the text ``columns``, in order: one key of the values joined by
    NUL bytes (a string compares as its bytes, and NUL is below every other byte, so the joined
    keys order like the tuples: half the time of a sort on three columns), or the columns
    themselves if a value holds a NUL byte."""
    if (
        frame.height == 0
        or frame.select(
            pl.any_horizontal(pl.col(*columns).str.contains("\x00", literal=True)).any()
        ).item()
    ):
        return list(columns)
    return pl.concat_str(list(columns), separator="\x00")
