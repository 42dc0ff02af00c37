"""WPM ring convergence: W(P, Q_t) of the entropic iterates against t for several η, with the
exact LP value (ldpsample.experiments.wpm_ring.ring_convergence)."""

from typing import TYPE_CHECKING

import numpy as np

from ldpsample.experiments.wpm_ring import ring_convergence
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
params = snakemake.params
table = ring_convergence(
    n=params.n,
    epsilon=float(params.epsilon),
    etas=[float(eta) for eta in params.etas],
    inputs=params.inputs,
    alpha=params.alpha,
    r=params.r,
    max_iter=params.max_iter,
    variant=params.variant,
    rng=np.random.default_rng(params.seed),
)
write_parquet(table, snakemake.output.table)
log.info("wrote %d rows", table.height)
