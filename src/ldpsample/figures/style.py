"""The figures' one backend, label table, palette and style helpers.

Importing this module (as :mod:`ldpsample.figures` does) selects matplotlib's non-interactive Agg
backend, the only ``matplotlib.use`` call of the library. Every figure colours a method with
:data:`METHOD_COLORS` (randomized response is red wherever it is drawn) and picks its value axis
with :func:`value_scale` (logit for TV values that crowd near 1, log for KL).
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

if TYPE_CHECKING:  # the modules that draw with seaborn import it; this one does not need to
    from seaborn import FacetGrid

__all__ = [
    "DIVERGENCE_LABELS",
    "DIVERGENCE_ORDER",
    "LABELS",
    "METHOD_COLORS",
    "ValueBlock",
    "bar_colors",
    "close",
    "display_name",
    "epsilon_axis",
    "epsilon_panel",
    "epsilon_text",
    "label_axes",
    "message_figure",
    "method_color",
    "method_order",
    "method_palette",
    "present_divergence_labels",
    "set_value_scale",
    "subcategory_bars",
    "value_scale",
    "with_divergence_labels",
]

#: Display names of divergences, mechanisms and reference distributions in every figure.
LABELS: dict[str, str] = {
    # divergences
    "tv": "TV",
    "kl": "KL",
    "chi2": "χ²",
    "hellinger": "squared Hellinger",
    # WPM stages: the ring's input, mechanisms and the maps' reference distributions
    "input": "input P",
    "wpm": "WPM",
    "kpm": "KPM",
    "kpm_genre": "KPM on genres",
    "exponential": "exponential mechanism",
    "nonprivate": "non-private (ε = ∞)",
    "true": "true",
    "wpm_released": "WPM, one release per user",
    "kpm_released": "KPM, one release per user",
    # real-data and events mechanisms (MovieLens, Avazu, your own tables)
    "minimax": "minimax sampler",
    "mollifier": "relative mollifier",
    "mollifier_tv": "relative mollifier (TV projection)",
    "mollifier_kl": "relative mollifier (KL projection)",
    "randomized_response": "randomized response",
}

#: One colour per method, stage or reference distribution of :data:`LABELS`, the same in every
#: figure (matplotlib's tab10 colours, each used once; the generic ``mollifier`` of the MovieLens
#: and Avazu bars, scored in each divergence with its own projection, shares the TV projection's).
METHOD_COLORS: dict[str, str] = {
    "minimax": "#1f77b4",  # blue
    "mollifier": "#ff7f0e",  # orange
    "mollifier_tv": "#ff7f0e",
    "mollifier_kl": "#9467bd",  # purple
    "randomized_response": "#d62728",  # red
    "wpm": "#2ca02c",  # green
    "wpm_released": "#2ca02c",
    "kpm": "#8c564b",  # brown
    "kpm_released": "#8c564b",
    "kpm_genre": "#e377c2",  # pink
    "exponential": "#17becf",  # cyan
    "input": "#7f7f7f",  # grey
    "true": "#7f7f7f",
    "nonprivate": "#000000",
}


def method_color(name: str) -> str:
    """The colour of method (or stage) ``name`` in every figure; a :class:`KeyError` naming it
    for a method without one (a new method gets its colour here, not a default)."""
    try:
        return METHOD_COLORS[name]
    except KeyError:
        raise KeyError(
            f"method {name!r} has no colour in ldpsample.figures.style.METHOD_COLORS"
        ) from None


def method_palette(names: Iterable[str]) -> dict[str, str]:
    """Display name -> colour of the methods ``names`` (a seaborn ``palette``)."""
    return {display_name(name): method_color(name) for name in names}


def value_scale(divergence: str, values: Iterable[float]) -> str:
    """The y scale of a panel of ``divergence`` values (``"tv"`` or ``"kl"``): ``"logit"`` for TV
    values in (0, 1) of which some reach 0.9 (a linear axis squeezes 0.93 and 0.99 into one
    bar height; logit spreads both ends of [0, 1]), ``"log"`` for KL values all positive, else
    ``"linear"``."""
    array = np.asarray(list(values), dtype=float)
    array = array[np.isfinite(array)]
    if array.size == 0:
        return "linear"
    if divergence == "tv" and array.min() > 0 and array.max() < 1 and array.max() >= 0.9:
        return "logit"
    if divergence == "kl" and array.min() > 0:
        return "log"
    return "linear"


def set_value_scale(ax: plt.Axes, scale: str, values: Iterable[float]) -> None:
    """Set ``ax``'s y scale to ``scale`` (:func:`value_scale`) with limits holding ``values``:
    from 0 on a linear axis (non-negative values), else half a decade or half a logit unit
    beyond them (bars start at 0, which a log or logit axis cannot show)."""
    array = np.asarray(list(values), dtype=float)
    array = array[np.isfinite(array)]
    if scale == "linear" or array.size == 0:
        ax.set_yscale("linear")
        if array.size and array.min() >= 0 and array.max() > 0:
            ax.set_ylim(0, array.max() * 1.05)
        return
    if scale == "log":
        ax.set_yscale("log")
        ax.set_ylim(array.min() / 10**0.5, array.max() * 10**0.5)
        return
    ax.set_yscale("logit", nonpositive="clip")
    low, high = np.log(array / (1 - array)).min() - 0.5, np.log(array / (1 - array)).max() + 0.5
    low, high = 1 / (1 + np.exp(-low)), 1 / (1 + np.exp(-high))
    ax.set_ylim(low, high)
    ticks = [t for t in _LOGIT_TICKS if low <= t <= high]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])  # plain numbers, not logit's 1 - 10^-k
    ax.minorticks_off()


#: The tick values of a logit axis (:func:`set_value_scale`): spread evenly in logit.
_LOGIT_TICKS = (0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999)


#: Order of the divergence panels (TV, KL, χ², Hellinger).
DIVERGENCE_ORDER = ("tv", "kl", "chi2", "hellinger")
#: The divergences' rows of :data:`LABELS`, in :data:`DIVERGENCE_ORDER`.
DIVERGENCE_LABELS = {name: LABELS[name] for name in DIVERGENCE_ORDER}


def display_name(name: str) -> str:
    """Display name of ``name`` (itself when the table has none)."""
    return LABELS.get(name, name)


def epsilon_text(value: float) -> str:
    """Short text of an ε or η on axes, panel titles and legends (``8.0 -> "8"``)."""
    return f"{value:g}"


def epsilon_panel(value: float) -> str:
    """Panel name of one ε in the faceted bar plots (``"ε = 8"``)."""
    return f"ε = {epsilon_text(value)}"


def present_divergence_labels(divergences: pl.Series) -> list[str]:
    """Display labels of the divergences present, in :data:`DIVERGENCE_ORDER`."""
    present = set(divergences.unique())
    return [text for name, text in DIVERGENCE_LABELS.items() if name in present]


def with_divergence_labels(frame: pl.DataFrame, *columns: pl.Expr) -> pl.DataFrame:
    """``frame`` with its ``divergence`` column shown by :data:`DIVERGENCE_LABELS` (unknown
    names kept) and the extra ``columns`` added."""
    return frame.with_columns(
        *columns,
        pl.col("divergence").replace_strict(DIVERGENCE_LABELS, default=pl.col("divergence")),
    )


def method_order(present: pl.Series, first: tuple[str, ...]) -> list[str]:
    """The methods in ``present``: those of ``first`` in that order, then the rest sorted."""
    names = set(present)
    return [m for m in first if m in names] + sorted(names - set(first))


def label_axes(grid: FacetGrid, x: str, y: str, *, layout: bool = True) -> None:
    """Label every panel's x and y axis (seaborn labels only the outer ones, which leaves
    panels with their own y scale, ``sharey=False``, without a y label), then lay the grid out
    again unless ``layout=False`` (a caller that changes more and lays it out itself)."""
    for ax in grid.axes.flat:
        ax.set_xlabel(x)
        ax.set_ylabel(y)
    if layout:
        grid.tight_layout()


def epsilon_axis(ax: plt.Axes, epsilons: list[float]) -> None:
    """Log-2 ε axis with the ε values themselves as plain tick labels."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(epsilons, [epsilon_text(e) for e in epsilons])
    ax.minorticks_off()
    ax.set_xlabel("ε")


def message_figure(text: str) -> Figure:
    """A small figure holding only ``text`` (a plot with nothing to draw says why)."""
    figure, ax = plt.subplots(figsize=(6, 2.5))
    ax.set_axis_off()
    ax.text(0.5, 0.5, text, ha="center", va="center")
    return figure


def bar_colors(count: int) -> list[tuple[float, float, float]]:
    """The first ``count`` colours of matplotlib's cycle at 75 % saturation (seaborn's bar
    colours), for hues that are not methods of :data:`METHOD_COLORS` (a method is drawn in its
    own colour, :func:`method_color`)."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colors = []
    for index in range(count):
        hue, lightness, saturation = colorsys.rgb_to_hls(*to_rgb(cycle[index % len(cycle)]))
        colors.append(colorsys.hls_to_rgb(hue, lightness, 0.75 * saturation))
    return colors


class ValueBlock(NamedTuple):
    """One row block of :func:`subcategory_bars`: the rows of ``frame`` whose ``divergence`` is
    ``label``, scaled as ``divergence`` (``"tv"``/``"kl"``, :func:`value_scale`), with this y
    label."""

    label: str
    divergence: str
    ylabel: str


def subcategory_bars(
    frame: pl.DataFrame,
    *,
    y: str,
    methods: Sequence[str],
    order: list[str],
    epsilons: list[float],
    blocks: Sequence[ValueBlock],
    title: str,
    xlabel: str,
    tick_labels: bool = True,
) -> Figure:
    """Bars per subcategory (x, in ``order``) and method (hue, ``methods`` by their display
    names in ``frame``'s ``method`` column, coloured by :data:`METHOD_COLORS`), a panel per ε
    (``frame``'s ``epsilon`` column holds :func:`epsilon_panel` names) and a block of rows per
    divergence (``blocks``, matched on ``frame``'s ``divergence`` column; a block shows the
    methods it has values for): the events and Avazu figures. The width grows with the
    subcategories; more than 12 stack the panels in one column. Each block's panels share its
    y scale (:func:`value_scale` of all its values) and limits. ``title`` is formatted with
    ``panel`` (the ε panel name) and ``divergence`` (the block's label); the x label is on each
    block's bottom row, the y label on the left column; the methods' legend is at the right of
    the panels, in space the constrained layout reserves for it, so it is inside the figure
    however it is saved.

    Drawn with matplotlib alone, in seaborn's catplot layout (bars of width 0.8 / hues per
    subcategory, no top and right spines): seaborn's catplot lays the grid out three times and
    draws it twice more for its legend, and importing seaborn takes longer than drawing a small
    figure.
    """
    panels = [epsilon_panel(e) for e in epsilons]
    ncols = 1 if len(order) > 12 else min(3, len(panels))
    block_rows = math.ceil(len(panels) / ncols)
    height = 3.2
    width = min(40.0, max(4.0, 0.35 * len(order) + 1.5))
    figure, axes = plt.subplots(
        block_rows * len(blocks),
        ncols,
        figsize=(ncols * width + 2.5, block_rows * len(blocks) * height),
        squeeze=False,
        layout="constrained",
    )
    position = {subcategory: index for index, subcategory in enumerate(order)}
    legend: dict[str, Any] = {}
    for b, block in enumerate(blocks):
        shown = frame.filter(pl.col("divergence") == block.label)
        present = set(shown["method"])  # a mollifier is scored with its own divergence only
        block_methods = [m for m in methods if display_name(m) in present]
        bar = 0.8 / max(1, len(block_methods))
        scale = value_scale(block.divergence, shown[y].to_list())
        block_axes = axes[b * block_rows : (b + 1) * block_rows].flat
        for index, ax in enumerate(block_axes):
            if index >= len(panels):
                ax.set_visible(False)  # an empty cell of the block's last row
                continue
            part = shown.filter(pl.col("epsilon") == panels[index])
            for hue, method in enumerate(block_methods):
                rows = part.filter(pl.col("method") == display_name(method))
                bars = ax.bar(
                    [position[s] - 0.4 + (hue + 0.5) * bar for s in rows["subcategory"]],
                    rows[y].to_list(),
                    width=bar,
                    color=method_color(method),
                    label=display_name(method),
                )
                if rows.height:
                    legend.setdefault(display_name(method), bars)
            set_value_scale(ax, scale, shown[y].to_list())
            ax.set_xticks(range(len(order)), order)
            ax.tick_params(axis="x", labelrotation=90, labelbottom=tick_labels)
            ax.set_xlim(-0.5, len(order) - 0.5)
            ax.set_title(
                title.format(panel=panels[index], divergence=block.label),
                fontsize=plt.rcParams["axes.labelsize"],
            )
            ax.spines[["top", "right"]].set_visible(False)
            if index + ncols >= len(panels):  # the block's bottom row
                ax.set_xlabel(xlabel)
            if index % ncols == 0:  # left column
                ax.set_ylabel(block.ylabel)
    labels = [display_name(m) for m in methods if display_name(m) in legend]
    figure.legend(
        [legend[label] for label in labels],
        labels,
        title="method",
        loc="outside right upper",
        frameon=False,
    )
    return figure


def close(figure: Figure) -> None:
    """Release a figure's memory (pyplot keeps a reference to every figure it made)."""
    plt.close(figure)
