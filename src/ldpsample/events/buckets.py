"""The histograms of an events table too large for one job, as map/reduce steps in which every
job holds its share of the table: the same results as :func:`build_event_histograms`.

Users are split into ``B`` *buckets*, ranges of their ids in sorted (text) order, so that a
bucket holds every row of its users and the buckets, concatenated in order, list the users in
sorted order. The steps (one Snakemake rule each, ``workflow/rules/events_buckets.smk``):

1. :func:`bucket_boundaries` (one job): the ``B - 1`` boundaries, quantiles of a strided
   sample of the user column (every ``k``-th row), so that buckets hold about as many rows;
2. :func:`split_partition` (one job per file of the table, the *partitions*): the checks of
   its rows, its rows per subcategory and, where the item ranking sums every row, its
   ranking's partial sums; its rows, filtered and renamed, streamed into one file per bucket;
3. :func:`bucket_ranks` (one job per bucket, only when the ranking counts the users kept by
   the global activity filter, ``activity_scope: global`` with ``min_user_count > 0``): the
   ranking's partial sums of the bucket's kept users;
4. :func:`merge_partials` (one small job): the checks of the whole table, its rows per
   subcategory, and the ``top_items`` of every subcategory from the summed ranking;
5. :func:`bucket_histograms` (one job per bucket): its users' sums per (subcategory, user,
   item) over every partition, the activity filters and the histograms on the top items, and
   per subcategory its kept users, items and pooled counts;
6. :func:`attribute_priors` (one job per attribute): the subcategories table (``min_users``
   counts the users of every bucket) and every kept subcategory's prior ``q`` on its items
   (:func:`ldpsample.events.metrics.fold_user_mean` folds a ``user_mean`` prior over the
   buckets in user order); then the metrics of each (attribute, bucket) and the combined tables.

Exactness: with integer weights (every row counting 1, or integer counts; checked as the
one-job path does), every sum is a sum of integers below 2**53, exact in any grouping and
order, so the histograms, rankings, counts and pooled priors are those of the one job bit for
bit, for any number of partitions and buckets; the ``user_mean`` prior is folded user by user
in sorted order as ``P.mean(axis=0)`` does. With fractional weights, partial sums per partition
and bucket can round differently from the one job's sums over rows (about 1e-16 relative).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ldpsample.events.files import TableFiles, estimated_rows
from ldpsample.events.histograms import (
    _check_listed,
    _check_options,
    _exact_sums,
    _log_outside,
    _prepare,
    domain_frame,
    histogram_rows,
    item_tops,
    kept_histograms,
    raise_on_checks,
)
from ldpsample.events.schemas import (
    BUCKET_STATS_SCHEMA,
    HISTOGRAM_SCHEMA,
    ITEM_STATS_SCHEMA,
    RANK_SCHEMA,
    ROWS_SCHEMA,
)
from ldpsample.events.table import EventsTableError, scan_events, table_files
from ldpsample.pipeline.progress import phase

__all__ = [
    "BUCKET_STATS_SCHEMA",
    "ITEM_STATS_SCHEMA",
    "RANK_SCHEMA",
    "ROWS_SCHEMA",
    "BucketedHistograms",
    "Partials",
    "attribute_priors",
    "bucket_boundaries",
    "bucket_histograms",
    "bucket_ranks",
    "histograms_in_buckets",
    "merge_partials",
    "ranks_need_activity",
    "split_partition",
]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

#: Rows of the user column sampled for the boundaries (about; every k-th row, k from the files'
#: sizes): a few hundred per bucket place the boundaries within about 5 % of the rows.
SAMPLE_ROWS = 200_000
#: Rows per batch of a partition's stream into the bucket files.
BATCH_ROWS = 1_000_000


def ranks_need_activity(
    *, activity_scope: str, min_user_count: float, top_items: int | None, release: bool
) -> bool:
    """Whether the item ranking needs each user's total activity first (global scope with a
    positive threshold: items are ranked among the kept users' rows, as the published Avazu
    code), so that it is summed per bucket (:func:`bucket_ranks`) and not per partition."""
    return (
        not release and top_items is not None and activity_scope == "global" and min_user_count > 0
    )


def bucket_boundaries(
    source: PathLike | TableFiles, *, key: str, user: str, buckets: int
) -> list[str]:
    """The ``buckets - 1`` user ids (or fewer, if the sample has fewer distinct users) that
    split the users into ranges: bucket ``b`` holds the users ``u`` with ``b`` boundaries
    ``<= u`` (text order). Quantiles of every ``k``-th row's user (``k`` from the files' sizes,
    :data:`SAMPLE_ROWS`), so that buckets hold about as many rows; one streaming scan of the
    user column."""
    if buckets < 1:
        raise ValueError(f"buckets must be >= 1, got {buckets!r}")
    files = table_files(source, key=f"{key}.path")
    every = max(1, estimated_rows(files) // SAMPLE_ROWS)
    # the ids in their own type (text from a CSV) until sampled: only the sample is cast
    lf = scan_events(files, [(user, f"{key}.user")], key=f"{key}.path", text=[user])
    with phase(log, f"{key}: sampling every {every}th user id of {files.path}"):
        sample = (
            lf.select(pl.col(user).gather_every(every).drop_nulls().cast(pl.String).alias("user"))
            .collect(engine="streaming")["user"]
            .sort()
        )
    if buckets == 1 or sample.len() == 0:
        return []
    positions = (np.arange(1, buckets) * sample.len()) // buckets
    return sample.gather(positions).unique(maintain_order=True).to_list()


def bucket_of(boundaries: Sequence[str]) -> pl.Expr:
    """The bucket of each row's ``user`` (UInt32): how many boundaries are ``<= user``."""
    return (
        pl.lit(pl.Series(list(boundaries), dtype=pl.String))
        .search_sorted(pl.col("user"), side="right")
        .alias("_bucket")
    )


@dataclass(frozen=True)
class Partials:
    """What :func:`split_partition` returns besides the bucket files (also written by the
    rule as ``checks.json``, ``rows.parquet`` and ``ranks.parquet``)."""

    checks: dict[str, Any]
    rows: pl.DataFrame
    ranks: pl.DataFrame


def _options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The histogram options of the map steps (those of :func:`build_event_histograms`)."""
    return dict(
        key=options["key"],
        user=options["user"],
        item=options["item"],
        count=options.get("count"),
        attributes=list(options.get("attributes") or []),
        items=options.get("items"),
        rank_items_by=options.get("rank_items_by"),
        activity_by=options.get("activity_by"),
        exclude_users=list(options.get("exclude_users") or []),
        domain=options.get("domain"),
    )


def split_partition(
    partition: PathLike | TableFiles,
    *,
    boundaries: Sequence[str],
    outputs: Sequence[PathLike],
    rank_rows: bool,
    options: Mapping[str, Any],
) -> Partials:
    """The map step of one partition (one file of a table).

    Reads the partition twice as streams: once for the checks (raised here, naming the file and
    the data row in it), the rows per subcategory and, with ``rank_rows``, the item ranking's
    partial sums over all its rows; once to write its rows (after the filters of
    :func:`build_event_histograms`: null ids, ``items``, the spec's items, ``exclude_users``),
    with the columns ``user, item``, the weights that are columns and ``a:<attribute>``, into
    ``outputs[b]`` for the users of bucket ``b`` (every file is written, empty or not).

    ``options`` are :func:`build_event_histograms`' keyword arguments (``key``, ``user``, ...,
    ``on_null``, ``domain``); a partition without rows is no error (the table's emptiness is
    checked by :func:`merge_partials`).
    """
    import pyarrow.parquet as pq

    opts = _options(options)
    key = opts["key"]
    _check_options(key, options.get("activity_scope", "top_items"), options.get("on_null", "drop"))
    files = table_files(partition, key=f"{key}.path")
    if len(files.files) != 1:
        raise ValueError(f"a partition is one file, got {len(files.files)}: {files.path}")
    where = files.files[0]
    prepared = _prepare(files, **opts)
    base, names = prepared.base, prepared.names
    try:
        with phase(log, f"{key}: checks of {where}"):
            results = pl.collect_all(prepared.small, engine="streaming")
    except pl.exceptions.PolarsError as exc:
        raise EventsTableError(
            f"{where}: cannot read the events table (config key {key}.path): "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    checks = {**results[0].row(0, named=True), "used": results[1].item()}
    if prepared.listed is not None:
        checks["listed_found"] = sorted(results[2]["item"].to_list())
    raise_on_checks(
        checks,
        path=where,
        key=key,
        columns=prepared.numeric,
        user=options["user"],
        item=options["item"],
        on_null=options.get("on_null", "drop"),
        whole_table=False,
    )
    # The rows themselves, bucket by bucket: only the weights that are columns travel.
    count = options.get("count") is not None
    columns = ["user", "item", *prepared.sums, *[f"a:{n}" for n in names]]
    if not count:
        columns.remove("count")
    stream = base.select(columns).with_columns(bucket_of(boundaries))
    schema = base.select(columns).collect_schema()
    empty = pl.DataFrame(schema=schema).to_arrow()
    rank = pl.col("rank") if "rank" in columns else pl.col("count") if count else pl.lit(1.0)
    rows_parts: list[pl.DataFrame] = []
    rank_parts: list[pl.DataFrame] = []
    writers: dict[int, Any] = {}
    written = 0
    try:
        with phase(log, f"{key}: splitting {where} into {len(outputs)} buckets"):
            for batch in stream.collect_batches(chunk_size=BATCH_ROWS):
                # rows per subcategory and the ranking's partial sums, batch by batch (grouped
                # on the attribute's own type; text once summed)
                for name in names:
                    a = f"a:{name}"
                    part = batch.lazy().filter(pl.col(a).is_not_null())
                    sums = [part.group_by(a).agg(pl.len().alias("rows"))]
                    if rank_rows:
                        sums.append(
                            part.with_columns(rank.alias("_rank"))
                            .group_by(a, "item")
                            .agg(pl.col("_rank").sum().alias("rank"))
                        )
                    got = pl.collect_all(sums, engine="streaming")
                    label = [pl.lit(name).alias("attribute"), pl.col(a).alias("subcategory")]
                    rows_parts.append(got[0].select(*label, "rows"))
                    if rank_rows:
                        rank_parts.append(got[1].select(*label, "item", "rank"))
                for (bucket,), part in batch.partition_by(
                    "_bucket", as_dict=True, include_key=False
                ).items():
                    table = part.to_arrow()
                    if bucket not in writers:
                        writers[bucket] = pq.ParquetWriter(
                            _tmp(outputs[bucket]), table.schema, compression="zstd"
                        )
                    writers[bucket].write_table(table)
                written += batch.height
        for bucket, writer in writers.items():
            writer.close()
            os.replace(_tmp(outputs[bucket]), outputs[bucket])
        for bucket, output in enumerate(outputs):
            if bucket not in writers:
                pq.write_table(empty, _tmp(output), compression="zstd")
                os.replace(_tmp(output), output)
    except BaseException:
        for bucket, writer in writers.items():
            writer.close()
            _remove(_tmp(outputs[bucket]))
        raise
    log.info(
        "%s: %d rows of %d kept, into %d buckets", where, written, checks["rows"], len(writers)
    )
    text = pl.col("subcategory").cast(pl.String)
    rows = (
        pl.concat(rows_parts, how="vertical_relaxed")
        .with_columns(text)
        .group_by("attribute", "subcategory")
        .agg(pl.col("rows").sum())
        if rows_parts
        else pl.DataFrame(schema=ROWS_SCHEMA)
    )
    ranks = (
        pl.concat(rank_parts, how="vertical_relaxed")
        .with_columns(text)
        .group_by("attribute", "subcategory", "item")
        .agg(pl.col("rank").sum())
        if rank_parts
        else pl.DataFrame(schema=RANK_SCHEMA)
    )
    return Partials(
        checks,
        rows.cast(ROWS_SCHEMA).sort("attribute", "subcategory"),
        ranks.cast(RANK_SCHEMA).sort("attribute", "subcategory", "item"),
    )


def _tmp(path: PathLike) -> str:
    return f"{path}.tmp"


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def write_partials(
    partials: Partials, *, checks: PathLike, rows: PathLike, ranks: PathLike
) -> None:
    """Write what :func:`split_partition` returned (atomically)."""
    from ldpsample.pipeline.io import write_json, write_parquet

    write_json(partials.checks, checks)
    write_parquet(partials.rows, rows)
    write_parquet(partials.ranks, ranks)


#: Check counts that add up over partitions.
_SUMMED = ("rows", "null_user", "null_item", "used", "outside")


def merge_partials(
    checks: Sequence[Mapping[str, Any]],
    rows: Sequence[pl.DataFrame],
    ranks: Sequence[pl.DataFrame],
    *,
    path: str,
    options: Mapping[str, Any],
) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame]:
    """The reduce step of the partitions: the whole table's checks (raising for an empty table
    or listed items it lacks, as :func:`build_event_histograms`), its rows per subcategory
    (:data:`ROWS_SCHEMA`) and every subcategory's top items (``attribute, subcategory, item``;
    empty when every item is kept or a release spec gives them) from the summed ranking."""
    opts = _options(options)
    key = opts["key"]
    merged: dict[str, Any] = {}
    for part in checks:
        for name, value in part.items():
            if name in _SUMMED or name.startswith(("bad:", "negative:", "fraction:", "total:")):
                merged[name] = merged.get(name, 0) + (value or 0)
            elif name == "listed_found":
                merged[name] = sorted(set(merged.get(name, [])) | set(value))
    for name in _SUMMED[:4]:
        merged.setdefault(name, 0)
    merged["exact_sums"] = bool(_exact_sums(merged, {c: c for c in _weight_columns(options)}))
    if opts["items"] is not None and opts["domain"] is None:
        listed = sorted({str(i) for i in opts["items"]})
        found = pl.DataFrame({"item": merged.get("listed_found", [])}, schema={"item": pl.String})
        _check_listed(listed, found, key=key, item=opts["item"], path=path)
    _log_outside(merged, path)
    if merged["rows"] == 0:
        raise EventsTableError(f"{path}: the events table is empty (config key {key}.path)")
    if not merged["exact_sums"]:
        log.warning(
            "%s: fractional weights: sums over partitions and buckets may round differently "
            "from one job's sums over the rows (about 1e-16 relative)",
            key,
        )
    totals = (
        pl.concat(rows).group_by("attribute", "subcategory").agg(pl.col("rows").sum())
        if rows
        else pl.DataFrame(schema=ROWS_SCHEMA)
    )
    domain = opts["domain"]
    top_items = options.get("top_items")
    tops = []
    if domain is not None:
        domain = domain_frame(domain)
    names = opts["attributes"] or ["all"]
    if domain is not None or top_items is not None:
        ranked_all = (
            pl.concat(ranks).group_by("attribute", "subcategory", "item").agg(pl.col("rank").sum())
            if ranks
            else pl.DataFrame(schema=RANK_SCHEMA)
        )
        for name in names:
            ranked = ranked_all.filter(pl.col("attribute") == name).select(
                pl.col("subcategory").alias(f"a:{name}"), "item", "rank"
            )
            top = item_tops(ranked, name, top_items=top_items, domain=domain)
            tops.append(
                top.select(
                    pl.lit(name).alias("attribute"),
                    pl.col(f"a:{name}").cast(pl.String).alias("subcategory"),
                    pl.col("item").cast(pl.String),
                )
            )
    tops_frame = (
        pl.concat(tops).sort("attribute", "subcategory", "item")
        if tops
        else pl.DataFrame(schema={c: pl.String() for c in ("attribute", "subcategory", "item")})
    )
    totals = totals.cast(ROWS_SCHEMA).sort("attribute", "subcategory")
    return merged, totals, tops_frame


def _weight_columns(options: Mapping[str, Any]) -> list[str]:
    return [c for c in (options.get(k) for k in ("count", "rank_items_by", "activity_by")) if c]


def _scan_bucket(files: Sequence[PathLike]) -> pl.LazyFrame:
    """A bucket's rows: its file of every partition, in partition order."""
    frames = [pl.scan_parquet(str(f)) for f in files]
    return pl.concat(frames, how="vertical_relaxed") if len(frames) > 1 else frames[0]


def _bucket_triples(lf: pl.LazyFrame, options: Mapping[str, Any]) -> tuple[list[str], Any]:
    """Per attribute of the options: the bucket's ``a:<name>`` (text, non-null), ``user,
    item, rows`` and weight sums per (subcategory, user, item), restricted to the users kept by
    the global activity filter (every row of a user is in its bucket, so each user's total is
    the table's)."""
    opts = _options(options)
    names = opts["attributes"] or ["all"]
    min_user_count = options.get("min_user_count", 0)
    columns = lf.collect_schema().names()
    sums = [c for c in ("count", "rank", "activity") if c in columns]
    if "count" not in columns:
        lf = lf.with_columns(pl.lit(1.0).alias("count"))
        sums = ["count", *sums]

    def triples_of(name: str) -> pl.DataFrame:
        a = f"a:{name}"
        triples = (
            lf.group_by(a, "user", "item")
            .agg(pl.len().cast(pl.Int64).alias("rows"), *[pl.col(c).sum() for c in sums])
            .collect(engine="streaming")
        )
        return triples.with_columns(
            *[pl.col("count").alias(c) for c in ("rank", "activity") if c not in sums]
        )

    def generate():
        active = None
        for name in names:
            a = f"a:{name}"
            triples = triples_of(name)
            if active is None and min_user_count > 0:
                # each user's total over all its rows (a null subcategory is a group too)
                active = (
                    triples.group_by("user")
                    .agg(pl.col("activity").sum())
                    .filter(pl.col("activity") >= min_user_count)
                    .select("user")
                )
            triples = triples.filter(pl.col(a).is_not_null()).with_columns(
                pl.col(a).cast(pl.String)
            )
            # activity >= 0: a threshold of 0 keeps every user
            kept = triples.join(active, on="user", how="semi") if min_user_count > 0 else triples
            yield name, triples, kept

    return names, generate()


def bucket_ranks(files: Sequence[PathLike], *, options: Mapping[str, Any]) -> pl.DataFrame:
    """:data:`RANK_SCHEMA` partial sums of one bucket: the item ranking among the rows of the
    users kept by the global activity filter (``activity_scope: global``)."""
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


def bucket_histograms(
    files: Sequence[PathLike],
    tops: pl.DataFrame,
    *,
    options: Mapping[str, Any],
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """One bucket's histograms: ``(histograms, users, items)``.

    ``files`` are the bucket's file of every partition (:func:`split_partition`), ``tops`` the
    items of each subcategory (:func:`merge_partials`; empty: every item). Returns the kept
    users' :data:`HISTOGRAM_SCHEMA` rows of every subcategory (sorted by attribute,
    subcategory, user, item; ``min_users`` is applied later, to all buckets' users), the kept
    users per subcategory (:data:`BUCKET_STATS_SCHEMA`) and the items they hold with their
    count sums (:data:`ITEM_STATS_SCHEMA`).
    """
    activity_scope = options.get("activity_scope", "top_items")
    min_user_count = options.get("min_user_count", 0)
    restrict = (
        bool(options.get("release"))
        or options.get("domain") is not None
        or options.get("top_items") is not None
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


def read_checks(paths: Sequence[PathLike]) -> list[dict[str, Any]]:
    """The ``checks.json`` of every partition."""
    return [json.loads(open(p, encoding="utf-8").read()) for p in paths]


def attribute_priors(
    name: str,
    *,
    rows: pl.DataFrame,
    users: Sequence[pl.DataFrame],
    items: Sequence[pl.DataFrame],
    histograms: Sequence[PathLike],
    checks: Mapping[str, Any],
    prior: str | Mapping[str, Any],
    options: Mapping[str, Any],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The reduce step of one attribute's buckets: its subcategories table and the prior ``q``
    of every kept subcategory on its items.

    Parameters
    ----------
    rows
        :data:`ROWS_SCHEMA` rows of the table (:func:`merge_partials`).
    users, items
        Every bucket's kept users and items per subcategory (:func:`bucket_histograms`).
    histograms
        Every bucket's histograms, in bucket order (read for ``prior="user_mean"`` only).
    checks
        The merged checks (:func:`merge_partials`), for the reason of an empty attribute.
    prior
        ``pooled``, ``user_mean``, ``uniform``, a public table (``{path, user, item, count,
        attributes}``, this attribute's column only) or ``"spec"`` (``options["domain"]``).

    Returns
    -------
    (subcategories, priors)
        :data:`~ldpsample.events.histograms.SUBCATEGORY_SCHEMA` rows (``min_users`` counts the
        users of every bucket) and :data:`~ldpsample.events.histograms.PRIOR_SCHEMA` rows of
        every kept subcategory, sorted by subcategory and item: the items kept users hold (a
        release spec's whole domain) and ``q`` on them, as the one-job metrics compute it.
    """
    from ldpsample.events.histograms import (
        PRIOR_SCHEMA,
        public_prior_masses,
        public_priors,
        spec_priors,
        subcategory_table,
    )
    from ldpsample.events.priors import UserMeanFold, csr_rows, normalised

    key = options["key"]
    domain = options.get("domain")
    if domain is not None:
        domain = domain_frame(domain)
    mine = pl.col("attribute") == name
    sub_rows = rows.filter(mine).select("subcategory", "rows")
    user_counts = pl.concat(list(users)).filter(mine)
    item_sets = pl.concat(list(items)).filter(mine)
    per_sub = (
        user_counts.group_by("subcategory")
        .agg(pl.col("kept_users").sum())
        .join(
            item_sets.group_by("subcategory").agg(
                pl.col("item").n_unique().cast(pl.Int64).alias("items")
            ),
            on="subcategory",
            how="left",
        )
    )
    table, kept = subcategory_table(
        name,
        sub_rows,
        per_sub,
        key=key,
        domain=domain,
        min_users=options.get("min_users", 1),
        min_user_count=options.get("min_user_count", 0),
        checks=checks,
    )
    kept_items = item_sets.join(kept, on="subcategory", how="semi")
    if domain is not None:
        return table, spec_priors(name, domain, kept).sort("subcategory", "item")
    if isinstance(prior, Mapping):
        listed = options.get("items")
        (masses,) = pl.collect_all(
            public_prior_masses(
                prior,
                key=key,
                attributes=[name] if options.get("attributes") else [],
                items=[str(i) for i in listed] if listed is not None else None,
            )
        )
        pairs = kept_items.select("subcategory", "item").unique()
        q = public_priors(name, masses, kept, pairs, prior=prior, key=key)
        return table, q.sort("subcategory", "item")
    # Data-derived priors: each kept subcategory's items sorted (the one-job matrix columns).
    pooled = (
        kept_items.group_by("subcategory", "item")
        .agg(pl.col("mass").sum())
        .sort("subcategory", "item")
    )
    subs = pooled.partition_by("subcategory", as_dict=True, maintain_order=True)
    values: dict[str, np.ndarray] = {}
    if prior == "pooled":
        for (sub,), frame in subs.items():
            values[sub] = normalised(frame["mass"].to_numpy())
    elif prior == "uniform":
        for (sub,), frame in subs.items():
            values[sub] = normalised(np.ones(frame.height))
    elif prior == "user_mean":
        positions = {
            sub: pl.DataFrame({"item": frame["item"], "_j": np.arange(frame.height)})
            for (sub,), frame in subs.items()
        }
        folds = {sub: UserMeanFold(frame.height) for (sub,), frame in subs.items()}
        for path in histograms:  # bucket by bucket: users in sorted order
            hist = (
                pl.scan_parquet(str(path))
                .filter(mine & pl.col("subcategory").is_in(list(folds)))
                .collect()
            )
            for (sub,), part in hist.partition_by(
                "subcategory", as_dict=True, maintain_order=True
            ).items():
                index = part.join(positions[sub], on="item", how="left", maintain_order="left")
                users_index = (part["user"].rank("dense") - 1).to_numpy().astype(np.intp)
                indptr, indices, data = csr_rows(
                    users_index,
                    index["_j"].to_numpy().astype(np.intp),
                    part["count"].to_numpy().astype(float),
                    int(users_index.max()) + 1,
                )
                folds[sub].add(indptr, indices, data)
        values = {sub: fold.q() for sub, fold in folds.items()}
    else:
        raise ValueError(f"prior must be pooled, user_mean, uniform, a table or a spec: {prior!r}")
    frames = [
        pl.DataFrame(
            {
                "attribute": pl.repeat(name, frame.height, dtype=pl.String, eager=True),
                "subcategory": frame["subcategory"],
                "item": frame["item"],
                "q": values[sub],
            }
        )
        for (sub,), frame in subs.items()
    ]
    priors = pl.concat(frames).cast(PRIOR_SCHEMA) if frames else pl.DataFrame(schema=PRIOR_SCHEMA)
    return table, priors.sort("subcategory", "item")


@dataclass(frozen=True)
class BucketedHistograms:
    """What :func:`histograms_in_buckets` returns: the files of every step and the tables."""

    boundaries: list[str]
    histograms: list[str]  # per bucket, in order
    subcategories: pl.DataFrame
    priors: pl.DataFrame


def histograms_in_buckets(
    path: PathLike | TableFiles,
    *,
    buckets: int,
    workdir: PathLike,
    prior: str | Mapping[str, Any] = "pooled",
    options: Mapping[str, Any],
) -> BucketedHistograms:
    """Every map/reduce step of the histograms, one after the other in this process (what the
    workflow's jobs run side by side), with their files under ``workdir``: for tests, and to
    see the steps from Python. ``options`` are :func:`build_event_histograms`' keywords (with
    ``top_items``, ``min_users``, ``activity_scope``, ...); ``prior`` as
    :func:`attribute_priors`."""
    from ldpsample.events.histograms import SUBCATEGORY_SCHEMA
    from ldpsample.pipeline.io import write_parquet

    work = os.fspath(workdir)
    os.makedirs(work, exist_ok=True)
    key = options["key"]
    files = table_files(path, key=f"{key}.path")
    boundaries = bucket_boundaries(files, key=key, user=options["user"], buckets=buckets)
    rank_rows = not ranks_need_activity(
        activity_scope=options.get("activity_scope", "top_items"),
        min_user_count=options.get("min_user_count", 0),
        top_items=options.get("top_items"),
        release=options.get("domain") is not None,
    )
    split = [
        [os.path.join(work, f"part~{p}_bucket~{b}.parquet") for b in range(buckets)]
        for p in range(len(files.files))
    ]
    partials = [
        split_partition(
            files.partition(p),
            boundaries=boundaries,
            outputs=split[p],
            rank_rows=rank_rows,
            options=options,
        )
        for p in range(len(files.files))
    ]
    bucket_files = [[split[p][b] for p in range(len(split))] for b in range(buckets)]
    ranks = (
        [p.ranks for p in partials]
        if rank_rows
        else [bucket_ranks(bucket_files[b], options=options) for b in range(buckets)]
    )
    checks, rows, tops = merge_partials(
        [p.checks for p in partials],
        [p.rows for p in partials],
        ranks,
        path=files.path,
        options=options,
    )
    histograms, users, items = [], [], []
    for b in range(buckets):
        hist, bucket_users, bucket_items = bucket_histograms(bucket_files[b], tops, options=options)
        histograms.append(os.path.join(work, f"bucket~{b}_histograms.parquet"))
        write_parquet(hist, histograms[-1])
        users.append(bucket_users)
        items.append(bucket_items)
    names = list(options.get("attributes") or []) or ["all"]
    tables, priors = [], []
    for name in names:
        attribute_prior = prior
        if isinstance(prior, Mapping) and options.get("attributes"):
            index = list(options["attributes"]).index(name)
            attribute_prior = {**prior, "attributes": [list(prior["attributes"])[index]]}
        table, q = attribute_priors(
            name,
            rows=rows,
            users=users,
            items=items,
            histograms=histograms,
            checks=checks,
            prior=attribute_prior,
            options=options,
        )
        tables.append(table)
        priors.append(q)
    subcategories = (
        pl.concat(tables).sort("attribute", "status", "subcategory")
        if tables
        else pl.DataFrame(schema=SUBCATEGORY_SCHEMA)
    )
    return BucketedHistograms(
        boundaries,
        histograms,
        subcategories,
        pl.concat(priors).sort("attribute", "subcategory", "item"),
    )
