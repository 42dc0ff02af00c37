"""MovieLens experiment data of one variant: private p per ML-1M user, public q per age group
(ldpsample.datasets.build_movielens_data)."""

from typing import TYPE_CHECKING

from ldpsample.datasets import build_movielens_data
from ldpsample.io import write_parquet
from ldpsample.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
data = build_movielens_data(
    dict(snakemake.params.ml1m_files),
    dict(snakemake.params.ml100k_files),
    weight=snakemake.params.weight,
    prior_source=snakemake.params.prior_source,
)
write_parquet(data.users, snakemake.output.users)
write_parquet(data.priors, snakemake.output.priors)
log.info(
    "%d users over %d genres in %d age groups; partial copy: %s; users skipped (no mass on "
    "the genres): %d",
    data.users.height,
    len(data.genres),
    len(data.groups),
    data.partial,
    data.skipped_users,
)
if data.partial:
    log.warning("results computed from a PARTIAL copy are not the paper's numbers")
