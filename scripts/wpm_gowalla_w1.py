"""WPM Gowalla: W1 between the true and the released location distributions at the job's ε,
for each method and repeat (ldpsample.experiments.wpm_gowalla.gowalla_w1)."""

from typing import TYPE_CHECKING

import numpy as np

from ldpsample.experiments.wpm_gowalla import gowalla_grid_from_parquet, gowalla_w1
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
params = snakemake.params
grid = gowalla_grid_from_parquet(
    snakemake.input.checkins,
    grid_size=params.grid_size,
    bbox=params.bbox,
    min_checkins=params.min_checkins,
)
log.info("%d users on a %d x %d grid", grid.counts.shape[0], grid.grid_size, grid.grid_size)
table = gowalla_w1(
    grid,
    epsilons=[params.epsilon],
    repeats=params.repeats,
    methods=params.methods,
    target=params.target,
    rng=np.random.default_rng(params.seed),
)
write_parquet(table, snakemake.output.table)
log.info("W1:\n%s", table)
