"""The evaluation tables of an events experiment, from the per-attribute parts: worst cases
over users, win summaries, the kernel audit and the per-user table written from the parts (an
operator's view; what a release publishes and what it costs each user are
:mod:`ldpsample.publish`'s). The trade-off table is :mod:`ldpsample.events.outputs.tradeoff`'s
(:func:`tradeoff_table` and :data:`TRADEOFF_SCHEMA` are importable from here too).

Imports no mechanism (no scipy): the experiments' tables (:mod:`ldpsample.experiments.avazu`,
:mod:`ldpsample.experiments.movielens`) import this module; pyarrow is imported by
:func:`write_per_user_parts` only.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from ldpsample.events.outputs.tradeoff import TRADEOFF_SCHEMA, tradeoff_table
from ldpsample.events.outputs.tradeoff import _exact_medians as _exact_medians
from ldpsample.events.schemas import AUDIT_SCHEMA, METHODS
from ldpsample.events.scoring.release_kernel import EPSILON_TOLERANCE, PrivacyAuditError
from ldpsample.pipeline.io import atomic_path

__all__ = [
    "EVENTS_SUMMARY_SCHEMA",
    "KEEPS_PRIOR",
    "SUMMARY_SCHEMA",
    "TRADEOFF_SCHEMA",
    "WIN_SUMMARY_SCHEMA",
    "check_audit",
    "concat_attribute_parts",
    "events_summary",
    "max_over_users",
    "max_table",
    "summary",
    "tradeoff_table",
    "win_summary",
]

#: Columns of :func:`win_summary`, one row per method.
WIN_SUMMARY_SCHEMA: dict[str, pl.DataType] = {
    "method": pl.String(),
    "wins": pl.Int64(),
    "ties": pl.Int64(),
    "cases": pl.Int64(),
    "win_share": pl.Float64(),
    "mean_improvement": pl.Float64(),
}

SUMMARY_SCHEMA: dict[str, pl.DataType] = {"divergence": pl.String(), **WIN_SUMMARY_SCHEMA}

#: Columns of :func:`events_summary` (``summary.csv`` of an events table): the scope (``attribute``
#: and ``epsilon``, both null on the rows pooled over every attribute and ε), the win summary of
#: :data:`SUMMARY_SCHEMA` over the scope's subcategories, then the recommendation: the method's
#: ``worst_case`` and ``median`` over the scope's (user, subcategory) rows, whether it is the best
#: by each (``best_worst_case``, ``best_median``; tied methods are all best), the margin to the
#: best other method (``worst_case_margin``, ``median_margin``: positive for the best, by how
#: much it wins; negative for the others, by how much they lose), ``keeps_prior`` (qK = q) and
#: the ``reason`` in plain words. The recommendation columns are null on the pooled rows and on
#: the ``tv+kl`` rows (a TV and a KL value are not compared).
EVENTS_SUMMARY_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "epsilon": pl.Float64(),
    **SUMMARY_SCHEMA,
    "worst_case": pl.Float64(),
    "median": pl.Float64(),
    "best_worst_case": pl.Boolean(),
    "worst_case_margin": pl.Float64(),
    "best_median": pl.Boolean(),
    "median_margin": pl.Float64(),
    "keeps_prior": pl.Boolean(),
    "reason": pl.String(),
}

#: Whether a method's sampling distribution keeps the public prior, qK = q (a user whose data is
#: the prior gets the prior back). The minimax sampler does by construction (Zamanlooy, Diaz &
#: Asoodeh, AISTATS 2025, 000_904d48b38ce41b65.txt, Section 3: "we focus on mechanisms that
#: enforce qK = q, ensuring that public data is invariant under the mechanism"); so does the
#: relative mollifier (Section 1.1: "the reference distribution q can be interpreted as a public
#: prior, as the algorithm preserves its invariance"); randomized response does only when q is
#: uniform, where it is the minimax sampler (Corollary 2). Its worst case over every p is the
#: minimax sampler's for the uniform prior, never above that for another prior: Theorem 1's value
#: "depends on the public prior only through its smallest element" and grows as it shrinks.
KEEPS_PRIOR: dict[str, bool] = {
    "minimax": True,
    "mollifier_tv": True,
    "mollifier_kl": True,
    "randomized_response": False,
}

#: The plain-words clause of :data:`KEEPS_PRIOR` in ``summary.csv``'s ``reason``.
_PRIOR_CLAUSES: dict[str, str] = {
    "minimax": (
        "keeps the public prior (qK = q) and is minimax-optimal among the ε-LDP kernels that "
        "keep it; that worst case grows as the prior's smallest entry shrinks"
    ),
    "mollifier_tv": (
        "keeps the public prior (qK = q) but is not minimax-optimal: it can beat the minimax "
        "sampler for typical users and lose to it for the worst-off"
    ),
    "mollifier_kl": (
        "keeps the public prior (qK = q) but is not minimax-optimal: it can beat the minimax "
        "sampler for typical users and lose to it for the worst-off"
    ),
    "randomized_response": (
        "does not keep the public prior (qK ≠ q unless q is uniform): its worst case over every "
        "possible p is never above the minimax sampler's, but a user whose data is close to q "
        "is not kept close to it"
    ),
}

#: Differences within this of the lowest value are ties (as :func:`win_summary`'s default).
_TIE = 1e-12


def max_over_users(
    per_user: pl.DataFrame | pl.LazyFrame,
    *,
    keys: Sequence[str],
    methods: Sequence[str],
    value: str,
) -> pl.DataFrame:
    """Worst case over users per (ε, keys) and method, as a long frame.

    ``per_user`` has ``epsilon``, the ``keys`` and one column per method; a lazy frame (the
    parts of several jobs, scanned) is aggregated as a stream. Returns columns ``epsilon``,
    ``keys``, ``method`` (String), ``value`` (Float64), ``n_users`` (Int64), sorted by
    epsilon, keys, method.
    """
    keys, methods = list(keys), list(methods)
    columns = per_user.collect_schema()
    schema = {
        "epsilon": pl.Float64(),
        **{k: columns[k] for k in keys},
        "method": pl.String(),
        value: pl.Float64(),
        "n_users": pl.Int64(),
    }
    wide = (
        per_user.lazy()
        .group_by("epsilon", *keys)
        .agg(*[pl.col(m).max() for m in methods], pl.len().cast(pl.Int64).alias("n_users"))
        # streaming: the parts of a table in buckets are scanned, not loaded whole (maxima
        # and counts are exact in any order)
        .collect(engine="streaming")
    )
    if wide.height == 0:
        return pl.DataFrame(schema=schema)
    long = wide.unpivot(
        on=methods, index=["epsilon", *keys, "n_users"], variable_name="method", value_name=value
    )
    return long.select(list(schema)).cast(schema).sort(["epsilon", *keys, "method"])


def win_summary(
    frame: pl.DataFrame,
    *,
    value: str = "max_tv",
    methods: Sequence[str] = ("minimax", "mollifier_tv"),
    case_columns: Sequence[str] | None = None,
    tie_tolerance: float = 1e-12,
) -> pl.DataFrame:
    """How often each method has the strictly lowest worst case, and by how much.

    A *case* is one combination of ``case_columns`` (default: every column except ``method``,
    ``value`` and ``n_users``, e.g. (epsilon, subcategory)). A method *wins* a case if its
    ``value`` is lower than every other method's by more than ``tie_tolerance``; cases where
    the lowest values are within ``tie_tolerance`` are *ties*, counted for the tied methods and
    never as wins.

    Returns
    -------
    polars.DataFrame
        One row per method (in ``methods`` order): ``method`` (String), ``wins``, ``ties``,
        ``cases`` (Int64), ``win_share`` (wins / cases, Float64) and ``mean_improvement``
        (mean over won cases of the best other method's value minus this one's; null without
        wins).
    """
    methods = list(methods)
    if len(methods) < 2:
        raise ValueError(f"need at least two methods to compare, got {methods!r}")
    if case_columns is None:
        case_columns = [c for c in frame.columns if c not in ("method", value, "n_users")]
    case_columns = list(case_columns)
    present = frame.filter(pl.col("method").is_in(methods))
    wide = present.pivot(on="method", index=case_columns, values=value)
    missing = [m for m in methods if m not in wide.columns]
    if missing and wide.height:
        raise ValueError(f"no {value!r} values for methods {missing}")
    if wide.height and wide.select(pl.any_horizontal(pl.col(methods).is_null())).to_series().any():
        raise ValueError(f"some cases lack a value for one of {methods}")
    rows = []
    values = wide.select(methods).to_numpy().astype(float) if wide.height else np.empty((0, 2))
    if np.isnan(values).any():
        raise ValueError(f"{value} has NaN values")
    cases = values.shape[0]
    for j, method in enumerate(methods):
        others = np.delete(values, j, axis=1).min(axis=1) if cases else np.empty(0)
        margin = others - values[:, j] if cases else np.empty(0)
        wins = margin > tie_tolerance
        ties = np.abs(margin) <= tie_tolerance
        rows.append(
            {
                "method": method,
                "wins": int(wins.sum()),
                "ties": int(ties.sum()),
                "cases": int(cases),
                "win_share": float(wins.mean()) if cases else None,
                "mean_improvement": float(margin[wins].mean()) if wins.any() else None,
            }
        )
    return pl.DataFrame(rows, schema=WIN_SUMMARY_SCHEMA, orient="row")


def _methods(per_user: pl.DataFrame | pl.LazyFrame, divergence: str) -> list[str]:
    prefix = f"{divergence}_"
    return [c[len(prefix) :] for c in per_user.collect_schema().names() if c.startswith(prefix)]


def max_table(per_user: pl.DataFrame | pl.LazyFrame, divergence: str) -> pl.DataFrame:
    """``epsilon, attribute, subcategory, method, max_<divergence>, n_users``: the worst case
    over each subcategory's users, per ε and method (a lazy ``per_user``: as a stream)."""
    methods = _methods(per_user, divergence)
    frame = per_user.select(
        "epsilon",
        "attribute",
        "subcategory",
        *[pl.col(f"{divergence}_{m}").alias(m) for m in methods],
    )
    return max_over_users(
        frame, keys=["attribute", "subcategory"], methods=methods, value=f"max_{divergence}"
    )


def summary(max_tv: pl.DataFrame, max_kl: pl.DataFrame) -> pl.DataFrame:
    """Win shares and mean improvements per divergence over the (ε, attribute, subcategory)
    cases (:func:`win_summary`); a divergence with fewer than
    two methods has no row."""
    frames = []
    for divergence, frame in (("tv", max_tv), ("kl", max_kl)):
        methods = [m for m in METHODS if m in set(frame["method"])]
        if len(methods) < 2 or frame.height == 0:
            continue
        result = win_summary(
            frame,
            value=f"max_{divergence}",
            methods=methods,
            case_columns=["epsilon", "attribute", "subcategory"],
        )
        frames.append(result.select(pl.lit(divergence).alias("divergence"), pl.all()))
    pooled = _pooled(max_tv, max_kl)
    if pooled is not None:
        frames.append(pooled)
    if not frames:
        return pl.DataFrame(schema=SUMMARY_SCHEMA)
    return pl.concat(frames).cast(SUMMARY_SCHEMA)


#: Method names of the pooled ``tv+kl`` summary: a mollifier is scored with its own divergence,
#: the minimax sampler and randomized response with both.
_POOLED = {
    "minimax": "minimax",
    "mollifier_tv": "mollifier",
    "mollifier_kl": "mollifier",
    "randomized_response": "randomized_response",
}
_POOLED_ORDER = ("minimax", "mollifier", "randomized_response")


def _pooled(max_tv: pl.DataFrame, max_kl: pl.DataFrame) -> pl.DataFrame | None:
    """The ``tv+kl`` row set: a case is one (divergence, ε, attribute, subcategory), and every
    evaluated method competes in it (the mollifier of that divergence; minimax and randomized
    response with both). None unless every evaluated method has a value on both divergences
    (a method scored on one only could otherwise be hidden by the pooled count), or fewer than
    two methods remain."""
    tv, kl = set(max_tv["method"]), set(max_kl["method"])
    pooled_tv = {_POOLED[m] for m in tv}
    pooled_kl = {_POOLED[m] for m in kl}
    if pooled_tv != pooled_kl or len(pooled_tv) < 2:
        return None
    frames = [
        frame.select(
            pl.lit(divergence).alias("divergence"),
            "epsilon",
            "attribute",
            "subcategory",
            pl.col("method").replace_strict(_POOLED),
            pl.col(f"max_{divergence}").alias("value"),
        )
        for divergence, frame in (("tv", max_tv), ("kl", max_kl))
    ]
    result = win_summary(
        pl.concat(frames),
        value="value",
        methods=[m for m in _POOLED_ORDER if m in pooled_tv],
        case_columns=["divergence", "epsilon", "attribute", "subcategory"],
    )
    return result.select(pl.lit("tv+kl").alias("divergence"), pl.all())


def _ranked(values: pl.DataFrame, statistic: str) -> pl.DataFrame:
    """``values`` (one scope and divergence: ``method``, ``value``) with ``best_<statistic>``
    and ``<statistic>_margin`` (the best other method's value minus this one's)."""
    vector = values["value"].to_numpy().astype(float)
    if vector.size < 2:
        margin = np.full(vector.size, np.nan)
    else:
        others = np.array([np.delete(vector, j).min() for j in range(vector.size)])
        margin = others - vector
    best = vector - vector.min() <= _TIE if vector.size else np.zeros(0, dtype=bool)
    return values.select("method").with_columns(
        pl.Series(f"best_{statistic}", best, dtype=pl.Boolean),
        pl.Series(f"{statistic}_margin", margin, dtype=pl.Float64).fill_nan(None),
    )


def _reason(row: dict[str, Any]) -> str:
    """The plain-words ``reason`` of one recommendation row of :func:`events_summary`."""
    verdicts = []
    for statistic, words in (("worst_case", "worst case"), ("median", "median")):
        margin = row[f"{statistic}_margin"]
        if margin is None:
            continue
        if row[f"best_{statistic}"]:
            verdicts.append(
                f"tied lowest {words}" if margin <= _TIE else f"lowest {words} (by {margin:.3g})"
            )
        else:
            verdicts.append(f"{words} {-margin:.3g} above the lowest")
    clause = _PRIOR_CLAUSES.get(row["method"], "")
    return "; ".join([*verdicts, clause] if clause else verdicts)


def events_summary(
    max_tv: pl.DataFrame, max_kl: pl.DataFrame, tradeoff: pl.DataFrame
) -> pl.DataFrame:
    """``summary.csv`` of an events table (:data:`EVENTS_SUMMARY_SCHEMA`): which method at
    which ε.

    The rows pooled over every attribute and ε (``attribute`` and ``epsilon`` null) are
    :func:`summary`'s, unchanged. Then, per attribute and ε, :func:`summary` over that
    attribute's subcategories at that ε, each method's ``worst_case`` and ``median`` of the
    divergence over the attribute's (user, subcategory) rows (``tradeoff``, from
    :func:`tradeoff_table`), which method is best by each with its margin, whether it keeps the
    public prior (:data:`KEEPS_PRIOR`) and why, in words. The worst case and the median often
    disagree (randomized response can have the lowest worst case and a mollifier the lowest
    median; docs/choosing-a-method.md): the two flags say so rather than choose. Without a
    kept subcategory the table is empty (its columns only).
    Sorted by attribute (pooled rows first), ε, divergence (tv, kl, tv+kl) and method.
    """
    pooled = summary(max_tv, max_kl).select(
        pl.lit(None, pl.String).alias("attribute"),
        pl.lit(None, pl.Float64).alias("epsilon"),
        pl.all(),
    )
    frames = [pooled]
    scopes = sorted(set(max_tv.select("attribute", "epsilon").unique().rows()))
    for attribute, epsilon in scopes:
        in_scope = (pl.col("attribute") == attribute) & (pl.col("epsilon") == epsilon)
        wins = summary(max_tv.filter(in_scope), max_kl.filter(in_scope))
        ranked = []
        for divergence in ("tv", "kl"):
            scores = tradeoff.filter(in_scope & (pl.col("divergence") == divergence))
            wide = scores.pivot(on="statistic", index="method", values="value").sort("method")
            if wide.height == 0:
                continue
            worst = _ranked(wide.select("method", pl.col("max").alias("value")), "worst_case")
            middle = _ranked(wide.select("method", pl.col("median").alias("value")), "median")
            ranked.append(
                wide.select(
                    pl.lit(divergence).alias("divergence"),
                    "method",
                    pl.col("max").alias("worst_case"),
                    "median",
                )
                .join(worst, on="method")
                .join(middle, on="method")
            )
        scope = wins.with_columns(
            pl.lit(attribute).alias("attribute"), pl.lit(epsilon, pl.Float64).alias("epsilon")
        )
        if ranked:
            scope = scope.join(pl.concat(ranked), on=["divergence", "method"], how="left")
        frames.append(scope)
    result = pl.concat(
        [
            f.with_columns(
                *[
                    pl.lit(None, d).alias(c)
                    for c, d in EVENTS_SUMMARY_SCHEMA.items()
                    if c not in f.columns
                ]
            )
            .select(list(EVENTS_SUMMARY_SCHEMA))
            .cast(EVENTS_SUMMARY_SCHEMA)
            for f in frames
        ]
    )
    scored = pl.col("worst_case").is_not_null()
    result = result.with_columns(
        pl.when(scored)
        .then(pl.col("method").replace_strict(KEEPS_PRIOR, default=None, return_dtype=pl.Boolean))
        .alias("keeps_prior"),
    )
    reasons = [
        _reason(row) if row["worst_case"] is not None else None
        for row in result.iter_rows(named=True)
    ]
    order = {"tv": 0, "kl": 1, "tv+kl": 2}
    return (
        result.with_columns(pl.Series("reason", reasons, dtype=pl.String))
        .with_columns(pl.col("divergence").replace_strict(order, return_dtype=pl.Int64).alias("_d"))
        .sort(["attribute", "epsilon", "_d", "method"], nulls_last=False, maintain_order=True)
        .drop("_d")
    )


def check_audit(audit: pl.DataFrame) -> None:
    """Raise :class:`PrivacyAuditError` if any realised ε exceeds its ε beyond rounding."""
    bad = audit.filter(
        ~(
            pl.col("realized_epsilon")
            <= pl.col("epsilon")
            + EPSILON_TOLERANCE * pl.max_horizontal(pl.lit(1.0), pl.col("epsilon"))
        )
    )
    if bad.height:
        row = bad.row(0, named=True)
        raise PrivacyAuditError(
            f"privacy audit FAILED: {bad.height} kernels exceed their epsilon, first "
            f"{row['attribute']}={row['subcategory']!r} {row['kernel']} at epsilon "
            f"{row['epsilon']!r}: realised {row['realized_epsilon']!r}"
        )


def concat_attribute_parts(parts: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """Per-attribute parts (per-user rows) as one table, in (epsilon, attribute,
    subcategory, user) order.

    Each part holds one attribute in (epsilon, subcategory, user) order, as
    :func:`ldpsample.events.evaluate_attribute` returns its ``per_user``; the
    parts are interleaved ε by ε and attribute by attribute instead of sorting the rows (the
    same table: on the full-size Avazu log, 6.5 M rows whose string keys took seconds to sort).
    """
    parts = list(parts)
    full = [part for part in parts if part.height]
    if not full:
        return parts[0].clear() if parts else pl.DataFrame()
    full.sort(key=lambda part: part["attribute"][0])
    epsilons = sorted(set().union(*(part["epsilon"].unique().to_list() for part in full)))
    return pl.concat(
        [part.filter(pl.col("epsilon") == eps) for eps in epsilons for part in full],
        rechunk=True,
    )


def empty_audit() -> pl.DataFrame:
    return pl.DataFrame(schema=AUDIT_SCHEMA)


def concat(frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
    frames = list(frames)
    return pl.concat(frames, how="vertical") if frames else pl.DataFrame()


def check_audit_parts(audit: pl.DataFrame) -> pl.DataFrame:
    """The audit rows of several buckets' metrics jobs as one table: each (attribute,
    subcategory, ε, kernel) once, sorted; every bucket audits the same kernel, so duplicates
    must agree (a :class:`PrivacyAuditError` otherwise, as for a failed audit)."""
    keys = ["attribute", "subcategory", "epsilon", "kernel"]
    unique = audit.unique(maintain_order=True)
    clash = unique.group_by(keys).len().filter(pl.col("len") > 1)
    if clash.height:
        row = clash.row(0, named=True)
        raise PrivacyAuditError(
            f"the buckets' audits of {row['attribute']}={row['subcategory']!r} {row['kernel']} "
            f"at epsilon {row['epsilon']!r} disagree: every bucket must use the same kernel"
        )
    return unique.sort(*keys)


def write_per_user_parts(
    parts: Sequence[tuple[str, int, str | os.PathLike[str]]],
    path: str | os.PathLike[str],
    *,
    row_group_rows: int = 1 << 18,
) -> int:
    """Write the per-user parts of (attribute, bucket) metrics jobs as one parquet file in
    (epsilon, attribute, subcategory, user) order, the order of :func:`concat_attribute_parts`,
    holding one batch per part at a time. Returns the number of rows.

    Each part (``(attribute, bucket, file)``) holds one attribute's users of one bucket in
    (epsilon, subcategory, user) order; buckets are ranges of users in sorted order, so the
    runs of equal (epsilon, subcategory) are taken attribute by attribute and bucket by bucket.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    runs = []
    for index, (attribute, bucket, part) in enumerate(parts):
        keys = pl.read_parquet(str(part), columns=["epsilon", "subcategory"])
        starts = (
            keys.with_row_index("_start")
            .group_by("epsilon", "subcategory", maintain_order=True)
            .agg(pl.col("_start").first(), pl.len().alias("_rows"))
        )
        for eps, subcategory, start, rows in starts.iter_rows():
            runs.append((eps, attribute, subcategory, bucket, index, start, rows))
    runs.sort(key=lambda run: run[:4])
    files = [pq.ParquetFile(str(part)) for _, _, part in parts]
    schema = files[0].schema_arrow if files else None
    # each part's row-group offsets: a run is read from the row groups that hold it, so no
    # reader per part stays open (each open reader holds its buffers)
    offsets = [
        np.cumsum([0] + [f.metadata.row_group(g).num_rows for g in range(f.num_row_groups)])
        for f in files
    ]
    position = [0] * len(files)
    total = 0
    with atomic_path(path, private=True) as tmp:  # users' values: 0600 (pipeline.io)
        if schema is None:
            pl.DataFrame().write_parquet(tmp)
            return 0
        writer = pq.ParquetWriter(str(tmp), schema, compression="zstd")
        buffer: list[Any] = []
        buffered = 0
        try:
            for _, _, _, _, index, start, rows in runs:
                if position[index] != start:
                    raise ValueError(f"{parts[index][2]}: rows not in (epsilon, subcategory) order")
                bounds = offsets[index]
                first = int(np.searchsorted(bounds, start, side="right")) - 1
                last = int(np.searchsorted(bounds, start + rows - 1, side="right")) - 1
                groups = files[index].read_row_groups(list(range(first, last + 1)))
                take = groups.slice(start - int(bounds[first]), rows)
                buffer.extend(take.to_batches())
                buffered += take.num_rows
                position[index] += rows
                if buffered >= row_group_rows:
                    writer.write_table(pa.Table.from_batches(buffer, schema=schema))
                    total += buffered
                    buffer, buffered = [], 0
            if buffered or total == 0:
                writer.write_table(pa.Table.from_batches(buffer, schema=schema))
                total += buffered
        finally:
            writer.close()
    return total
