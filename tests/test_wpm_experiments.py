"""Small end-to-end runs of the WPM experiment functions (ring, MovieLens-100K, Gowalla)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from _workflow import need_shared_data

from ldpsample.datasets.registry import locate_dataset_files
from ldpsample.experiments.movielens.data import read_ml100k
from ldpsample.experiments.wpm_gowalla import (
    MAP_SCHEMA,
    W1_SCHEMA,
    gowalla_grid,
    gowalla_maps,
    gowalla_w1,
    read_gowalla_derived,
    read_gowalla_snap,
)
from ldpsample.experiments.wpm_movielens import (
    TEST_SCHEMA,
    VALIDATION_SCHEMA,
    movielens_hit_rates,
    prepare_movielens,
    scale_grid,
)
from ldpsample.experiments.wpm_ring import (
    CONVERGENCE_SCHEMA,
    EXAMPLE_SCHEMA,
    ring_convergence,
    ring_cost,
    ring_example,
)
from ldpsample.wasserstein import kpm_uniform_scale, transport_cost

GOWALLA_SNAP = "gowalla/loc-gowalla_totalCheckins.first-10000-lines.austin.txt"
GOWALLA_DERIVED = "gowalla/derived-LBSNDatasets-Gowalla_3/gowalla3_austin.tsv"


# --------------------------------------------------------------------------------------------
# Ring
# --------------------------------------------------------------------------------------------


def test_ring_cost_is_the_arc_distance():
    C = ring_cost(8)
    np.testing.assert_allclose(C, C.T)
    assert np.all(np.diag(C) == 0) and C.max() == pytest.approx(0.5)
    assert C[0, 7] == pytest.approx(1 / 8) and C[0, 4] == pytest.approx(0.5)
    np.testing.assert_allclose(ring_cost(8, r=2.0), C**2)
    with pytest.raises(ValueError, match="n must be"):
        ring_cost(1)


def test_ring_example_wpm_beats_kpm_in_the_polytope():
    frame = ring_example(n=40, epsilon=1.0, alpha=0.3, rng=np.random.default_rng(0))
    assert frame.schema == pl.Schema(EXAMPLE_SCHEMA)
    for col in ("input", "wpm", "kpm"):
        assert frame[col].sum() == pytest.approx(1.0)
    for col in ("wpm", "kpm"):
        assert (frame[col] >= frame["lower"] - 1e-12).all()
        assert (frame[col] <= frame["upper"] + 1e-12).all()
    # Both outputs lie in the same M_ε(μ); the WPM is the W-closest member of it.
    assert frame["w_wpm"][0] <= frame["w_kpm"][0] + 1e-12
    C = ring_cost(40)
    P, Q = frame["input"].to_numpy(), frame["wpm"].to_numpy()
    assert float(transport_cost(P, Q, C)) == pytest.approx(frame["w_wpm"][0], abs=1e-12)


def test_ring_convergence_table():
    etas = [0.05, 0.02, 0.01]
    n = 24
    table = ring_convergence(
        n=n,
        epsilon=1.0,
        etas=etas,
        inputs=3,
        alpha=0.5,
        max_iter=400,
        rng=np.random.default_rng(1),
    )
    assert table.schema == pl.Schema(CONVERGENCE_SCHEMA)
    assert (table["gap"] >= -1e-12).all()
    assert table["iteration"].min() == 1 and table["iteration"].max() == 400
    last = (
        table.filter(pl.col("iteration") == 400)
        .group_by("eta")
        .agg(pl.col("gap").mean(), pl.col("marginal_error").max())
    )
    last = last.sort("eta")
    # Converged for every η, within the O(η log(nm)) bound, and better for smaller η.
    assert (last["marginal_error"] < 1e-6).all()
    assert (last["gap"] <= last["eta"] * math.log(n * n)).all()
    gaps = last["gap"].to_list()
    assert gaps[0] <= gaps[1] <= gaps[2]
    # The marginal error shrinks with the iterations.
    first = table.filter((pl.col("iteration") == 1) & (pl.col("eta") == 0.01))
    assert first["marginal_error"].min() > last["marginal_error"].max()


# --------------------------------------------------------------------------------------------
# MovieLens-100K
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def movielens_setup():
    shared = need_shared_data("ml-100k")
    data = read_ml100k(locate_dataset_files(shared, "ml-100k"))
    return prepare_movielens(
        data["ratings"],
        data["movie_genres"],
        rng=np.random.default_rng(0),
        n_components=32,
        n_outputs=120,
    )


@pytest.mark.data
def test_movielens_setup(movielens_setup):
    s = movielens_setup
    n, m = s.cost.shape
    assert m == 120 and n == round(0.8 * 1682)
    assert np.intersect1d(s.train_movies, s.output_movies).size == 0
    assert np.intersect1d(s.validation_users, s.test_users).size == 0
    assert s.cost.min() >= 0 and s.cost.max() <= 2
    np.testing.assert_allclose(s.validation_P.sum(axis=1), 1.0)
    assert s.test_liked.any(axis=1).all() and s.validation_liked.any(axis=1).all()
    assert s.output_genres.any(axis=0).all()  # every kept genre has an output movie


@pytest.mark.data
def test_movielens_hit_rates(movielens_setup):
    s = movielens_setup
    validation, test = movielens_hit_rates(
        s,
        epsilons=[0.0, 0.5, 2.0, 8.0],
        rng=np.random.default_rng(1),
        n_scales=3,
        max_validation_users=25,
        max_test_users=60,
    )
    assert validation.schema == pl.Schema(VALIDATION_SCHEMA)
    assert test.schema == pl.Schema(TEST_SCHEMA)
    assert ((test["hit_rate_mean"] >= 0) & (test["hit_rate_mean"] <= 1)).all()
    assert ((validation["hit_rate"] >= 0) & (validation["hit_rate"] <= 1)).all()
    assert (test["hit_rate_se"] >= 0).all() and (test["n_users"] == 60).all()

    def hr(method: str, eps: float) -> float:
        row = test.filter((pl.col("method") == method) & (pl.col("epsilon") == eps))
        return float(row["hit_rate_mean"].item())

    # ε = 0: WPM and the exponential mechanism both output the uniform distribution.
    assert hr("wpm", 0.0) == pytest.approx(hr("exponential", 0.0), abs=1e-12)
    assert hr("wpm", 8.0) > hr("wpm", 0.5) + 0.03
    assert hr("wpm", 2.0) > hr("exponential", 2.0)
    assert hr("wpm", 8.0) <= hr("nonprivate", math.inf) + 0.02
    # The chosen scale is the validation argmax.
    val = validation.filter((pl.col("method") == "wpm") & (pl.col("epsilon") == 2.0))
    best = val.sort("hit_rate", descending=True)["scale"][0]
    assert test.filter((pl.col("method") == "wpm") & (pl.col("epsilon") == 2.0))[
        "scale"
    ].item() == pytest.approx(best)


def test_scale_grid_is_strictly_inside():
    grid = scale_grid(1.0, 4)
    assert grid.size == 4 and grid[0] > math.exp(-1) and grid[-1] < 1
    assert scale_grid(0.0, 4).tolist() == [1.0]


def test_movielens_reader_reports_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"u\.data"):
        locate_dataset_files(tmp_path, "ml-100k")


# --------------------------------------------------------------------------------------------
# Gowalla
# --------------------------------------------------------------------------------------------


@pytest.mark.data
def test_gowalla_readers():
    shared = need_shared_data(GOWALLA_SNAP, GOWALLA_DERIVED)
    snap = read_gowalla_snap(shared / GOWALLA_SNAP)
    derived = read_gowalla_derived(shared / GOWALLA_DERIVED)
    assert snap.height == 1911 and snap["user"].n_unique() == 19
    assert derived.height == 44_528
    assert snap.columns == derived.columns == ["user", "time", "latitude", "longitude", "location"]
    assert snap.row(0) == (0, "2010-10-19T23:55:27Z", 30.2359091167, -97.7951395833, 22847)


def test_gowalla_reader_rejects_malformed(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("user\ttime\n1\t2\n")
    with pytest.raises(ValueError, match="expected columns"):
        read_gowalla_derived(bad)
    snap = tmp_path / "snap.txt"
    snap.write_text("0\t2010-10-19T23:55:27Z\tthirty\t-97.7\t1\n")
    with pytest.raises(ValueError, match=r"snap\.txt"):
        read_gowalla_snap(snap)


def test_gowalla_grid_on_synthetic_checkins():
    rng = np.random.default_rng(2)
    users = np.repeat(np.arange(5), 12)
    frame = pl.DataFrame(
        {
            "user": np.append(users, [9, 9]),  # user 9 has too few check-ins
            "latitude": np.append(rng.uniform(30.1, 30.55, users.size), [30.2, 30.3]),
            "longitude": np.append(rng.uniform(-97.95, -97.55, users.size), [-97.7, -97.7]),
        }
    )
    grid = gowalla_grid(frame, grid_size=4)
    assert grid.counts.shape == (5, 16) and (grid.counts.sum(axis=1) == 12).all()
    assert grid.users.tolist() == [0, 1, 2, 3, 4]
    # ~48 km x ~50 km box: neighbouring cells ~10-12 km apart, diagonal ~ 50 km.
    assert 9 < grid.cost[0, 1] < 13 and 45 < grid.cost[0, 15] < 55
    with pytest.raises(ValueError, match="no user"):
        gowalla_grid(frame, grid_size=4, min_checkins=100)


def test_kpm_scale_is_minimax_for_diracs():
    m, eps = 50, 1.5
    c = kpm_uniform_scale(m, epsilon=eps)
    assert math.exp(eps) * c / m == pytest.approx(1 - (m - 1) * c / m)
    assert math.exp(-eps) <= c <= 1


@pytest.mark.data
def test_gowalla_w1_decreases_with_epsilon_and_wpm_wins():
    shared = need_shared_data(GOWALLA_DERIVED)
    grid = gowalla_grid(read_gowalla_derived(shared / GOWALLA_DERIVED), grid_size=8)
    assert (grid.counts.sum(axis=1) >= 10).all()
    table = gowalla_w1(grid, epsilons=[0.5, 2.0, 6.0], repeats=2, rng=np.random.default_rng(3))
    assert table.schema == pl.Schema(W1_SCHEMA)
    assert table.height == 3 * 2 * 2 and (table["w1_released"] >= 0).all()
    expected = table.group_by("method", "epsilon").agg(pl.col("w1_expected").first())

    def w1(method: str) -> list[float]:
        return expected.filter(pl.col("method") == method).sort("epsilon")["w1_expected"].to_list()

    wpm, kpm = w1("wpm"), w1("kpm")
    assert wpm[0] > wpm[1] > wpm[2]
    assert all(a <= b for a, b in zip(wpm, kpm, strict=True))

    maps = gowalla_maps(grid, epsilon=2.0, rng=np.random.default_rng(4))
    assert maps.schema == pl.Schema(MAP_SCHEMA)
    sums = maps.group_by("distribution").agg(pl.col("probability").sum())
    assert set(sums["distribution"]) == {"true", "wpm", "kpm", "wpm_released", "kpm_released"}
    np.testing.assert_allclose(sums["probability"].to_numpy(), 1.0)
