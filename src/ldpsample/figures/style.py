"""The figures' one backend, label table and style helpers.

Uses: matplotlib and polars (seaborn for type hints only); no other ldpsample module.

Importing this module (as :mod:`ldpsample.figures` does) selects matplotlib's non-interactive Agg
backend, the only ``matplotlib.use`` call of the library.
"""

from __future__ import annotations

import colorsys
import math
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import polars as pl
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

if TYPE_CHECKING:  # the modules that draw with seaborn import it; this one does not need to
    from seaborn import FacetGrid

__all__ = [
    "DIVERGENCE_LABELS",
    "DIVERGENCE_ORDER",
    "LABELS",
    "bar_colors",
    "close",
    "display_name",
    "epsilon_axis",
    "epsilon_panel",
    "epsilon_text",
    "label_axes",
    "message_figure",
    "method_order",
    "present_divergence_labels",
    "subcategory_bars",
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
    """The first ``count`` colours of matplotlib's cycle at 75 % saturation: the colours of
    seaborn's bar plots (its ``desaturate(color, 0.75)``), for bars drawn without seaborn."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colors = []
    for index in range(count):
        hue, lightness, saturation = colorsys.rgb_to_hls(*to_rgb(cycle[index % len(cycle)]))
        colors.append(colorsys.hls_to_rgb(hue, lightness, 0.75 * saturation))
    return colors


def subcategory_bars(
    frame: pl.DataFrame,
    *,
    y: str,
    hue_order: list[str],
    order: list[str],
    epsilons: list[float],
    title: str,
    xlabel: str,
    ylabel: str,
    tick_labels: bool = True,
) -> Figure:
    """Bars per subcategory (x, in ``order``) and method (hue, in ``hue_order``), a panel per ε
    (``frame``'s ``epsilon`` column holds :func:`epsilon_panel` names): the events and Avazu
    figures. The width grows with the subcategories; more than 12 stack the panels in one
    column. ``title`` is formatted with ``panel`` (the ε panel name); the x label is on the
    bottom row, the y label on the left column; the methods' legend is at the right of the
    panels, in space the constrained layout reserves for it, so it is inside the figure
    however it is saved.

    Drawn with matplotlib alone, in seaborn's catplot layout (bars of width 0.8 / hues per
    subcategory, shared y axis, no top and right spines): seaborn's catplot lays the grid out
    three times and draws it twice more for its legend, and importing seaborn (1.1 s) takes
    longer than drawing a small figure. The 9 full-size Avazu figures: 6.2 -> 4.4 s to draw and
    save, besides the import.
    """
    panels = [epsilon_panel(e) for e in epsilons]
    ncols = 1 if len(order) > 12 else min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    height = 3.2
    width = min(40.0, max(4.0, 0.35 * len(order) + 1.5))
    figure, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(ncols * width + 2.5, nrows * height),
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    position = {subcategory: index for index, subcategory in enumerate(order)}
    bar = 0.8 / len(hue_order)
    colors = bar_colors(len(hue_order))
    for index, ax in enumerate(axes.flat):
        if index >= len(panels):
            ax.set_visible(False)  # an empty cell of the last row
            continue
        part = frame.filter(pl.col("epsilon") == panels[index])
        for hue, (method, color) in enumerate(zip(hue_order, colors, strict=True)):
            rows = part.filter(pl.col("method") == method)
            ax.bar(
                [position[s] - 0.4 + (hue + 0.5) * bar for s in rows["subcategory"]],
                rows[y].to_list(),
                width=bar,
                color=color,
                label=method,
            )
        ax.set_xticks(range(len(order)), order)
        ax.tick_params(axis="x", labelrotation=90, labelbottom=tick_labels)
        ax.set_xlim(-0.5, len(order) - 0.5)
        ax.set_title(title.format(panel=panels[index]), fontsize=plt.rcParams["axes.labelsize"])
        ax.spines[["top", "right"]].set_visible(False)
        if index + ncols >= len(panels):  # bottom row
            ax.set_xlabel(xlabel)
        if index % ncols == 0:  # left column
            ax.set_ylabel(ylabel)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, labels, title="method", loc="outside right upper", frameon=False)
    return figure


def close(figure: Figure) -> None:
    """Release a figure's memory (pyplot keeps a reference to every figure it made)."""
    plt.close(figure)
