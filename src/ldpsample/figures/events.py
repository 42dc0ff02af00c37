"""Figures of an events experiment (:mod:`ldpsample.events`): one bar plot per attribute (per
subcategory, x, the worst case over its users of TV(p, p̂) per method, a panel per ε), and the
table's utility/privacy trade-off (worst case and median of TV and KL against ε, one line per
method; seaborn). Conventions of :mod:`ldpsample.figures` (Agg backend, polars in, a Figure out);
every figure's legend is inside the saved image.

Uses: matplotlib, polars, seaborn, ldpsample.events.metrics and ldpsample.figures.style.
"""

from __future__ import annotations

import polars as pl
import seaborn as sns
from matplotlib.figure import Figure

from ldpsample.events.schemas import METHODS
from ldpsample.figures.style import (
    DIVERGENCE_LABELS,
    display_name,
    epsilon_axis,
    epsilon_panel,
    message_figure,
    subcategory_bars,
)

__all__ = ["STATISTIC_LABELS", "plot_attribute", "plot_tradeoff"]

#: Row titles of the trade-off figure.
STATISTIC_LABELS = {"max": "worst case over users", "median": "median over users"}


def plot_attribute(max_tv: pl.DataFrame, *, name: str, attribute: str) -> Figure:
    """Grouped bars of ``max_tv`` for one attribute; a figure that says so if nothing was kept."""
    frame = max_tv.filter(pl.col("attribute") == attribute)
    if frame.height == 0:
        return message_figure(f"{name} {attribute}: no subcategory kept\n(see subcategories.csv)")
    subcategories = sorted(set(frame["subcategory"].to_list()))
    epsilons = sorted(set(frame["epsilon"].to_list()))
    methods = [m for m in METHODS if m in set(frame["method"])]
    frame = frame.with_columns(
        pl.col("epsilon").map_elements(epsilon_panel, return_dtype=pl.String),
        pl.col("method").replace_strict({m: display_name(m) for m in methods}),
    )
    return subcategory_bars(
        frame,
        y="max_tv",
        hue_order=[display_name(m) for m in methods],
        order=subcategories,
        epsilons=epsilons,
        title=f"{name}: {attribute}, {{panel}}",
        xlabel=f"{attribute} subcategory",
        ylabel="max over users of TV(p, p̂)",
        tick_labels=len(subcategories) <= 80,
    )


def plot_tradeoff(tradeoff: pl.DataFrame, *, name: str) -> Figure:
    """The trade-off of a table (:func:`ldpsample.events.tables.tradeoff_table`): a column per
    divergence (TV, KL), a row per statistic (worst case, median over every (user, subcategory)),
    ε on a log-2 axis, one line per method; KL on a log axis where every value is positive."""
    if tradeoff.height == 0:
        return message_figure(f"{name}: no subcategory kept\n(see subcategories.csv)")
    methods = [m for m in METHODS if m in set(tradeoff["method"])]
    divergences = [d for d in DIVERGENCE_LABELS if d in set(tradeoff["divergence"])]
    frame = tradeoff.with_columns(
        pl.col("method").replace_strict({m: display_name(m) for m in methods}),
        pl.col("divergence").replace_strict({d: DIVERGENCE_LABELS[d] for d in divergences}),
        pl.col("statistic").replace_strict(STATISTIC_LABELS),
    )
    grid = sns.relplot(
        data=frame.to_pandas(),
        x="epsilon",
        y="value",
        hue="method",
        hue_order=[display_name(m) for m in methods],
        style="method",
        markers=True,
        dashes=False,
        col="divergence",
        col_order=[DIVERGENCE_LABELS[d] for d in divergences],
        row="statistic",
        row_order=list(STATISTIC_LABELS.values()),
        kind="line",
        facet_kws={"sharey": False, "margin_titles": False},
        height=2.8,
        aspect=1.3,
    )
    epsilons = sorted(set(tradeoff["epsilon"].to_list()))
    for (statistic, divergence), ax in grid.axes_dict.items():
        epsilon_axis(ax, epsilons)
        shown = frame.filter(
            (pl.col("statistic") == statistic) & (pl.col("divergence") == divergence)
        )
        if divergence == DIVERGENCE_LABELS["kl"] and shown.height and shown["value"].min() > 0:
            ax.set_yscale("log")
        ax.set_ylabel(f"{divergence}(p, p̂), {statistic}")
        ax.set_title(f"{name}: {divergence}, {statistic}")
    grid.tight_layout()
    return grid.figure
