"""Figures of the pipeline (seaborn on matplotlib's non-interactive Agg backend).

Every function takes a tidy polars frame and returns a matplotlib Figure; saving is left to
:func:`ldpsample.io.write_figure` so that files are written atomically. seaborn 0.13 does not
read polars frames, so frames are converted with ``to_pandas()``.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import polars as pl
import seaborn as sns
from matplotlib.figure import Figure

__all__ = ["close", "epsilon_text", "plot_risk_curves", "plot_synthetic"]

DIVERGENCE_LABELS = {
    "tv": "TV",
    "kl": "KL",
    "chi2": "χ²",
    "hellinger": "squared Hellinger",
}


def epsilon_text(value: float) -> str:
    """Short text of an ε or η on axes, panel titles and legends (``8.0 -> "8"``)."""
    return f"{value:g}"


def _present_labels(divergences: pl.Series) -> list[str]:
    """Display labels of the divergences present, in the fixed order TV, KL, χ², Hellinger."""
    present = set(divergences.unique())
    return [label for name, label in DIVERGENCE_LABELS.items() if name in present]


def plot_synthetic(values: pl.DataFrame) -> Figure:
    """Fig. 2: divergence against ``p1``, mean ± standard error over runs, one panel per
    divergence and a row per ``(n, epsilon)``."""
    frame = values.with_columns(
        pl.format("n = {}, ε = {}", pl.col("n"), pl.col("epsilon")).alias("setting"),
        pl.col("divergence").replace_strict(DIVERGENCE_LABELS, default=pl.col("divergence")),
    ).to_pandas()
    grid = sns.relplot(
        data=frame,
        x="p1",
        y="value",
        hue="method",
        style="method",
        col="divergence",
        col_order=_present_labels(values["divergence"]),
        row="setting",
        kind="line",
        errorbar="se",
        facet_kws={"sharey": False},
        height=3.2,
        aspect=1.3,
    )
    label_axes(grid, "$p^1$ (mass of the heavy item)", "divergence of the released distribution")
    grid.set_titles("{row_name} — {col_name}")
    return grid.figure


def plot_risk_curves(curves: pl.DataFrame) -> Figure:
    """Theorem 1: ``Gamma_f(q, eps)`` against epsilon, a panel per divergence, a line per prior."""
    frame = curves.with_columns(
        pl.col("divergence").replace_strict(DIVERGENCE_LABELS, default=pl.col("divergence"))
    ).to_pandas()
    grid = sns.relplot(
        data=frame,
        x="epsilon",
        y="risk",
        hue="prior",
        col="divergence",
        col_order=_present_labels(curves["divergence"]),
        kind="line",
        facet_kws={"sharey": False},
        height=3.2,
        aspect=1.2,
    )
    for ax in grid.axes.flat:
        ax.set_yscale("log")
    label_axes(grid, r"$\varepsilon$", r"optimal worst-case risk $\Gamma_f(q, \varepsilon)$")
    grid.set_titles("{col_name}")
    return grid.figure


def label_axes(grid: sns.FacetGrid, x: str, y: str) -> None:
    """Label every panel's x and y axis (seaborn labels only the outer ones, which leaves
    panels with their own y scale, ``sharey=False``, without a y label)."""
    for ax in grid.axes.flat:
        ax.set_xlabel(x)
        ax.set_ylabel(y)
    grid.tight_layout()


def close(figure: Figure) -> None:
    """Release a figure's memory (pyplot keeps a reference to every figure it made)."""
    plt.close(figure)
