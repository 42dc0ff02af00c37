"""The figures' one backend, label table and style helpers.

Importing this module (as :mod:`ldpsample.figures` does) selects matplotlib's non-interactive Agg
backend, the only ``matplotlib.use`` call of the library.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import polars as pl
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.patches import Patch

__all__ = [
    "DIVERGENCE_LABELS",
    "DIVERGENCE_ORDER",
    "LABELS",
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
    # real-data mechanisms (MovieLens, Avazu): the bars' generic names
    "minimax": "minimax sampler",
    "mollifier": "relative mollifier",
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


def label_axes(grid: sns.FacetGrid, x: str, y: str, *, layout: bool = True) -> None:
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


def subcategory_bars(
    frame: pl.DataFrame, *, y: str, hue_order: list[str], order: list[str], epsilons: list[float]
) -> sns.FacetGrid:
    """Bars per subcategory (x, in ``order``) and method (hue), a panel per ε (``frame``'s
    ``epsilon`` column holds :func:`epsilon_panel` names): the events and Avazu figures. The
    width grows with the subcategories; more than 12 stack the panels in one column."""
    height = 3.2
    width = min(40.0, max(4.0, 0.35 * len(order) + 1.5))
    grid = sns.catplot(
        data=frame.to_pandas(),
        x="subcategory",
        y=y,
        hue="method",
        hue_order=hue_order,
        order=order,
        col="epsilon",
        col_order=[epsilon_panel(e) for e in epsilons],
        col_wrap=1 if len(order) > 12 else min(3, len(epsilons)),
        kind="bar",
        errorbar=None,
        height=height,
        aspect=width / height,
        legend=False,
    )
    # The methods' legend at the right of the panels, as seaborn's, without the two full draws
    # its add_legend makes to measure it (a third of the drawing time of a 60-bar figure): the
    # saved figure's tight bounding box takes it in.
    # the bars' colours: catplot's palette at its default saturation
    colors = [sns.desaturate(c, 0.75) for c in sns.color_palette(n_colors=len(hue_order))]
    grid.figure.legend(
        [Patch(facecolor=c, label=m) for c, m in zip(colors, hue_order, strict=True)],
        hue_order,
        title="method",
        loc="center left",
        bbox_to_anchor=(1.0, 0.5),
        frameon=False,
    )
    return grid


def close(figure: Figure) -> None:
    """Release a figure's memory (pyplot keeps a reference to every figure it made)."""
    plt.close(figure)
