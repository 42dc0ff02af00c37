"""Events dataset: the evaluation tables from the per-attribute parts, or the (attribute,
bucket) parts of a table in buckets, read as streams (worst cases, the summary with its
recommendation per attribute and ε, the trade-off per attribute against ε, kernel audit
re-checked) (ldpsample.events.outputs.tables)."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.events.outputs import tables
from ldpsample.pipeline.io import write_csv, write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
layout = snakemake.params.layout
audit = pl.concat([pl.read_parquet(p) for p in snakemake.input.audit])
if layout["buckets"] > 1:  # every bucket audited the same kernels
    audit = tables.check_audit_parts(audit)
else:
    audit = audit.sort("attribute", "subcategory", "epsilon", "kernel")
tables.check_audit(audit)
subcategories = pl.concat([pl.read_parquet(p) for p in snakemake.input.subcategories]).sort(
    "attribute", "status", "subcategory"
)
write_csv(subcategories, snakemake.output.subcategories)
if layout["buckets"] > 1:
    # (attribute, bucket) parts, read as streams: no job holds the whole per-user table
    parts = list(snakemake.input.per_user)
    rows = tables.write_per_user_parts(
        [(a, b, path) for (a, b), path in zip(layout["parts"], parts, strict=True)],
        snakemake.output.per_user,
    )
    per_user = pl.scan_parquet(parts)
    tradeoff = tables.tradeoff_table(parts)
else:
    per_user = tables.concat_attribute_parts([pl.read_parquet(p) for p in snakemake.input.per_user])
    rows = per_user.height
    write_parquet(per_user, snakemake.output.per_user, private=True)
    tradeoff = tables.tradeoff_table(per_user)
max_tv, max_kl = tables.max_table(per_user, "tv"), tables.max_table(per_user, "kl")
write_csv(max_tv, snakemake.output.max_tv)
write_csv(max_kl, snakemake.output.max_kl)
write_csv(tables.events_summary(max_tv, max_kl, tradeoff), snakemake.output.summary)
write_csv(tradeoff, snakemake.output.tradeoff)
write_csv(audit, snakemake.output.audit)
log.info(
    "%d per-user rows, %d kernels audited (max realised ε - ε = %s)",
    rows,
    audit.height,
    (audit["realized_epsilon"] - audit["epsilon"]).max(),
)
