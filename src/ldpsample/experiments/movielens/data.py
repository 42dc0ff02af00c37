"""MovieLens: private genre histograms per ML-1M user, public priors per age group.

The MovieLens experiment of Zamanlooy, Diaz & Asoodeh (2025) treats each ML-1M user's genre
histogram as the private distribution ``p`` and a histogram pooled over the user's age group
as the public prior ``q``:

* **Genres**: the 18 genres common to ML-100K and ML-1M (ML-100K's ``unknown`` is dropped; both
  spell the others identically, e.g. ``Children's``). A movie counts once for every genre it
  lists, as in the published code.
* **Private p** (per ML-1M user): genre masses normalised to sum 1, where a rating of a movie adds
  to each of its genres either 1 (``weight="count"``, published code, default) or the rating
  1–5 (``weight="rating"``, the paper's text).
* **Public q** (per age group): the same masses summed over every user of the group and
  normalised ("pooled"), from ML-100K (``prior_source="ml-100k"``, AISTATS version, default) or
  from ML-1M itself (``prior_source="ml-1m"``, arXiv version).
* **Age groups**: ``0-24`` (ML-1M codes 1 "Under 18" and 18 "18-24"; ML-100K ages up to 24),
  ``25-34``, ``35-44``, ``45-49``, ``50-54``, ``55+`` (ML-1M codes are the lower ends of their
  ranges, so one rule maps raw ages and codes alike).

The pipeline turns the parsed files into events tables
(:mod:`ldpsample.experiments.movielens.tables`, one
row per (user, genre)) and runs them through the events stage; this module keeps the readers
(:func:`read_ml1m`, :func:`read_ml100k`), the common genres and the per-user genre masses it
uses. The tests' oracle (``tests/real_data_oracle.py``) builds the same histograms and priors
as matrices, independently.

Files are parsed strictly, and every fault is a ``ValueError`` naming the file and line: a
line with the wrong number of fields, a non-integer field, an id that is not a positive
integer, a rating outside 1-5, a user or movie listed twice, a (user, movie) pair rated twice,
and a rating by a user or of a movie that the user or movie file does not list (both are
errors: the official files are consistent, so either means a damaged or mismatched copy).
Blank lines are ignored wherever they are (a trailing one is common and harmless); line
numbers count them. A partial ``ratings.dat`` (fewer rows than the official 1,000,209) is
accepted and logged as partial.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import polars as pl

from ldpsample.datasets._files import first_bad_line, read_raw_bytes, read_text_table
from ldpsample.datasets.registry import OFFICIAL_ROW_COUNTS

__all__ = [
    "AGE_GROUPS",
    "COMMON_GENRES",
    "ML1M_AGE_CODES",
    "ML1M_GENRES",
    "age_group",
    "common_genres",
    "genre_masses",
    "read_ml1m",
    "read_ml100k",
]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]
Weight = Literal["count", "rating"]

#: The 18 genres common to ML-100K and ML-1M, in ML-100K's ``u.genre`` order (alphabetical).
COMMON_GENRES: tuple[str, ...] = (
    "Action",
    "Adventure",
    "Animation",
    "Children's",
    "Comedy",
    "Crime",
    "Documentary",
    "Drama",
    "Fantasy",
    "Film-Noir",
    "Horror",
    "Musical",
    "Mystery",
    "Romance",
    "Sci-Fi",
    "Thriller",
    "War",
    "Western",
)

#: The 18 genres the ML-1M README documents (the same names as ML-100K's, without "unknown").
ML1M_GENRES: tuple[str, ...] = COMMON_GENRES

#: Age groups in order; the label of the youngest includes ML-1M's "Under 18".
AGE_GROUPS: tuple[str, ...] = ("0-24", "25-34", "35-44", "45-49", "50-54", "55+")
_AGE_UPPER = (24, 34, 44, 49, 54)

#: ML-1M ``users.dat`` age codes (README): 1 "Under 18", 18 "18-24", ..., 56 "56+".
ML1M_AGE_CODES = (1, 18, 25, 35, 45, 50, 56)


def age_group(age: int) -> str:
    """Age group label of a raw age (ML-100K) or an ML-1M age code.

    Examples
    --------
    >>> age_group(1), age_group(18), age_group(24), age_group(25), age_group(56)
    ('0-24', '0-24', '0-24', '25-34', '55+')
    """
    for label, upper in zip(AGE_GROUPS, _AGE_UPPER, strict=False):
        if age <= upper:
            return label
    return AGE_GROUPS[-1]


def _age_group_expr(column: str) -> pl.Expr:
    expr = pl.when(pl.col(column) <= _AGE_UPPER[0]).then(pl.lit(AGE_GROUPS[0]))
    for label, upper in zip(AGE_GROUPS[1:], _AGE_UPPER[1:], strict=False):
        expr = expr.when(pl.col(column) <= upper).then(pl.lit(label))
    return expr.otherwise(pl.lit(AGE_GROUPS[-1]))


# --------------------------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------------------------


def _lines(path: Path, encoding: str) -> list[tuple[int, list[str]]]:
    """Non-empty lines of a small file as (1-based line number, text)."""
    text = read_raw_bytes(path).decode(encoding)
    return [(i, line) for i, line in enumerate(text.splitlines(), start=1) if line.strip()]


def _split(path: Path, lineno: int, line: str, sep: str, n_fields: int) -> list[str]:
    fields = line.split(sep)
    if len(fields) != n_fields:
        raise ValueError(
            f"{path}, line {lineno}: expected {n_fields} fields separated by {sep!r}, "
            f"got {len(fields)}: {line!r:.200}"
        )
    return fields


def _int(path: Path, lineno: int, name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ValueError(
            f"{path}, line {lineno}, field {name!r}: expected an integer, got {value!r}"
        ) from None


def _id(path: Path, lineno: int, name: str, value: str) -> int:
    """A MovieLens id: a positive integer (the official ids start at 1)."""
    number = _int(path, lineno, name, value)
    if number < 1:
        raise ValueError(
            f"{path}, line {lineno}, field {name!r}: {number} is not an id (ids are 1, 2, ...)"
        )
    return number


def _listed_once(path: Path, rows: list[tuple[int, int]], what: str) -> None:
    """``rows`` of (line, id) of a user or movie file: each id on one line only."""
    first: dict[int, int] = {}
    for lineno, number in rows:
        if number in first:
            raise ValueError(
                f"{path}, line {lineno}: {what} {number} is listed again (first on line "
                f"{first[number]}); each {what} has one line in the official file"
            )
        first[number] = lineno


def _read_ratings(path: Path, sep: str) -> pl.DataFrame:
    """line, user_id, movie_id, rating from a ratings file (``u.data`` or ``ratings.dat[.gz]``).

    Fast path with polars (blank lines dropped, line numbers kept); on any other parse problem
    the file is re-read line by line to name the first bad line. Ids must be positive, ratings
    1-5, and each (user, movie) pair rated once (:func:`_check_ratings`).
    """
    data = read_raw_bytes(path)
    if sep != "\t":
        data = data.replace(sep.encode(), b"\t")
    schema = {
        "user_id": pl.Int64,
        "movie_id": pl.Int64,
        "rating": pl.Int64,
        "timestamp": pl.Int64,
    }
    try:
        frame = read_text_table(data, schema, separator="\t")
        if frame.null_count().sum_horizontal().item() != 0:
            raise ValueError("empty fields")
    except Exception:
        _diagnose_ratings(path, data.decode("latin-1"), sep)
        raise
    _check_ratings(path, frame)
    return frame.select("line", "user_id", "movie_id", "rating")


def _diagnose_ratings(path: Path, text: str, sep: str) -> None:
    fields = [(name, int) for name in ("user_id", "movie_id", "rating", "timestamp")]
    bad = first_bad_line(path, text, sep="\t", fields=fields, shown_sep=sep)
    if bad is not None:
        raise bad


def _first(frame: pl.DataFrame, condition: pl.Expr) -> dict | None:
    """The first row (in file order) where ``condition`` holds, or None."""
    rows = frame.filter(condition).head(1)
    return rows.row(0, named=True) if rows.height else None


def _check_ratings(path: Path, frame: pl.DataFrame) -> None:
    """Ids positive, ratings 1-5, no (user, movie) pair twice: else name the first bad line."""
    for name in ("user_id", "movie_id"):
        row = _first(frame, pl.col(name) < 1)
        if row is not None:
            raise ValueError(
                f"{path}, line {row['line']}, field {name!r}: {row[name]} is not an id (ids "
                "are 1, 2, ...)"
            )
    row = _first(frame, ~pl.col("rating").is_between(1, 5))
    if row is not None:
        raise ValueError(
            f"{path}, line {row['line']}, field 'rating': {row['rating']} is not a rating "
            f"(1-5; user {row['user_id']}, movie {row['movie_id']})"
        )
    row = _first(frame, ~pl.struct("user_id", "movie_id").is_first_distinct())
    if row is not None:
        pair = (pl.col("user_id") == row["user_id"]) & (pl.col("movie_id") == row["movie_id"])
        first = _first(frame, pair)
        assert first is not None  # the pair's first occurrence
        raise ValueError(
            f"{path}, line {row['line']}: user {row['user_id']} rates movie {row['movie_id']} "
            f"again (first on line {first['line']}); each (user, movie) pair "
            "is rated once in the official file"
        )


def _check_listed(
    path: Path, ratings: pl.DataFrame, name: str, listed: pl.Series, listing: Path
) -> None:
    """Every rating's user (movie) is in the user (movie) file: else name the first line."""
    row = _first(ratings, ~pl.col(name).is_in(listed.implode()))
    if row is not None:
        what = name.removesuffix("_id")
        raise ValueError(
            f"{path}, line {row['line']}, field {name!r}: {what} {row[name]} is not listed in "
            f"{listing} (the official files list every rated {what})"
        )


def _genre_list(path: Path) -> list[str]:
    """ML-100K ``u.genre``: genre names in index order (validated)."""
    out: dict[int, str] = {}
    for lineno, line in _lines(path, "latin-1"):
        name, index = _split(path, lineno, line, "|", 2)
        out[_int(path, lineno, "index", index)] = name
    if sorted(out) != list(range(len(out))):
        raise ValueError(f"{path}: genre indices must be 0..{len(out) - 1}, got {sorted(out)}")
    return [out[i] for i in range(len(out))]


def read_ml100k(files: Mapping[str, PathLike]) -> dict[str, pl.DataFrame | list[str]]:
    """Parse ML-100K.

    Parameters
    ----------
    files
        ``ratings`` (``u.data``), ``items`` (``u.item``), ``users`` (``u.user``) and
        ``genres`` (``u.genre``), e.g. from
        :func:`ldpsample.datasets.locate_dataset_files` ``(data_dir, "ml-100k")``.

    Returns
    -------
    dict
        ``ratings`` (user_id, movie_id, rating), ``users`` (user_id, age), ``movie_genres``
        (movie_id, genre; one row per listed genre) and ``genres`` (all names of ``u.genre``).
    """
    genres_path, items_path = Path(files["genres"]), Path(files["items"])
    users_path, ratings_path = Path(files["users"]), Path(files["ratings"])
    genres = _genre_list(genres_path)
    pairs: list[tuple[int, str]] = []
    movies = []
    for lineno, line in _lines(items_path, "latin-1"):
        fields = _split(items_path, lineno, line, "|", 5 + len(genres))
        movie = _id(items_path, lineno, "movie_id", fields[0])
        movies.append((lineno, movie))
        for genre, flag in zip(genres, fields[5:], strict=True):
            if flag not in ("0", "1"):
                raise ValueError(
                    f"{items_path}, line {lineno}, genre {genre!r}: expected 0 or 1, got {flag!r}"
                )
            if flag == "1":
                pairs.append((movie, genre))
    _listed_once(items_path, movies, "movie")
    users = []
    for lineno, line in _lines(users_path, "latin-1"):
        fields = _split(users_path, lineno, line, "|", 5)
        users.append(
            (
                lineno,
                _id(users_path, lineno, "user_id", fields[0]),
                _int(users_path, lineno, "age", fields[1]),
            )
        )
    _listed_once(users_path, [(lineno, user) for lineno, user, _ in users], "user")
    ratings = _read_ratings(ratings_path, "\t")
    return _parsed(
        "ml-100k", ratings_path, ratings, users, users_path, movies, items_path, pairs, genres
    )


def read_ml1m(files: Mapping[str, PathLike]) -> dict[str, pl.DataFrame | list[str]]:
    """Parse ML-1M.

    Parameters
    ----------
    files
        ``ratings`` (``ratings.dat`` or ``ratings.dat.gz``), ``movies`` and ``users``.

    Returns
    -------
    dict
        ``ratings`` (user_id, movie_id, rating), ``users`` (user_id, age = ML-1M age code),
        ``movie_genres`` (movie_id, genre) and ``genres`` (:data:`ML1M_GENRES`, the 18 genres
        of the ML-1M README; others found in ``movies.dat`` are logged and never counted).
    """
    movies_path, users_path = Path(files["movies"]), Path(files["users"])
    ratings_path = Path(files["ratings"])
    pairs: list[tuple[int, str]] = []
    movies = []
    for lineno, line in _lines(movies_path, "latin-1"):
        head, _, genres_field = line.rpartition("::")
        movie_field, sep, _title = head.partition("::")
        if not sep or not genres_field:
            raise ValueError(
                f"{movies_path}, line {lineno}: expected MovieID::Title::Genres, got {line!r:.200}"
            )
        movie = _id(movies_path, lineno, "movie_id", movie_field)
        movies.append((lineno, movie))
        pairs.extend((movie, genre) for genre in genres_field.split("|"))
    _listed_once(movies_path, movies, "movie")
    users = []
    for lineno, line in _lines(users_path, "latin-1"):
        fields = _split(users_path, lineno, line, "::", 5)
        code = _int(users_path, lineno, "age", fields[2])
        if code not in ML1M_AGE_CODES:
            raise ValueError(
                f"{users_path}, line {lineno}, field 'age': {code} is not an ML-1M age code "
                f"{ML1M_AGE_CODES}"
            )
        users.append((lineno, _id(users_path, lineno, "user_id", fields[0]), code))
    _listed_once(users_path, [(lineno, user) for lineno, user, _ in users], "user")
    ratings = _read_ratings(ratings_path, "::")
    parsed = _parsed(
        "ml-1m", ratings_path, ratings, users, users_path, movies, movies_path, pairs, None
    )
    movie_genres = parsed["movie_genres"].unique(maintain_order=True)
    undocumented = sorted(set(movie_genres["genre"].to_list()) - set(ML1M_GENRES))
    if undocumented:
        log.warning("%s lists genres the ML-1M README does not: %s", movies_path, undocumented)
    return {**parsed, "movie_genres": movie_genres, "genres": list(ML1M_GENRES)}


def _parsed(
    dataset: str,
    ratings_path: Path,
    ratings: pl.DataFrame,
    users: list[tuple[int, int, int]],
    users_path: Path,
    movies: list[tuple[int, int]],
    movies_path: Path,
    pairs: list[tuple[int, str]],
    genres: list[str] | None,
) -> dict[str, pl.DataFrame | list[str]]:
    """A reader's result, once every rating's user and movie is checked to be listed."""
    user_frame = pl.DataFrame(
        [(user, age) for _, user, age in users],
        schema={"user_id": pl.Int64, "age": pl.Int64},
        orient="row",
    )
    movie_ids = pl.Series("movie_id", [movie for _, movie in movies], dtype=pl.Int64)
    _check_listed(ratings_path, ratings, "user_id", user_frame["user_id"], users_path)
    _check_listed(ratings_path, ratings, "movie_id", movie_ids, movies_path)
    _log_partial(dataset, "ratings", ratings_path, ratings.height)
    return {
        "ratings": ratings.select("user_id", "movie_id", "rating"),
        "users": user_frame,
        "movie_genres": pl.DataFrame(
            pairs, schema={"movie_id": pl.Int64, "genre": pl.String}, orient="row"
        ),
        "genres": genres or [],
    }


def _log_partial(dataset: str, role: str, path: Path, rows: int) -> bool:
    official = OFFICIAL_ROW_COUNTS[(dataset, role)]
    if rows < official:
        log.warning(
            "%s %s (%s) is a PARTIAL copy: %d of %d official rows (%.1f %%); results are not "
            "the paper's",
            dataset,
            role,
            path,
            rows,
            official,
            100 * rows / official,
        )
        return True
    return False


def common_genres(ml100k_genres: list[str], ml1m_genres: list[str]) -> tuple[str, ...]:
    """Genres listed by both datasets, in ML-100K order (``unknown`` is not an ML-1M genre)."""
    ml1m = set(ml1m_genres)
    common = tuple(g for g in ml100k_genres if g in ml1m and g != "unknown")
    dropped = sorted(set(ml100k_genres).symmetric_difference(ml1m) - set(common))
    if dropped:
        log.info("genres not common to both datasets (dropped): %s", dropped)
    return common


# --------------------------------------------------------------------------------------------
# genre masses
# --------------------------------------------------------------------------------------------


def genre_masses(
    ratings: pl.DataFrame,
    movie_genres: pl.DataFrame,
    *,
    genres: tuple[str, ...],
    weight: Weight = "count",
) -> pl.DataFrame:
    """Unnormalised genre mass per user: long frame (user_id, genre, mass).

    Each rating adds ``1`` (``weight="count"``) or its rating (``weight="rating"``) to every
    genre in ``genres`` that its movie lists. Ratings of movies absent from ``movie_genres`` are
    dropped and counted in the log.
    """
    if weight not in ("count", "rating"):
        raise ValueError(f"weight must be 'count' or 'rating', got {weight!r}")
    membership = movie_genres.filter(pl.col("genre").is_in(list(genres)))
    unknown = ratings.join(movie_genres.select("movie_id").unique(), on="movie_id", how="anti")
    if unknown.height:
        log.warning("%d ratings are of movies missing from the movie list; ignored", unknown.height)
    value = (
        pl.len().cast(pl.Float64) if weight == "count" else pl.col("rating").sum().cast(pl.Float64)
    )
    return (
        ratings.join(membership, on="movie_id", how="inner")
        .group_by("user_id", "genre")
        .agg(value.alias("mass"))
        .sort("user_id", "genre")
    )


def _masses_with_groups(
    parsed: Mapping[str, object], genres: tuple[str, ...], weight: Weight, name: str
) -> pl.DataFrame:
    """(user_id, group, genre, mass) of a reader's result: its readers have checked that every
    rating's user is listed, so each rating has an age group."""
    ratings: pl.DataFrame = parsed["ratings"]  # type: ignore[assignment]
    users: pl.DataFrame = parsed["users"]  # type: ignore[assignment]
    movie_genres: pl.DataFrame = parsed["movie_genres"]  # type: ignore[assignment]
    without = users.join(ratings.select("user_id").unique(), on="user_id", how="anti").height
    if without:
        log.info("%s: %d listed users have no ratings in this copy (not used)", name, without)
    masses = genre_masses(ratings, movie_genres, genres=genres, weight=weight)
    groups = users.select("user_id", _age_group_expr("age").alias("group"))
    return masses.join(groups, on="user_id", how="inner").select(
        "user_id", "group", "genre", "mass"
    )
