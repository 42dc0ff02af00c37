"""MovieLens bar plots after Zamanlooy, Diaz & Asoodeh (2025), Figs. 4 and 12: per age group,
the worst case over its users per method, from ``results/movielens/<variant>/max_tv.csv`` and
``max_kl.csv`` (seaborn catplots; conventions of :mod:`ldpsample.figures`).
"""

from __future__ import annotations

from typing import Any

import polars as pl
import seaborn as sns
from matplotlib.figure import Figure

from ldpsample.figures.real_data import HUE_ORDER, PALETTE, long_table
from ldpsample.figures.style import epsilon_panel, label_axes

__all__ = ["plot_movielens_epsilon", "plot_movielens_overview"]


def _age_group_bars(frame: pl.DataFrame, **facets: Any) -> sns.FacetGrid:
    """Bars of ``frame``'s (:func:`long_table`) worst cases per age group (x; the labels sort
    in age order) and method (hue, in :data:`HUE_ORDER`), faceted by ``facets``."""
    return sns.catplot(
        data=frame.to_pandas(),
        x="group",
        y="value",
        hue="method",
        hue_order=HUE_ORDER,
        palette=PALETTE,
        saturation=1,  # the palette's colours as they are (seaborn's bars desaturate by default)
        order=sorted(set(frame["group"].to_list())),
        kind="bar",
        errorbar=None,
        **facets,
    )


def plot_movielens_epsilon(max_tv: pl.DataFrame, max_kl: pl.DataFrame, *, epsilon: float) -> Figure:
    """Fig. 4: per age group, the worst-case TV (left) and KL (right) at one ε, bars per method."""
    frame = long_table(max_tv, max_kl).filter(pl.col("epsilon") == float(epsilon))
    if frame.height == 0:
        raise ValueError(f"no MovieLens values at ε={epsilon!r}")
    grid = _age_group_bars(
        frame, col="divergence", col_order=["TV", "KL"], sharey=False, height=3.4, aspect=1.25
    )
    label_axes(grid, "age group", r"max over users of $D(p, \hat{p})$")
    grid.set_titles(f"{epsilon_panel(float(epsilon))} — {{col_name}}")
    return grid.figure


def plot_movielens_overview(max_tv: pl.DataFrame, max_kl: pl.DataFrame) -> Figure:
    """Fig. 12: the worst cases of every ε, a column per ε, TV on top and KL below."""
    frame = long_table(max_tv, max_kl).with_columns(
        pl.col("epsilon").map_elements(epsilon_panel, return_dtype=pl.String)
    )
    epsilons = sorted(set(max_tv["epsilon"].to_list()))
    grid = _age_group_bars(
        frame,
        col="epsilon",
        col_order=[epsilon_panel(e) for e in epsilons],
        row="divergence",
        row_order=["TV", "KL"],
        sharey="row",
        height=2.6,
        aspect=1.1,
    )
    grid.set_axis_labels("age group", "max over users")
    grid.set_titles("{col_name} — {row_name}")
    for ax in grid.axes.flat:
        ax.tick_params(axis="x", labelrotation=45)
    return grid.figure
