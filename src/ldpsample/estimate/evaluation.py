"""The evaluation side (it reads the private histograms, so nothing here is publishable): each
estimator's error against the truth, per (attribute, subcategory, ε) and per ε, so that users
see when to trust an estimate.

The truth of a cell is what the estimators target: the mean over the cell's releasing users of
their distributions ``p_u`` on the spec's items of ``q > 0``, with ``p_u := q`` for a user
without data there (hidden membership) and a user's mass on items of ``q = 0`` spread as ``q``
(such items are never released; ``q K = q``). Histograms rows outside the spec's domain are not
used, as in :func:`ldpsample.publish.release_items`. For a joint release the truth is the mean
of the releasing users' distributions on the joint (subcategory, item) domain, reported as its
subcategory shares and its conditional distribution within each subcategory (what
:mod:`~ldpsample.estimate.table` reports for a joint release).
"""

from __future__ import annotations

import polars as pl

from ldpsample.estimate.publication import Publication
from ldpsample.estimate.table import CONDITIONAL, ITEM, SHARE, Estimates
from ldpsample.publish.spec import JOINT_LABEL

#: Stands for the null item of a share row while joining (not an item of any table).
_NO_ITEM = "\x00share"

__all__ = [
    "ERROR_SCHEMA",
    "estimator_errors",
    "histogram_frame",
    "population_truth",
    "summarise_errors",
]

#: One row per (attribute, subcategory, ε, quantity, method): TV and largest absolute error.
ERROR_SCHEMA: dict[str, pl.DataType] = {
    "attribute": pl.String(),
    "subcategory": pl.String(),
    "epsilon": pl.Float64(),
    "quantity": pl.String(),
    "method": pl.String(),
    "tv_error": pl.Float64(),
    "max_abs_error": pl.Float64(),
}


def histogram_frame(histograms: pl.DataFrame) -> pl.DataFrame:
    """The private histograms' columns ``user, attribute, subcategory, item, count`` with the
    types the estimators' truth is computed in (strings, counts as floats)."""
    return histograms.select(
        pl.col("user").cast(pl.String),
        pl.col("attribute").cast(pl.String),
        pl.col("subcategory").cast(pl.String),
        pl.col("item").cast(pl.String),
        pl.col("count").cast(pl.Float64),
    )


def _joint_truth(publication: Publication, histograms: pl.DataFrame) -> pl.DataFrame:
    """Per (attribute, ε) the mean of the releasing users' joint distributions over the joint
    domain's items of ``q > 0`` (``attribute, subcategory, item, epsilon, truth``)."""
    joint = publication.spec.joint_domain()
    return _mean_distribution(
        publication.draws,
        joint,
        histograms,
        cell=["attribute"],
        item=["subcategory", "item"],
    )


def _mean_distribution(
    draws: pl.DataFrame,
    domain: pl.DataFrame,
    histograms: pl.DataFrame,
    *,
    cell: list[str],
    item: list[str],
) -> pl.DataFrame:
    """The mean over each (ε, ``cell``)'s releasing users of their normalised histograms on
    ``domain``'s items (``cell + item`` keys, column ``q``) of ``q > 0``, ``p_u := q`` for a
    user without data and mass on items of ``q = 0`` spread as ``q``."""
    positive = domain.filter(pl.col("q") > 0).with_columns(
        (pl.col("q") / pl.col("q").sum().over(cell)).alias("q")
    )
    keys = [*cell, *item]
    hist = histogram_frame(histograms).join(
        domain.select(*keys, pl.col("q").alias("q_all")), on=keys
    )
    hist = hist.filter(pl.col("count") > 0).with_columns(
        (pl.col("count") / pl.col("count").sum().over("user", *cell)).alias("p")
    )
    releasing = draws.select("epsilon", *cell, "user").unique()
    counts = releasing.group_by("epsilon", *cell).agg(pl.len().alias("users"))
    data = releasing.join(hist, on=[*cell, "user"])
    zero_mass = (
        data.filter(pl.col("q_all") == 0)
        .group_by("epsilon", *cell)
        .agg(pl.col("p").sum().alias("zero_mass"))
    )
    with_data = (
        data.select("epsilon", *cell, "user")
        .unique()
        .group_by("epsilon", *cell)
        .agg(pl.len().alias("with_data"))
    )
    mass = (
        data.filter(pl.col("q_all") > 0)
        .group_by("epsilon", *keys)
        .agg(pl.col("p").sum().alias("mass"))
    )
    return (
        counts.join(positive.select(*keys, "q"), on=cell)
        .join(with_data, on=["epsilon", *cell], how="left")
        .join(zero_mass, on=["epsilon", *cell], how="left")
        .join(mass, on=["epsilon", *keys], how="left")
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
    )


def population_truth(publication: Publication, histograms: pl.DataFrame) -> pl.DataFrame:
    """``attribute, subcategory, epsilon, item, quantity, truth`` for every cell of the
    publication: per subcategory (``quantity = "item"``), or for a joint release the shares of
    the mean joint distribution (``"share"``, item null) and its conditionals within each
    subcategory (``"conditional"``)."""
    order = ["attribute", "subcategory", "epsilon", "quantity", "item"]
    if not publication.spec.joint:
        return (
            _mean_distribution(
                publication.draws,
                publication.spec.domain,
                histograms,
                cell=["attribute", "subcategory"],
                item=["item"],
            )
            .with_columns(pl.lit(ITEM).alias("quantity"))
            .select(*order[:3], "item", "quantity", "truth")
            .sort(order)
        )
    joint = _joint_truth(publication, histograms)
    by = ["attribute", "subcategory", "epsilon"]
    share = pl.col("truth").sum().over(by)
    shares = (
        joint.group_by(by)
        .agg(pl.col("truth").sum())
        .with_columns(pl.lit(None, dtype=pl.String).alias("item"), pl.lit(SHARE).alias("quantity"))
    )
    conditional = joint.with_columns(
        (pl.col("truth") / share).alias("truth"), pl.lit(CONDITIONAL).alias("quantity")
    )
    columns = [*by, "item", "quantity", "truth"]
    return pl.concat([shares.select(columns), conditional.select(columns)]).sort(
        order, nulls_last=False
    )


def estimator_errors(
    publication: Publication, estimates: Estimates, histograms: pl.DataFrame
) -> pl.DataFrame:
    """Every estimator's error (:data:`ERROR_SCHEMA`) against :func:`population_truth`, and the
    error of reporting the prior itself (method ``prior``: ``q``, or for a joint release the
    shares ``π`` and each ``q_s``). A joint release's share errors are one row per (attribute,
    ε, method), subcategory :data:`~ldpsample.publish.spec.JOINT_LABEL` (the TV distance
    between the share vectors); its conditionals one per subcategory.

    Parameters
    ----------
    publication
        The release (:func:`~ldpsample.estimate.read_publication`).
    estimates
        Its :func:`~ldpsample.estimate.estimate_publication`.
    histograms
        The private ``user, attribute, subcategory, item, count`` rows the release drew from.
    """
    keys = ["attribute", "subcategory", "epsilon", "quantity", "item"]
    truth = population_truth(publication, histograms).with_columns(
        pl.col("item").fill_null(_NO_ITEM)
    )
    points = (
        estimates.table.with_columns(pl.col("item").fill_null(_NO_ITEM))
        .select(*keys, "method", "estimate")
        .unique([*keys, "method"], keep="first", maintain_order=True)
    )
    spec = publication.spec
    cells = truth.select(keys)
    conditional_q = spec.domain.filter(pl.col("q") > 0).with_columns(
        pl.col("q") / pl.col("q").sum().over("attribute", "subcategory")
    )
    if spec.joint:
        shares = pl.DataFrame(
            [(a, s, v) for a, subs in spec.shares.items() for s, v in subs.items()],
            schema={"attribute": pl.String(), "subcategory": pl.String(), "q": pl.Float64()},
            orient="row",
        ).with_columns(pl.lit(_NO_ITEM).alias("item"), pl.lit(SHARE).alias("quantity"))
        prior_values = pl.concat(
            [
                shares.select("attribute", "subcategory", "item", "quantity", "q"),
                conditional_q.select(
                    "attribute", "subcategory", "item", pl.lit(CONDITIONAL).alias("quantity"), "q"
                ),
            ]
        )
    else:
        prior_values = conditional_q.select(
            "attribute", "subcategory", "item", pl.lit(ITEM).alias("quantity"), "q"
        )
    prior = prior_values.join(cells, on=["attribute", "subcategory", "item", "quantity"]).select(
        *keys, pl.lit("prior").alias("method"), pl.col("q").alias("estimate")
    )
    joined = pl.concat([points, prior]).join(truth, on=keys, how="inner")
    error = (pl.col("estimate") - pl.col("truth")).abs()
    return (
        joined.with_columns(
            pl.when(pl.col("quantity") == SHARE)
            .then(pl.lit(JOINT_LABEL))
            .otherwise(pl.col("subcategory"))
            .alias("subcategory")
        )
        .group_by("attribute", "subcategory", "epsilon", "quantity", "method")
        .agg((0.5 * error.sum()).alias("tv_error"), error.max().alias("max_abs_error"))
        .sort("attribute", "subcategory", "epsilon", "quantity", "method")
        .select(list(ERROR_SCHEMA))
    )


def summarise_errors(errors: pl.DataFrame) -> pl.DataFrame:
    """Per ε, quantity and method: the mean and largest TV error over subcategories."""
    return (
        errors.group_by("epsilon", "quantity", "method")
        .agg(
            pl.col("tv_error").mean().alias("mean_tv_error"),
            pl.col("tv_error").max().alias("max_tv_error"),
            pl.len().alias("subcategories"),
        )
        .sort("epsilon", "quantity", "method")
    )
