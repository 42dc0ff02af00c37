"""Avazu tables: the per-(attribute, ε) worst cases combined (max_tv.csv/.parquet), the win
summary (summary.csv) and the subcategories kept and skipped per attribute (subcategories.csv).
An empty result (every subcategory skipped) gives the same files with no data rows and a
warning in the log."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ldpsample.experiments.real_data_tables import avazu_summary
from ldpsample.io import write_csv, write_parquet
from ldpsample.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
max_tv = pl.concat([pl.read_parquet(path) for path in snakemake.input.max_tv]).sort(
    "epsilon", "attribute", "subcategory", "method"
)
counts = pl.DataFrame(
    [json.loads(Path(path).read_text()) for path in snakemake.input.counts]
).select("attribute", "subcategories", "kept", "skipped", "device_rows", "histogram_rows")
summary = avazu_summary(max_tv)
write_parquet(max_tv, snakemake.output.max_tv_parquet)
write_csv(max_tv, snakemake.output.max_tv)
write_csv(summary, snakemake.output.summary)
write_csv(counts, snakemake.output.subcategories)
stats = json.loads(Path(snakemake.input.stats).read_text())
log.info("input: %s", stats)
if stats["partial"]:
    log.warning("the input is a PARTIAL copy (%d rows): not the paper's numbers", stats["rows"])
log.info("subcategories per attribute:\n%s", counts)
skipped = int(counts["skipped"].sum())
if max_tv.height == 0:
    log.warning(
        "Avazu result is EMPTY: all %d subcategories skipped (none has %d devices with %d %s); "
        "the tables have no data rows",
        skipped,
        snakemake.params.min_users,
        snakemake.params.min_rows,
        snakemake.params.user_activity,
    )
else:
    log.info("%d subcategories kept, %d skipped\n%s", int(counts["kept"].sum()), skipped, summary)
