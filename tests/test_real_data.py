"""Real-data experiment bookkeeping: per-group worst cases and win summaries.

The mechanisms are replaced by simple stand-ins (the bookkeeping is what is tested here; the
mechanisms have their own tests). One test runs the library's real mechanisms when present.
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from ldpsample.datasets import locate_dataset_files
from ldpsample.datasets.avazu import (
    HISTOGRAM_SCHEMA,
    PLACEHOLDER_DEVICE_ID,
    build_avazu_histograms,
    convert_avazu_to_parquet,
)
from ldpsample.datasets.avazu_synthetic import generate_avazu_like
from ldpsample.datasets.movielens import build_movielens_data
from ldpsample.experiments.real_data import (
    KL_METHODS,
    TV_METHODS,
    avazu_metrics,
    movielens_metrics,
    per_user_divergences,
    win_summary,
)

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
REAL_AVAZU = SHARED / "avazu" / "train.gz"


def fake_minimax(P, q, *, epsilon):
    w = np.exp(-epsilon)
    return (np.asarray(P) + w * q) / (1 + w)


def fake_mollifier_tv(P, q, *, epsilon):
    Y = np.clip(P, q * np.exp(-epsilon / 2), q * np.exp(epsilon / 2))
    return Y / Y.sum(axis=-1, keepdims=True)


def fake_mollifier_kl(P, q, *, epsilon):
    return 0.5 * (fake_mollifier_tv(P, q, epsilon=epsilon) + q)


FAKES = {
    "minimax": fake_minimax,
    "mollifier_tv": fake_mollifier_tv,
    "mollifier_kl": fake_mollifier_kl,
}


def tv(p, r):
    return 0.5 * np.abs(p - r).sum(axis=-1)


def kl(p, r):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, p * np.log(p / r), 0.0).sum(axis=-1)


# ---------------------------------------------------------------------------------------------
# MovieLens
# ---------------------------------------------------------------------------------------------

GENRES = ["g1", "g2", "g3"]


def small_frames():
    users = pl.DataFrame(
        {
            "user_id": [1, 2, 3, 4],
            "group": ["0-24", "0-24", "55+", "0-24"],
            "g1": [1.0, 0.2, 0.0, 0.5],
            "g2": [0.0, 0.3, 0.5, 0.5],
            "g3": [0.0, 0.5, 0.5, 0.0],
        }
    )
    priors = pl.DataFrame(
        {
            "group": ["0-24", "55+"],
            "n_users": [10, 10],
            "mass": [1.0, 1.0],
            "g1": [0.5, 0.2],
            "g2": [0.3, 0.3],
            "g3": [0.2, 0.5],
        }
    )
    return users, priors


def test_per_user_divergences_with_stand_ins():
    P = np.array([[1.0, 0.0, 0.0], [0.2, 0.3, 0.5]])
    q = np.array([0.5, 0.3, 0.2])
    out = per_user_divergences(P, q, epsilon=1.0, mechanisms=FAKES, kl=True)
    assert list(out) == ["minimax", "mollifier_tv", "minimax_kl", "mollifier_kl"]
    np.testing.assert_allclose(out["minimax"], tv(P, fake_minimax(P, q, epsilon=1.0)))
    np.testing.assert_allclose(out["mollifier_kl"], kl(P, fake_mollifier_kl(P, q, epsilon=1.0)))
    with pytest.raises(ValueError, match=r"mechanisms lacks \['mollifier_kl'\]"):
        per_user_divergences(
            P, q, epsilon=1.0, mechanisms={"minimax": 0, "mollifier_tv": 0}, kl=True
        )


def test_movielens_metrics_frames_and_values():
    users, priors = small_frames()
    result = movielens_metrics(users, priors, epsilons=[2.0, 0.5], mechanisms=FAKES)
    assert result.max_tv.columns == ["epsilon", "group", "method", "max_tv", "n_users"]
    assert result.max_tv.dtypes == [pl.Float64, pl.String, pl.String, pl.Float64, pl.Int64]
    assert result.max_kl.columns == ["epsilon", "group", "method", "max_kl", "n_users"]
    assert result.max_tv.height == 2 * 2 * 2
    assert result.max_tv.equals(result.max_tv.sort("epsilon", "group", "method"))
    assert set(result.max_tv["method"]) == set(TV_METHODS)
    assert set(result.max_kl["method"]) == set(KL_METHODS)
    P = users.filter(pl.col("group") == "0-24").select(GENRES).to_numpy()
    q = np.array([0.5, 0.3, 0.2])
    for eps in (0.5, 2.0):
        expected = {
            "minimax": tv(P, fake_minimax(P, q, epsilon=eps)).max(),
            "mollifier_tv": tv(P, fake_mollifier_tv(P, q, epsilon=eps)).max(),
        }
        got = result.max_tv.filter((pl.col("epsilon") == eps) & (pl.col("group") == "0-24"))
        assert dict(zip(got["method"], got["max_tv"], strict=True)) == pytest.approx(expected)
        assert got["n_users"].to_list() == [3, 3]
        got_kl = result.max_kl.filter((pl.col("epsilon") == eps) & (pl.col("group") == "0-24"))
        assert dict(zip(got_kl["method"], got_kl["max_kl"], strict=True)) == pytest.approx(
            {
                "minimax_kl": kl(P, fake_minimax(P, q, epsilon=eps)).max(),
                "mollifier_kl": kl(P, fake_mollifier_kl(P, q, epsilon=eps)).max(),
            }
        )
    # Chunking over users does not change the maxima.
    chunked = movielens_metrics(users, priors, epsilons=[2.0, 0.5], mechanisms=FAKES, chunk_users=1)
    assert chunked.max_tv.equals(result.max_tv) and chunked.max_kl.equals(result.max_kl)


def test_movielens_metrics_without_kl_and_bad_input():
    users, priors = small_frames()
    result = movielens_metrics(users, priors, epsilons=[1.0], mechanisms=FAKES, kl=False)
    assert result.max_kl.height == 0
    assert result.max_kl.columns == ["epsilon", "group", "method", "max_kl", "n_users"]
    with pytest.raises(ValueError, match=r"priors lacks the genre columns \['g3'\]"):
        movielens_metrics(users, priors.drop("g3"), epsilons=[1.0], mechanisms=FAKES)
    with pytest.raises(ValueError, match="priors has 0 rows for group '55\\+'"):
        movielens_metrics(
            users, priors.filter(pl.col("group") == "0-24"), epsilons=[1.0], mechanisms=FAKES
        )
    with pytest.raises(ValueError, match="epsilon must be a finite real number >= 0"):
        movielens_metrics(users, priors, epsilons=[-1.0], mechanisms=FAKES)
    with pytest.raises(ValueError, match="epsilons is empty"):
        movielens_metrics(users, priors, epsilons=[], mechanisms=FAKES)


@pytest.mark.data
@pytest.mark.skipif(not SHARED.is_dir(), reason=f"real datasets not found at {SHARED}")
def test_movielens_metrics_on_shared_data_match_numpy():
    data = build_movielens_data(
        locate_dataset_files(SHARED, "ml-1m"), locate_dataset_files(SHARED, "ml-100k")
    )
    result = movielens_metrics(data.users, data.priors, epsilons=[1.0], mechanisms=FAKES)
    _, P = data.user_matrix("45-49")
    q = data.prior("45-49")
    row = result.max_tv.filter((pl.col("group") == "45-49") & (pl.col("method") == "minimax"))
    assert row["max_tv"].item() == pytest.approx(tv(P, fake_minimax(P, q, epsilon=1.0)).max())
    assert row["n_users"].item() == P.shape[0]
    assert result.max_tv["group"].unique().sort().to_list() == list(data.groups)


@pytest.mark.skipif(
    importlib.util.find_spec("ldpsample.minimax") is None
    or importlib.util.find_spec("ldpsample.mollifier") is None,
    reason="ldpsample.minimax / ldpsample.mollifier not available yet",
)
def test_real_mechanisms_run_through_the_metrics():
    users, priors = small_frames()
    result = movielens_metrics(users, priors, epsilons=[1.0, 4.0])
    assert result.max_tv["max_tv"].is_between(0.0, 1.0).all()
    assert (result.max_kl["max_kl"] >= 0).all()
    summary = win_summary(result.max_tv)
    assert summary["cases"].to_list() == [4, 4]


# ---------------------------------------------------------------------------------------------
# Avazu: one subcategory's max TV recomputed with the csv module and numpy
# ---------------------------------------------------------------------------------------------


def csv_subcategory_max_tv(path, attribute, value, *, epsilon, min_rows, top_sites, exclude):
    """Published-code rules for one subcategory, by hand."""
    opener = gzip.open if Path(path).read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt", newline="") as handle:
        rows = [
            (r["device_id"], r["site_id"], int(r["click"]), int(r[attribute]))
            for r in csv.DictReader(handle)
            if not (exclude and r["device_id"] == PLACEHOLDER_DEVICE_ID)
        ]
    activity = Counter(r[0] for r in rows)
    rows = [r for r in rows if activity[r[0]] >= min_rows and r[3] == value]
    clicks = Counter()
    for _, site, click, _ in rows:
        clicks[site] += click
    top = sorted(clicks, key=lambda s: (-clicks[s], s))[:top_sites]
    counts: dict[str, Counter] = defaultdict(Counter)
    for device, site, _, _ in rows:
        if site in top:
            counts[device][site] += 1
    sites = sorted({s for c in counts.values() for s in c})
    P = np.array([[counts[d][s] for s in sites] for d in sorted(counts)], dtype=float)
    P /= P.sum(axis=1, keepdims=True)
    q = P.mean(axis=0)
    return (
        tv(P, fake_minimax(P, q, epsilon=epsilon)).max(),
        tv(P, fake_mollifier_tv(P, q, epsilon=epsilon)).max(),
        P.shape[0],
    )


def _check_avazu(src, parquet, attribute, *, min_rows, min_users, top_sites, exclude):
    frame = build_avazu_histograms(
        parquet,
        attribute,
        min_rows=min_rows,
        min_users=min_users,
        top_sites=top_sites,
        exclude_placeholder_device=exclude,
    )
    result = avazu_metrics(frame, epsilons=[0.5, 3.0], mechanisms=FAKES)
    assert result.columns == ["epsilon", "attribute", "subcategory", "method", "max_tv", "n_users"]
    assert result.dtypes == [pl.Float64, pl.String, pl.Int64, pl.String, pl.Float64, pl.Int64]
    assert result.equals(result.sort("epsilon", "attribute", "subcategory", "method"))
    value = frame["subcategory"].mode().sort()[0]
    for eps in (0.5, 3.0):
        minimax, mollifier, n_users = csv_subcategory_max_tv(
            src,
            attribute,
            value,
            epsilon=eps,
            min_rows=min_rows,
            top_sites=top_sites,
            exclude=exclude,
        )
        got = result.filter((pl.col("epsilon") == eps) & (pl.col("subcategory") == value))
        assert dict(zip(got["method"], got["max_tv"], strict=True)) == pytest.approx(
            {"minimax": minimax, "mollifier_tv": mollifier}, rel=1e-12
        )
        assert got["n_users"].to_list() == [n_users, n_users]
    return result


@pytest.mark.data
@pytest.mark.skipif(not REAL_AVAZU.is_file(), reason=f"real Avazu prefix not at {REAL_AVAZU}")
@pytest.mark.parametrize("exclude", [False, True])
def test_avazu_max_tv_on_real_prefix_matches_csv(tmp_path, exclude):
    parquet = tmp_path / "train.parquet"
    convert_avazu_to_parquet(REAL_AVAZU, parquet)
    result = _check_avazu(
        REAL_AVAZU, parquet, "C18", min_rows=3, min_users=5, top_sites=100, exclude=exclude
    )
    assert result["n_users"].min() >= 5


@pytest.mark.parametrize("exclude", [False, True])
def test_avazu_max_tv_on_generated_file_matches_csv(tmp_path, exclude):
    src = generate_avazu_like(tmp_path / "train.csv", rows=20_000, seed=11, users=1000, sites=200)
    parquet = tmp_path / "train.parquet"
    convert_avazu_to_parquet(src, parquet)
    _check_avazu(src, parquet, "C21", min_rows=5, min_users=20, top_sites=30, exclude=exclude)


def test_avazu_metrics_on_empty_histograms(caplog):
    empty = pl.DataFrame(schema=HISTOGRAM_SCHEMA)
    result = avazu_metrics(empty, epsilons=[1.0], mechanisms=FAKES)
    assert result.height == 0
    assert result.columns == ["epsilon", "attribute", "subcategory", "method", "max_tv", "n_users"]
    assert "histogram frame is empty" in caplog.text


# ---------------------------------------------------------------------------------------------
# summaries
# ---------------------------------------------------------------------------------------------


def test_win_summary_counts_wins_ties_and_improvement():
    frame = pl.DataFrame(
        {
            "epsilon": [1.0] * 6 + [2.0] * 2,
            "group": ["a", "a", "b", "b", "c", "c", "a", "a"],
            "method": ["minimax", "mollifier_tv"] * 4,
            "max_tv": [0.1, 0.3, 0.5, 0.4, 0.2, 0.2, 0.05, 0.15],
            "n_users": [5] * 8,
        }
    )
    summary = win_summary(frame)
    assert summary.columns == ["method", "wins", "ties", "cases", "win_share", "mean_improvement"]
    rows = {r["method"]: r for r in summary.iter_rows(named=True)}
    assert (rows["minimax"]["wins"], rows["minimax"]["ties"], rows["minimax"]["cases"]) == (2, 1, 4)
    assert rows["minimax"]["win_share"] == 0.5
    assert rows["minimax"]["mean_improvement"] == pytest.approx((0.2 + 0.1) / 2)
    assert (rows["mollifier_tv"]["wins"], rows["mollifier_tv"]["ties"]) == (1, 1)
    assert rows["mollifier_tv"]["mean_improvement"] == pytest.approx(0.1)
    # KL tables use the other method names and value column.
    kl_frame = frame.with_columns(
        pl.col("method").replace({"minimax": "minimax_kl", "mollifier_tv": "mollifier_kl"})
    ).rename({"max_tv": "max_kl"})
    kl_summary = win_summary(kl_frame, value="max_kl", methods=KL_METHODS)
    assert kl_summary["wins"].to_list() == summary["wins"].to_list()


def test_win_summary_without_wins_and_errors():
    frame = pl.DataFrame(
        {"epsilon": [1.0, 1.0], "method": list(TV_METHODS), "max_tv": [0.2, 0.2], "n_users": [1, 1]}
    )
    summary = win_summary(frame)
    assert summary["wins"].to_list() == [0, 0] and summary["ties"].to_list() == [1, 1]
    assert summary["mean_improvement"].to_list() == [None, None]
    missing_one = frame.vstack(frame.head(1).with_columns(pl.lit(2.0).alias("epsilon")))
    with pytest.raises(ValueError, match="some cases lack a value"):
        win_summary(missing_one)
    with pytest.raises(ValueError, match=r"no 'max_tv' values for methods \['mollifier_tv'\]"):
        win_summary(frame.head(1))
    with pytest.raises(ValueError, match="at least two methods"):
        win_summary(frame, methods=["minimax"])
