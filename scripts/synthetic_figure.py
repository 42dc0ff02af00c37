"""Fig. 2 figure: mean ± standard error of TV and KL against p1, per method."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.figures.style import close
from ldpsample.figures.synthetic import plot_synthetic
from ldpsample.pipeline.io import write_figure
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

start(snakemake)
figure = plot_synthetic(pl.read_parquet(snakemake.input.values))
write_figure(figure, snakemake.output.figure, dpi=150, bbox_inches="tight")
close(figure)
