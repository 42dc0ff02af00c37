"""WPM on the sphere: the closed-form table and the exact-LP grid comparison.

ldpsample.experiments.wpm_sphere.sphere_scales and sphere_lp_convergence.
"""

from typing import TYPE_CHECKING

from ldpsample.experiments.wpm_sphere import sphere_lp_convergence, sphere_scales
from ldpsample.pipeline.io import write_parquet
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

log = start(snakemake)
params = snakemake.params
scales = sphere_scales(dims=params.dims, epsilons=params.epsilons, r=params.r)
write_parquet(scales, snakemake.output.scales)
convergence = sphere_lp_convergence(
    grids={int(d): sizes for d, sizes in params.grid_sizes.items()},
    epsilons=params.grid_epsilons,
    r=params.r,
)
write_parquet(convergence, snakemake.output.convergence)
log.info("wrote %d closed-form rows and %d grid rows", scales.height, convergence.height)
