"""Events dataset: the evaluation tables from the per-attribute parts (worst cases, summary,
the trade-off against ε, kernel audit re-checked) (ldpsample.events.tables)."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.events import tables
from ldpsample.pipeline.io import write_csv, write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
per_user = tables.concat_attribute_parts([pl.read_parquet(p) for p in snakemake.input.per_user])
audit = pl.concat([pl.read_parquet(p) for p in snakemake.input.audit]).sort(
    "attribute", "subcategory", "epsilon", "kernel"
)
tables.check_audit(audit)
subcategories = pl.concat([pl.read_parquet(p) for p in snakemake.input.subcategories]).sort(
    "attribute", "status", "subcategory"
)
write_csv(subcategories, snakemake.output.subcategories)
max_tv, max_kl = tables.max_table(per_user, "tv"), tables.max_table(per_user, "kl")
write_parquet(per_user, snakemake.output.per_user)
write_csv(max_tv, snakemake.output.max_tv)
write_csv(max_kl, snakemake.output.max_kl)
write_csv(tables.summary(max_tv, max_kl), snakemake.output.summary)
write_csv(tables.tradeoff_table(per_user), snakemake.output.tradeoff)
write_csv(audit, snakemake.output.audit)
log.info(
    "%d per-user rows, %d kernels audited (max realised ε - ε = %s)",
    per_user.height,
    audit.height,
    (audit["realized_epsilon"] - audit["epsilon"]).max(),
)
