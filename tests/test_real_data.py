"""Real-data experiments on the events code: the Avazu and MovieLens worst cases as the
pipeline computes them (ldpsample.events, restated by ldpsample.experiments.avazu.tables /
.movielens) against a by-hand computation from the raw CSV, against the former implementation
(tests/real_data_oracle.py, on the former readers' output), and the win summaries.
"""

from __future__ import annotations

import csv
import gzip
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import real_data_oracle as oracle
from oracle import oracle_kernel

from ldpsample.datasets import locate_dataset_files
from ldpsample.events import build_event_histograms, evaluate_attribute
from ldpsample.events.counting.histograms import HISTOGRAM_SCHEMA
from ldpsample.events.options import EventsOptions
from ldpsample.events.outputs.tables import win_summary
from ldpsample.experiments.avazu.data import PLACEHOLDER_DEVICE_ID, convert_avazu_to_parquet
from ldpsample.experiments.avazu.synthetic import generate_avazu_like
from ldpsample.experiments.avazu.tables import AVAZU_MAX_TV_SCHEMA, avazu_max_tv, avazu_summary
from ldpsample.experiments.movielens.tables import (
    movielens_events,
    movielens_max_tables,
    movielens_per_user,
    movielens_summary,
)

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
REAL_AVAZU = SHARED / "avazu" / "train.gz"
TV_METHODS = ("minimax", "mollifier_tv")
KL_METHODS = ("minimax_kl", "mollifier_kl")


def tv(p, r):
    return 0.5 * np.abs(p - r).sum(axis=-1)


def mollifier_tv(P, q, epsilon):
    """Optimal TV of the projection onto the relative mollifier: max(excess, deficit)."""
    lower, upper = np.exp(-epsilon / 2) * q, np.exp(epsilon / 2) * q
    return np.maximum(
        np.clip(P - upper, 0, None).sum(axis=1), np.clip(lower - P, 0, None).sum(axis=1)
    )


def avazu_events(parquet, attribute, *, min_rows, min_users, top_sites, exclude, epsilons):
    """One attribute's max_tv as the pipeline's avazu_histograms/avazu_metrics/avazu_aggregate
    jobs compute it (the published-code options as events keys)."""
    hist = build_event_histograms(
        EventsOptions(
            path=parquet,
            key="avazu",
            user="device_id",
            item="site_id",
            attributes=[attribute],
            prior="user_mean",
            top_items=top_sites,
            rank_items_by="click",
            min_user_count=min_rows,
            activity_scope="global",
            min_users=min_users,
            exclude_users=[PLACEHOLDER_DEVICE_ID] if exclude else [],
            on_null="error",
        )
    )
    result = evaluate_attribute(
        hist.histograms,
        None,
        name="avazu",
        attribute=attribute,
        prior="user_mean",
        epsilons=epsilons,
        methods=["minimax", "mollifier_tv"],
    )
    return avazu_max_tv(result.per_user)


# ---------------------------------------------------------------------------------------------
# Avazu: one subcategory's max TV recomputed with the csv module and numpy
# ---------------------------------------------------------------------------------------------


def csv_subcategory_max_tv(path, attribute, value, *, epsilon, min_rows, top_sites, exclude):
    """Published-code rules for one subcategory, by hand; the kernel by the paper's recursion,
    the mollifier's TV in closed form."""
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
    q = q / q.sum()
    return (
        tv(P, P @ oracle_kernel(q, epsilon)).max(),
        mollifier_tv(P, q, epsilon).max(),
        P.shape[0],
    )


def _check_avazu(src, parquet, attribute, *, min_rows, min_users, top_sites, exclude):
    options = dict(min_rows=min_rows, min_users=min_users, top_sites=top_sites)
    result = avazu_events(parquet, attribute, exclude=exclude, epsilons=[0.5, 3.0], **options)
    assert result.schema == AVAZU_MAX_TV_SCHEMA
    assert result.equals(result.sort("epsilon", "attribute", "subcategory", "method"))
    # the former implementation on the former reader's histograms: bit for bit
    former = oracle.build_avazu_histograms(
        parquet, attribute, exclude_placeholder_device=exclude, **options
    )
    assert result.equals(oracle.avazu_metrics(former, epsilons=[0.5, 3.0]))
    value = former["subcategory"].mode().sort()[0]
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
            {"minimax": minimax, "mollifier_tv": mollifier}, rel=1e-9, abs=1e-12
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


def test_avazu_tables_without_any_kept_subcategory():
    empty = pl.DataFrame(schema=HISTOGRAM_SCHEMA)
    result = evaluate_attribute(
        empty,
        None,
        name="avazu",
        attribute="C1",
        prior="user_mean",
        epsilons=[1.0],
        methods=["minimax", "mollifier_tv"],
    )
    max_tv = avazu_max_tv(result.per_user)
    assert max_tv.height == 0 and max_tv.schema == AVAZU_MAX_TV_SCHEMA
    summary = avazu_summary(max_tv)
    assert summary["method"].to_list() == ["minimax", "mollifier"]
    assert summary["cases"].to_list() == [0, 0] and summary["win_share"].null_count() == 2
    assert summary.equals(oracle.avazu_summary(oracle.avazu_metrics(empty, epsilons=[1.0])))


# ---------------------------------------------------------------------------------------------
# MovieLens: the events path against the former implementation on the shared copies
# ---------------------------------------------------------------------------------------------


@pytest.mark.data
@pytest.mark.skipif(not (SHARED / "ml-1m").is_dir(), reason=f"MovieLens not found at {SHARED}")
@pytest.mark.parametrize(("weight", "prior_source"), [("count", "ml-100k"), ("rating", "ml-1m")])
def test_movielens_events_equal_the_former_implementation(tmp_path, weight, prior_source):
    files = locate_dataset_files(SHARED, "ml-1m"), locate_dataset_files(SHARED, "ml-100k")
    ml1m, ml100k, _ = movielens_events(*files)
    ml1m.write_parquet(tmp_path / "ml1m.parquet")
    ml100k.write_parquet(tmp_path / "ml100k.parquet")
    count = {"count": "ratings", "rating": "rating_sum"}[weight]
    prior = (
        "pooled"
        if prior_source == "ml-1m"
        else dict(
            path=tmp_path / "ml100k.parquet",
            user="user_id",
            item="genre",
            count=count,
            attributes=["age_group"],
        )
    )
    hist = build_event_histograms(
        EventsOptions(
            path=tmp_path / "ml1m.parquet",
            key="movielens",
            user="user_id",
            item="genre",
            count=count,
            attributes=["age_group"],
            prior=prior,
            top_items=None,
            min_user_count=0,
            min_users=1,
            on_null="error",
        )
    )
    per_user = evaluate_attribute(
        hist.histograms,
        hist.priors,
        name="movielens",
        attribute="age_group",
        prior="pooled" if prior_source == "ml-1m" else "table",
        epsilons=[1.0, 4.0],
        methods=["minimax", "mollifier_tv", "mollifier_kl"],
    ).per_user
    data = oracle.build_movielens_data(*files, weight=weight, prior_source=prior_source)
    want_tv, want_kl = oracle.movielens_metrics(data.users, data.priors, epsilons=[1.0, 4.0])
    got_tv, got_kl = movielens_max_tables(per_user)
    for got, want, value in ((got_tv, want_tv, "max_tv"), (got_kl, want_kl, "max_kl")):
        assert got.columns == want.columns
        keys = ["epsilon", "group", "method", "n_users"]
        assert got.select(keys).equals(want.select(keys))
        assert (got[value] - want[value]).abs().max() <= 1e-12
    table = movielens_per_user(per_user)
    assert table.columns == ["epsilon", "group", "user_id", *TV_METHODS, *KL_METHODS]
    assert table.height == 2 * data.users.height
    counts = ["divergence", "method", "wins", "ties", "cases"]
    assert (
        movielens_summary(per_user)
        .select(counts)
        .equals(oracle.movielens_summary(want_tv, want_kl).select(counts))
    )


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
