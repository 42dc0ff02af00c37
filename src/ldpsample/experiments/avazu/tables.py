"""Avazu as a configuration of the events stage: the tables the Avazu experiment publishes
(``results/avazu/...``), computed from the events stage's per-attribute parts.

The ``avazu:`` config section is translated into events options in
``workflow/rules/avazu_common.smk`` (``get_avazu_histogram_params``; docs/own-data.md lists the
mapping); the histograms and the per-user divergences come from
:func:`ldpsample.events.build_event_histograms` and :func:`ldpsample.events.evaluate_attribute`.
This module only restates the results in the Avazu contract that the pipeline publishes:

* ``max_tv``: ``epsilon, attribute, subcategory (Int64), method, max_tv, n_users`` with methods
  ``minimax`` and ``mollifier_tv``, sorted by epsilon, attribute, subcategory (as a number),
  method;
* ``summary``: the ``tv`` win summary with the mollifier named ``mollifier``;
* ``subcategories``: per attribute, how many subcategories exist, are kept and skipped, the kept
  (subcategory, device) pairs and histogram rows.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import polars as pl

from ldpsample.events.outputs import tables

__all__ = [
    "AVAZU_MAX_TV_SCHEMA",
    "AVAZU_SUBCATEGORIES_SCHEMA",
    "avazu_max_tv",
    "avazu_max_tv_of_parts",
    "avazu_subcategory_counts",
    "avazu_summary",
]

#: Columns of ``results/avazu/max_tv.{csv,parquet}``.
AVAZU_MAX_TV_SCHEMA: dict[str, pl.DataType] = {
    "epsilon": pl.Float64(),
    "attribute": pl.String(),
    "subcategory": pl.Int64(),
    "method": pl.String(),
    "max_tv": pl.Float64(),
    "n_users": pl.Int64(),
}

#: Columns of ``results/avazu/subcategories.csv``.
AVAZU_SUBCATEGORIES_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategories": pl.Int64(),
    "kept": pl.Int64(),
    "skipped": pl.Int64(),
    "device_rows": pl.Int64(),
    "histogram_rows": pl.Int64(),
}


def avazu_max_tv(per_user: pl.DataFrame) -> pl.DataFrame:
    """The worst case over each subcategory's devices
    (:func:`ldpsample.events.outputs.tables.max_table`
    of the TV columns), in the Avazu contract (:data:`AVAZU_MAX_TV_SCHEMA`)."""
    if per_user.height == 0:
        return pl.DataFrame(schema=AVAZU_MAX_TV_SCHEMA)
    return (
        tables.max_table(per_user, "tv")
        .select(list(AVAZU_MAX_TV_SCHEMA))
        .cast(AVAZU_MAX_TV_SCHEMA)
        .sort("epsilon", "attribute", "subcategory", "method")
    )


def avazu_max_tv_of_parts(paths: Sequence[str | os.PathLike[str]]) -> pl.DataFrame:
    """:func:`avazu_max_tv` of the per-user parts at ``paths`` (parquet, one attribute each, as
    ``evaluate_attribute`` writes them), read one at a time and only their key and TV columns.

    A subcategory's devices are all in its attribute's part, so each part's worst cases are the
    whole table's: the peak memory is that of one part's columns, not of every part's.
    """
    frames = [
        avazu_max_tv(pl.scan_parquet(path).select(pl.exclude("user", "^kl_.*$")).collect())
        for path in paths
    ]
    if not frames:
        return pl.DataFrame(schema=AVAZU_MAX_TV_SCHEMA)
    return pl.concat(frames).sort("epsilon", "attribute", "subcategory", "method")


def avazu_summary(max_tv: pl.DataFrame) -> pl.DataFrame:
    """Win shares and mean improvements over the (ε, attribute, subcategory) cases (TV): the
    events summary's ``tv`` rows, the mollifier named ``mollifier``. With no case (every
    subcategory skipped) ``cases`` is 0 and the shares and improvements are null."""
    events = max_tv.with_columns(pl.col("subcategory").cast(pl.String))
    summary = tables.summary(events, events.clear().rename({"max_tv": "max_kl"}))
    summary = summary.filter(pl.col("divergence") == "tv").with_columns(
        pl.col("method").replace({"mollifier_tv": "mollifier"})
    )
    if summary.height:
        return summary
    empty = {"divergence": "tv", "wins": 0, "ties": 0, "cases": 0}
    return pl.DataFrame(
        [{**empty, "method": m} for m in ("minimax", "mollifier")],
        schema=tables.SUMMARY_SCHEMA,
    )


def avazu_subcategory_counts(
    subcategories: pl.DataFrame,
    histogram_rows: Mapping[str, int],
    attributes: Sequence[str],
) -> pl.DataFrame:
    """Per attribute (in ``attributes`` order): subcategories in the table, kept, skipped, kept
    (subcategory, device) pairs and histogram rows (``histogram_rows``: rows of the attribute's
    histogram part), from the events subcategory table."""
    rows = []
    for attribute in attributes:
        part = subcategories.filter(pl.col("attribute") == attribute)
        kept = part.filter(pl.col("status") == "kept")
        rows.append(
            {
                "attribute": attribute,
                "subcategories": part.height,
                "kept": kept.height,
                "skipped": part.height - kept.height,
                "device_rows": int(kept["kept_users"].sum()),
                "histogram_rows": int(histogram_rows.get(attribute, 0)),
            }
        )
    return pl.DataFrame(rows, schema=AVAZU_SUBCATEGORIES_SCHEMA, orient="row")
