"""The real-data experiments' worst-case tables as bar data (MovieLens, Avazu) after Zamanlooy,
Diaz & Asoodeh (2025), and the Avazu bar plots (Figs. 3, 6-11) from
``results/avazu/max_tv.parquet`` (computed by the events stage's code, :mod:`ldpsample.events`).
The MovieLens plots (Figs. 4, 12) are in :mod:`ldpsample.figures.movielens`.

Conventions of :mod:`ldpsample.figures` (Agg backend, polars in, a Figure out); the methods'
display names come from :data:`ldpsample.figures.style.LABELS`. No seaborn here: the Avazu
bars are plain matplotlib (:func:`ldpsample.figures.style.subcategory_bars`), so the Avazu
figure job does not pay seaborn's import.
"""

from __future__ import annotations

import logging

import polars as pl
from matplotlib.figure import Figure

from ldpsample.figures.style import (
    LABELS,
    ValueBlock,
    epsilon_panel,
    message_figure,
    method_palette,
    subcategory_bars,
)

__all__ = ["HUE_ORDER", "PALETTE", "long_table", "plot_avazu_attribute"]

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


def long_table(max_tv: pl.DataFrame, max_kl: pl.DataFrame | None) -> pl.DataFrame:
    """The worst cases of ``max_tv`` (and ``max_kl``) in one long frame: ``divergence`` (TV,
    KL), the keys, ``method`` (the bars' display name) and ``value``."""
    frames = [_generic(max_tv, "max_tv", "TV")]
    if max_kl is not None:
        frames.append(_generic(max_kl, "max_kl", "KL"))
    return pl.concat(frames).with_columns(
        pl.col("method").replace_strict(_METHOD_LABELS).alias("method")
    )


#: The bars' order: the minimax sampler, then the relative mollifier.
HUE_ORDER = [_METHOD_LABELS["minimax"], _METHOD_LABELS["mollifier"]]
#: The bars' colours (display name -> colour), those of every figure.
PALETTE = method_palette(["minimax", "mollifier"])


def plot_avazu_attribute(max_tv: pl.DataFrame, *, attribute: str) -> Figure:
    """Figs. 3, 6-11: one attribute's subcategories on x, the worst-case TV per method, a
    panel per ε. Without any kept subcategory, a figure that says so."""
    frame = long_table(max_tv.filter(pl.col("attribute") == attribute), None)
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
    show_labels = len(subcategories) <= 80
    if not show_labels:
        log.info("%s: %d subcategories, tick labels omitted", attribute, len(subcategories))
    return subcategory_bars(
        frame,
        y="value",
        methods=["minimax", "mollifier"],
        order=[str(s) for s in subcategories],
        epsilons=epsilons,
        blocks=[ValueBlock("TV", "tv", r"max over devices of $TV(p, \hat{p})$")],
        title=f"{attribute}, {{panel}}",
        xlabel=f"{attribute} subcategory",
        tick_labels=show_labels,
    )
