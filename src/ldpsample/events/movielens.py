"""MovieLens as events tables: what the MovieLens experiment needs from the official files,
turned into the layout of ``events:`` (one row per (user, genre)).

Both tables have ``user_id, genre, age_group`` and two weights: ``ratings`` (how many of the
user's ratings are of movies in the genre; the published code, ``movielens.weight: count``) and
``rating_sum`` (the sum of those ratings; the paper text, ``weight: rating``). The ML-1M table
is the private side; the ML-100K table is the public prior of the AISTATS version
(``prior: {path: <ml-100k table>, ...}``); the arXiv version's ML-1M prior is ``prior: pooled``.
Only the 18 genres common to both datasets appear.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import polars as pl

from ldpsample.datasets.movielens import _masses_with_groups, common_genres, read_ml1m, read_ml100k

__all__ = ["MOVIELENS_EVENTS_SCHEMA", "movielens_events"]

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
