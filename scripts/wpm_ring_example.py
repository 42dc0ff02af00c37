"""WPM ring example: one Dirichlet input with its WPM and KPM outputs at each ε.

ldpsample.experiments.wpm_ring.ring_example; the generator is re-seeded for every ε, so every
panel shows the same input.
"""

from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from ldpsample.experiments.wpm_ring import ring_example
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
params = snakemake.params
example = pl.concat(
    [
        ring_example(
            n=params.n,
            epsilon=float(epsilon),
            alpha=params.alpha,
            r=params.r,
            rng=np.random.default_rng(params.seed),
        )
        for epsilon in params.epsilons
    ]
)
write_parquet(example, snakemake.output.table)
log.info("wrote %d rows", example.height)
