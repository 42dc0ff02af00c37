"""The figure of a publication's estimates: per (attribute, subcategory) a row of panels, one
per ε, each item's estimate with its interval for every estimator, and the public prior ``q``
as a black tick. Conventions of :mod:`ldpsample.figures` (Agg backend, polars in, a Figure out).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.figure import Figure

from ldpsample.figures.style import bar_colors, epsilon_panel, message_figure

__all__ = ["plot_estimates"]

#: Estimators in the legend's order, and their labels.
_METHOD_LABELS = {
    "inversion": "inversion (unbiased)",
    "norm_sub": "Norm-Sub (simplex projection)",
    "em": "EM (maximum likelihood)",
}


def plot_estimates(
    table: pl.DataFrame,
    prior: pl.DataFrame,
    *,
    max_items: int = 15,
    max_subcategories: int = 8,
) -> Figure:
    """Estimates with intervals.

    Parameters
    ----------
    table
        :data:`ldpsample.estimate.table.ESTIMATE_SCHEMA` rows; bootstrap intervals are drawn
        where present, else the analytic ones (points alone where neither).
    prior
        ``attribute, subcategory, item, q`` (the spec's domain).
    max_items, max_subcategories
        The items of largest ``q`` shown per subcategory, and the first subcategories shown.
    """
    if table.height == 0:
        return message_figure("no estimates")
    shown = table.filter(
        (pl.col("interval") == "bootstrap").any().over("attribute", "subcategory", "epsilon")
        == (pl.col("interval") == "bootstrap")
    )
    cells = (
        shown.select("attribute", "subcategory").unique(maintain_order=True).head(max_subcategories)
    )
    epsilons = sorted(shown["epsilon"].unique().to_list())
    methods = [m for m in _METHOD_LABELS if m in set(shown["method"].to_list())]
    colors = dict(zip(methods, bar_colors(len(methods)), strict=True))
    figure, axes = plt.subplots(
        cells.height,
        len(epsilons),
        figsize=(4.2 * len(epsilons), 2.8 * cells.height),
        squeeze=False,
        sharey="row",
    )
    width = 0.8 / max(len(methods), 1)
    for row, (attribute, subcategory) in enumerate(cells.iter_rows()):
        q = prior.filter(
            (pl.col("attribute") == attribute)
            & (pl.col("subcategory") == subcategory)
            & (pl.col("q") > 0)
        ).sort("q", "item", descending=[True, False])
        items = q["item"].head(max_items).to_list()
        x = np.arange(len(items))
        for column, eps in enumerate(epsilons):
            ax = axes[row, column]
            part = shown.filter(
                (pl.col("attribute") == attribute)
                & (pl.col("subcategory") == subcategory)
                & (pl.col("epsilon") == eps)
            )
            for k, method in enumerate(methods):
                rows = pl.DataFrame({"item": items}).join(
                    part.filter(pl.col("method") == method), on="item", how="left"
                )
                estimate = rows["estimate"].to_numpy()
                position = x + (k - (len(methods) - 1) / 2) * width
                # a percentile interval need not contain the estimate: draw it from its ends
                ax.vlines(
                    position,
                    rows["lower"].to_numpy(),
                    rows["upper"].to_numpy(),
                    color=colors[method],
                    linewidth=1.2,
                )
                ax.plot(
                    position,
                    estimate,
                    "o",
                    markersize=3,
                    color=colors[method],
                    label=_METHOD_LABELS[method],
                )
            ax.scatter(
                x,
                q["q"].head(max_items).to_numpy(),
                marker="_",
                s=200,
                color="black",
                label="public prior q",
                zorder=3,
            )
            ax.axhline(0.0, color="grey", linewidth=0.5)
            ax.set_xticks(x, items, rotation=60, ha="right", fontsize=7)
            ax.set_title(f"{attribute} = {subcategory}, {epsilon_panel(eps)}", fontsize=9)
            if column == 0:
                ax.set_ylabel("population share")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(
        handles,
        labels,
        loc="upper center",
        ncol=2,
        frameon=False,
        bbox_to_anchor=(0.5, 1.0),
    )
    figure.tight_layout(rect=(0, 0, 1, 1 - 0.5 / (2.8 * cells.height)))
    return figure
