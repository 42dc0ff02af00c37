"""Avazu tables of one variant from the events stage's per-attribute parts: the worst cases
(max_tv.csv/.parquet), the win summary (summary.csv), the subcategories kept and skipped per
attribute (subcategories.csv) (ldpsample.experiments.avazu.tables), and the events extras: every
device's TV (per_user.parquet) and the kernel audit (audit.csv, re-checked)
(ldpsample.events.outputs.tables). An empty result (every subcategory skipped) gives the same files
with no data rows and a warning in the log."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ldpsample.events.outputs import tables
from ldpsample.experiments.avazu.tables import avazu_max_tv, avazu_subcategory_counts, avazu_summary
from ldpsample.pipeline.io import write_csv, write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
params = snakemake.params
log.info("variant %s: %s", params.variant, params.options)
per_user = tables.concat_attribute_parts([pl.read_parquet(p) for p in snakemake.input.per_user])
audit = pl.concat([pl.read_parquet(p) for p in snakemake.input.audit]).sort(
    "attribute", "subcategory", "epsilon", "kernel"
)
tables.check_audit(audit)
subcategories = pl.concat([pl.read_parquet(p) for p in snakemake.input.subcategories])
histogram_rows = {
    attribute: pl.scan_parquet(path).select(pl.len()).collect().item()
    for attribute, path in zip(params.attributes, snakemake.input.histograms, strict=True)
}
max_tv = avazu_max_tv(per_user)
summary = avazu_summary(max_tv)
counts = avazu_subcategory_counts(subcategories, histogram_rows, params.attributes)
write_parquet(max_tv, snakemake.output.max_tv_parquet)
write_csv(max_tv, snakemake.output.max_tv)
write_csv(summary, snakemake.output.summary)
write_csv(counts, snakemake.output.subcategories)
write_parquet(per_user, snakemake.output.per_user)
write_csv(audit, snakemake.output.audit)
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
        params.options["min_users"],
        params.options["min_rows"],
        params.options["user_activity"],
    )
else:
    log.info("%d subcategories kept, %d skipped\n%s", int(counts["kept"].sum()), skipped, summary)
log.info(
    "%d kernels audited (max realised ε - ε = %s)",
    audit.height,
    (audit["realized_epsilon"] - audit["epsilon"]).max(),
)
