"""Grouped bar plots of the real-data experiments (MovieLens, Avazu) after Zamanlooy, Diaz &
Asoodeh (2025), Figs. 3, 4 and 6-12, drawn from their published worst-case tables
(``results/movielens/<variant>/max_tv.csv``, ``max_kl.csv``; ``results/avazu/max_tv.parquet``;
computed by the events stage's code, :mod:`ldpsample.events`).

Conventions of :mod:`ldpsample.figures` (Agg backend, polars in, a Figure out); the methods'
display names come from :data:`ldpsample.figures.style.LABELS`.
"""

from __future__ import annotations

import logging

import polars as pl
import seaborn as sns
from matplotlib.figure import Figure

from ldpsample.figures.style import (
    LABELS,
    epsilon_panel,
    label_axes,
    message_figure,
    subcategory_bars,
)

__all__ = [
    "plot_avazu_attribute",
    "plot_movielens_epsilon",
    "plot_movielens_overview",
]

log = logging.getLogger(__name__)

#: Table method -> the generic name of the bars (a mollifier is scored with its own divergence).
_GENERIC = {
    "minimax": "minimax",
    "minimax_kl": "minimax",
    "mollifier_tv": "mollifier",
    "mollifier_kl": "mollifier",
}


def _generic(frame: pl.DataFrame, value: str, divergence: str) -> pl.DataFrame:
    """``divergence``, the key columns, ``method`` (generic name) and ``value`` of a worst-case
    table (``max_tv`` or ``max_kl``)."""
    return frame.select(
        pl.lit(divergence).alias("divergence"),
        pl.exclude("method", value, "n_users"),
        pl.col("method").replace_strict(_GENERIC),
        pl.col(value).alias("value"),
    )


#: Generic method -> display name of its bars.
_METHOD_LABELS = {name: LABELS[name] for name in ("minimax", "mollifier")}


def _long(max_tv: pl.DataFrame, max_kl: pl.DataFrame | None) -> pl.DataFrame:
    frames = [_generic(max_tv, "max_tv", "TV")]
    if max_kl is not None:
        frames.append(_generic(max_kl, "max_kl", "KL"))
    return pl.concat(frames).with_columns(
        pl.col("method").replace_strict(_METHOD_LABELS).alias("method")
    )


_HUE_ORDER = [_METHOD_LABELS["minimax"], _METHOD_LABELS["mollifier"]]


def plot_movielens_epsilon(max_tv: pl.DataFrame, max_kl: pl.DataFrame, *, epsilon: float) -> Figure:
    """Fig. 4: per age group, the worst-case TV (left) and KL (right) at one ε, bars per method."""
    frame = _long(max_tv, max_kl).filter(pl.col("epsilon") == float(epsilon))
    if frame.height == 0:
        raise ValueError(f"no MovieLens values at ε={epsilon!r}")
    grid = sns.catplot(
        data=frame.to_pandas(),
        x="group",
        y="value",
        hue="method",
        hue_order=_HUE_ORDER,
        order=sorted(set(frame["group"].to_list())),  # labels sort in age order
        col="divergence",
        col_order=["TV", "KL"],
        kind="bar",
        errorbar=None,
        sharey=False,
        height=3.4,
        aspect=1.25,
    )
    label_axes(grid, "age group", r"max over users of $D(p, \hat{p})$")
    grid.set_titles(f"{epsilon_panel(float(epsilon))} — {{col_name}}")
    return grid.figure


def plot_movielens_overview(max_tv: pl.DataFrame, max_kl: pl.DataFrame) -> Figure:
    """Fig. 12: the worst cases of every ε, a column per ε, TV on top and KL below."""
    frame = _long(max_tv, max_kl).with_columns(
        pl.col("epsilon").map_elements(epsilon_panel, return_dtype=pl.String)
    )
    epsilons = sorted(set(max_tv["epsilon"].to_list()))
    grid = sns.catplot(
        data=frame.to_pandas(),
        x="group",
        y="value",
        hue="method",
        hue_order=_HUE_ORDER,
        order=sorted(set(frame["group"].to_list())),
        col="epsilon",
        col_order=[epsilon_panel(e) for e in epsilons],
        row="divergence",
        row_order=["TV", "KL"],
        kind="bar",
        errorbar=None,
        sharey="row",
        height=2.6,
        aspect=1.1,
    )
    grid.set_axis_labels("age group", "max over users")
    grid.set_titles("{col_name} — {row_name}")
    for ax in grid.axes.flat:
        ax.tick_params(axis="x", labelrotation=45)
    return grid.figure


def plot_avazu_attribute(max_tv: pl.DataFrame, *, attribute: str) -> Figure:
    """Figs. 3, 6-11: one attribute's subcategories on x, the worst-case TV per method, a
    panel per ε. Without any kept subcategory, a figure that says so."""
    frame = _long(max_tv.filter(pl.col("attribute") == attribute), None)
    if frame.height == 0:
        return message_figure(
            f"Avazu {attribute}: no subcategory kept\n(too few devices with enough activity)"
        )
    subcategories = sorted(set(frame["subcategory"].to_list()))
    epsilons = sorted(set(frame["epsilon"].to_list()))
    frame = frame.with_columns(
        pl.col("subcategory").cast(pl.String),
        pl.col("epsilon").map_elements(epsilon_panel, return_dtype=pl.String),
    )
    grid = subcategory_bars(
        frame,
        y="value",
        hue_order=_HUE_ORDER,
        order=[str(s) for s in subcategories],
        epsilons=epsilons,
    )
    label_axes(
        grid, f"{attribute} subcategory", r"max over devices of $TV(p, \hat{p})$", layout=False
    )
    grid.set_titles(f"{attribute}, {{col_name}}")
    show_labels = len(subcategories) <= 80
    for ax in grid.axes.flat:
        ax.tick_params(axis="x", labelrotation=90, labelbottom=show_labels)
    if not show_labels:
        log.info("%s: %d subcategories, tick labels omitted", attribute, len(subcategories))
    grid.tight_layout()  # room for the rotated labels between stacked panels
    return grid.figure
