"""The evaluation side (it reads the private histograms, so nothing here is publishable): each
estimator's error against the truth, per (attribute, subcategory, ε) and per ε, so that users
see when to trust an estimate.

The truth of a cell is what the estimators target: the mean over the cell's releasing users of
their distributions ``p_u`` on the spec's items of ``q > 0``, with ``p_u := q`` for a user
without data there (hidden membership) and a user's mass on items of ``q = 0`` spread as ``q``
(such items are never released; ``q K = q``). Histograms rows outside the spec's domain are not
used, as in :func:`ldpsample.publish.release_items`.
"""

from __future__ import annotations

import polars as pl

from ldpsample.estimate.publication import Publication
from ldpsample.estimate.table import Estimates

__all__ = ["ERROR_SCHEMA", "estimator_errors", "population_truth", "summarise_errors"]

#: One row per (attribute, subcategory, ε, method): TV and largest absolute error.
ERROR_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "epsilon": pl.Float64(),
    "method": pl.String(),
    "tv_error": pl.Float64(),
    "max_abs_error": pl.Float64(),
}


def population_truth(publication: Publication, histograms: pl.DataFrame) -> pl.DataFrame:
    """``attribute, subcategory, epsilon, item, truth`` for every cell of the publication."""
    keys = ["attribute", "subcategory"]
    domain = publication.spec.domain
    positive = domain.filter(pl.col("q") > 0).with_columns(
        (pl.col("q") / pl.col("q").sum().over(keys)).alias("q")
    )
    hist = histograms.select(
        pl.col("user").cast(pl.String),
        pl.col("attribute").cast(pl.String),
        pl.col("subcategory").cast(pl.String),
        pl.col("item").cast(pl.String),
        pl.col("count").cast(pl.Float64),
    ).join(domain.select(*keys, "item", pl.col("q").alias("q_all")), on=[*keys, "item"])
    hist = hist.filter(pl.col("count") > 0).with_columns(
        (pl.col("count") / pl.col("count").sum().over("user", *keys)).alias("p")
    )
    releasing = publication.draws.select("epsilon", *keys, "user").unique()
    counts = releasing.group_by("epsilon", *keys).agg(pl.len().alias("users"))
    data = releasing.join(hist, on=[*keys, "user"])
    zero_mass = (
        data.filter(pl.col("q_all") == 0)
        .group_by("epsilon", *keys)
        .agg(pl.col("p").sum().alias("zero_mass"))
    )
    with_data = (
        data.select("epsilon", *keys, "user")
        .unique()
        .group_by("epsilon", *keys)
        .agg(pl.len().alias("with_data"))
    )
    mass = (
        data.filter(pl.col("q_all") > 0)
        .group_by("epsilon", *keys, "item")
        .agg(pl.col("p").sum().alias("mass"))
    )
    return (
        counts.join(positive.select(*keys, "item", "q"), on=keys)
        .join(with_data, on=["epsilon", *keys], how="left")
        .join(zero_mass, on=["epsilon", *keys], how="left")
        .join(mass, on=["epsilon", *keys, "item"], how="left")
        .with_columns(pl.col("with_data", "zero_mass", "mass").fill_null(0))
        .select(
            "attribute",
            "subcategory",
            "epsilon",
            "item",
            (
                (
                    pl.col("mass")
                    + (pl.col("users") - pl.col("with_data") + pl.col("zero_mass")) * pl.col("q")
                )
                / pl.col("users")
            ).alias("truth"),
        )
        .sort("attribute", "subcategory", "epsilon", "item")
    )


def estimator_errors(
    publication: Publication, estimates: Estimates, histograms: pl.DataFrame
) -> pl.DataFrame:
    """Every estimator's error (:data:`ERROR_SCHEMA`) against :func:`population_truth`, and the
    error of reporting the prior ``q`` itself (method ``prior``).

    Parameters
    ----------
    publication
        The release (:func:`~ldpsample.estimate.read_publication`).
    estimates
        Its :func:`~ldpsample.estimate.estimate_publication`.
    histograms
        The private ``user, attribute, subcategory, item, count`` rows the release drew from.
    """
    keys = ["attribute", "subcategory", "epsilon", "item"]
    truth = population_truth(publication, histograms)
    points = estimates.table.select(*keys, "method", "estimate").unique(
        [*keys, "method"], keep="first", maintain_order=True
    )
    prior = (
        publication.spec.domain.filter(pl.col("q") > 0)
        .with_columns(pl.col("q") / pl.col("q").sum().over("attribute", "subcategory"))
        .join(truth.select(keys), on=["attribute", "subcategory", "item"])
        .select(*keys, pl.lit("prior").alias("method"), pl.col("q").alias("estimate"))
    )
    joined = pl.concat([points, prior]).join(truth, on=keys, how="inner")
    error = (pl.col("estimate") - pl.col("truth")).abs()
    return (
        joined.group_by("attribute", "subcategory", "epsilon", "method")
        .agg((0.5 * error.sum()).alias("tv_error"), error.max().alias("max_abs_error"))
        .sort("attribute", "subcategory", "epsilon", "method")
        .select(list(ERROR_SCHEMA))
    )


def summarise_errors(errors: pl.DataFrame) -> pl.DataFrame:
    """Per ε and method: the mean and largest TV error over subcategories."""
    return (
        errors.group_by("epsilon", "method")
        .agg(
            pl.col("tv_error").mean().alias("mean_tv_error"),
            pl.col("tv_error").max().alias("max_tv_error"),
            pl.len().alias("subcategories"),
        )
        .sort("epsilon", "method")
    )
