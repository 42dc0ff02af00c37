"""MovieLens tables of one variant from the events stage's per-user table (attribute
age_group): per_user.parquet, max_tv.csv, max_kl.csv and the win summary (summary.csv) in the
MovieLens layout (ldpsample.experiments.movielens.tables), and the kernel audit (audit.csv,
re-checked)."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.events.outputs import tables
from ldpsample.experiments.movielens.tables import (
    movielens_max_tables,
    movielens_per_user,
    movielens_summary,
)
from ldpsample.pipeline.io import write_csv, write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
per_user = pl.read_parquet(snakemake.input.per_user)
audit = pl.read_parquet(snakemake.input.audit).sort("attribute", "subcategory", "epsilon", "kernel")
tables.check_audit(audit)
max_tv, max_kl = movielens_max_tables(per_user)
summary = movielens_summary(per_user)
write_parquet(movielens_per_user(per_user), snakemake.output.per_user)
write_csv(max_tv, snakemake.output.max_tv)
write_csv(max_kl, snakemake.output.max_kl)
write_csv(summary, snakemake.output.summary)
write_csv(audit, snakemake.output.audit)
log.info("%d per-user rows, %d ε\n%s", per_user.height, max_tv["epsilon"].n_unique(), summary)
