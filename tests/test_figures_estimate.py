"""The estimates figure (ldpsample.figures.estimate): one panel per (subcategory, ε), every
estimator's points and intervals beside the prior, bootstrap intervals preferred."""

from __future__ import annotations

import numpy as np
import polars as pl

from ldpsample.estimate.table import ESTIMATE_SCHEMA
from ldpsample.figures.estimate import plot_estimates
from ldpsample.figures.style import close

PRIOR = pl.DataFrame(
    {
        "attribute": "a",
        "subcategory": ["x", "x", "x", "y", "y", "y"],
        "item": ["i", "j", "k", "i", "j", "k"],
        "q": [0.5, 0.3, 0.2, 0.2, 0.0, 0.8],
    }
)


def table(intervals):
    rows = []
    for sub, items in (("x", "ijk"), ("y", "ik")):
        for eps in (1.0, 4.0):
            for method, interval in intervals:
                for item in items:
                    rows.append(("a", sub, eps, item, "item", method, interval, 0.3, 0.1, 0.1, 0.6))
    return pl.DataFrame(rows, schema=ESTIMATE_SCHEMA, orient="row")


def test_one_panel_per_subcategory_and_epsilon_with_intervals_and_the_prior():
    figure = plot_estimates(table([("inversion", "analytic"), ("em", "none")]), PRIOR)
    axes = figure.axes
    assert len(axes) == 4
    assert axes[0].get_title() == "a = x, ε = 1" and axes[3].get_title() == "a = y, ε = 4"
    assert [t.get_text() for t in axes[2].get_xticklabels()] == ["k", "i"]  # q > 0, by q
    labels = [t.get_text() for t in figure.legends[0].get_texts()]
    assert labels == ["inversion (unbiased)", "EM (maximum likelihood)", "public prior q"]
    close(figure)


def test_bootstrap_rows_replace_the_others_where_present():
    frame = table([("inversion", "analytic"), ("inversion", "bootstrap"), ("em", "bootstrap")])
    frame = frame.with_columns(
        pl.when(pl.col("interval") == "bootstrap")
        .then(0.9)
        .otherwise(pl.col("upper"))
        .alias("upper")
    )
    figure = plot_estimates(frame, PRIOR)
    segments = figure.axes[0].collections[0].get_segments()
    assert np.allclose([s[1][1] for s in segments], 0.9)  # the bootstrap intervals' upper ends
    close(figure)


def test_no_estimates_give_a_message():
    figure = plot_estimates(pl.DataFrame(schema=ESTIMATE_SCHEMA), PRIOR)
    assert figure.axes[0].texts[0].get_text() == "no estimates"
    close(figure)
