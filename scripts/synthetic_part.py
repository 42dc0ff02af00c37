"""Fig. 2 values for one (n, epsilon): ldpsample.experiments.synthetic.synthetic_values."""

from typing import TYPE_CHECKING

from ldpsample.experiments.synthetic import synthetic_values
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
values = synthetic_values(
    n=snakemake.params.n,
    epsilon=snakemake.params.epsilon,
    runs=snakemake.params.runs,
    grid_size=snakemake.params.grid_size,
    seed=snakemake.params.seed,
    progress=True,
    threads=snakemake.threads,
)
write_parquet(values, snakemake.output.values)
log.info("wrote %d rows", values.height)
