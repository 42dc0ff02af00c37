"""The events and Avazu figures as a reader sees them: rendered, every legend lies inside the
saved image and names the methods by their display names, and the axes are labelled (a legend
outside the axes would be cut off on save). Checked on tables
built by the library from a small events table, the path the pipeline's figure jobs take."""

from __future__ import annotations

import io

import numpy as np
import polars as pl
import pytest
from matplotlib.figure import Figure

from ldpsample.events import evaluate_attribute
from ldpsample.events.outputs.tables import max_table, tradeoff_table
from ldpsample.experiments.avazu.tables import avazu_max_tv
from ldpsample.figures.events import plot_attribute, plot_tradeoff
from ldpsample.figures.real_data import plot_avazu_attribute
from ldpsample.figures.style import close, display_name, value_scale

METHODS = ["minimax", "mollifier_tv", "mollifier_kl", "randomized_response"]


@pytest.fixture(scope="module")
def per_user():
    rng = np.random.default_rng(4)
    rows = [
        ("a", sub, f"u{u:02d}", f"i{i}", float(rng.integers(1, 5)))
        for sub in ("s1", "s2", "s3")
        for u in range(25)
        for i in range(6)
        if rng.random() < 0.6 or i == 0
    ]
    hist = pl.DataFrame(
        rows, schema=["attribute", "subcategory", "user", "item", "count"], orient="row"
    )
    return evaluate_attribute(
        hist,
        None,
        name="t",
        attribute="a",
        prior="pooled",
        epsilons=[0.5, 1, 2, 4, 8],
        methods=METHODS,
    ).per_user


def saved(figure: Figure, **kwargs) -> Figure:
    """The figure as the pipeline saves it (write_figure without bbox_inches), so that the
    renderer has laid it out exactly as in the PNG."""
    figure.savefig(io.BytesIO(), format="png", dpi=80, **kwargs)
    return figure


def legends(figure: Figure):
    found = list(figure.legends) + [ax.get_legend() for ax in figure.axes if ax.get_legend()]
    return [legend for legend in found if legend is not None]


def assert_readable(figure: Figure, methods: list[str]) -> None:
    renderer = figure.canvas.get_renderer()
    box = figure.bbox
    found = legends(figure)
    assert found, "the figure has no legend"
    for legend in found:
        extent = legend.get_window_extent(renderer)
        assert extent.x0 >= box.x0 - 1 and extent.x1 <= box.x1 + 1, (extent, box)
        assert extent.y0 >= box.y0 - 1 and extent.y1 <= box.y1 + 1, (extent, box)
    texts = {t.get_text() for legend in found for t in legend.get_texts()}
    assert {display_name(m) for m in methods} <= texts, texts
    axes = [ax for ax in figure.axes if ax.get_visible() and ax.has_data()]
    assert (
        axes
        and any(ax.get_xlabel() for ax in axes)
        and all(ax.get_ylabel() or ax.get_subplotspec().colspan.start > 0 for ax in axes)
    )


def test_the_events_bars_show_their_legend_inside_the_image(per_user):
    max_tv, max_kl = max_table(per_user, "tv"), max_table(per_user, "kl")
    figure = saved(plot_attribute(max_tv, max_kl, name="t", attribute="a"))
    assert_readable(figure, METHODS)
    close(figure)


def test_the_avazu_bars_show_their_legend_inside_the_image(per_user):
    frame = per_user.select(
        "epsilon", "attribute", "subcategory", "user", "tv_minimax", "tv_mollifier_tv"
    ).with_columns(pl.col("subcategory").str.slice(1).alias("subcategory"))
    figure = saved(plot_avazu_attribute(avazu_max_tv(frame), attribute="a"), bbox_inches="tight")
    assert_readable(figure, ["minimax", "mollifier"])
    close(figure)


def test_the_tradeoff_figure_has_tv_and_kl_worst_case_and_median_and_a_legend(per_user):
    tradeoff = tradeoff_table(per_user)
    figure = saved(plot_tradeoff(tradeoff, name="t"))
    assert_readable(figure, METHODS)
    titles = sorted(ax.get_title() for ax in figure.axes if ax.has_data())
    assert titles == [
        "a: KL, median over users",
        "a: KL, worst case over users",
        "a: TV, median over users",
        "a: TV, worst case over users",
    ]
    for ax in figure.axes:
        if ax.has_data():
            assert ax.get_xscale() == "log" and ax.get_ylabel()
            values = np.concatenate([line.get_ydata() for line in ax.get_lines()])
            divergence = "kl" if "KL" in ax.get_title() else "tv"
            assert ax.get_yscale() == value_scale(divergence, values)
            lines = [line for line in ax.get_lines() if len(line.get_xdata()) == 5]
            assert len(lines) >= 3  # one per method scored with this divergence
    close(figure)


def test_the_tradeoff_table_is_the_worst_case_and_median_of_the_per_user_values(per_user):
    tradeoff = tradeoff_table(per_user)
    for eps in (0.5, 8.0):
        rows = per_user.filter(pl.col("epsilon") == eps)
        for divergence, method in (
            ("tv", "minimax"),
            ("kl", "mollifier_kl"),
            ("kl", "randomized_response"),
        ):
            values = rows[f"{divergence}_{method}"].to_numpy()
            got = tradeoff.filter(
                (pl.col("attribute") == "a")
                & (pl.col("epsilon") == eps)
                & (pl.col("divergence") == divergence)
                & (pl.col("method") == method)
            )
            assert got.filter(pl.col("statistic") == "max")["value"].item() == values.max()
            assert got.filter(pl.col("statistic") == "median")["value"].item() == pytest.approx(
                np.median(values)
            )
            assert set(got["rows"]) == {len(values)}
    assert set(tradeoff.filter(pl.col("divergence") == "tv")["method"]) == {
        "minimax",
        "mollifier_tv",
        "randomized_response",
    }
