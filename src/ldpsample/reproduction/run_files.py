"""Reading this run's result files for the claims (only files under the results folder).

A file a check needs but this run did not write raises :class:`Missing`, so the row says
``not run`` naming it. The per-user tables of the real-data stages are joined with their priors
and histograms here, to give each user's ``TV(p, q)`` without building a dense ``p``.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ldpsample.reproduction.outcome import Missing

__all__ = [
    "avazu_user_tv_to_prior",
    "movielens_priors",
    "movielens_user_tv_to_prior",
    "read_result",
    "subcategory_priors",
    "tv_to_prior",
]


def read_result(results: Path, name: str) -> pl.DataFrame:
    """``results/<name>`` as a frame (CSV or parquet); :class:`Missing` when absent."""
    path = Path(results) / name
    if not path.is_file():
        raise Missing(f"{name} not in this run's results")
    if name.endswith(".parquet"):
        return pl.read_parquet(path)
    return pl.read_csv(path)


def subcategory_priors(histograms: pl.DataFrame, priors: pl.DataFrame, kind: str) -> pl.DataFrame:
    """The prior of every subcategory as the metrics job used it (``kind`` as
    ``ldpsample.events.scoring.metrics``): ``table`` is the run's ``priors.parquet``; ``pooled`` the
    subcategory's summed counts, ``user_mean`` the mean of its users' normalised histograms,
    both recomputed from ``histograms.parquet`` (the stage writes no prior for them).

    Returns
    -------
    polars.DataFrame
        ``attribute, subcategory, item, q`` sorted.
    """
    keys = ["attribute", "subcategory"]
    if kind == "table":
        return priors.select(*keys, "item", "q").sort(*keys, "item")
    if kind == "pooled":
        mass = histograms.group_by(*keys, "item").agg(pl.col("count").sum().alias("q"))
    elif kind == "user_mean":
        p = histograms.with_columns(
            p=pl.col("count") / pl.col("count").sum().over(*keys, "user"),
            users=pl.col("user").n_unique().over(*keys),
        )
        mass = p.group_by(*keys, "item").agg((pl.col("p") / pl.col("users")).sum().alias("q"))
    else:
        raise Missing(f"prior {kind!r} is not recomputed for the claims")
    return mass.with_columns(pl.col("q") / pl.col("q").sum().over(*keys)).sort(*keys, "item")


def tv_to_prior(histograms: pl.DataFrame, priors: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """``TV(p, q)`` of every user: ``p`` the user's normalised counts, ``q`` the prior of its
    subcategory (``keys``: the columns naming a subcategory, e.g. ``attribute, subcategory``).

    ``TV = (sum_{i in supp p} |p_i - q_i| + 1 - sum_{i in supp p} q_i) / 2``: items the user
    never chose contribute their prior mass, so no dense ``p`` is needed.

    Returns
    -------
    polars.DataFrame
        ``keys``, ``user``, ``tv_to_prior``.
    """
    p = histograms.with_columns(p=pl.col("count") / pl.col("count").sum().over(*keys, "user"))
    joined = p.join(priors.select(*keys, "item", "q"), on=[*keys, "item"], how="left")
    return (
        joined.with_columns(pl.col("q").fill_null(0.0))
        .group_by(*keys, "user")
        .agg(
            ((pl.col("p") - pl.col("q")).abs().sum() + 1.0 - pl.col("q").sum())
            .truediv(2.0)
            .alias("tv_to_prior")
        )
        .sort(*keys, "user")
    )


def _priors_and_histograms(results: Path, work: str, kind: str) -> tuple[pl.DataFrame, ...]:
    histograms = read_result(results, f"{work}/histograms.parquet")
    priors = subcategory_priors(histograms, read_result(results, f"{work}/priors.parquet"), kind)
    return histograms, priors


def movielens_priors(results: Path, variant: str, kind: str) -> pl.DataFrame:
    """One MovieLens variant's prior per age group (``attribute, subcategory, item, q``)."""
    return _priors_and_histograms(results, f"movielens/{variant}/work", kind)[1]


def movielens_user_tv_to_prior(results: Path, variant: str, kind: str) -> pl.DataFrame:
    """One MovieLens variant's per-user ``TV(p, pK)`` of the minimax sampler beside
    ``TV(p, q)`` (``kind``: the variant's prior): columns ``epsilon, group, user, tv,
    tv_to_prior``."""
    folder = f"movielens/{variant}"
    per_user = read_result(results, f"{folder}/per_user.parquet")
    prior_tv = tv_to_prior(
        *_priors_and_histograms(results, f"{folder}/work", kind), ["attribute", "subcategory"]
    ).rename({"subcategory": "group"})
    return per_user.select(
        "epsilon", "group", pl.col("user_id").cast(pl.String).alias("user"), tv="minimax"
    ).join(prior_tv.drop("attribute"), on=["group", "user"], how="inner")


def avazu_user_tv_to_prior(
    results: Path, folder: str, attributes: list[str], kind: str
) -> pl.DataFrame:
    """One Avazu run's per-user ``TV(p, pK)`` of the minimax sampler beside ``TV(p, q)``
    (``kind``: the run's prior): columns ``epsilon, attribute, subcategory, user, tv,
    tv_to_prior`` (empty without cases)."""
    per_user = read_result(results, f"{folder}/per_user.parquet")
    parts = [
        tv_to_prior(
            *_priors_and_histograms(results, f"{folder}/work/attribute~{a}", kind),
            ["attribute", "subcategory"],
        )
        for a in attributes
    ]
    schema = {"attribute": pl.String, "subcategory": pl.String, "user": pl.String}
    prior_tv = pl.concat(
        [part.cast(schema) for part in parts] or [pl.DataFrame(schema=schema)], how="diagonal"
    )
    if "tv_to_prior" not in prior_tv.columns:
        prior_tv = prior_tv.with_columns(tv_to_prior=pl.lit(None, pl.Float64))
    return per_user.select(
        "epsilon",
        pl.col("attribute").cast(pl.String),
        pl.col("subcategory").cast(pl.String),
        pl.col("user").cast(pl.String),
        tv="tv_minimax",
    ).join(prior_tv, on=["attribute", "subcategory", "user"], how="inner")
