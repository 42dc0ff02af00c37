"""MovieLens bar plots of one variant: per age group, worst-case TV and KL per method, at one ε
(Fig. 4; params.epsilon) or at every ε (Fig. 12; params.epsilon is None)."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.figures.movielens import plot_movielens_epsilon, plot_movielens_overview
from ldpsample.figures.style import close
from ldpsample.pipeline.io import write_figure
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

start(snakemake)
max_tv, max_kl = pl.read_csv(snakemake.input.max_tv), pl.read_csv(snakemake.input.max_kl)
if snakemake.params.epsilon is None:
    figure = plot_movielens_overview(max_tv, max_kl)
else:
    figure = plot_movielens_epsilon(max_tv, max_kl, epsilon=snakemake.params.epsilon)
write_figure(figure, snakemake.output.figure, dpi=150, bbox_inches="tight")
close(figure)
