"""MovieLens as events tables, once for every variant: one row per (user, genre) of ML-1M (the
private side) and of ML-100K (the public table of the AISTATS prior), with the age group and
both weights (ldpsample.experiments.movielens.tables.movielens_events)."""

from typing import TYPE_CHECKING

from ldpsample.experiments.movielens.tables import movielens_events
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
ml1m, ml100k, genres = movielens_events(
    dict(snakemake.params.ml1m_files), dict(snakemake.params.ml100k_files)
)
write_parquet(ml1m, snakemake.output.ml1m)
write_parquet(ml100k, snakemake.output.ml100k)
log.info(
    "%d ML-1M users and %d ML-100K users over %d genres in %d age groups",
    ml1m["user_id"].n_unique(),
    ml100k["user_id"].n_unique(),
    len(genres),
    ml1m["age_group"].n_unique(),
)
