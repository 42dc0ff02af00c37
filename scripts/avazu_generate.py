"""An Avazu-shaped train.gz (ldpsample.datasets.generate_avazu_like), seeded from the config."""

from typing import TYPE_CHECKING

from ldpsample.datasets import generate_avazu_like
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
generate_avazu_like(
    snakemake.output.csv,
    rows=snakemake.params.rows,
    users=snakemake.params.users,
    sites=snakemake.params.sites,
    seed=snakemake.params.seed,
)
log.info("wrote %s", snakemake.output.csv)
