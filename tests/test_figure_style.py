"""One figure style, checked on rendered figures: every method has one colour in every figure
(the palette of ldpsample.figures.style; randomized response was red in the trade-off and green in
the bars), the events bars show TV and KL with logit / log axes where values crowd near 1 or span
decades, the trade-off has a block of panels per attribute, every mark has a legend entry (the WPM
ring's band had none), the colours reach the saved PNG, and the report's captions hold no raw
LaTeX. Figures are built from tables the library computes, the path the figure jobs take."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.image import imread

from ldpsample.events import evaluate_attribute
from ldpsample.events.outputs.tables import max_table, tradeoff_table
from ldpsample.experiments.wpm_ring import ring_example
from ldpsample.figures.events import plot_attribute, plot_tradeoff
from ldpsample.figures.movielens import plot_movielens_epsilon
from ldpsample.figures.real_data import plot_avazu_attribute
from ldpsample.figures.style import (
    METHOD_COLORS,
    close,
    display_name,
    method_color,
    value_scale,
)
from ldpsample.figures.synthetic import plot_synthetic
from ldpsample.figures.wpm import plot_ring_example

ROOT = Path(__file__).resolve().parents[1]
METHODS = ["minimax", "mollifier_tv", "mollifier_kl", "randomized_response"]


def _per_user(attribute: str, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [
        (attribute, sub, f"u{u:02d}", f"i{i}", float(rng.integers(1, 5)))
        for sub in ("s1", "s2")
        for u in range(20)
        for i in range(5)
        if rng.random() < 0.6 or i == 0
    ]
    hist = pl.DataFrame(
        rows, schema=["attribute", "subcategory", "user", "item", "count"], orient="row"
    )
    return evaluate_attribute(
        hist,
        None,
        name="t",
        attribute=attribute,
        prior="pooled",
        epsilons=[0.5, 2, 8],
        methods=METHODS,
    ).per_user


@pytest.fixture(scope="module")
def per_user() -> pl.DataFrame:
    """Two attributes' per-user divergences (each attribute a separate evaluation)."""
    return pl.concat([_per_user("age", 1), _per_user("zip", 2)])


def saved(figure: Figure) -> Figure:
    figure.savefig(io.BytesIO(), format="png", dpi=60)
    return figure


def legend_colors(figure: Figure) -> dict[str, tuple[float, float, float]]:
    """Legend text -> the colour of its handle, over every legend of ``figure``."""
    legends = list(figure.legends) + [ax.get_legend() for ax in figure.axes if ax.get_legend()]
    colors = {}
    for legend in legends:
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
            if hasattr(handle, "get_facecolor") and not hasattr(handle, "get_xdata"):
                color = handle.get_facecolor()
                color = color[0] if np.ndim(color) == 2 else color
            else:
                color = handle.get_color()
            colors[text.get_text()] = to_rgb(color)
    return colors


def drawn_colors(figure: Figure) -> set[tuple[float, float, float]]:
    """Every bar's face colour and line colour drawn in ``figure``'s axes."""
    found = set()
    for ax in figure.axes:
        found |= {to_rgb(patch.get_facecolor()) for patch in ax.patches}
        found |= {to_rgb(line.get_color()) for line in ax.get_lines() if len(line.get_xdata())}
    return found


def test_value_scale_spreads_tv_near_1_and_kl_over_decades():
    assert value_scale("tv", [0.93, 0.95, 0.99]) == "logit"
    assert value_scale("tv", [0.05, 0.93]) == "logit"
    assert value_scale("tv", [0.1, 0.4, 0.6]) == "linear"  # no value near 1
    assert value_scale("tv", [0.0, 0.95]) == "linear"  # logit(0) is -inf
    assert value_scale("tv", [0.5, 1.0]) == "linear"  # logit(1) is +inf
    assert value_scale("kl", [1e-3, 2.0]) == "log"
    assert value_scale("kl", [0.0, 2.0]) == "linear"
    assert value_scale("kl", []) == "linear"


@pytest.mark.slow
def test_every_method_has_one_colour_and_a_legend_entry_in_every_figure(per_user):
    max_tv, max_kl = max_table(per_user, "tv"), max_table(per_user, "kl")
    figures = {
        "events bars": plot_attribute(max_tv, max_kl, name="t", attribute="age"),
        "trade-off": plot_tradeoff(tradeoff_table(per_user), name="t"),
    }
    for label, figure in figures.items():
        legend = legend_colors(saved(figure))
        assert legend == {display_name(m): to_rgb(METHOD_COLORS[m]) for m in METHODS}, label
        assert drawn_colors(figure) == set(legend.values()), label
        close(figure)
    assert to_rgb(method_color("randomized_response")) == to_rgb("#d62728")  # red everywhere
    # the paper figures (generic mollifier, scored with its own divergence) keep those colours
    avazu = per_user.select(
        "epsilon", "attribute", "subcategory", "user", "tv_minimax", "tv_mollifier_tv"
    ).with_columns(pl.col("subcategory").str.slice(1))  # Avazu's subcategories are integers
    from ldpsample.experiments.avazu.tables import avazu_max_tv

    figure = saved(plot_avazu_attribute(avazu_max_tv(avazu), attribute="age"))
    assert legend_colors(figure) == {
        display_name("minimax"): to_rgb(METHOD_COLORS["minimax"]),
        display_name("mollifier"): to_rgb(METHOD_COLORS["mollifier_tv"]),
    }
    close(figure)
    movielens = {
        table: frame.filter(pl.col("method") != "randomized_response").select(
            "epsilon",
            pl.col("subcategory").alias("group"),
            "method",
            f"max_{table[-2:]}",
            "n_users",
        )
        for table, frame in (("max_tv", max_tv), ("max_kl", max_kl))
    }
    figure = saved(plot_movielens_epsilon(movielens["max_tv"], movielens["max_kl"], epsilon=2))
    assert legend_colors(figure) == {
        display_name("minimax"): to_rgb(METHOD_COLORS["minimax"]),
        display_name("mollifier"): to_rgb(METHOD_COLORS["mollifier"]),
    }
    close(figure)
    synthetic = pl.DataFrame(
        {
            "n": [3] * 8,
            "epsilon": [1.0] * 8,
            "run": [0] * 8,
            "p1": [0.4, 0.8] * 4,
            "method": ["minimax"] * 4 + ["mollifier"] * 4,
            "divergence": ["tv", "tv", "kl", "kl"] * 2,
            "value": [0.1, 0.2, 0.3, 0.4, 0.05, 0.3, 0.2, 0.6],
        }
    )
    figure = saved(plot_synthetic(synthetic))
    assert legend_colors(figure) == {
        display_name("minimax"): to_rgb(METHOD_COLORS["minimax"]),
        display_name("mollifier"): to_rgb(METHOD_COLORS["mollifier"]),
    }
    close(figure)


def test_the_events_bars_show_tv_and_kl_on_axes_that_spread_them(per_user):
    max_tv, max_kl = max_table(per_user, "tv"), max_table(per_user, "kl")
    # the case: every worst case between 0.93 and 0.99 at small ε
    crowded = max_tv.with_columns(
        pl.when(pl.col("epsilon") <= 2)
        .then(0.93 + 0.06 * pl.col("max_tv"))
        .otherwise(pl.col("max_tv"))
        .alias("max_tv")
    )
    figure = saved(plot_attribute(crowded, max_kl, name="t", attribute="age"))
    panels = {ax.get_title(): ax for ax in figure.axes if ax.get_visible()}
    assert sorted(panels) == sorted(
        f"t: age, {d}, ε = {e}" for d in ("TV", "KL") for e in ("0.5", "2", "8")
    )
    for title, ax in panels.items():
        divergence = "tv" if ", TV," in title else "kl"
        table = (crowded if divergence == "tv" else max_kl).filter(pl.col("attribute") == "age")
        assert ax.get_yscale() == value_scale(divergence, table[f"max_{divergence}"].to_list())
        assert ax.get_yscale() == ("logit" if divergence == "tv" else "log")
        low, high = ax.get_ylim()
        heights = [patch.get_height() for patch in ax.patches]
        assert heights and low < min(heights) and max(heights) < high  # every bar top in view
        methods = 3  # minimax, this divergence's mollifier, randomized response
        assert len(heights) == 2 * methods  # 2 subcategories
    close(figure)


def test_the_tradeoff_has_a_block_of_panels_per_attribute(per_user):
    tradeoff = tradeoff_table(per_user)
    assert set(tradeoff["attribute"]) == {"age", "zip"}
    figure = saved(plot_tradeoff(tradeoff, name="t"))
    rows = {}
    for ax in figure.axes:
        attribute = re.match(r"(\w+): ", ax.get_title()).group(1)
        rows.setdefault(attribute, []).append(ax)
    assert sorted(rows) == ["age", "zip"] and all(len(axes) == 4 for axes in rows.values())
    for attribute, axes in rows.items():
        for ax in axes:
            method = "randomized_response"
            divergence = "kl" if ": KL," in ax.get_title() else "tv"
            statistic = "max" if "worst case" in ax.get_title() else "median"
            want = (
                tradeoff.filter(
                    (pl.col("attribute") == attribute)
                    & (pl.col("divergence") == divergence)
                    & (pl.col("statistic") == statistic)
                    & (pl.col("method") == method)
                )
                .sort("epsilon")["value"]
                .to_list()
            )
            (line,) = [line for line in ax.get_lines() if line.get_label() == display_name(method)]
            assert list(line.get_ydata()) == want  # this attribute's values, not pooled
            assert to_rgb(line.get_color()) == to_rgb(METHOD_COLORS[method])
    close(figure)
    # one attribute: a 2 x 2 block, no strip figure (the report's width rule of test_workflow)
    figure = plot_tradeoff(tradeoff.filter(pl.col("attribute") == "age"), name="t")
    width, height = figure.get_size_inches()
    assert len(figure.axes) == 4 and width / height < 3.5
    close(figure)


def test_the_saved_trade_off_png_shows_each_method_in_its_colour(per_user, tmp_path):
    figure = plot_tradeoff(tradeoff_table(per_user), name="t")
    figure.savefig(tmp_path / "tradeoff.png", dpi=80)
    close(figure)
    pixels = imread(tmp_path / "tradeoff.png")[..., :3].reshape(-1, 3)
    for method in METHODS:
        distance = np.abs(pixels - np.array(to_rgb(METHOD_COLORS[method]))).max(axis=1)
        assert (distance < 0.02).sum() > 50, method  # its lines and markers, not a stray pixel
    green = np.array(to_rgb("#2ca02c"))  # randomized response's old colour in the bars
    assert (np.abs(pixels - green).max(axis=1) < 0.02).sum() == 0


def test_the_wpm_ring_band_has_a_legend_entry():
    example = ring_example(n=12, epsilon=1.0, alpha=0.5, rng=np.random.default_rng(0))
    figure = saved(plot_ring_example(example))
    legend = legend_colors(figure)
    assert set(legend) == {
        display_name("input"),
        display_name("wpm"),
        display_name("kpm"),
        r"$\mu \leq Q \leq \min(e^\varepsilon \mu, 1)$",
    }
    for name in ("input", "wpm", "kpm"):
        assert legend[display_name(name)] == to_rgb(METHOD_COLORS[name])
    band_label = r"$\mu \leq Q \leq \min(e^\varepsilon \mu, 1)$"
    (band,) = [c for ax in figure.axes for c in ax.collections if c.get_label() == band_label]
    assert isinstance(band, PolyCollection)
    assert to_rgb(band.get_facecolor()[0]) in legend.values()
    assert to_rgb(band.get_facecolor()[0]) not in {to_rgb(c) for c in METHOD_COLORS.values()}
    close(figure)


def test_no_two_methods_of_a_figure_share_a_colour():
    events = [METHOD_COLORS[m] for m in METHODS]
    wpm = [METHOD_COLORS[m] for m in ("input", "wpm", "kpm", "kpm_genre", "exponential")]
    assert len(set(events)) == len(events) and len(set(wpm)) == len(wpm)
    with pytest.raises(KeyError, match="'new_method' has no colour"):
        method_color("new_method")


@pytest.mark.parametrize("path", sorted((ROOT / "workflow/report").glob("*.rst")), ids=str)
def test_report_captions_hold_no_raw_latex(path):
    """The HTML report shows captions as text: sub- and superscripts as ``_{...}`` or ``^``,
    backslash commands and ``$...$`` would be shown raw (``K_{q,ε}`` was)."""
    text = path.read_text(encoding="utf-8")
    for pattern in (r"_\{", r"\^", r"\\[a-zA-Z]", r"\$"):
        assert not re.search(pattern, text), (path.name, pattern)
