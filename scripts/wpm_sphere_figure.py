"""The WPM sphere figure: ldpsample.figures.wpm.plot_sphere of the two sphere tables."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.figures.style import close
from ldpsample.figures.wpm import plot_sphere
from ldpsample.pipeline.io import write_figure
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

start(snakemake)
figure = plot_sphere(
    pl.read_parquet(snakemake.input.scales), pl.read_parquet(snakemake.input.convergence)
)
write_figure(figure, snakemake.output.figure, dpi=150, bbox_inches="tight")
close(figure)
