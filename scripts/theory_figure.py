"""Theorem 1 figure: optimal risk against epsilon, a panel per divergence."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.figures.style import close
from ldpsample.figures.theory import plot_risk_curves
from ldpsample.pipeline.io import write_figure
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

start(snakemake)
figure = plot_risk_curves(pl.read_csv(snakemake.input.table))
write_figure(figure, snakemake.output.figure, dpi=150, bbox_inches="tight")
close(figure)
