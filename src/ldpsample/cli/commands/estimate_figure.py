"""``ldpsample estimate --figure``: the figure of the estimates, in a module of its own because
it needs matplotlib (the ``workflow`` extra), which the table of estimates does not."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ldpsample.figures.estimate import plot_estimates
from ldpsample.figures.style import close
from ldpsample.pipeline.io import write_figure

__all__ = ["write_estimates_figure"]


def write_estimates_figure(table: pl.DataFrame, prior: pl.DataFrame, path: Path) -> None:
    """Draw :func:`~ldpsample.figures.estimate.plot_estimates` of the estimates ``table``
    against the spec's ``prior`` and write it to ``path`` atomically (the format from its
    suffix, 120 dpi)."""
    figure = plot_estimates(table, prior)
    write_figure(figure, path, dpi=120)
    close(figure)
