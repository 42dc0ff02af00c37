"""Figures of the Wasserstein projection mechanism stages (ring, MovieLens-100K, Gowalla).

Conventions of :mod:`ldpsample.figures` (Agg backend, polars in, a Figure out); labels come from
:data:`ldpsample.figures.style.LABELS`.

* :func:`plot_ring_example` -- one input on the ring with its WPM and KPM outputs and the
  polytope ``[μ, e^ε μ]``, a panel per ε (frame of ``ring_example`` calls, stacked);
* :func:`plot_ring_convergence` -- ``W_r^r(P, Q_t)`` and its gap to the exact LP value against
  the iteration ``t``, a line per η, a column per input (``ring_convergence``);
* :func:`plot_movielens_hit_rates` -- Hit Rate@1 (mean ± standard error over test users)
  against ε, a line per method, the non-private ceiling dashed (test table of
  ``movielens_hit_rates``);
* :func:`plot_gowalla_w1` -- W1 between the true and the released location distributions
  against ε (``gowalla_w1``);
* :func:`plot_gowalla_maps` -- heat maps of the true and estimated distributions on the grid
  (``gowalla_maps``);
* :func:`plot_sphere` -- the WPM on the sphere: density, scale parameter against ε, and the
  discrete LP's convergence to the closed form (``sphere_scales``, ``sphere_lp_convergence``).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import seaborn as sns
from matplotlib.colors import PowerNorm
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ldpsample.figures.style import (
    display_name,
    epsilon_axis,
    epsilon_text,
    label_axes,
    method_order,
    method_palette,
)

__all__ = [
    "plot_gowalla_maps",
    "plot_gowalla_w1",
    "plot_movielens_hit_rates",
    "plot_ring_convergence",
    "plot_ring_example",
    "plot_sphere",
]


# --------------------------------------------------------------------------------------------
# Ring
# --------------------------------------------------------------------------------------------

#: The ring example's shaded band (the polytope both outputs live in): a colour no method has.
_BAND_COLOR = "#bcbd22"
_BAND_LABEL = r"$\mu \leq Q \leq \min(e^\varepsilon \mu, 1)$"


def plot_ring_example(example: pl.DataFrame) -> Figure:
    """One ring input with its WPM and KPM outputs, a panel per ε.

    ``example`` holds the columns of :data:`ldpsample.experiments.wpm_ring.EXAMPLE_SCHEMA`
    for one or more ε (the same input at every ε). The shaded band is the polytope
    ``μ ≤ Q ≤ min(e^ε μ, 1)`` both outputs live in; panel titles give ``W_r^r`` of each output.
    """
    n = example["point"].n_unique()
    long = (
        example.with_columns((pl.col("point") / n).alias("position"))
        .unpivot(
            on=["input", "wpm", "kpm"],
            index=["epsilon", "position"],
            variable_name="distribution",
            value_name="probability",
        )
        .with_columns(
            pl.col("distribution").replace_strict(
                {name: display_name(name) for name in ("input", "wpm", "kpm")}
            ),
            pl.col("epsilon").map_elements(epsilon_text, return_dtype=pl.String),
        )
    )
    epsilons = sorted(example["epsilon"].unique().to_list())
    col_order = [epsilon_text(e) for e in epsilons]
    grid = sns.relplot(
        data=long.to_pandas(),
        x="position",
        y="probability",
        hue="distribution",
        hue_order=[display_name(name) for name in ("input", "wpm", "kpm")],
        palette=method_palette(("input", "wpm", "kpm")),
        col="epsilon",
        col_order=col_order,
        col_wrap=min(2, len(col_order)),
        kind="line",
        drawstyle="steps-mid",
        height=3.4,
        aspect=1.35,
    )
    band = None
    for eps, ax in zip(epsilons, grid.axes.flat, strict=False):
        rows = example.filter(pl.col("epsilon") == eps).sort("point")
        position = rows["point"].to_numpy() / n
        band = ax.fill_between(
            position,
            rows["lower"].to_numpy(),
            rows["upper"].to_numpy(),
            step="mid",
            color=_BAND_COLOR,
            alpha=0.25,
            lw=0,
            label=_BAND_LABEL,
        )
        ax.set_title(
            f"ε = {epsilon_text(eps)}\nW(P, WPM) = {rows['w_wpm'][0]:.4f}, "
            f"W(P, KPM) = {rows['w_kpm'][0]:.4f}",
            fontsize=10,
        )
    if band is not None and grid.legend is not None:
        # seaborn's legend names the lines only: draw it again with the band
        lines = grid.legend
        texts = [text.get_text() for text in lines.get_texts()]
        entries = dict(zip(texts, lines.legend_handles, strict=True))
        lines.remove()
        grid.add_legend(legend_data={**entries, _BAND_LABEL: band}, title="")
    label_axes(grid, "position on the ring", "probability")
    return grid.figure


_COST = "$W(P, Q_t)$"
_GAP = "$W(P, Q_t)$ − exact LP value"


def plot_ring_convergence(convergence: pl.DataFrame) -> Figure:
    """Entropic WPM on the ring: ``W_r^r(P, Q_t)`` (top) and its gap to the exact LP value
    (bottom, log scale) against the iteration, a line per η and a column per input.

    ``convergence`` holds :data:`ldpsample.experiments.wpm_ring.CONVERGENCE_SCHEMA`. The exact
    value ``min_{Q ∈ M} W_r^r(P, Q)`` is the dashed black line of the top row. Gaps are drawn
    with a floor of 1e-12 (the LP is solved to rounding).
    """
    frame = convergence.with_columns(
        pl.format("η = {}", pl.col("eta").map_elements(epsilon_text, return_dtype=pl.String)).alias(
            "η"
        ),
        pl.col("gap").clip(lower_bound=1e-12),
    )
    long = frame.unpivot(
        on=["cost", "gap"],
        index=["η", "eta", "iteration", "input"],
        variable_name="quantity",
        value_name="value",
    ).with_columns(pl.col("quantity").replace_strict({"cost": _COST, "gap": _GAP}))
    etas = sorted(convergence["eta"].unique().to_list(), reverse=True)
    hue_order = [f"η = {epsilon_text(e)}" for e in etas]
    grid = sns.relplot(
        data=long.to_pandas(),
        x="iteration",
        y="value",
        hue="η",
        hue_order=hue_order,
        palette="viridis",
        row="quantity",
        row_order=[_COST, _GAP],
        col="input",
        kind="line",
        facet_kws={"sharey": False, "margin_titles": True},
        height=2.8,
        aspect=1.2,
    )
    inputs = sorted(convergence["input"].unique().to_list())
    exact_line = None
    for j, inp in enumerate(inputs):
        exact = convergence.filter(pl.col("input") == inp)["exact_cost"][0]
        top = grid.axes[0, j]
        exact_line = top.axhline(exact, color="black", ls="--", lw=1, label="exact LP value")
        top.set_xscale("log")
        # The first iterates are far off; keep the interesting part (near the LP value) visible.
        last = frame.filter(pl.col("input") == inp, pl.col("iteration") >= 10)["cost"]
        if last.len() > 0:
            top.set_ylim(exact - 0.05 * (last.max() - exact), last.max() * 1.02)
        bottom = grid.axes[1, j]
        bottom.set_xscale("log")
        bottom.set_yscale("log")
    grid.set_titles(row_template="", col_template="input {col_name}")
    for row, label in enumerate((_COST, _GAP)):
        for ax in grid.axes[row]:
            ax.set_xlabel("iteration $t$")
            ax.set_ylabel(label)
    if exact_line is not None:
        grid.axes[0, 0].legend(handles=[exact_line], loc="upper right", fontsize=8)
    return grid.figure


# --------------------------------------------------------------------------------------------
# MovieLens
# --------------------------------------------------------------------------------------------


def plot_movielens_hit_rates(test: pl.DataFrame) -> Figure:
    """Hit Rate@1 against ε: mean ± one standard error over test users, a line per method.

    ``test`` holds :data:`ldpsample.experiments.wpm_movielens.TEST_SCHEMA`; a ``nonprivate``
    row (ε = ∞) is drawn as a dashed horizontal line with its band.
    """
    private = test.filter(pl.col("epsilon").is_finite()).sort("method", "epsilon")
    methods = method_order(private["method"], ("wpm", "kpm_genre", "exponential"))
    palette = method_palette(methods)
    frame = private.with_columns(
        pl.col("method").map_elements(display_name, return_dtype=pl.String).alias("mechanism")
    )
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    sns.lineplot(
        data=frame.to_pandas(),
        x="epsilon",
        y="hit_rate_mean",
        hue="mechanism",
        hue_order=list(palette),
        palette=palette,
        style="mechanism",
        markers=True,
        dashes=False,
        errorbar=None,
        ax=ax,
    )
    for method in methods:
        rows = frame.filter(pl.col("method") == method)
        mean, se = rows["hit_rate_mean"].to_numpy(), rows["hit_rate_se"].fill_nan(0).to_numpy()
        colour = palette[display_name(method)]
        ax.fill_between(rows["epsilon"].to_numpy(), mean - se, mean + se, color=colour, alpha=0.2)
    ceiling = test.filter(pl.col("method") == "nonprivate")
    if ceiling.height:
        value = ceiling["hit_rate_mean"][0]
        se = ceiling["hit_rate_se"][0]
        ax.axhline(value, color="black", ls="--", lw=1, label=display_name("nonprivate"))
        if se is not None and math.isfinite(se):
            ax.axhspan(value - se, value + se, color="black", alpha=0.08, lw=0)
    epsilon_axis(ax, sorted(private["epsilon"].unique().to_list()))
    ax.set_ylabel("Hit Rate@1 (test users)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="upper left")
    users = private["n_users"].max() if private.height else 0
    ax.set_title(f"MovieLens-100K next movie, {users} test users", fontsize=10)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------------------------
# Gowalla
# --------------------------------------------------------------------------------------------


def plot_gowalla_w1(w1: pl.DataFrame) -> Figure:
    """W1 (km) between the true and the released location distributions against ε.

    ``w1`` holds :data:`ldpsample.experiments.wpm_gowalla.W1_SCHEMA`. Solid: ``W1(P̄, Q̄)``
    of the expected release distribution; dotted: the empirical distribution of one release
    per user, mean ± one standard error over the repeats.
    """
    long = w1.unpivot(
        on=["w1_expected", "w1_released"],
        index=["epsilon", "method", "repeat"],
        variable_name="quantity",
        value_name="w1",
    ).with_columns(
        pl.col("method").map_elements(display_name, return_dtype=pl.String).alias("mechanism"),
        pl.col("quantity").replace_strict(
            {
                "w1_expected": "expected release distribution",
                "w1_released": "one release per user (mean ± se)",
            }
        ),
    )
    methods = method_order(w1["method"], ("wpm", "kpm"))
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    sns.lineplot(
        data=long.to_pandas(),
        x="epsilon",
        y="w1",
        hue="mechanism",
        hue_order=[display_name(m) for m in methods],
        palette=method_palette(methods),
        style="quantity",
        style_order=["expected release distribution", "one release per user (mean ± se)"],
        dashes=["", (2, 2)],
        markers=True,
        errorbar="se",
        ax=ax,
    )
    epsilon_axis(ax, sorted(w1["epsilon"].unique().to_list()))
    ax.set_ylabel("W1 to the true distribution (km)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)
    users = int(w1["n_users"].max()) if w1.height else 0
    repeats = w1["repeat"].n_unique() if w1.height else 0
    ax.set_title(f"Gowalla check-ins, {users} users, {repeats} repeats", fontsize=10)
    fig.tight_layout()
    return fig


def plot_gowalla_maps(maps: pl.DataFrame) -> Figure:
    """Heat maps of the true and estimated location distributions on the grid (one ε).

    ``maps`` holds :data:`ldpsample.experiments.wpm_gowalla.MAP_SCHEMA` for a single ε. One
    panel per distribution (true, then each method's expected release distribution, then the
    one-release-per-user histograms if present), on a common square-root colour scale.
    """
    epsilons = maps["epsilon"].unique().to_list()
    if len(epsilons) != 1:
        raise ValueError(f"maps must hold one epsilon, got {sorted(epsilons)!r}")
    present = list(dict.fromkeys(maps["distribution"].to_list()))
    order = ["true"]
    order += [d for d in present if d != "true" and not d.endswith("_released")]
    order += [d for d in present if d.endswith("_released")]
    order = [d for d in order if d in present]
    g = int(maps["row"].max()) + 1
    lat, lon = maps["latitude"].to_numpy(), maps["longitude"].to_numpy()
    dlat = (lat.max() - lat.min()) / max(g - 1, 1)
    dlon = (lon.max() - lon.min()) / max(g - 1, 1)
    extent = (
        lon.min() - dlon / 2,
        lon.max() + dlon / 2,
        lat.min() - dlat / 2,
        lat.max() + dlat / 2,
    )
    norm = PowerNorm(gamma=0.5, vmin=0.0, vmax=float(maps["probability"].max()))
    cols = min(3, len(order))
    rows = math.ceil(len(order) / cols)
    with sns.axes_style("white"):
        fig, axes = plt.subplots(
            rows,
            cols,
            figsize=(3.3 * cols + 0.8, 3.3 * rows),
            squeeze=False,
            sharex=True,
            sharey=True,
            layout="constrained",
        )
    image = None
    for ax, name in zip(axes.flat, order, strict=False):
        cells = maps.filter(pl.col("distribution") == name).sort("row", "col")
        values = np.zeros((g, g))
        values[cells["row"].to_numpy(), cells["col"].to_numpy()] = cells["probability"].to_numpy()
        image = ax.imshow(
            values, origin="lower", extent=extent, cmap="rocket_r", norm=norm, aspect="auto"
        )
        ax.set_title(display_name(name), fontsize=9)
    for ax in axes.flat[len(order) :]:
        ax.set_axis_off()
    for ax in axes[-1]:
        ax.set_xlabel("longitude")
    for ax in axes[:, 0]:
        ax.set_ylabel("latitude")
    fig.suptitle(f"Location distributions on a {g}×{g} grid, ε = {epsilon_text(epsilons[0])}")
    if image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.8, label="probability")
    return fig


# --------------------------------------------------------------------------------------------
# Sphere
# --------------------------------------------------------------------------------------------


def plot_sphere(scales: pl.DataFrame, convergence: pl.DataFrame) -> Figure:
    """The WPM on S^{d-1}: the mechanism's density, the scale parameter, the LP comparison.

    Left: ``dQ_x/dσ`` against the distance ``||y - x||`` for a point input, at up to four ε
    of ``scales`` (evenly spread over its list) at its smallest ``d`` ≥ 3 (else its smallest
    ``d``): ``e^ε c`` on the cap,
    ``c`` beyond. Middle: the scale ``c`` against ε, a line per ``d``
    (:data:`ldpsample.experiments.wpm_sphere.SCALES_SCHEMA`). Right: the gap between the
    discrete WPM's worst-case cost (exact LP on a grid) and the closed form ``R*^r`` against the
    grid size, per sphere and ε (:data:`ldpsample.experiments.wpm_sphere.CONVERGENCE_SCHEMA`).
    """
    figure, (left, middle, right) = plt.subplots(1, 3, figsize=(12.5, 4.2))
    dims = sorted(scales["d"].unique().to_list())
    shown = min((d for d in dims if d >= 3), default=dims[0])
    at_shown = scales.filter(pl.col("d") == shown).sort("epsilon")
    picks = np.unique(np.linspace(0, at_shown.height - 1, min(4, at_shown.height)).round())
    density = at_shown[picks.astype(int).tolist()]
    colours = sns.color_palette("viridis", n_colors=max(density.height, 1))
    for row, colour in zip(density.iter_rows(named=True), colours, strict=True):
        high = math.exp(row["epsilon"]) * row["scale"]
        left.step(
            [0.0, row["radius"], 2.0],
            [high, row["scale"], row["scale"]],
            where="post",
            color=colour,
            label=f"ε = {epsilon_text(row['epsilon'])}",
        )
    left.set_yscale("log")
    left.set_xlabel(r"distance $\|y - x\|$")
    left.set_ylabel(r"density $dQ_x/d\sigma$")
    left.set_title(f"mechanism on $S^{{{shown - 1}}}$ (point input)")
    left.legend(fontsize=7)
    for d, colour in zip(dims, sns.color_palette(n_colors=len(dims)), strict=True):
        part = scales.filter(pl.col("d") == d).sort("epsilon")
        middle.plot(
            part["epsilon"], part["scale"], marker="o", ms=3, color=colour, label=f"d = {d}"
        )
    eps_grid = np.linspace(scales["epsilon"].min(), scales["epsilon"].max(), 200)
    middle.plot(eps_grid, np.exp(-eps_grid), color="0.5", ls=":", label=r"$e^{-\varepsilon}$")
    middle.set_yscale("log")
    middle.set_xlabel("ε")
    middle.set_ylabel("scale $c$")
    middle.set_title(r"optimal base measure $c\,\sigma$")
    middle.legend(fontsize=7)
    for (d, eps), part in convergence.sort("d", "epsilon", "n").group_by(
        ["d", "epsilon"], maintain_order=True
    ):
        right.plot(
            part["n"],
            part["cost_error"],
            marker="o" if d == 2 else "s",
            ls="-" if d == 2 else "--",
            label=f"$S^{{{d - 1}}}$, ε = {epsilon_text(eps)}",
        )
    right.set_xscale("log")
    right.set_yscale("log")
    right.xaxis.set_minor_formatter(NullFormatter())
    right.set_xlabel("grid size $n$")
    right.set_ylabel(r"|LP worst case $-$ $R^{*r}$|")
    right.set_title("discrete WPM (exact LP) vs closed form")
    right.legend(fontsize=7)
    figure.tight_layout()
    return figure
