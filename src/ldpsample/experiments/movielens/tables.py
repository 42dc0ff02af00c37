"""MovieLens as events tables: what the MovieLens experiment needs from the official files,
turned into the layout of ``events:`` (one row per (user, genre)).

Both tables have ``user_id, genre, age_group`` and two weights: ``ratings`` (how many of the
user's ratings are of movies in the genre; the published code, ``movielens.weight: count``) and
``rating_sum`` (the sum of those ratings; the paper text, ``weight: rating``). The ML-1M table
is the private side; the ML-100K table is the public prior of the AISTATS version
(``prior: {path: <ml-100k table>, ...}``); the arXiv version's ML-1M prior is ``prior: pooled``.
Only the 18 genres common to both datasets appear.

The MovieLens experiment (``movielens:`` config) runs these tables through the events stage and
publishes its results in the MovieLens layout (``group`` for the age group, ``minimax_kl`` in
the KL table, ``mollifier`` in the summaries): :func:`movielens_per_user`,
:func:`movielens_max_tables`, :func:`movielens_summary`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import polars as pl

from ldpsample.events.outputs.tables import max_table, summary
from ldpsample.experiments.movielens.data import (
    _masses_with_groups,
    common_genres,
    read_ml1m,
    read_ml100k,
)

__all__ = [
    "MOVIELENS_EVENTS_SCHEMA",
    "MOVIELENS_PER_USER_SCHEMA",
    "movielens_events",
    "movielens_max_tables",
    "movielens_per_user",
    "movielens_summary",
]

PathLike = str | os.PathLike[str]

MOVIELENS_EVENTS_SCHEMA: dict[str, pl.DataType] = {
    "user_id": pl.Int64(),
    "genre": pl.String(),
    "age_group": pl.String(),
    "ratings": pl.Float64(),
    "rating_sum": pl.Float64(),
}


def _events(parsed: Mapping[str, object], genres: tuple[str, ...], name: str) -> pl.DataFrame:
    counts = _masses_with_groups(parsed, genres, "count", name).rename({"mass": "ratings"})
    sums = _masses_with_groups(parsed, genres, "rating", name).rename({"mass": "rating_sum"})
    return (
        counts.join(sums, on=["user_id", "group", "genre"], how="inner")
        .rename({"group": "age_group"})
        .select(list(MOVIELENS_EVENTS_SCHEMA))
        .cast(MOVIELENS_EVENTS_SCHEMA)
        .sort("user_id", "genre")
    )


def movielens_events(
    ml1m_files: Mapping[str, PathLike], ml100k_files: Mapping[str, PathLike]
) -> tuple[pl.DataFrame, pl.DataFrame, tuple[str, ...]]:
    """``(ml1m_events, ml100k_events, genres)`` from the official files (see the module doc)."""
    ml1m, ml100k = read_ml1m(ml1m_files), read_ml100k(ml100k_files)
    genres = common_genres(ml100k["genres"], ml1m["genres"])  # type: ignore[arg-type]
    return _events(ml1m, genres, "ml-1m"), _events(ml100k, genres, "ml-100k"), genres


# --------------------------------------------------------------------------------------------
# the MovieLens experiment's published tables, from the events stage's per-user table
# --------------------------------------------------------------------------------------------

#: ``per_user.parquet`` of results/movielens/<variant>/: one row per (ε, user), the divergence
#: under each method (TV: ``minimax``, ``mollifier_tv``; KL: ``minimax_kl``, ``mollifier_kl``).
MOVIELENS_PER_USER_SCHEMA: dict[str, pl.DataType] = {
    "epsilon": pl.Float64(),
    "group": pl.String(),
    "user_id": pl.Int64(),
    "minimax": pl.Float64(),
    "mollifier_tv": pl.Float64(),
    "minimax_kl": pl.Float64(),
    "mollifier_kl": pl.Float64(),
}
#: events column -> MovieLens column of the per-user table
_PER_USER_COLUMNS = {
    "tv_minimax": "minimax",
    "tv_mollifier_tv": "mollifier_tv",
    "kl_minimax": "minimax_kl",
    "kl_mollifier_kl": "mollifier_kl",
}
#: method names of the MovieLens max_kl table
_KL_METHODS = {"minimax": "minimax_kl", "mollifier_kl": "mollifier_kl"}


def movielens_per_user(per_user: pl.DataFrame) -> pl.DataFrame:
    """The events per-user table of the ``age_group`` attribute in the MovieLens layout
    (:data:`MOVIELENS_PER_USER_SCHEMA`, sorted by epsilon, group, user_id)."""
    return (
        per_user.select(
            "epsilon",
            pl.col("subcategory").alias("group"),
            pl.col("user").alias("user_id"),
            *[pl.col(e).alias(m) for e, m in _PER_USER_COLUMNS.items()],
        )
        .cast(MOVIELENS_PER_USER_SCHEMA)
        .sort("epsilon", "group", "user_id")
    )


def _group_table(frame: pl.DataFrame, value: str) -> pl.DataFrame:
    return frame.select(
        "epsilon", pl.col("subcategory").alias("group"), "method", value, "n_users"
    ).sort("epsilon", "group", "method")


def movielens_max_tables(per_user: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(max_tv, max_kl)``: ``epsilon, group, method, max_tv|max_kl, n_users`` per age group, from
    the events per-user table (:func:`ldpsample.events.outputs.tables.max_table`); the KL table's
    methods are ``minimax_kl`` and ``mollifier_kl``."""
    max_tv = _group_table(max_table(per_user, "tv"), "max_tv")
    max_kl = _group_table(
        max_table(per_user, "kl").with_columns(pl.col("method").replace_strict(_KL_METHODS)),
        "max_kl",
    )
    return max_tv, max_kl


def movielens_summary(per_user: pl.DataFrame) -> pl.DataFrame:
    """Win shares and mean improvements per divergence (``tv``, ``kl`` and ``tv+kl``, a case per
    (ε, age group), pooled: per (divergence, ε, age group)): the events summary with the
    mollifiers named ``mollifier``."""
    result = summary(max_table(per_user, "tv"), max_table(per_user, "kl"))
    return result.with_columns(
        pl.col("method").replace({"mollifier_tv": "mollifier", "mollifier_kl": "mollifier"})
    )
