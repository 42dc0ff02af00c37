"""The reproduction table's WPM checks: the uniform base measure's Hit@1 ceiling
against a brute-force optimum, the linear-rate fit of Theorem 4.3 on the library's own Sinkhorn
iterates (passes) and on a sublinear decay (fails), and the gap/ordering rows on hand-made
tables."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

from ldpsample.experiments.wpm_ring import ring_convergence
from ldpsample.reproduction import wpm_checks
from ldpsample.reproduction.wpm_checks import fit_linear_rate, uniform_base_measure_ceiling


def _lp_ceiling(liked: np.ndarray, epsilon: float) -> float:
    """The same optimum as one linear program over the scale c and every user's Q:
    max mean_u sum_{liked} Q_u  s.t.  c/m <= Q_uj <= e^ε c/m,  sum_j Q_uj = 1,  e^-ε <= c <= 1."""
    users, m = liked.shape
    n_var = 1 + users * m  # c, then Q row by row
    objective = np.concatenate([[0.0], -liked.ravel().astype(float) / users])
    upper = np.zeros((2 * users * m, n_var))
    for k in range(users * m):
        upper[2 * k, [0, 1 + k]] = [1.0 / m, -1.0]  # c/m - Q <= 0
        upper[2 * k + 1, [0, 1 + k]] = [-math.exp(epsilon) / m, 1.0]  # Q - e^ε c/m <= 0
    equal = np.zeros((users, n_var))
    for u in range(users):
        equal[u, 1 + u * m : 1 + (u + 1) * m] = 1.0
    res = linprog(
        objective,
        A_ub=upper,
        b_ub=np.zeros(2 * users * m),
        A_eq=equal,
        b_eq=np.ones(users),
        bounds=[(math.exp(-epsilon), 1.0)] + [(0, None)] * (users * m),
        method="highs",
    )
    assert res.status == 0
    return -res.fun


@given(seed=st.integers(0, 2**32 - 1), eps=st.floats(0.05, 3.0))
def test_ceiling_is_the_best_uniform_base_measure(seed, eps):
    rng = np.random.default_rng(seed)
    liked = rng.random((5, 9)) < 0.3
    liked[:, 0] = True  # every kept user likes an output
    ceiling, scale = uniform_base_measure_ceiling(liked, epsilon=eps)
    assert math.exp(-eps) <= scale <= 1.0
    assert ceiling == pytest.approx(_lp_ceiling(liked, eps), abs=1e-9)


def test_linear_rate_fit_tells_geometric_from_sublinear_decay():
    t = np.unique(np.round(np.geomspace(1, 5000, 40)))
    geometric = fit_linear_rate(t, 0.5 * 0.98**t)
    assert geometric.linear and geometric.rate == pytest.approx(0.98, rel=1e-9)
    sublinear = fit_linear_rate(t, 1.0 / t)
    assert not sublinear.linear and sublinear.r2_log > sublinear.r2_linear
    noisy = 0.98**t * np.exp(np.random.default_rng(0).normal(0, 0.2, t.size))
    assert fit_linear_rate(t, noisy).linear
    # reached the floor at once: nothing to fit, counted as linear
    assert fit_linear_rate([1, 2, 3, 4], [1e-3, 1e-17, 1e-17, 1e-17]).linear


def _write_convergence(root: Path, frame: pl.DataFrame) -> None:
    (root / "wpm_ring").mkdir(parents=True, exist_ok=True)
    frame.write_parquet(root / "wpm_ring" / "convergence.parquet")


def test_sinkhorn_iterates_of_the_library_converge_linearly(tmp_path: Path):
    frame = ring_convergence(
        n=30,
        epsilon=1.0,
        etas=[0.05, 0.02],
        inputs=2,
        alpha=0.3,
        max_iter=600,
        rng=np.random.default_rng(3),
    )
    _write_convergence(tmp_path, frame)
    outcome = wpm_checks.sinkhorn_linear_rate(tmp_path, {})
    assert outcome.ok, outcome
    assert outcome.run_value.startswith("fitted rate per iteration (marginal error): η=0.02")
    # A sublinear decay put in place of the marginal errors fails the same check.
    slow = frame.with_columns(marginal_error=1.0 / pl.col("iteration").cast(pl.Float64))
    _write_convergence(tmp_path, slow)
    failed = wpm_checks.sinkhorn_linear_rate(tmp_path, {})
    assert not failed.ok and "no linear rate for η=0.02 input 0" in failed.reason


def _hit_table(root: Path, rows: list[tuple[float, str, float, float]]) -> None:
    (root / "wpm_movielens").mkdir(parents=True, exist_ok=True)
    pl.DataFrame(
        [
            {"epsilon": e, "method": m, "scale": 0.5, "hit_rate_mean": h, "hit_rate_se": se}
            for e, m, h, se in rows
        ]
    ).write_csv(root / "wpm_movielens" / "test.csv")


def test_gap_grows_with_epsilon(tmp_path: Path):
    rows = [
        (0.5, "wpm", 0.06, 0.01),
        (0.5, "kpm_genre", 0.065, 0.01),
        (0.5, "exponential", 0.05, 0.01),
        (2.0, "wpm", 0.12, 0.01),
        (2.0, "kpm_genre", 0.07, 0.01),
        (2.0, "exponential", 0.06, 0.01),
    ]
    _hit_table(tmp_path, rows)
    outcome = wpm_checks.gap_grows(tmp_path, {})
    assert outcome.ok and outcome.run_value == (
        "WPM − best baseline per ε: 0.5: -0.0050, 2: +0.0500"
    )
    rows[3] = (2.0, "wpm", 0.06, 0.01)  # the gap shrinks
    _hit_table(tmp_path, rows)
    assert not wpm_checks.gap_grows(tmp_path, {}).ok


def test_hit1_reason_separates_a_forced_loss_from_noise(tmp_path: Path, monkeypatch):
    """With the split at hand, a loss above the uniform measure's ceiling is called forced;
    one below it is given in standard errors."""
    _hit_table(
        tmp_path,
        [
            (0.25, "wpm", 0.057, 0.004),
            (0.25, "kpm_genre", 0.064, 0.005),
            (0.5, "wpm", 0.064, 0.004),
            (0.5, "kpm_genre", 0.066, 0.005),
        ],
    )
    liked = np.zeros((10, 100), dtype=bool)
    liked[:, :5] = True  # 5 liked of 100: ceiling 5 e^ε c / 100 at best
    monkeypatch.setattr(wpm_checks, "test_users_liked", lambda setup: liked)
    ctx = {"wpm_movielens_setup": {"max_test_users": None}, "wpm_base_measure": "uniform"}
    outcome = wpm_checks.hit1_ordering(tmp_path, ctx)
    ceiling_025 = uniform_base_measure_ceiling(liked, epsilon=0.25)[0]
    ceiling_05 = uniform_base_measure_ceiling(liked, epsilon=0.5)[0]
    assert ceiling_025 < 0.064 < ceiling_05
    assert not outcome.ok
    forced = "at ε=0.25 forced: no uniform base measure lets any mechanism exceed Hit@1 "
    forced += f"{ceiling_025:.4f} < kpm_genre 0.0640"
    assert forced in outcome.reason
    assert "at ε=0.5 the shortfall 0.0020 is 0.31 standard errors of the difference" in (
        outcome.reason
    )
    # another base measure, or capped test users: no ceiling is claimed
    for other in ({**ctx, "wpm_base_measure": "kpm_genre"}, {"wpm_movielens_setup": None}):
        assert "forced" not in wpm_checks.hit1_ordering(tmp_path, other).reason


# --------------------------------------------------------------------------------------------
# Propositions 3.2, 3.3 and Theorems 3.4, 3.5 on the ring run
# --------------------------------------------------------------------------------------------

RING_CTX = {"ring_n": 24, "ring_r": 1.0}


@pytest.fixture
def ring_run(tmp_path: Path) -> Path:
    """results/wpm_ring/example.parquet as the stage writes it (the library's ring_example)."""
    from ldpsample.experiments.wpm_ring import ring_example

    frame = pl.concat(
        [
            ring_example(n=24, epsilon=eps, alpha=0.3, r=1.0, rng=np.random.default_rng(3))
            for eps in (0.5, 1.0, 4.0)
        ]
    )
    (tmp_path / "wpm_ring").mkdir()
    frame.write_parquet(tmp_path / "wpm_ring" / "example.parquet")
    return tmp_path


def _rewrite_example(root: Path, change) -> None:
    path = root / "wpm_ring" / "example.parquet"
    change(pl.read_parquet(path)).write_parquet(path)


RING_CHECKS = (
    wpm_checks.ring_privacy,
    wpm_checks.ring_uniform_optimality,
    wpm_checks.ring_minimax_base_measure,
    wpm_checks.ring_dirac_reformulation,
)


def test_ring_statements_hold_on_the_librarys_run(ring_run: Path):
    for check in RING_CHECKS:
        outcome = check(ring_run, RING_CTX)
        assert outcome.ok, (check.__name__, outcome)


def test_ring_privacy_fails_for_an_output_outside_the_polytope(ring_run: Path):
    """Moving mass so that one output exceeds e^ε μ (sum kept at 1) breaks Prop. 3.2."""

    def push(frame: pl.DataFrame) -> pl.DataFrame:
        bump = pl.when(pl.col("point") == 0).then(pl.col("upper") * 1.05 - pl.col("wpm"))
        extra = bump.otherwise(0.0)
        return frame.with_columns(
            wpm=pl.col("wpm") + extra - extra.sum().over("epsilon") / pl.len().over("epsilon")
        )

    _rewrite_example(ring_run, push)
    outcome = wpm_checks.ring_privacy(ring_run, RING_CTX)
    assert not outcome.ok and "leaves M_ε(μ)" in outcome.reason


def test_ring_uniform_optimality_fails_when_the_outputs_are_swapped(ring_run: Path):
    _rewrite_example(
        ring_run,
        lambda f: f.with_columns(
            wpm=pl.col("kpm"), kpm=pl.col("wpm"), w_wpm=pl.col("w_kpm"), w_kpm=pl.col("w_wpm")
        ),
    )
    assert not wpm_checks.ring_uniform_optimality(ring_run, RING_CTX).ok


def test_ring_minimax_fails_for_a_worse_base_measure(ring_run: Path):
    """A base measure that is not uniform (mass moved between points) has a larger φ."""
    _rewrite_example(
        ring_run,
        lambda f: f.with_columns(
            lower=pl.col("lower") * pl.when(pl.col("point") < 12).then(1.3).otherwise(0.7)
        ),
    )
    outcome = wpm_checks.ring_minimax_base_measure(ring_run, RING_CTX)
    assert not outcome.ok and "not minimax optimal" in outcome.reason


def test_ring_dirac_reformulation_fails_for_a_costlier_input(ring_run: Path):
    """A stored cost above every point input's contradicts the worst case at a Dirac."""
    _rewrite_example(ring_run, lambda f: f.with_columns(w_wpm=pl.col("w_wpm") + 1.0))
    assert not wpm_checks.ring_dirac_reformulation(ring_run, RING_CTX).ok


def test_ring_checks_need_the_runs_ring(ring_run: Path):
    with pytest.raises(wpm_checks.Missing, match="ring_n"):
        wpm_checks.ring_uniform_optimality(ring_run, {"ring_n": 30, "ring_r": 1.0})


def test_entropic_transport_cost_matches_a_direct_minimisation():
    """OT_η by the balanced Sinkhorn against scipy's minimisation over the 2 x 2 couplings
    (one free entry) of the same objective."""
    from scipy.optimize import minimize_scalar

    P, Q = np.array([0.3, 0.7]), np.array([0.6, 0.4])
    C = np.array([[0.0, 1.0], [1.0, 0.0]])
    eta = 0.2

    def objective(x: float) -> float:
        plan = np.array([[x, 0.3 - x], [0.6 - x, 0.1 + x]])
        return float((C * plan).sum() + eta * (plan * (np.log(plan) - 1)).sum())

    best = minimize_scalar(
        objective, bounds=(1e-12, 0.3 - 1e-12), method="bounded", options={"xatol": 1e-12}
    )
    assert wpm_checks.entropic_transport_cost(P, Q, C, eta=eta) == pytest.approx(best.fun, abs=1e-9)


@pytest.mark.slow
def test_vanilla_bregman_row_finds_the_vanilla_output_suboptimal(ring_run: Path, monkeypatch):
    """On the library's ring run the vanilla alternation's output has a larger entropic cost
    than Dykstra's (the paper's sentence does not hold); with the vanilla solver replaced by
    Dykstra's the same check passes."""
    ctx = {**RING_CTX, "ring_eta": 0.01, "ring_max_iter": 3000}
    outcome = wpm_checks.vanilla_bregman(ring_run, ctx)
    assert not outcome.ok, outcome
    assert "not the entropic projection" in outcome.reason
    real = wpm_checks.wasserstein_projection

    def dykstra_only(*args, **kwargs):
        return real(*args, **{**kwargs, "variant": "dykstra"})

    monkeypatch.setattr(wpm_checks, "wasserstein_projection", dykstra_only)
    assert wpm_checks.vanilla_bregman(ring_run, ctx).ok


def test_large_eta_converges_faster_on_the_librarys_iterates(tmp_path: Path):
    """The library's Sinkhorn iterates reach 1e-10 sooner and end farther from the LP value at
    larger η; with the η labels swapped the check fails on both counts."""
    frame = ring_convergence(
        n=30,
        epsilon=1.0,
        etas=[0.05, 0.02, 0.01],
        inputs=2,
        alpha=0.3,
        max_iter=1500,
        rng=np.random.default_rng(3),
    )
    _write_convergence(tmp_path, frame)
    outcome = wpm_checks.sinkhorn_speed(tmp_path, {})
    assert outcome.ok, outcome
    swapped = frame.with_columns(eta=pl.col("eta").replace({0.05: 0.01, 0.01: 0.05}))
    _write_convergence(tmp_path, swapped)
    failed = wpm_checks.sinkhorn_speed(tmp_path, {})
    assert not failed.ok
    assert "a larger η needs more iterations" in failed.reason
    assert "a larger η ends closer to the LP value" in failed.reason


def test_sphere_row_passes_on_the_librarys_tables_and_fails_when_perturbed(tmp_path: Path):
    from ldpsample.experiments.wpm_sphere import sphere_lp_convergence, sphere_scales

    scales = sphere_scales(dims=[2, 3], epsilons=[0.5, 1.0, 2.0], r=1.0)
    conv = sphere_lp_convergence(grids={2: [16, 64], 3: [25, 50]}, epsilons=[1.0], r=1.0)
    folder = tmp_path / "wpm_sphere"
    folder.mkdir()

    def write(s: pl.DataFrame, c: pl.DataFrame) -> None:
        s.write_parquet(folder / "scales.parquet")
        c.write_parquet(folder / "convergence.parquet")

    write(scales, conv)
    assert wpm_checks.sphere_closed_form(tmp_path, {}).ok
    # the finest grid's LP value moved 2 % away from the closed form
    far = conv.with_columns(
        lp_cost=pl.when(pl.col("n") == pl.col("n").max().over("d"))
        .then(pl.col("closed_cost") * 0.98)
        .otherwise(pl.col("lp_cost"))
    )
    write(scales, far)
    assert not wpm_checks.sphere_closed_form(tmp_path, {}).ok
    # a scale that grows with ε (and no longer matches the closed form)
    rising = scales.with_columns(scale=pl.col("scale").reverse().over("d"))
    write(rising, conv)
    outcome = wpm_checks.sphere_closed_form(tmp_path, {})
    assert not outcome.ok and "does not decrease in ε" in outcome.reason


def test_ml100k_size_counts_the_files_read(monkeypatch):
    """943 users and 1682 movies print as 1000 and 1700 (rounded at the last non-zero digit);
    one rating missing, or 1,600 users, fails."""

    def reader(users: int, ratings: int):
        def read(files):
            user = np.arange(ratings) % users
            movie = np.arange(ratings) % 1682
            return {"ratings": pl.DataFrame({"user_id": user, "movie_id": movie})}

        return read

    ctx = {"wpm_movielens_setup": {"files": {"ratings": "u.data"}}}
    claim = {"ratings": 100_000, "users": 1000, "movies": 1700}
    monkeypatch.setattr(wpm_checks, "read_ml100k", reader(943, 100_000))
    outcome = wpm_checks.ml100k_size(Path("."), ctx, **claim)
    assert outcome.ok and outcome.run_value == "100,000 ratings from 943 users on 1,682 movies"
    monkeypatch.setattr(wpm_checks, "read_ml100k", reader(943, 99_999))
    assert not wpm_checks.ml100k_size(Path("."), ctx, **claim).ok
    monkeypatch.setattr(wpm_checks, "read_ml100k", reader(1600, 100_000))
    assert not wpm_checks.ml100k_size(Path("."), ctx, **claim).ok
    with pytest.raises(wpm_checks.Missing, match="wpm_movielens"):
        wpm_checks.ml100k_size(Path("."), {}, **claim)
