"""Fig. 2 of the synthetic experiment (:mod:`ldpsample.experiments.synthetic`)."""

from __future__ import annotations

import polars as pl
import seaborn as sns
from matplotlib.figure import Figure

from ldpsample.figures.style import (
    display_name,
    label_axes,
    method_order,
    method_palette,
    present_divergence_labels,
    with_divergence_labels,
)

__all__ = ["plot_synthetic"]


def plot_synthetic(values: pl.DataFrame) -> Figure:
    """Fig. 2: divergence against ``p1``, mean ± standard error over runs, one panel per
    divergence and a row per ``(n, epsilon)``."""
    methods = method_order(values["method"], ("minimax", "mollifier"))
    frame = with_divergence_labels(
        values,
        pl.format("n = {}, ε = {}", pl.col("n"), pl.col("epsilon")).alias("setting"),
        pl.col("method").replace_strict({m: display_name(m) for m in methods}),
    ).to_pandas()
    grid = sns.relplot(
        data=frame,
        x="p1",
        y="value",
        hue="method",
        hue_order=[display_name(m) for m in methods],
        palette=method_palette(methods),
        style="method",
        col="divergence",
        col_order=present_divergence_labels(values["divergence"]),
        row="setting",
        kind="line",
        errorbar="se",
        facet_kws={"sharey": False},
        height=3.2,
        aspect=1.3,
    )
    label_axes(grid, "$p^1$ (mass of the heavy item)", "divergence of the released distribution")
    grid.set_titles("{row_name} — {col_name}")
    return grid.figure
