"""The priors table's rows that come from outside the private table: a public table's pooled
counts per subcategory (:func:`public_prior_masses`) and its ``q`` renormalised over the items
kept users hold (:func:`public_priors`), or a release spec's ``q`` on its whole domain
(:func:`spec_priors`). Data-derived priors (``pooled``, ``user_mean``, ``uniform``) are
:mod:`ldpsample.events.counting.data_priors`'.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ldpsample.events.reading.scan import EventsTableError, scan_events
from ldpsample.events.reading.table_checks import _number
from ldpsample.events.schemas import ALL, PRIOR_SCHEMA

__all__ = ["public_prior_masses", "public_priors", "spec_priors"]

log = logging.getLogger(__name__)


def public_prior_masses(
    prior: Mapping[str, Any],
    *,
    key: str,
    attributes: Sequence[str],
    items: Sequence[str] | None,
) -> list[pl.LazyFrame]:
    """Per attribute: lazy ``(subcategory, item, mass)`` of a public table's pooled counts.

    ``prior`` is the ``prior: {path, user, item, count, attributes}`` mapping of an events
    entry (``key`` is ``events.<name>``, for messages); ``attributes`` the entry's attributes
    (the public table names one column per attribute, same order; none: one subcategory
    ``"all"``); ``items`` restricts the items (None: all). Rows with a null user, item or
    subcategory are ignored.
    """
    p_user, p_item, p_count = prior["user"], prior["item"], prior.get("count")
    p_attributes = list(prior.get("attributes") or [])
    if len(p_attributes) != len(attributes):
        raise EventsTableError(
            f"config key {key}.prior.attributes: {p_attributes!r} must name one column of the "
            f"public table per attribute {list(attributes)!r} (same order)"
        )
    columns = [(p_user, f"{key}.prior.user"), (p_item, f"{key}.prior.item")]
    if p_count is not None:
        columns.append((p_count, f"{key}.prior.count"))
    columns += [(a, f"{key}.prior.attributes") for a in p_attributes]
    lf = scan_events(
        prior["path"],
        columns,
        key=f"{key}.prior.path",
        strings=[p_user, p_item],
        text=p_attributes,
        numbers=[p_count] if p_count is not None else [],
    )
    weight = _number(p_count) if p_count is not None else pl.lit(1.0)
    lf = lf.filter(pl.col(p_user).is_not_null() & pl.col(p_item).is_not_null())
    if items is not None:
        lf = lf.filter(pl.col(p_item).is_in(list(items)))
    lf = lf.with_columns(weight.alias("_w"))
    out = []
    for p_attribute in p_attributes or [None]:
        sub = pl.lit(ALL) if p_attribute is None else pl.col(p_attribute)
        out.append(
            lf.select(sub.alias("subcategory"), pl.col(p_item).alias("item"), "_w")
            .filter(pl.col("subcategory").is_not_null())
            .group_by("subcategory", "item")
            .agg(pl.col("_w").sum().alias("mass"))
        )
    return out


def spec_priors(name: str, domain: pl.DataFrame, kept: pl.DataFrame) -> pl.DataFrame:
    """:data:`~ldpsample.events.schemas.PRIOR_SCHEMA` rows of a release spec's q on every item of
    the kept subcategories of attribute ``name``."""
    return (
        domain.filter(pl.col("attribute") == name)
        .join(kept, on="subcategory", how="semi")
        .select(list(PRIOR_SCHEMA))
        .cast(PRIOR_SCHEMA)
    )


def public_priors(
    name: str,
    masses: pl.DataFrame,
    kept: pl.DataFrame,
    item_sets: pl.DataFrame,
    *,
    prior: Mapping[str, Any],
    key: str,
) -> pl.DataFrame:
    """:data:`~ldpsample.events.schemas.PRIOR_SCHEMA` rows of a public table's q (``masses``:
    ``subcategory, item, mass``, :func:`public_prior_masses`) on the items kept users hold
    (``item_sets``: ``subcategory, item``) of the kept subcategories, renormalised there.

    Raises
    ------
    EventsTableError
        If the public table lacks a kept subcategory.
    """
    masses = masses.with_columns(pl.col("subcategory").cast(pl.String))
    lacking = sorted(set(kept["subcategory"]) - set(masses["subcategory"]))
    if lacking:
        raise EventsTableError(
            f"{prior['path']}: the public prior table (config key {key}.prior) lacks "
            f"subcategory {lacking[0]!r} of attribute {name!r}"
            + (f" (and {len(lacking) - 1} more: {lacking[1:6]})" if len(lacking) > 1 else "")
        )
    unused = masses.join(kept, on="subcategory", how="semi").join(
        item_sets, on=["subcategory", "item"], how="anti"
    )
    if unused.height:
        log.info(
            "%s %s: %d (subcategory, item) pairs of the public prior table have no kept "
            "user's data and are left out of q (it is renormalised over the items kept "
            "users hold), e.g. %s",
            key,
            name,
            unused.height,
            unused.sort("subcategory", "item").head(3).rows(),
        )
    q = item_sets.join(masses, on=["subcategory", "item"], how="left").with_columns(
        pl.col("mass").fill_null(0.0)
    )
    q = q.with_columns((pl.col("mass") / pl.col("mass").sum().over("subcategory")).alias("q"))
    return q.select(pl.lit(name).alias("attribute"), "subcategory", "item", "q").cast(PRIOR_SCHEMA)
