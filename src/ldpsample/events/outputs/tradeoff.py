"""The utility/privacy trade-off table of an events experiment (:func:`tradeoff_table`): per
ε, attribute, divergence and method, the worst case and the median over every (user,
subcategory) row of the attribute in the per-user table, from one frame or, for the map/reduce
metrics jobs, from the parquet files of its parts in two streaming passes whose medians are
exact (:func:`_exact_medians`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

__all__ = ["TRADEOFF_SCHEMA", "tradeoff_table"]


#: The utility/privacy trade-off of a table: per ε, attribute, method and divergence, the worst
#: case and the median over every (user, subcategory) row of the attribute.
TRADEOFF_SCHEMA: dict[str, pl.DataType] = {
    "epsilon": pl.Float64(),
    "attribute": pl.String(),
    "divergence": pl.String(),
    "method": pl.String(),
    "statistic": pl.String(),
    "value": pl.Float64(),
    "rows": pl.Int64(),
}


def _divergence_columns(per_user: pl.DataFrame | pl.LazyFrame) -> list[str]:
    return [
        c
        for c in per_user.collect_schema().names()
        if c.split("_", 1)[0] in ("tv", "kl") and "_" in c
    ]


def tradeoff_table(per_user: pl.DataFrame | Sequence[str | os.PathLike[str]]) -> pl.DataFrame:
    """:data:`TRADEOFF_SCHEMA`: per ε, attribute, divergence and method, the worst case (``max``)
    and the ``median`` of the divergence over every (user, subcategory) row of the attribute in
    ``per_user`` (the ``<divergence>_<method>`` columns of
    :func:`ldpsample.events.evaluate_attribute`), and how many rows that is. Attributes are
    never pooled: each is its own question (which method for this attribute at this ε). Sorted
    by attribute, divergence, method, statistic, ε.

    ``per_user`` may be the parquet files of its parts (the map/reduce metrics jobs): then the
    medians are selected exactly in two passes over the parts (:func:`_exact_medians`), so that
    no column is held whole; the table is the same."""
    if not isinstance(per_user, pl.DataFrame):
        return _tradeoff_of_parts(list(per_user))
    columns = _divergence_columns(per_user)
    if per_user.height == 0 or not columns:
        return pl.DataFrame(schema=TRADEOFF_SCHEMA)
    long = per_user.select("epsilon", "attribute", *columns).unpivot(
        index=["epsilon", "attribute"], variable_name="column", value_name="value"
    )
    long = long.with_columns(
        pl.col("column").str.splitn("_", 2).struct.rename_fields(["divergence", "method"])
    ).unnest("column")
    stats = long.group_by("epsilon", "attribute", "divergence", "method").agg(
        pl.col("value").max().alias("max"),
        pl.col("value").median().alias("median"),
        pl.len().cast(pl.Int64).alias("rows"),
    )
    return _tradeoff_rows(stats)


def _tradeoff_rows(stats: pl.DataFrame) -> pl.DataFrame:
    return (
        stats.unpivot(
            on=["max", "median"],
            index=["epsilon", "attribute", "divergence", "method", "rows"],
            variable_name="statistic",
            value_name="value",
        )
        .select(list(TRADEOFF_SCHEMA))
        .cast(TRADEOFF_SCHEMA)
        .sort("attribute", "divergence", "method", "statistic", "epsilon")
    )


def _tradeoff_of_parts(parts: list[str | os.PathLike[str]]) -> pl.DataFrame:
    """:func:`tradeoff_table` of the per-user rows in parquet ``parts``: maxima and counts as
    a streaming aggregation, medians by :func:`_exact_medians`."""
    if not parts:
        return pl.DataFrame(schema=TRADEOFF_SCHEMA)
    lf = pl.scan_parquet([str(p) for p in parts])
    columns = _divergence_columns(lf)
    if not columns:
        return pl.DataFrame(schema=TRADEOFF_SCHEMA)
    wide = (
        lf.group_by("epsilon", "attribute")
        .agg(
            *[pl.col(c).max().alias(f"max:{c}") for c in columns],
            pl.len().cast(pl.Int64).alias("rows"),
        )
        .collect(engine="streaming")  # as max_over_users: no part held whole
    )
    if wide.height == 0 or wide["rows"].sum() == 0:
        return pl.DataFrame(schema=TRADEOFF_SCHEMA)
    counts = [
        ((eps, attribute), rows)
        for eps, attribute, rows in wide.select("epsilon", "attribute", "rows").rows()
    ]
    medians = _exact_medians(parts, columns, counts, by=("epsilon", "attribute"))
    records = []
    for row in wide.iter_rows(named=True):
        for column in columns:
            divergence, method = column.split("_", 1)
            records.append(
                (
                    row["epsilon"],
                    row["attribute"],
                    divergence,
                    method,
                    row[f"max:{column}"],
                    medians[((row["epsilon"], row["attribute"]), column)],
                    row["rows"],
                )
            )
    stats = pl.DataFrame(
        records,
        schema={
            "epsilon": pl.Float64(),
            "attribute": pl.String(),
            "divergence": pl.String(),
            "method": pl.String(),
            "max": pl.Float64(),
            "median": pl.Float64(),
            "rows": pl.Int64(),
        },
        orient="row",
    )
    return _tradeoff_rows(stats)


#: Bits of a float's order key that choose its bin in :func:`_exact_medians` (2**20 bins).
_BIN_SHIFT = 44


def _order_keys(values: np.ndarray) -> np.ndarray:
    """int64 keys in the order of the floats (IEEE total order: negatives below -0.0 below
    +0.0 below positives; NaN never occurs here)."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.int64)
    return np.where(bits < 0, bits ^ np.int64(0x7FFFFFFFFFFFFFFF), bits)


def _exact_medians(
    parts: list[str | os.PathLike[str]],
    columns: list[str],
    counts: list[tuple[Any, int]],
    *,
    by: Sequence[str] = ("epsilon",),
) -> dict[tuple[Any, str], float]:
    """The median of every column per group of the ``by`` columns (ε alone by default) over the
    rows of ``parts``, exactly as polars' ``median`` of the whole column: the middle value, or
    polars' median of the two middle values. ``counts`` pairs each group's key (the value of
    the one ``by`` column, or the tuple of several) with its number of rows. Pass 1 counts the
    values per bin of their order key's high bits; pass 2 keeps the values of the bins holding
    the middle ranks and selects them. Memory: one part's columns and those bins."""
    by = list(by)
    edges = 1 << (64 - _BIN_SHIFT)
    histograms = {(eps, c): np.zeros(edges, dtype=np.int64) for eps, _ in counts for c in columns}

    def read(part: str | os.PathLike[str]) -> pl.DataFrame:
        return pl.read_parquet(str(part), columns=[*by, *columns])

    def groups(frame: pl.DataFrame):
        for key, rows in frame.partition_by(by, as_dict=True).items():
            eps = key[0] if len(by) == 1 else key
            for column in columns:
                yield eps, column, rows[column].to_numpy()

    for part in parts:
        for eps, column, values in groups(read(part)):
            bins = (_order_keys(values) >> _BIN_SHIFT) + edges // 2
            histograms[(eps, column)] += np.bincount(bins, minlength=edges)
    ranks = {eps: sorted({(n - 1) // 2, n // 2}) for eps, n in counts}
    wanted: dict[tuple[float, str], dict[int, int]] = {}  # bin -> values below it
    for (eps, column), histogram in histograms.items():
        below = np.concatenate([[0], np.cumsum(histogram)])
        wanted[(eps, column)] = {
            int(np.searchsorted(below, rank, side="right") - 1): 0 for rank in ranks[eps]
        }
        for b in wanted[(eps, column)]:
            wanted[(eps, column)][b] = int(below[b])
    kept: dict[tuple[float, str], list[np.ndarray]] = {k: [] for k in histograms}
    for part in parts:
        for eps, column, values in groups(read(part)):
            bins = (_order_keys(values) >> _BIN_SHIFT) + edges // 2
            kept[(eps, column)].append(values[np.isin(bins, list(wanted[(eps, column)]))])
    medians = {}
    for (eps, column), chunks in kept.items():
        values = np.concatenate(chunks)
        values = values[np.argsort(_order_keys(values), kind="stable")]
        first = min(wanted[(eps, column)].values())
        middle = [values[rank - first] for rank in ranks[eps]]
        medians[(eps, column)] = pl.Series(middle, dtype=pl.Float64).median()
    return medians
