"""Avazu, one attribute at one ε: every kept device's TV under both methods and the worst case
per subcategory (ldpsample.experiments.real_data_tables)."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.experiments.real_data_tables import avazu_max_table, avazu_per_user
from ldpsample.io import write_parquet
from ldpsample.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
per_user = avazu_per_user(
    pl.read_parquet(snakemake.input.histograms), epsilon=snakemake.params.epsilon, progress=True
)
max_tv = avazu_max_table(per_user)
write_parquet(per_user, snakemake.output.per_user)
write_parquet(max_tv, snakemake.output.max_tv)
log.info("%d device rows, %d subcategories", per_user.height, max_tv.height // 2)
