"""The subcategories table of an attribute: every subcategory met (or of a release spec), kept
with at least ``min_users`` kept users or skipped with the reason; and the warning when no
subcategory of any attribute is kept. Shared by the one job and the buckets' reduce step
(:mod:`ldpsample.events.bucketed.bucket_priors`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import polars as pl

from ldpsample.events.schemas import SUBCATEGORY_SCHEMA

__all__ = ["log_empty_result", "subcategory_table"]

log = logging.getLogger(__name__)


def subcategory_table(
    name: str,
    rows: pl.DataFrame,
    per_sub: pl.DataFrame,
    *,
    key: str,
    domain: pl.DataFrame | None,
    min_users: int,
    min_user_count: float,
    checks: Mapping[str, Any],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The subcategories table of one attribute
    (:data:`~ldpsample.events.schemas.SUBCATEGORY_SCHEMA`) and its kept subcategories (a
    ``subcategory`` frame): ``rows`` holds ``subcategory, rows`` (table rows per subcategory),
    ``per_sub`` ``subcategory, kept_users, items`` (of the kept histograms); a subcategory is kept
    with at least ``min_users`` kept users (and, with a release spec, if the spec has it)."""
    in_spec = pl.lit(True)
    if domain is not None:  # every subcategory of the spec, also those without rows
        spec_subs = (
            domain.filter(pl.col("attribute") == name)
            .select("subcategory")
            .unique()
            .with_columns(pl.lit(True).alias("_in_spec"))
        )
        rows = spec_subs.join(rows, on="subcategory", how="full", coalesce=True).with_columns(
            pl.col("rows").fill_null(0), pl.col("_in_spec").fill_null(False)
        )
        in_spec = pl.col("_in_spec")
    no_user = (
        f"no user with data on the spec's items and activity >= min_user_count ({min_user_count})"
        if domain is not None
        else f"no user with activity >= min_user_count ({min_user_count})"
    )
    enough_users = in_spec & (pl.col("kept_users") >= min_users)
    table = (
        rows.join(per_sub, on="subcategory", how="left")
        .with_columns(pl.col("kept_users", "items").fill_null(0))
        .with_columns(
            pl.when(enough_users).then(pl.lit("kept")).otherwise(pl.lit("skipped")).alias("status"),
            pl.when(enough_users)
            .then(pl.lit(""))
            .when(~in_spec)
            .then(pl.lit("not a subcategory of the release spec"))
            .when(pl.col("kept_users") == 0)
            .then(pl.lit(no_user))
            .otherwise(
                pl.format("{} users < min_users ({})", pl.col("kept_users"), pl.lit(min_users))
            )
            .alias("reason"),
        )
        .select(pl.lit(name).alias("attribute"), pl.all())
    )
    kept = table.filter(pl.col("status") == "kept").select("subcategory")
    log.info("%s %s: %d subcategories, %d kept", key, name, table.height, kept.height)
    if table.height == 0:  # no row of this attribute is left: one line that says why
        table = pl.DataFrame(
            [(name, None, 0, 0, 0, "skipped", _nothing_left(checks, key))],
            schema=SUBCATEGORY_SCHEMA,
            orient="row",
        )
    return table.select(list(SUBCATEGORY_SCHEMA)).cast(SUBCATEGORY_SCHEMA), kept


def _nothing_left(checks: Mapping[str, Any], key: str) -> str:
    """Why an attribute has no subcategory at all: which filter left no row."""
    if checks["used"] == 0:
        nulls = max(checks["null_user"], checks["null_item"])
        return (
            f"no row left of {checks['rows']}: {nulls} have a null user or item, the rest are "
            f"removed by {key}.items, {key}.exclude_users or a release spec's items"
        )
    return "every row has a null value in this attribute's column"


def log_empty_result(histograms: pl.DataFrame, subcategories: pl.DataFrame, key: str) -> None:
    """Warn, with the commonest reasons, when no subcategory of any attribute was kept."""
    if histograms.height:
        return
    reasons = (
        subcategories.group_by("reason")
        .len()
        .sort("len", "reason", descending=[True, False])
        .head(3)
        .rows()
    )
    log.warning(
        "%s: no subcategory of any attribute was kept (see the subcategories table): %s",
        key,
        "; ".join(f"{n} x {reason}" for reason, n in reasons),
    )
