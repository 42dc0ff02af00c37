"""One figure per attribute of an events experiment (:mod:`ldpsample.events`): per subcategory
(x), the worst case over its users of TV(p, p̂) per method (bars), a panel per ε. Conventions of
:mod:`ldpsample.figures` (Agg backend, polars in, a Figure out)."""

from __future__ import annotations

import polars as pl
import seaborn as sns
from matplotlib.figure import Figure

from ldpsample.events.metrics import METHODS
from ldpsample.figures.style import epsilon_panel, message_figure

__all__ = ["plot_attribute"]


def plot_attribute(max_tv: pl.DataFrame, *, name: str, attribute: str) -> Figure:
    """Grouped bars of ``max_tv`` for one attribute; a figure that says so if nothing was kept."""
    frame = max_tv.filter(pl.col("attribute") == attribute)
    if frame.height == 0:
        return message_figure(f"{name} {attribute}: no subcategory kept\n(see subcategories.csv)")
    subcategories = sorted(set(frame["subcategory"].to_list()))
    epsilons = sorted(set(frame["epsilon"].to_list()))
    panels = [epsilon_panel(e) for e in epsilons]
    frame = frame.with_columns(
        pl.col("epsilon").map_elements(epsilon_panel, return_dtype=pl.String)
    )
    height = 3.2
    width = min(40.0, max(4.0, 0.35 * len(subcategories) + 1.5))
    grid = sns.catplot(
        data=frame.to_pandas(),
        x="subcategory",
        y="max_tv",
        hue="method",
        hue_order=[m for m in METHODS if m in set(frame["method"])],
        order=subcategories,
        col="epsilon",
        col_order=panels,
        col_wrap=1 if len(subcategories) > 12 else min(3, len(epsilons)),
        kind="bar",
        errorbar=None,
        height=height,
        aspect=width / height,
    )
    grid.set_axis_labels(f"{attribute} subcategory", "max over users of TV(p, p̂)")
    grid.set_titles(f"{name}: {attribute}, {{col_name}}")
    for ax in grid.axes.flat:
        ax.tick_params(axis="x", labelrotation=90, labelbottom=len(subcategories) <= 80)
    grid.tight_layout()
    return grid.figure
