"""The checks of an events table's rows, from one scan, and the errors they raise.

Per numeric column (count, ranking and activity weights): missing or non-numeric values (named by
file and data row), negative values, and, for the choice of algorithm only, whether every
weight is an integer whose sums are exact (:func:`_exact_sums`); null user or item ids (dropped
and logged, or an error); the config options these steps take; listed items the table lacks;
rows outside a release spec's items.

Uses: polars, ldpsample.events.table; no Snakemake.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ldpsample.events.table import EventsTableError, locate_row

__all__ = ["raise_on_checks"]

log = logging.getLogger(__name__)


#: Integers up to this bound are exact float64 values, and so are their sums.
_EXACT = float(2**53)


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
        bad = _bad(column)
        # counted here; where the first one is, only when there is one (:func:`_first_bad`)
        exprs.append(bad.sum().alias(f"bad:{column}"))
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
    raw: pl.LazyFrame,
    whole_table: bool = True,
) -> None:
    """Raise :class:`~ldpsample.events.table.EventsTableError` for what :func:`_check_numbers`
    found (naming the file, and for a bad value its data row in that file); log dropped null
    ids. ``raw`` is the scan the checks ran on: a second scan of it finds a bad value's row,
    only when there is one. ``whole_table=False`` (one partition of a table) does not take an
    empty result for an empty table."""
    if whole_table and checks["rows"] == 0:
        raise EventsTableError(f"{path}: the events table is empty (config key {key}.path)")
    for column, column_key in columns.items():
        if checks[f"bad:{column}"]:
            first, value = _first_bad(raw, column)
            file, row = locate_row(path, first, key=f"{key}.path")
            raise EventsTableError(
                f"{file}: column {column!r} (config key {column_key}) has "
                f"{checks[f'bad:{column}']} missing or non-numeric values, the first "
                f"{value!r} in data row {row + 1} (line {row + 2} of a "
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


def _bad(column: str) -> pl.Expr:
    """Whether a weight is missing or not a number (after :func:`_number`'s cast)."""
    value = _number(column)
    return value.is_null() | value.is_nan()


def _first_bad(raw: pl.LazyFrame, column: str) -> tuple[int, Any]:
    """The 0-based row and the value of ``column``'s first missing or non-numeric value: a
    scan of its own, on the error path only (beside the checks' large aggregation in one
    ``collect_all``, ``int_range(len()).filter(bad).first()`` and the value as text held the
    whole column: 1.0 -> 2.4 GB and 4.4 -> 5.5 s per full-size Avazu histogram job)."""
    found = (
        raw.select(pl.col(column))
        .with_row_index("row")
        .filter(_bad(column))
        .select("row", pl.col(column).cast(pl.String))
        .head(1)
        .collect()
    )
    return int(found["row"][0]), found[column][0]


def _check_options(key: str, activity_scope: str, on_null: str) -> None:
    if activity_scope not in ("top_items", "global"):
        raise ValueError(
            f"config key {key}.activity_scope: {activity_scope!r} is not top_items or global"
        )
    if on_null not in ("drop", "error"):
        raise ValueError(f"config key {key}.on_null: {on_null!r} is not drop or error")


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
