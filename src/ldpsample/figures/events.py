"""Figures of an events experiment (:mod:`ldpsample.events`): one bar plot per attribute (per
subcategory, x, the worst case over its users of TV(p, p̂) and of KL(p ‖ p̂) per method, a panel
per ε, TV above KL), and the table's utility/privacy trade-off (worst case and median of TV and
KL against ε, one line per method, a block of panels per attribute). Conventions of
:mod:`ldpsample.figures` (Agg backend, polars in, a Figure out); methods keep their colour of
:data:`ldpsample.figures.style.METHOD_COLORS`, value axes their scale of
:func:`ldpsample.figures.style.value_scale`, and every legend is inside the saved image.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import polars as pl
from matplotlib.figure import Figure

from ldpsample.events.schemas import METHODS
from ldpsample.figures.style import (
    DIVERGENCE_LABELS,
    ValueBlock,
    display_name,
    epsilon_axis,
    epsilon_panel,
    message_figure,
    method_color,
    set_value_scale,
    subcategory_bars,
    value_scale,
)

__all__ = ["STATISTIC_LABELS", "plot_attribute", "plot_tradeoff"]

#: Titles of the trade-off figure's statistics.
STATISTIC_LABELS = {"max": "worst case over users", "median": "median over users"}

#: The y labels of the attribute figure's blocks.
_WORST_CASE_LABELS = {"tv": "max over users of TV(p, p̂)", "kl": "max over users of KL(p ‖ p̂)"}


def plot_attribute(
    max_tv: pl.DataFrame, max_kl: pl.DataFrame, *, name: str, attribute: str
) -> Figure:
    """Grouped bars of ``max_tv`` (top block) and ``max_kl`` (bottom block) for one attribute,
    a panel per ε; a figure that says so if nothing was kept."""
    frames = []
    for divergence, table in (("tv", max_tv), ("kl", max_kl)):
        rows = table.filter(pl.col("attribute") == attribute)
        frames.append(
            rows.select(
                pl.lit(DIVERGENCE_LABELS[divergence]).alias("divergence"),
                "epsilon",
                pl.col("subcategory").cast(pl.String),
                "method",
                pl.col(f"max_{divergence}").alias("value"),
            )
        )
    frame = pl.concat(frames)
    if frame.height == 0:
        return message_figure(f"{name} {attribute}: no subcategory kept\n(see subcategories.csv)")
    subcategories = sorted(set(frame["subcategory"].to_list()))
    epsilons = sorted(set(frame["epsilon"].to_list()))
    methods = [m for m in METHODS if m in set(frame["method"])]
    frame = frame.with_columns(
        pl.col("epsilon").map_elements(epsilon_panel, return_dtype=pl.String),
        pl.col("method").replace_strict({m: display_name(m) for m in methods}),
    )
    blocks = [
        ValueBlock(DIVERGENCE_LABELS[d], d, _WORST_CASE_LABELS[d])
        for d in ("tv", "kl")
        if DIVERGENCE_LABELS[d] in set(frame["divergence"])
    ]
    return subcategory_bars(
        frame,
        y="value",
        methods=methods,
        order=subcategories,
        epsilons=epsilons,
        blocks=blocks,
        title=f"{name}: {attribute}, {{divergence}}, {{panel}}",
        xlabel=f"{attribute} subcategory",
        tick_labels=len(subcategories) <= 80,
    )


def plot_tradeoff(tradeoff: pl.DataFrame, *, name: str) -> Figure:
    """The trade-off of a table (:func:`ldpsample.events.outputs.tables.tradeoff_table`): for each
    attribute a row of panels per divergence (TV, then KL), a column per statistic (worst case,
    median over the attribute's (user, subcategory) rows), ε on a log-2 axis, one line per
    method in its colour; the value axis of each panel by
    :func:`~ldpsample.figures.style.value_scale`."""
    if tradeoff.height == 0:
        return message_figure(f"{name}: no subcategory kept\n(see subcategories.csv)")
    methods = [m for m in METHODS if m in set(tradeoff["method"])]
    attributes = sorted(set(tradeoff["attribute"].to_list()))
    divergences = [d for d in DIVERGENCE_LABELS if d in set(tradeoff["divergence"])]
    rows = [(a, d) for a in attributes for d in divergences]
    epsilons = sorted(set(tradeoff["epsilon"].to_list()))
    figure, axes = plt.subplots(
        len(rows),
        len(STATISTIC_LABELS),
        figsize=(4.0 * len(STATISTIC_LABELS) + 2.5, 2.9 * len(rows)),
        squeeze=False,
        layout="constrained",
    )
    for row, (attribute, divergence) in enumerate(rows):
        for col, statistic in enumerate(STATISTIC_LABELS):
            ax = axes[row, col]
            shown = tradeoff.filter(
                (pl.col("attribute") == attribute)
                & (pl.col("divergence") == divergence)
                & (pl.col("statistic") == statistic)
            )
            for method in methods:
                line = shown.filter(pl.col("method") == method).sort("epsilon")
                if line.height == 0:
                    continue
                ax.plot(
                    line["epsilon"].to_list(),
                    line["value"].to_list(),
                    marker="o",
                    color=method_color(method),
                    label=display_name(method),
                )
            values = shown["value"].to_list()
            set_value_scale(ax, value_scale(divergence, values), values)
            epsilon_axis(ax, epsilons)
            label = DIVERGENCE_LABELS[divergence]
            ax.set_ylabel(f"{label}(p, p̂)")
            ax.set_title(f"{attribute}: {label}, {STATISTIC_LABELS[statistic]}", fontsize=10)
            ax.spines[["top", "right"]].set_visible(False)
    handles: dict[str, object] = {}
    for ax in axes.flat:  # every method once, whichever panel drew it
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    figure.suptitle(f"{name}: utility against ε, per attribute")
    order = [display_name(m) for m in methods if display_name(m) in handles]
    figure.legend(
        [handles[label] for label in order],
        order,
        title="method",
        loc="outside right upper",
        frameon=False,
    )
    return figure
