"""The checks of an events table's rows, from one scan, and the errors they raise.

Per numeric column (count, ranking and activity weights): missing or non-numeric values and
negative values, and, for the choice of algorithm only, whether every weight is an integer whose
sums are exact (:func:`_exact_sums`); null attribute values; null user or item ids (dropped
and logged, or an error: ``on_null``); the config options these steps take; listed items the
table lacks; rows outside a release spec's items. A fault stops with the file, the data row (and
CSV line) and the value of its first occurrence (``on_bad_rows="error"``), or is counted per cause
in a WARNING (``"skip"``: rows with a bad weight are left out, a row with a null attribute value
is in no subcategory of that attribute).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ldpsample.events.options import OnBadRows
from ldpsample.events.reading.files import table_format
from ldpsample.events.reading.scan import EventsTableError, locate_row

__all__ = ["raise_on_checks", "skip_bad_weights"]

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
    attributes: Sequence[str] = (),
    extra: Sequence[pl.Expr] = (),
) -> pl.LazyFrame:
    """One-row frame counting the rows, null ids, null values of each attribute and bad values of
    each numeric column (and the ``extra`` one-row aggregates)."""
    exprs = [
        *extra,
        pl.len().alias("rows"),
        pl.col(user).is_null().sum().alias("null_user"),
        pl.col(item).is_null().sum().alias("null_item"),
        *[pl.col(a).is_null().sum().alias(f"null:{a}") for a in attributes],
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


def skip_bad_weights(columns: Sequence[str]) -> pl.Expr:
    """Whether a row's weights are all present, numeric and >= 0 (the rows that
    ``on_bad_rows="skip"`` keeps)."""
    keep = pl.lit(True)
    for column in columns:
        keep &= ~_bad(column) & ~(_number(column) < 0)
    return keep


def _where(raw: pl.LazyFrame, path: Any, key: str, fault: pl.Expr, column: str) -> str:
    """``<file>, data row <r> (line <r+1> of a CSV with a header): <column>=<value> in <row>``
    of the first row where ``fault`` holds (no line for parquet)."""
    first, values = _first(raw, fault)
    file, row = locate_row(path, first, key=f"{key}.path")
    line = "" if table_format(file) == "parquet" else f" (line {row + 2} of a CSV with a header)"
    return f"{file}, data row {row + 1}{line}: {column}={values[column]!r} in {values!r}"


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
    attributes: Sequence[str] = (),
    on_bad_rows: OnBadRows | str = OnBadRows.ERROR,
) -> None:
    """Raise :class:`~ldpsample.events.reading.scan.EventsTableError` for what
    :func:`_check_numbers` found, naming the file, the data row in it and the value of the first
    fault; with ``on_bad_rows="skip"``, log the rows skipped per cause instead (a WARNING: the
    console shows it); log dropped null ids. ``raw`` is the scan the checks ran on: a second scan of
    it finds a fault's row, only when there is one. ``whole_table=False`` (one partition of a table)
    does not take an empty result for an empty table."""
    if whole_table and checks["rows"] == 0:
        raise EventsTableError(f"{path}: the events table is empty (config key {key}.path)")
    faults: list[tuple[str, int, pl.Expr, str, str]] = []
    for column, column_key in columns.items():
        faults.append(
            (
                f"missing or non-numeric {column!r}",
                checks[f"bad:{column}"],
                _bad(column),
                column,
                f"column {column!r} (config key {column_key}) must hold numbers",
            )
        )
        faults.append(
            (
                f"negative {column!r}",
                checks[f"negative:{column}"],
                _number(column) < 0,
                column,
                f"column {column!r} (config key {column_key}) must be >= 0",
            )
        )
    for attribute in attributes:
        faults.append(
            (
                f"null {attribute!r}",
                checks.get(f"null:{attribute}", 0),
                pl.col(attribute).is_null(),
                attribute,
                f"attribute column {attribute!r} (config key {key}.attributes) has a null value",
            )
        )
    found = [f for f in faults if f[1]]
    if found and on_bad_rows == "error":
        _, count, fault, column, what = found[0]
        raise EventsTableError(
            f"{_where(raw, path, key, fault, column)}: {what}; {count} such rows"
            + "".join(f", {n} with a {c}" for c, n, *_ in found[1:])
            + f" ({key}.on_bad_rows: skip skips them)"
        )
    if found:
        log.warning(
            "%s: skipped rows: %s (%s.on_bad_rows: skip; a row with a null attribute value is "
            "in no subcategory of that attribute)",
            path,
            ", ".join(f"{n} with a {c}" for c, n, *_ in found),
            key,
        )
    for column, label in ((user, "null_user"), (item, "null_item")):
        if checks[label]:
            which = "user" if label == "null_user" else "item"
            first = _where(raw, path, key, pl.col(column).is_null(), column)
            if on_null == "error":
                raise EventsTableError(
                    f"{first}: column {column!r} (config key {key}.{which}) is null; "
                    f"{checks[label]} such rows (config key {key}.on_null: error; set drop to "
                    "drop them)"
                )
            log.warning(
                "%s: dropped %d rows with a null %s (column %r; %s.on_null: drop), the first at %s",
                path,
                checks[label],
                which,
                column,
                key,
                first,
            )


def _bad(column: str) -> pl.Expr:
    """Whether a weight is missing or not a number (after :func:`_number`'s cast)."""
    value = _number(column)
    return value.is_null() | value.is_nan()


def _first(raw: pl.LazyFrame, fault: pl.Expr) -> tuple[int, dict[str, Any]]:
    """The 0-based row and the values (as text) of the first row where ``fault`` holds: a
    streaming scan of its own, only when there is such a row (inside the checks' aggregation the
    row index and the value as text would hold the whole column in memory)."""
    found = raw.with_row_index("row").filter(fault).head(1).collect(engine="streaming")
    values = found.drop("row").cast(pl.String).row(0, named=True)
    return int(found["row"][0]), values


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
