"""A WPM figure: params.plot names a function of ldpsample.figures.wpm that takes
the input table and returns a matplotlib Figure."""

from typing import TYPE_CHECKING

import polars as pl

from ldpsample.figures import wpm
from ldpsample.figures.style import close
from ldpsample.pipeline.io import write_figure
from ldpsample.pipeline.scripting import start

if TYPE_CHECKING:
    from snakemake.script import snakemake

start(snakemake)
figure = getattr(wpm, snakemake.params.plot)(pl.read_parquet(snakemake.input.table))
write_figure(figure, snakemake.output.figure, dpi=150, bbox_inches="tight")
close(figure)
