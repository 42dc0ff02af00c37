"""MovieLens at one ε: every user's TV and KL under both methods, and the worst case per age
group (ldpsample.experiments.real_data_tables)."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.experiments.real_data_tables import movielens_max_tables, movielens_per_user
from ldpsample.io import write_parquet
from ldpsample.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
per_user = movielens_per_user(
    pl.read_parquet(snakemake.input.users),
    pl.read_parquet(snakemake.input.priors),
    epsilon=snakemake.params.epsilon,
    progress=True,
)
max_tv, max_kl = movielens_max_tables(per_user)
write_parquet(per_user, snakemake.output.per_user)
write_parquet(max_tv, snakemake.output.max_tv)
write_parquet(max_kl, snakemake.output.max_kl)
log.info("%d users\n%s\n%s", per_user.height, max_tv, max_kl)
