"""One figure per attribute of an events experiment (:mod:`ldpsample.events`): per subcategory
(x), the worst case over its users of TV(p, p̂) per method (bars), a panel per ε. Conventions of
:mod:`ldpsample.figures` (Agg backend, polars in, a Figure out)."""

from __future__ import annotations

import polars as pl
from matplotlib.figure import Figure

from ldpsample.events.metrics import METHODS
from ldpsample.figures.style import epsilon_panel, message_figure, subcategory_bars

__all__ = ["plot_attribute"]


def plot_attribute(max_tv: pl.DataFrame, *, name: str, attribute: str) -> Figure:
    """Grouped bars of ``max_tv`` for one attribute; a figure that says so if nothing was kept."""
    frame = max_tv.filter(pl.col("attribute") == attribute)
    if frame.height == 0:
        return message_figure(f"{name} {attribute}: no subcategory kept\n(see subcategories.csv)")
    subcategories = sorted(set(frame["subcategory"].to_list()))
    epsilons = sorted(set(frame["epsilon"].to_list()))
    frame = frame.with_columns(
        pl.col("epsilon").map_elements(epsilon_panel, return_dtype=pl.String)
    )
    return subcategory_bars(
        frame,
        y="max_tv",
        hue_order=[m for m in METHODS if m in set(frame["method"])],
        order=subcategories,
        epsilons=epsilons,
        title=f"{name}: {attribute}, {{panel}}",
        xlabel=f"{attribute} subcategory",
        ylabel="max over users of TV(p, p̂)",
        tick_labels=len(subcategories) <= 80,
    )
