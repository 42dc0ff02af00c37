"""What the map step leaves behind and how the later steps read it back: a partition's
:class:`Partials` (its checks, rows per subcategory and ranking partial sums, written by
:func:`write_partials` and read by :func:`read_checks`), a bucket's rows over every partition
(:func:`_scan_bucket`) and their sums per (subcategory, user, item) with the global activity
filter (:func:`_bucket_triples`); and the histogram options the steps take (:func:`_options`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from ldpsample.events.options import EventsOptions
from ldpsample.pipeline.io import write_json, write_parquet

__all__ = ["Partials", "read_checks", "write_partials"]

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class Partials:
    """What :func:`~ldpsample.events.bucketed.split.split_partition` returns besides the bucket
    files (also written by the rule as ``checks.json``, ``rows.parquet`` and
    ``ranks.parquet``)."""

    checks: dict[str, Any]
    rows: pl.DataFrame
    ranks: pl.DataFrame


def _options(options: Mapping[str, Any]) -> EventsOptions:
    """The histogram options of the map/reduce steps: the
    :class:`~ldpsample.events.options.EventsOptions` fields of ``options`` (a histogram job's
    params; absent fields take their defaults, an absent ``path`` is the partition's). The
    layout keys beside them (``domain``, ``release``, ``buckets``, ``rank_rows``) are read
    from ``options`` itself."""
    return EventsOptions.from_params({"path": None, **options})


def write_partials(
    partials: Partials, *, checks: PathLike, rows: PathLike, ranks: PathLike
) -> None:
    """Write what :func:`~ldpsample.events.bucketed.split.split_partition` returned
    (atomically)."""
    write_json(partials.checks, checks)
    write_parquet(partials.rows, rows)
    write_parquet(partials.ranks, ranks)


def read_checks(paths: Sequence[PathLike]) -> list[dict[str, Any]]:
    """The ``checks.json`` of every partition."""
    return [json.loads(open(p, encoding="utf-8").read()) for p in paths]


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
    names = list(opts.attributes) or ["all"]
    min_user_count = opts.min_user_count
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
