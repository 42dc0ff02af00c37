"""An events table read lazily, filtered and renamed: the start of every histogram computation (the
one job, :func:`ldpsample.events.counting.histograms.build_event_histograms`, and the map step of
the buckets, :func:`ldpsample.events.bucketed.split.split_partition`), with the one-scan queries of
its checks; and a release spec's domain as text ids.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ldpsample.events.options import EventsOptions, OnBadRows
from ldpsample.events.reading.scan import scan_events
from ldpsample.events.reading.table_checks import _check_numbers, _number, skip_bad_weights
from ldpsample.events.schemas import ALL

__all__ = ["domain_frame"]


@dataclass(frozen=True)
class _Prepared:
    """A table read lazily and filtered, the start of every histogram computation (the one-job
    :func:`~ldpsample.events.counting.histograms.build_event_histograms` and the map step of
    :mod:`ldpsample.events.bucketed.steps`).

    ``base`` has the columns ``user, item, count, rank, activity`` and ``a:<attribute>`` per
    attribute (``a:all`` without attributes), after dropping null ids, the items outside
    ``items`` or the release spec and ``exclude_users``; ``small`` are the one-scan queries
    of the checks (one row), the rows left (``used``) and, with ``items``, which listed items
    the table holds."""

    raw: pl.LazyFrame
    base: pl.LazyFrame
    small: list[pl.LazyFrame]
    listed: list[str] | None
    names: list[str]
    numeric: dict[str, str]
    sums: list[str]
    domain: pl.DataFrame | None


def _prepare(options: EventsOptions, *, domain: pl.DataFrame | None) -> _Prepared:
    """The table of ``options`` read lazily and filtered (``domain``: a release spec's rows,
    whose items replace ``options.items``)."""
    source, key, user, item = options.path, options.key, options.user, options.item
    count, rank_items_by, activity_by = options.count, options.rank_items_by, options.activity_by
    attributes, items = list(options.attributes), options.items
    exclude_users = options.exclude_users
    on_bad_rows = options.on_bad_rows
    numeric = {
        c: k
        for c, k in (
            (count, f"{key}.count"),
            (rank_items_by, f"{key}.rank_items_by"),
            (activity_by, f"{key}.activity_by"),
        )
        if c is not None
    }
    columns = [(user, f"{key}.user"), (item, f"{key}.item")]
    columns += [(c, k) for c, k in numeric.items()]
    columns += [(a, f"{key}.attributes") for a in attributes]
    raw = scan_events(
        source,
        columns,
        key=f"{key}.path",
        strings=[user, item],
        text=attributes,
        numbers=list(numeric),
        on_bad_rows=on_bad_rows,
    )
    if domain is not None:
        domain = domain_frame(domain)
    # The rows used: ids present, then the spec's, the listed items and the excluded users.
    keep = pl.col(user).is_not_null() & pl.col(item).is_not_null()
    if on_bad_rows == OnBadRows.SKIP:  # with "error", a bad weight stops the job after the checks
        keep &= skip_bad_weights(list(numeric))
    in_spec = None if domain is None else pl.col(item).is_in(domain["item"].unique().implode())
    if in_spec is not None:
        keep &= in_spec
    elif items is not None:
        keep &= pl.col(item).is_in([str(i) for i in items])
    if exclude_users:
        keep &= ~pl.col(user).is_in([str(u) for u in exclude_users])
    # Pass 1's small queries: the checks (with the rows left by the filters, counted by an
    # expression on the same scan instead of a second query on ``base`` beside the large
    # aggregation), and which listed items the table holds.
    checks_query = _check_numbers(
        raw,
        numeric,
        user,
        item,
        attributes=attributes,
        extra=[
            keep.sum().alias("used"),
            # rows whose item is in no subcategory of the spec (not used; logged)
            *([] if in_spec is None else [(~in_spec).sum().alias("outside")]),
        ],
    )
    weight = _number(count) if count is not None else pl.lit(1.0)
    base = raw.filter(keep)
    names = attributes or [ALL]
    base = base.select(
        pl.col(user).alias("user"),
        pl.col(item).alias("item"),
        weight.alias("count"),
        (_number(rank_items_by) if rank_items_by else weight).alias("rank"),
        (_number(activity_by) if activity_by else weight).alias("activity"),
        *[pl.col(a).alias(f"a:{a}") for a in attributes],
        *([pl.lit(ALL).alias(f"a:{ALL}")] if not attributes else []),
    )
    listed = None if items is None or domain is not None else sorted({str(i) for i in items})
    small = [checks_query]
    if listed is not None:
        small.append(
            raw.select(pl.col(item).filter(pl.col(item).is_in(listed)).unique().alias("item"))
        )
    # The weights that are summed: the count, and the rank and activity where they are other
    # columns (otherwise they are the count's sums).
    sums = ["count"] + [c for c, by in (("rank", rank_items_by), ("activity", activity_by)) if by]
    return _Prepared(raw, base, small, listed, names, numeric, sums, domain)


def domain_frame(domain: pl.DataFrame) -> pl.DataFrame:
    """A release spec's ``attribute, subcategory, item, q`` rows as text ids and float q."""
    return domain.select(
        pl.col("attribute").cast(pl.String),
        pl.col("subcategory").cast(pl.String),
        pl.col("item").cast(pl.String),
        pl.col("q").cast(pl.Float64),
    )
