"""WPM Gowalla: true, expected-release and one-release-per-user location distributions on the
grid at the job's ε (ldpsample.experiments.wpm_gowalla.gowalla_maps)."""

from typing import TYPE_CHECKING

import numpy as np

from ldpsample.experiments.wpm_gowalla import gowalla_grid_from_parquet, gowalla_maps
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
maps = gowalla_maps(
    grid,
    epsilon=params.epsilon,
    methods=params.methods,
    target=params.target,
    rng=np.random.default_rng(params.seed),
)
write_parquet(maps, snakemake.output.table)
log.info("wrote %d rows", maps.height)
