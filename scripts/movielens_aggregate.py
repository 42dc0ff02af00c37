"""MovieLens tables of one variant: the per-ε parts combined (per_user.parquet, max_tv.csv,
max_kl.csv) and the win summary (summary.csv)."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.experiments.real_data_tables import movielens_summary
from ldpsample.io import write_csv, write_parquet
from ldpsample.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake


def combine(paths, keys):
    return pl.concat([pl.read_parquet(path) for path in paths]).sort(keys)


log = start(snakemake)
per_user = combine(snakemake.input.per_user, ["epsilon", "group", "user_id"])
max_tv = combine(snakemake.input.max_tv, ["epsilon", "group", "method"])
max_kl = combine(snakemake.input.max_kl, ["epsilon", "group", "method"])
summary = movielens_summary(max_tv, max_kl)
write_parquet(per_user, snakemake.output.per_user)
write_csv(max_tv, snakemake.output.max_tv)
write_csv(max_kl, snakemake.output.max_kl)
write_csv(summary, snakemake.output.summary)
log.info("%d per-user rows, %d ε\n%s", per_user.height, max_tv["epsilon"].n_unique(), summary)
