"""From an events table to per-subcategory user histograms, in one lazy pass for all attributes.

For every attribute (a column; each of its values is a subcategory) and subcategory:

1. the items are the ``top_items`` with the largest total ``rank_items_by`` (default: the
   count), ties broken by ascending item value (as the published Avazu code);
2. a user is kept if its total ``activity_by`` (default: the count) is at least
   ``min_user_count``, counted over the whole table (``activity_scope="global"``; the
   published Avazu code) or over the subcategory's top items (``"top_items"``);
3. a kept user's private ``p`` is its normalised counts over the subcategory's items (the top
   items that kept users have events on);
4. a subcategory is kept if it has at least ``min_users`` kept users; the others are listed
   with the reason in the subcategories table.

Because activity is never negative, a user below ``min_user_count`` over the whole table is
below it in every subcategory too: such users are dropped before the histograms are built.

With integer weights (every row counting 1, as Avazu; or integer counts, clicks), each
attribute costs one scan and one streaming group-by of the table by (subcategory, user, item)
with the row count and the weight sums; everything above is then a sum over that aggregate
(millions of rows, not tens of millions), equal bit for bit to the same sum over rows because
float sums of integers below 2**53 are exact in any order. The first attribute's aggregate
keeps a null subcategory as a group and so also gives every user's total activity; it is
collected together with the table checks (one :func:`polars.collect_all`). Fractional
weights take the row-by-row path (the activity filter, then the item ranking and the
histograms as separate aggregations of the scan), whose sums do not re-sum partial sums.
Measured on the 40 M-row Avazu-shaped table, one attribute: 6-14 s -> 4-6 s, peak
0.66 -> 1.3 GB (the aggregate; benchmarks/results.md).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from ldpsample.events.schemas import ALL, HISTOGRAM_SCHEMA, PRIOR_SCHEMA, SUBCATEGORY_SCHEMA
from ldpsample.events.table import EventsTableError, locate_row, scan_events
from ldpsample.pipeline.progress import phase

__all__ = [
    "HISTOGRAM_SCHEMA",
    "PRIOR_SCHEMA",
    "SUBCATEGORY_SCHEMA",
    "EventHistograms",
    "build_event_histograms",
    "event_users",
    "public_prior_masses",
]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

#: Integers up to this bound are exact float64 values, and so are their sums.
_EXACT = float(2**53)


@dataclass(frozen=True)
class EventHistograms:
    """Result of :func:`build_event_histograms` (frames of the schemas above)."""

    histograms: pl.DataFrame
    priors: pl.DataFrame
    subcategories: pl.DataFrame
    stats: dict[str, int]


def _number(column: str) -> pl.Expr:
    return pl.col(column).cast(pl.Float64, strict=False)


def _check_numbers(
    lf: pl.LazyFrame,
    columns: Mapping[str, str],
    user: str,
    item: str,
    *,
    extra: Sequence[pl.Expr] = (),
) -> pl.LazyFrame:
    """One-row frame counting the rows, null ids and bad values of each numeric column (and the
    ``extra`` one-row aggregates)."""
    exprs = [
        *extra,
        pl.len().alias("rows"),
        pl.col(user).is_null().sum().alias("null_user"),
        pl.col(item).is_null().sum().alias("null_item"),
    ]
    for column in columns:
        value = _number(column)
        bad = value.is_null() | value.is_nan()
        exprs.append(bad.sum().alias(f"bad:{column}"))
        # where the first bad value is and what it holds, for the message
        exprs.append(pl.int_range(pl.len()).filter(bad).first().alias(f"bad_row:{column}"))
        exprs.append(
            pl.col(column).cast(pl.String).filter(bad).first().alias(f"bad_value:{column}")
        )
        exprs.append((value < 0).sum().alias(f"negative:{column}"))
        # For the choice of algorithm only (never raised on): sums of integers below 2**53 are
        # exact in any order, so partial sums per (subcategory, user, item) may be re-summed.
        exprs.append((value != value.floor()).sum().alias(f"fraction:{column}"))
        exprs.append(value.abs().sum().alias(f"total:{column}"))
    return lf.select(exprs)


def _exact_sums(checks: Mapping[str, Any], columns: Mapping[str, str]) -> bool:
    """Whether every weight is an integer and every column's total is below 2**53 (then any
    float sum of its values, in any grouping and order, is exact)."""
    if checks["rows"] >= _EXACT:
        return False
    for column in columns:
        total = checks[f"total:{column}"]
        if checks[f"fraction:{column}"] or total is None or not total < _EXACT:
            return False
    return True


def raise_on_checks(
    checks: dict[str, int],
    *,
    path: Any,
    key: str,
    columns: Mapping[str, str],
    user: str,
    item: str,
    on_null: str,
    whole_table: bool = True,
) -> None:
    """Raise :class:`EventsTableError` for what :func:`_check_numbers` found (naming the file,
    and for a bad value its data row in that file); log dropped null ids. ``whole_table=False``
    (one partition of a table) does not take an empty result for an empty table."""
    if whole_table and checks["rows"] == 0:
        raise EventsTableError(f"{path}: the events table is empty (config key {key}.path)")
    for column, column_key in columns.items():
        if checks[f"bad:{column}"]:
            file, row = locate_row(path, checks[f"bad_row:{column}"], key=f"{key}.path")
            raise EventsTableError(
                f"{file}: column {column!r} (config key {column_key}) has "
                f"{checks[f'bad:{column}']} missing or non-numeric values, the first "
                f"{checks[f'bad_value:{column}']!r} in data row {row + 1} (line {row + 2} of a "
                "CSV with a header); it must hold numbers"
            )
        if checks[f"negative:{column}"]:
            raise EventsTableError(
                f"{path}: column {column!r} (config key {column_key}) has "
                f"{checks[f'negative:{column}']} negative values; it must be >= 0"
            )
    for column, label in ((user, "null_user"), (item, "null_item")):
        if checks[label]:
            which = "user" if label == "null_user" else "item"
            if on_null == "error":
                raise EventsTableError(
                    f"{path}: column {column!r} (config key {key}.{which}) has {checks[label]} "
                    f"null values (config key {key}.on_null: error; set drop to drop them)"
                )
            log.warning(
                "%s: dropped %d rows with a null %s (column %r; %s.on_null: drop)",
                path,
                checks[label],
                which,
                column,
                key,
            )


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


def _check_options(key: str, activity_scope: str, on_null: str) -> None:
    if activity_scope not in ("top_items", "global"):
        raise ValueError(
            f"config key {key}.activity_scope: {activity_scope!r} is not top_items or global"
        )
    if on_null not in ("drop", "error"):
        raise ValueError(f"config key {key}.on_null: {on_null!r} is not drop or error")


@dataclass(frozen=True)
class _Prepared:
    """A table read lazily and filtered, the start of every histogram computation (the one-job
    :func:`build_event_histograms` and the map step of :mod:`ldpsample.events.buckets`).

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


def _prepare(
    source: Any,
    *,
    key: str,
    user: str,
    item: str,
    count: str | None,
    attributes: Sequence[str],
    items: Sequence[Any] | None,
    rank_items_by: str | None,
    activity_by: str | None,
    exclude_users: Sequence[Any],
    domain: pl.DataFrame | None,
) -> _Prepared:
    attributes = list(attributes)
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
    )
    if domain is not None:
        domain = domain_frame(domain)
    checks_query = _check_numbers(
        raw,
        numeric,
        user,
        item,
        # rows whose item is in no subcategory of the spec (not used; logged)
        extra=[]
        if domain is None
        else [(~pl.col(item).is_in(domain["item"].unique().implode())).sum().alias("outside")],
    )

    weight = _number(count) if count is not None else pl.lit(1.0)
    base = raw.filter(pl.col(user).is_not_null() & pl.col(item).is_not_null())
    if domain is not None:
        base = base.filter(pl.col(item).is_in(domain["item"].unique().implode()))
    elif items is not None:
        base = base.filter(pl.col(item).is_in([str(i) for i in items]))
    if exclude_users:
        base = base.filter(~pl.col(user).is_in([str(u) for u in exclude_users]))
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
    # Pass 1's small queries: the checks (the rows left by the filters, and which listed items
    # the table holds, among them).
    listed = None if items is None or domain is not None else sorted({str(i) for i in items})
    small = [checks_query, base.select(pl.len().alias("used"))]
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


def _check_listed(listed: list[str] | None, found: pl.DataFrame, *, key: str, item: str, path: Any):
    if listed is None:
        return
    absent = sorted(set(listed) - set(found["item"].to_list()))
    if absent:
        raise EventsTableError(
            f"config key {key}.items: {len(absent)} of the {len(listed)} listed items are "
            f"not in column {item!r} of {path}: {absent[:10]}"
            + (" ..." if len(absent) > 10 else "")
        )


def _log_outside(checks: Mapping[str, Any], path: Any) -> None:
    if checks.get("outside"):
        log.info(
            "%s: %d of %d rows hold items that no subcategory of the release spec has; they "
            "are not used",
            path,
            checks["outside"],
            checks["rows"],
        )


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
    """The subcategories table of one attribute (:data:`SUBCATEGORY_SCHEMA`) and its kept
    subcategories (a ``subcategory`` frame): ``rows`` holds ``subcategory, rows`` (table rows
    per subcategory), ``per_sub`` ``subcategory, kept_users, items`` (of the kept
    histograms); a subcategory is kept with at least ``min_users`` kept users (and, with a
    release spec, if the spec has it)."""
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


def spec_priors(name: str, domain: pl.DataFrame, kept: pl.DataFrame) -> pl.DataFrame:
    """:data:`PRIOR_SCHEMA` rows of a release spec's q on every item of the kept
    subcategories of attribute ``name``."""
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
    """:data:`PRIOR_SCHEMA` rows of a public table's q (``masses``: ``subcategory, item,
    mass``, :func:`public_prior_masses`) on the items kept users hold (``item_sets``:
    ``subcategory, item``) of the kept subcategories, renormalised there.

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


def histogram_rows(name: str, hist: pl.DataFrame) -> pl.DataFrame:
    """:data:`HISTOGRAM_SCHEMA` rows of attribute ``name`` (``subcategory, user, item, count``
    in ``hist``), sorted by subcategory, user and item (a constant attribute key would cost a
    third of the sort)."""
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


def build_event_histograms(
    path: Any,
    *,
    key: str,
    user: str,
    item: str,
    count: str | None = None,
    attributes: Sequence[str] = (),
    prior: str | Mapping[str, Any] = "user_mean",
    items: Sequence[Any] | None = None,
    top_items: int | None = 100,
    rank_items_by: str | None = None,
    activity_by: str | None = None,
    min_user_count: float = 20,
    activity_scope: str = "top_items",
    min_users: int = 100,
    exclude_users: Sequence[Any] = (),
    on_null: str = "drop",
    domain: pl.DataFrame | None = None,
    engine: str = "streaming",
) -> EventHistograms:
    """Kept users' histograms per (attribute, subcategory), the subcategory table and (for a
    public prior table) the prior masses, from one scan of the events table.

    Parameters mirror the ``events.<name>`` config keys (``key`` is ``events.<name>``, used in
    messages). ``path`` is one file, a folder, a glob or a hive-partitioned dataset
    (:mod:`ldpsample.events.files`; its files' rows in order), or its
    :class:`~ldpsample.events.files.TableFiles`. ``attributes=()`` makes the whole table one
    subcategory ``"all"`` of attribute ``"all"``.

    ``domain`` (a release's public spec: ``attribute, subcategory, item, q`` rows, e.g. its
    ``domain.csv``) replaces every data-derived choice of items and prior: each subcategory's
    items are the spec's, in full, ``top_items``/``rank_items_by``/``items``/``prior`` are not
    used, the priors table holds the spec's ``q`` on every item of each kept subcategory, and
    the subcategories table lists every subcategory of the spec (one without users is skipped,
    one of the table that the spec lacks is skipped as outside the spec).

    The same results, for a table too large for one job, come from the map/reduce steps of
    :mod:`ldpsample.events.buckets` (users in buckets).

    Raises
    ------
    FileNotFoundError, EventsTableError
        Missing file or column, empty table, non-numeric or negative weights, null ids with
        ``on_null="error"``, a public prior that lacks a kept subcategory.
    """
    _check_options(key, activity_scope, on_null)
    prepared = _prepare(
        path,
        key=key,
        user=user,
        item=item,
        count=count,
        attributes=attributes,
        items=items,
        rank_items_by=rank_items_by,
        activity_by=activity_by,
        exclude_users=exclude_users,
        domain=domain,
    )
    attributes = list(attributes)
    base, names, numeric, sums = prepared.base, prepared.names, prepared.numeric, prepared.sums
    domain = prepared.domain

    def collect(
        queries: list[pl.LazyFrame], *, what: str, together: bool = False
    ) -> list[pl.DataFrame]:
        """The queries' frames (logged as a phase: start, heartbeat, elapsed time), an
        unreadable table named by its file and config key."""
        try:
            with phase(log, f"{key}: {what}"):
                if engine == "streaming" and not together:
                    # One query at a time: collect_all of several large aggregations holds all
                    # their inputs in memory (measured: 6.9 GB peak for 9 attributes of a 40
                    # M-row table).
                    return [query.collect(engine=engine) for query in queries]
                return pl.collect_all(queries, engine=engine)
        except pl.exceptions.PolarsError as exc:
            raise EventsTableError(
                f"{path}: cannot read the events table (config key {key}.path): "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def by_triple(name: str) -> pl.LazyFrame:
        """Rows and weight sums per (subcategory, user, item); a null subcategory is a group
        too, so that the first attribute's aggregate also gives every user's total activity."""
        a = f"a:{name}"
        return base.group_by(a, "user", "item").agg(
            pl.len().cast(pl.Int64).alias("rows"), *[pl.col(c).sum() for c in sums]
        )

    # Pass 1: the checks and the first attribute's aggregate, from one scan (one large
    # aggregation beside small results, so together).
    first = collect(
        [*prepared.small, by_triple(names[0])],
        together=True,
        what=f"scanning {path}: checks and the {names[0]!r} aggregate",
    )
    checks = {**first[0].row(0, named=True), "used": first[1].item()}
    first_triples = first[-1]
    if prepared.listed is not None:
        _check_listed(prepared.listed, first[2], key=key, item=item, path=path)
    _log_outside(checks, path)
    raise_on_checks(
        checks, path=path, key=key, columns=numeric, user=user, item=item, on_null=on_null
    )
    public = None
    if isinstance(prior, Mapping) and domain is None:
        public = public_prior_masses(
            prior,
            key=key,
            attributes=attributes,
            items=[str(i) for i in items] if items is not None else None,
        )
    masses_all = collect(public, what="the public prior table") if public else []

    def tops_of(ranked: pl.DataFrame, name: str) -> pl.DataFrame:
        return item_tops(ranked, name, top_items=top_items, domain=domain)

    rows_list: list[pl.DataFrame] = []
    hists: list[pl.DataFrame] = []
    if _exact_sums(checks, numeric):
        # Integer weights (Avazu: every row counts 1): every quantity below is a sum over the
        # (subcategory, user, item) aggregate, equal bit for bit to the same sum over rows. One
        # scan and one group-by per attribute; the rest runs on the (much smaller) aggregate.
        first_triples = first_triples.with_columns(
            *[pl.col("count").alias(c) for c in ("rank", "activity") if c not in sums]
        )
        # Necessary for both scopes (activity >= 0): drop users below the threshold overall.
        active = (
            first_triples.group_by("user")
            .agg(pl.col("activity").sum())
            .filter(pl.col("activity") >= min_user_count)
            .select("user")
        )
        for index, name in enumerate(names):
            a = f"a:{name}"
            if index == 0:
                triples, first_triples = first_triples, None
            else:
                (triples,) = collect([by_triple(name)], what=f"scanning {path}: {name!r}")
                triples = triples.with_columns(
                    *[pl.col("count").alias(c) for c in ("rank", "activity") if c not in sums]
                )
            triples = triples.filter(pl.col(a).is_not_null())
            if domain is not None:  # joined with the spec's (text) subcategories
                triples = triples.with_columns(pl.col(a).cast(pl.String))
            rows_list.append(triples.group_by(a).agg(pl.col("rows").sum()))
            kept = triples.join(active, on="user", how="semi")
            # Global scope ranks items among the kept users' rows (the published Avazu code),
            # top_items scope among all rows.
            ranked = (
                (kept if activity_scope == "global" else triples)
                .group_by(a, "item")
                .agg(pl.col("rank").sum())
            )
            hists.append(
                kept.join(tops_of(ranked, name), on=[a, "item"], how="semi").select(
                    a, "user", "item", "count", "activity"
                )
            )
            del triples, kept
    else:
        # Fractional weights: sums over rows, as the table's rows come (the aggregate above is
        # not used: re-summing its partial sums could round differently).
        del first_triples
        active = collect(
            [
                base.group_by("user")
                .agg(pl.col("activity").sum())
                .filter(pl.col("activity") >= min_user_count)
                .select("user")
            ],
            what=f"scanning {path}: each user's activity",
        )[0]
        if domain is not None:  # joined with the spec's (text) subcategories
            base = base.with_columns(pl.col(f"a:{n}").cast(pl.String) for n in names)
        kept_rows = base.join(active.lazy(), on="user", how="semi")
        # Pass 2 (small results): rows per subcategory and the item ranking, for every
        # attribute. Global scope ranks items among the kept users' rows (the published Avazu
        # code), top_items scope among all rows.
        rank_source = kept_rows if activity_scope == "global" else base
        queries: list[pl.LazyFrame] = []
        for name in names:
            a = f"a:{name}"
            queries.append(
                base.filter(pl.col(a).is_not_null())
                .group_by(a)
                .agg(pl.len().cast(pl.Int64).alias("rows"))
            )
            queries.append(
                rank_source.filter(pl.col(a).is_not_null())
                .group_by(a, "item")
                .agg(pl.col("rank").sum())
            )
        first = collect(queries, what=f"scanning {path}: rows and item ranking")
        rows_list = first[0::2]
        tops = [tops_of(first[2 * i + 1], name) for i, name in enumerate(names)]
        # Pass 3: the kept users' histograms over each subcategory's top items only (the
        # aggregation state is about the size of the result, whatever the table's size).
        hists = collect(
            [
                kept_rows.join(top.lazy(), on=[f"a:{name}", "item"], how="semi")
                .group_by(f"a:{name}", "user", "item")
                .agg(pl.col("count").sum(), pl.col("activity").sum())
                for name, top in zip(names, tops, strict=True)
            ],
            what=f"scanning {path}: the kept users' histograms",
        )

    hist_frames, sub_frames, prior_frames = [], [], []
    for index, name in enumerate(names):
        a = f"a:{name}"
        rows = (
            rows_list[index]
            .rename({a: "subcategory"})
            .with_columns(pl.col("subcategory").cast(pl.String))
        )
        hist = kept_histograms(
            hists[index], name, activity_scope=activity_scope, min_user_count=min_user_count
        )
        per_sub = hist.group_by("subcategory").agg(
            pl.col("user").n_unique().cast(pl.Int64).alias("kept_users"),
            pl.col("item").n_unique().cast(pl.Int64).alias("items"),
        )
        table, kept = subcategory_table(
            name,
            rows,
            per_sub,
            key=key,
            domain=domain,
            min_users=min_users,
            min_user_count=min_user_count,
            checks=checks,
        )
        hist = hist.join(kept, on="subcategory", how="semi")
        sub_frames.append(table)
        hist_frames.append(hist)
        if domain is not None:  # the spec's q on every item of each kept subcategory
            prior_frames.append(spec_priors(name, domain, kept))
        elif public is not None:
            item_sets = hist.select("subcategory", "item").unique()
            prior_frames.append(
                public_priors(name, masses_all[index], kept, item_sets, prior=prior, key=key)
            )
    # Sorted by (attribute, subcategory, user, item): each attribute's rows by the other three
    # keys, then the attributes in order.
    histograms = pl.concat(
        [
            histogram_rows(name, frame)
            for name, frame in sorted(zip(names, hist_frames, strict=True), key=lambda x: x[0])
        ]
    )
    subcategories = pl.concat(sub_frames).sort("attribute", "status", "subcategory")
    priors = (
        pl.concat(prior_frames).sort("attribute", "subcategory", "item")
        if prior_frames
        else pl.DataFrame(schema=PRIOR_SCHEMA)
    )
    stats = {k: int(v) for k, v in checks.items() if k in ("rows", "null_user", "null_item")}
    log_empty_result(histograms, subcategories, key)
    return EventHistograms(histograms, priors, subcategories, stats)


def _nothing_left(checks: Mapping[str, Any], key: str) -> str:
    """Why an attribute has no subcategory at all: which filter left no row."""
    if checks["used"] == 0:
        nulls = max(checks["null_user"], checks["null_item"])
        return (
            f"no row left of {checks['rows']}: {nulls} have a null user or item, the rest are "
            f"removed by {key}.items, {key}.exclude_users or a release spec's items"
        )
    return "every row has a null value in this attribute's column"


def event_users(
    path: PathLike,
    *,
    key: str,
    user: str,
    exclude_users: Sequence[Any] = (),
    on_null: str = "drop",
) -> pl.Series:
    """Every user of an events table (the roster of a release), sorted: one lazy scan of the
    user column, nulls dropped (or an error with ``on_null="error"``) and ``exclude_users``
    removed, as :func:`build_event_histograms` does."""
    lf = scan_events(path, [(user, f"{key}.user")], key=f"{key}.path", strings=[user])
    try:
        users, nulls = pl.collect_all(
            [
                lf.select(pl.col(user).drop_nulls().unique().sort().alias("user")),
                lf.select(pl.col(user).is_null().sum().alias("n")),
            ]
        )
    except pl.exceptions.PolarsError as exc:
        raise EventsTableError(
            f"{path}: cannot read the events table (config key {key}.path): "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if nulls.item() and on_null == "error":
        raise EventsTableError(
            f"{path}: column {user!r} (config key {key}.user) has {nulls.item()} null values "
            f"(config key {key}.on_null: error; set drop to drop them)"
        )
    series = users["user"]
    if exclude_users:
        series = series.filter(~series.is_in([str(u) for u in exclude_users]))
    return series
