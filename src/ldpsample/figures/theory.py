"""The optimal-risk curves of Theorem 1 (:mod:`ldpsample.experiments.theory`)."""

from __future__ import annotations

import polars as pl
import seaborn as sns
from matplotlib.figure import Figure

from ldpsample.figures.style import (
    label_axes,
    present_divergence_labels,
    with_divergence_labels,
)

__all__ = ["plot_risk_curves"]


def plot_risk_curves(curves: pl.DataFrame) -> Figure:
    """Theorem 1: ``Gamma_f(q, eps)`` against epsilon, a panel per divergence, a line per prior."""
    frame = with_divergence_labels(curves).to_pandas()
    grid = sns.relplot(
        data=frame,
        x="epsilon",
        y="risk",
        hue="prior",
        col="divergence",
        col_order=present_divergence_labels(curves["divergence"]),
        kind="line",
        facet_kws={"sharey": False},
        height=3.2,
        aspect=1.2,
    )
    for ax in grid.axes.flat:
        ax.set_yscale("log")
    label_axes(grid, r"$\varepsilon$", r"optimal worst-case risk $\Gamma_f(q, \varepsilon)$")
    grid.set_titles("{col_name}")
    return grid.figure
