"""MovieLens histograms and priors, checked against plain-Python recomputations."""

from __future__ import annotations

import csv
import functools
import gzip
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from real_data_oracle import build_movielens_data

from ldpsample.datasets import locate_dataset_files
from ldpsample.experiments.movielens.data import AGE_GROUPS, COMMON_GENRES, age_group, read_ml1m

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"real datasets not found at {SHARED} (../shared/data)"
)

# ---------------------------------------------------------------------------------------------
# a tiny hand-made pair of datasets
# ---------------------------------------------------------------------------------------------

GENRE_LINES = ["unknown|0"] + [f"{g}|{i + 1}" for i, g in enumerate(COMMON_GENRES)]


def _item(movie: int, genres: list[str]) -> str:
    flags = ["1" if g in genres else "0" for g in ["unknown", *COMMON_GENRES]]
    return "|".join([str(movie), f"Movie {movie} (1995)", "01-Jan-1995", "", "http://x", *flags])


def write_tiny(tmp_path: Path) -> tuple[dict[str, Path], dict[str, Path]]:
    """ML-100K: users aged 20, 60, 30; ML-1M: users 1 (code 1), 2 (code 25), 3 (code 56)."""
    d100 = tmp_path / "ml-100k"
    d1m = tmp_path / "ml-1m"
    d100.mkdir(parents=True)
    d1m.mkdir(parents=True)
    (d100 / "u.genre").write_text("\n".join(GENRE_LINES) + "\n\n")
    (d100 / "u.item").write_text(
        "\n".join([_item(1, ["Action", "Comedy"]), _item(2, ["Drama"]), _item(3, ["unknown"])])
        + "\n",
        encoding="latin-1",
    )
    (d100 / "u.user").write_text("1|20|M|student|00000\n2|60|F|other|11111\n3|30|F|x|2\n")
    (d100 / "u.data").write_text("1\t1\t4\t0\n1\t2\t2\t0\n2\t2\t5\t0\n2\t3\t1\t0\n3\t1\t3\t0\n")
    (d1m / "movies.dat").write_text(
        "1::Toy: Story (1995)::Action|Comedy\n2::Heat (1995)::Drama\n3::Odd (1990)::Western\n",
        encoding="latin-1",
    )
    (d1m / "users.dat").write_text("1::F::1::10::1\n2::M::25::1::2\n3::M::56::1::3\n")
    with gzip.open(d1m / "ratings.dat.gz", "wt") as handle:
        handle.write("1::1::5::0\n1::2::1::0\n2::2::3::0\n2::3::3::0\n3::3::2::0\n")
    files100 = {
        "ratings": d100 / "u.data",
        "items": d100 / "u.item",
        "users": d100 / "u.user",
        "genres": d100 / "u.genre",
    }
    files1m = {
        "ratings": d1m / "ratings.dat.gz",
        "movies": d1m / "movies.dat",
        "users": d1m / "users.dat",
    }
    return files1m, files100


def row(frame: pl.DataFrame, key: str, value, genres=COMMON_GENRES) -> dict[str, float]:
    r = frame.filter(pl.col(key) == value).row(0, named=True)
    return {g: r[g] for g in genres if r[g] != 0}


def test_tiny_count_weight_and_ml100k_prior(tmp_path):
    ml1m, ml100k = write_tiny(tmp_path)
    data = build_movielens_data(ml1m, ml100k)
    assert data.genres == COMMON_GENRES and len(data.genres) == 18
    assert data.users["user_id"].to_list() == [1, 2, 3]
    assert data.users["group"].to_list() == ["0-24", "25-34", "55+"]
    assert row(data.users, "user_id", 1) == {"Action": 1 / 3, "Comedy": 1 / 3, "Drama": 1 / 3}
    assert row(data.users, "user_id", 2) == {"Drama": 0.5, "Western": 0.5}
    # ML-100K pooled counts: age 20 → Action, Comedy, Drama once each; age 60 → Drama (movie 3
    # is "unknown" only, so it adds nothing).
    assert row(data.priors, "group", "0-24") == {"Action": 1 / 3, "Comedy": 1 / 3, "Drama": 1 / 3}
    assert row(data.priors, "group", "55+") == {"Drama": 1.0}
    assert row(data.priors, "group", "25-34") == {"Action": 0.5, "Comedy": 0.5}
    assert data.groups == ("0-24", "25-34", "55+")
    assert data.priors["group"].to_list() == ["0-24", "25-34", "55+"]
    assert data.priors["n_users"].to_list() == [1, 1, 1]


def test_tiny_missing_prior_group_is_an_error(tmp_path):
    ml1m, ml100k = write_tiny(tmp_path)
    ml100k["users"].write_text("1|20|M|student|00000\n2|60|F|other|11111\n")
    ml100k["ratings"].write_text("1\t1\t4\t0\n")
    with pytest.raises(ValueError, match=r"no ml-100k ratings for age groups \['25-34', '55\+'\]"):
        build_movielens_data(ml1m, ml100k)


def test_tiny_rating_weight_and_ml1m_prior(tmp_path):
    ml1m, ml100k = write_tiny(tmp_path)
    data = build_movielens_data(ml1m, ml100k, weight="rating", prior_source="ml-1m")
    assert row(data.users, "user_id", 1) == pytest.approx(
        {"Action": 5 / 11, "Comedy": 5 / 11, "Drama": 1 / 11}
    )
    # ML-1M pooled over group 55+ (user 3 only) = user 3's own histogram.
    assert row(data.priors, "group", "55+") == {"Western": 1.0}
    assert data.priors["n_users"].to_list() == [1, 1, 1]
    assert data.priors["mass"].to_list() == [11.0, 6.0, 2.0]
    np.testing.assert_allclose(data.prior("0-24"), data.user_matrix("0-24")[1][0])


def test_age_groups():
    assert [age_group(a) for a in (1, 7, 18, 24, 25, 34, 35, 44, 45, 49, 50, 54, 55, 56, 73)] == [
        "0-24", "0-24", "0-24", "0-24", "25-34", "25-34", "35-44", "35-44",
        "45-49", "45-49", "50-54", "50-54", "55+", "55+", "55+",
    ]  # fmt: skip


def test_zero_mass_user_is_skipped_and_counted(tmp_path, caplog):
    ml1m, ml100k = write_tiny(tmp_path)
    # User 4 only rated a movie whose genre is not among the 18.
    with open(ml1m["movies"], "a", encoding="latin-1") as handle:
        handle.write("4::Odd genre (2000)::Unlisted\n")
    with open(ml1m["users"], "a") as handle:
        handle.write("4::M::18::1::4\n")
    with gzip.open(ml1m["ratings"], "at") as handle:
        handle.write("4::4::3::0\n")
    data = build_movielens_data(ml1m, ml100k)
    assert data.skipped_users == 1 and 4 not in data.users["user_id"].to_list()
    assert "1 ML-1M users have zero mass" in caplog.text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("1::1::5::0\n1::2::5\n", r"ratings.dat.gz, line 2: expected 4 fields separated by '::'"),
        ("1::1::5::0\n1::x2::5::0\n", r"line 2, field 'movie_id': expected an integer, got 'x2'"),
        ("1::1::9::0\n", r"ratings.dat.gz, line 1, field 'rating': 9 is not a rating \(1-5"),
        ("\n1::1::5::0\n0::1::5::0\n", r"line 3, field 'user_id': 0 is not an id"),
        ("1::1::5::0\n1::1::4::9\n", r"line 2: user 1 rates movie 1 again \(first on line 1\)"),
        ("1::1::5::0\n1::77::4::9\n", r"line 2, field 'movie_id': movie 77 is not listed in"),
    ],
)
def test_malformed_ratings_name_file_and_line(tmp_path, content, message):
    ml1m, _ = write_tiny(tmp_path)
    with gzip.open(ml1m["ratings"], "wt") as handle:
        handle.write(content)
    with pytest.raises(ValueError, match=message):
        read_ml1m(ml1m)


def test_bad_age_code_and_bad_item_line(tmp_path):
    ml1m, ml100k = write_tiny(tmp_path)
    ml1m["users"].write_text("1::F::17::10::1\n")
    with pytest.raises(ValueError, match=r"users.dat, line 1, field 'age': 17 is not an ML-1M"):
        read_ml1m(ml1m)
    ml1m, ml100k = write_tiny(tmp_path / "again")
    ml100k["items"].write_text("1|Short|line\n", encoding="latin-1")
    with pytest.raises(ValueError, match=r"u.item, line 1: expected 24 fields"):
        build_movielens_data(ml1m, ml100k)


def test_bad_options():
    with pytest.raises(ValueError, match="weight must be 'count' or 'rating', got 'sum'"):
        build_movielens_data({}, {}, weight="sum")
    with pytest.raises(ValueError, match="prior_source must be"):
        build_movielens_data({}, {}, prior_source="ml-10m")


# ---------------------------------------------------------------------------------------------
# the real files (../shared/data)
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_files():
    if not SHARED.is_dir():
        pytest.skip(f"real datasets not found at {SHARED} (../shared/data)")
    return locate_dataset_files(SHARED, "ml-1m"), locate_dataset_files(SHARED, "ml-100k")


@pytest.fixture(scope="module")
def built(shared_files):
    ml1m, ml100k = shared_files
    return {
        (w, s): build_movielens_data(ml1m, ml100k, weight=w, prior_source=s)
        for w in ("count", "rating")
        for s in ("ml-100k", "ml-1m")
    }


def _read(path: Path, encoding: str = "utf-8") -> list[str]:
    return [line for line in path.read_text(encoding=encoding).split("\n") if line]


@functools.cache
def _raw_ml100k():
    genres = [line.split("|")[0] for line in _read(SHARED / "ml-100k/u.genre")]
    movie_genres = {}
    for fields in csv.reader(_read(SHARED / "ml-100k/u.item", "latin-1"), delimiter="|"):
        movie_genres[int(fields[0])] = [
            g for g, f in zip(genres, fields[5:], strict=True) if f == "1"
        ]
    ages = {
        int(f[0]): int(f[1]) for f in csv.reader(_read(SHARED / "ml-100k/u.user"), delimiter="|")
    }
    ratings = [
        tuple(map(int, f)) for f in csv.reader(_read(SHARED / "ml-100k/u.data"), delimiter="\t")
    ]
    return movie_genres, ages, ratings


@functools.cache
def _raw_ml1m():
    movie_genres = {}
    for line in _read(SHARED / "ml-1m/movies.dat", "latin-1"):
        parts = line.split("::")
        movie_genres[int(parts[0])] = parts[-1].split("|")
    codes = {
        int(line.split("::")[0]): int(line.split("::")[2])
        for line in _read(SHARED / "ml-1m/users.dat")
    }
    with gzip.open(SHARED / "ml-1m/ratings.dat.gz", "rt") as handle:
        ratings = [tuple(map(int, line.split("::"))) for line in handle]
    return movie_genres, codes, ratings


def _hand_prior(movie_genres, ages, ratings, *, lo, hi, weight):
    mass = Counter()
    for user, movie, rating, _ in ratings:
        if lo <= ages[user] <= hi:
            for g in movie_genres[movie]:
                if g in COMMON_GENRES:
                    mass[g] += 1 if weight == "count" else rating
    total = sum(mass.values())
    return np.array([mass[g] / total for g in COMMON_GENRES])


@pytest.mark.data
@needs_shared
def test_shared_has_exactly_the_18_common_genres(built):
    for data in built.values():
        assert data.genres == COMMON_GENRES
        assert "unknown" not in data.genres and "Children's" in data.genres
        assert data.partial  # ratings.dat.gz is the first 487,650 lines


@pytest.mark.data
@needs_shared
@pytest.mark.parametrize("weight", ["count", "rating"])
def test_shared_ml100k_prior_equals_hand_computation(built, weight):
    movie_genres, ages, ratings = _raw_ml100k()
    data = built[(weight, "ml-100k")]
    for group, lo, hi in (("45-49", 45, 49), ("0-24", 0, 24)):
        expected = _hand_prior(movie_genres, ages, ratings, lo=lo, hi=hi, weight=weight)
        np.testing.assert_allclose(data.prior(group), expected, rtol=0, atol=1e-15)


@pytest.mark.data
@needs_shared
@pytest.mark.parametrize("weight", ["count", "rating"])
def test_shared_ml1m_prior_and_private_histograms_equal_hand_computation(built, weight):
    movie_genres, codes, ratings = _raw_ml1m()
    data = built[(weight, "ml-1m")]
    expected = _hand_prior(movie_genres, codes, ratings, lo=50, hi=50, weight=weight)
    np.testing.assert_allclose(data.prior("50-54"), expected, rtol=0, atol=1e-15)
    # User 10's private p.
    mass = defaultdict(float)
    for user, movie, rating, _ in ratings:
        if user == 10:
            for g in movie_genres[movie]:
                mass[g] += 1 if weight == "count" else rating
    p = np.array([mass[g] for g in COMMON_GENRES]) / sum(mass.values())
    ids, P = data.user_matrix(age_group(codes[10]))
    np.testing.assert_allclose(P[list(ids).index(10)], p, rtol=0, atol=1e-15)


@pytest.mark.data
@needs_shared
def test_shared_rows_sum_to_one_and_users_per_group(built):
    _, codes, ratings = _raw_ml1m()
    raters = {u for u, *_ in ratings}
    expected = Counter(age_group(codes[u]) for u in raters)
    for data in built.values():
        P = data.users.select(data.genres).to_numpy()
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
        Q = data.priors.select(data.genres).to_numpy()
        np.testing.assert_allclose(Q.sum(axis=1), 1.0, atol=1e-12)
        assert (Q > 0).all()
        counts = dict(data.users.group_by("group").len().iter_rows())
        assert counts == dict(expected)
        assert data.groups == AGE_GROUPS
    # The partial copy covers users 1..2999, every one of whom rated something.
    assert sum(expected.values()) == 2999
    assert built[("count", "ml-100k")].priors["n_users"].to_list() == [234, 310, 194, 80, 62, 63]
