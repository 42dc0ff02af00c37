"""The reduce step of the partitions (:func:`merge_partials`): the whole table's checks, its rows
per subcategory and every subcategory's top items from the summed partial rankings.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import polars as pl

from ldpsample.events.bucketed.partials import _options
from ldpsample.events.counting.item_tops import item_tops
from ldpsample.events.options import EventsOptions
from ldpsample.events.reading.prepared import domain_frame
from ldpsample.events.reading.scan import EventsTableError
from ldpsample.events.reading.table_checks import _check_listed, _exact_sums, _log_outside
from ldpsample.events.schemas import RANK_SCHEMA, ROWS_SCHEMA

__all__ = ["merge_partials"]

log = logging.getLogger(__name__)

#: Check counts that add up over partitions.
_SUMMED = ("rows", "null_user", "null_item", "used", "outside")


def merge_partials(
    checks: Sequence[Mapping[str, Any]],
    rows: Sequence[pl.DataFrame],
    ranks: Iterable[pl.DataFrame],
    *,
    path: str,
    options: Mapping[str, Any],
) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame]:
    """The reduce step of the partitions: the whole table's checks (raising for an empty table or
    listed items it lacks, as :func:`~ldpsample.events.counting.histograms.build_event_histograms`),
    its rows per subcategory (:data:`~ldpsample.events.schemas.ROWS_SCHEMA`) and every subcategory's
    top items (``attribute, subcategory, item``; empty when every item is kept or a release spec
    gives them) from the summed ranking."""
    opts = _options(options)
    key = opts.key
    merged: dict[str, Any] = {}
    for part in checks:
        for name, value in part.items():
            if name in _SUMMED or name.startswith(("bad:", "negative:", "fraction:", "total:")):
                merged[name] = merged.get(name, 0) + (value or 0)
            elif name == "listed_found":
                merged[name] = sorted(set(merged.get(name, [])) | set(value))
    for name in _SUMMED[:4]:
        merged.setdefault(name, 0)
    merged["exact_sums"] = bool(_exact_sums(merged, {c: c for c in _weight_columns(opts)}))
    domain = options.get("domain")
    if opts.items is not None and domain is None:
        listed = sorted({str(i) for i in opts.items})
        found = pl.DataFrame({"item": merged.get("listed_found", [])}, schema={"item": pl.String})
        _check_listed(listed, found, key=key, item=opts.item, path=path)
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
    top_items = opts.evaluation_top_items
    tops = []
    if domain is not None:
        domain = domain_frame(domain)
    names = list(opts.attributes) or ["all"]
    if domain is not None or top_items is not None:
        # summed part by part (``ranks`` may be a generator): one partition's ranking at a
        # time beside the running sums, not every partition's at once
        ranked_all = None
        for part in ranks:
            both = part if ranked_all is None else pl.concat([ranked_all, part])
            ranked_all = both.group_by("attribute", "subcategory", "item").agg(pl.col("rank").sum())
        if ranked_all is None:
            ranked_all = pl.DataFrame(schema=RANK_SCHEMA)
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


def _weight_columns(opts: EventsOptions) -> list[str]:
    return [c for c in (opts.count, opts.rank_items_by, opts.activity_by) if c]
