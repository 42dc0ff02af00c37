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
The aggregate trades memory for time (docs/performance.md).

This module holds the one job (:func:`build_event_histograms`) and the roster of a table's users
(:func:`event_users`); its steps, shared with the map/reduce steps of
:mod:`ldpsample.events.bucketed.steps`, live in :mod:`~ldpsample.events.reading.table_checks` (the
checks), :mod:`~ldpsample.events.reading.prepared` (the filtered table),
:mod:`~ldpsample.events.counting.item_tops`, :mod:`~ldpsample.events.counting.kept_users`,
:mod:`~ldpsample.events.counting.subcategories` and :mod:`~ldpsample.events.counting.public_priors`;
the schemas in :mod:`~ldpsample.events.schemas`. The steps' public names (and the
``_check_numbers`` and ``_exact_sums`` that tests call and patch) are importable from here too.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from ldpsample.events.counting.item_tops import item_tops
from ldpsample.events.counting.kept_users import histogram_rows, kept_histograms
from ldpsample.events.counting.public_priors import public_prior_masses, public_priors, spec_priors
from ldpsample.events.counting.subcategories import log_empty_result, subcategory_table
from ldpsample.events.options import EventsOptions
from ldpsample.events.reading.prepared import _prepare
from ldpsample.events.reading.prepared import domain_frame as domain_frame
from ldpsample.events.reading.scan import EventsTableError, polars_reason, scan_events
from ldpsample.events.reading.table_checks import (
    _check_listed,
    _exact_sums,
    _log_outside,
    raise_on_checks,
)
from ldpsample.events.reading.table_checks import _check_numbers as _check_numbers
from ldpsample.events.schemas import ALL as ALL
from ldpsample.events.schemas import HISTOGRAM_SCHEMA, PRIOR_SCHEMA, SUBCATEGORY_SCHEMA
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


@dataclass(frozen=True)
class EventHistograms:
    """Result of :func:`build_event_histograms` (frames of
    :data:`~ldpsample.events.schemas.HISTOGRAM_SCHEMA`,
    :data:`~ldpsample.events.schemas.PRIOR_SCHEMA` and
    :data:`~ldpsample.events.schemas.SUBCATEGORY_SCHEMA`)."""

    histograms: pl.DataFrame
    priors: pl.DataFrame
    subcategories: pl.DataFrame
    stats: dict[str, int]


def build_event_histograms(
    options: EventsOptions,
    *,
    domain: pl.DataFrame | None = None,
    engine: str = "streaming",
) -> EventHistograms:
    """Kept users' histograms per (attribute, subcategory), the subcategory table and (for a
    public prior table) the prior masses, from one scan of the events table.

    ``options`` are the ``events.<name>`` config keys
    (:class:`~ldpsample.events.options.EventsOptions`, with the schema's defaults: so
    ``EventsOptions(path=..., user=..., item=...)`` gives what a config entry ``{path, user,
    item}`` gives; ``top_items="auto"`` is 100). ``options.path`` is one file, a folder, a
    glob or a hive-partitioned dataset (:mod:`ldpsample.events.reading.files`; its files' rows in
    order), or its :class:`~ldpsample.events.reading.files.TableFiles`. ``attributes=()`` makes
    the whole table one subcategory ``"all"`` of attribute ``"all"``.

    ``domain`` (a release's public spec: ``attribute, subcategory, item, q`` rows, e.g. its
    ``domain.csv``) replaces every data-derived choice of items and prior: each subcategory's
    items are the spec's, in full, ``top_items``/``rank_items_by``/``items``/``prior`` are not
    used, the priors table holds the spec's ``q`` on every item of each kept subcategory, and
    the subcategories table lists every subcategory of the spec (one without users is skipped,
    one of the table that the spec lacks is skipped as outside the spec).

    The same results, for a table too large for one job, come from the map/reduce steps of
    :mod:`ldpsample.events.bucketed.steps` (users in buckets).

    Raises
    ------
    FileNotFoundError, EventsTableError
        Missing file or column, empty table, a CSV record with a field missing or too many,
        non-numeric or negative weights or null attribute values (unless
        ``on_bad_rows="skip"``), null ids with ``on_null="error"``, a public prior that lacks a
        kept subcategory.
    """
    prepared = _prepare(options, domain=domain)
    path, key, user, item = options.path, options.key, options.user, options.item
    attributes, prior, items = list(options.attributes), options.prior, options.items
    activity_scope, min_user_count = options.activity_scope, options.min_user_count
    on_null, on_bad_rows = options.on_null, options.on_bad_rows
    base, names, numeric, sums = prepared.base, prepared.names, prepared.numeric, prepared.sums
    domain = prepared.domain

    def collect(
        queries: list[pl.LazyFrame], *, what: str, together: bool = False, rows: bool = False
    ) -> list[pl.DataFrame]:
        """The queries' frames (logged as a phase: start, heartbeat, elapsed time and, with
        ``rows``, the table's rows and their rate from the checks, the first frame), an
        unreadable table named by its file and config key."""
        try:
            with phase(log, f"{key}: {what}") as done:
                if engine == "streaming" and not together:
                    # One query at a time: collect_all of several large aggregations holds all
                    # their inputs in memory at once.
                    return [query.collect(engine=engine) for query in queries]
                frames = pl.collect_all(queries, engine=engine)
                if rows:
                    done.add(frames[0]["rows"][0])
                return frames
        except pl.exceptions.PolarsError as exc:
            raise EventsTableError(
                f"{path}: cannot read the events table (config key {key}.path): "
                f"{polars_reason(exc)}"
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
        rows=True,
        what=f"scanning {path}: checks and the {names[0]!r} aggregate",
    )
    checks = first[0].row(0, named=True)
    first_triples = first[-1]
    if prepared.listed is not None:
        _check_listed(prepared.listed, first[1], key=key, item=item, path=path)
    _log_outside(checks, path)
    raise_on_checks(
        checks,
        path=path,
        key=key,
        columns=numeric,
        user=user,
        item=item,
        on_null=on_null,
        raw=prepared.raw,
        attributes=attributes,
        on_bad_rows=on_bad_rows,
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
        return item_tops(ranked, name, top_items=options.evaluation_top_items, domain=domain)

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
            min_users=options.min_users,
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


def event_users(options: EventsOptions) -> pl.Series:
    """Every user of an events table (the roster of a release), sorted: one lazy scan of the
    user column, nulls dropped (or an error with ``on_null="error"``) and ``exclude_users``
    removed, as :func:`build_event_histograms` does (a CSV's faulty records stop it or are
    left out, ``on_bad_rows``)."""
    path, key, user = options.path, options.key, options.user
    on_null, exclude_users = options.on_null, options.exclude_users
    lf = scan_events(
        path,
        [(user, f"{key}.user")],
        key=f"{key}.path",
        strings=[user],
        on_bad_rows=options.on_bad_rows,
    )
    try:
        users, nulls = pl.collect_all(
            [
                lf.select(pl.col(user).drop_nulls().unique().sort().alias("user")),
                lf.select(pl.col(user).is_null().sum().alias("n")),
            ]
        )
    except pl.exceptions.PolarsError as exc:
        raise EventsTableError(
            f"{path}: cannot read the events table (config key {key}.path): {polars_reason(exc)}"
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
