"""Relative mollifier projections (Husain et al. 2020; baseline of Zamanlooy et al. 2025).

The closed forms are checked against three independent references: the cvxpy projection
(Clarabel / HiGHS), a bisection on the KL normaliser, and the explicit TV bound max(E, D).
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

import ldpsample
import ldpsample.mollifier as mollifier_package
import ldpsample.mollifier.chunks as chunks_module
import ldpsample.mollifier.kl as kl_module
import ldpsample.mollifier.kl_normaliser as kl_normaliser_module
from ldpsample.divergences import KL, Divergence, f_divergence, tv_distance
from ldpsample.mollifier import (
    mollifier_bounds,
    mollifier_projection,
    mollifier_tv_value,
    relative_mollifier_kl,
    relative_mollifier_tv,
)

FAST = (relative_mollifier_kl, relative_mollifier_tv)
PUBLIC = (
    relative_mollifier_kl,
    relative_mollifier_tv,
    mollifier_tv_value,
    mollifier_projection,
)

#: Examples for the tests that call cvxpy: a third of the profile's (20 by default, 200 with
#: HYPOTHESIS_PROFILE=thorough), the closed-form-only tests use the profile's own number.
CVXPY_EXAMPLES = max(10, settings.default.max_examples // 3)


def test_public_names_keep_their_import_paths() -> None:
    """Every public name has two import paths: ``ldpsample.<name>`` (the lazy export
    table) and ``ldpsample.mollifier.<name>`` are the one function of the module defining it."""
    sparse = {
        "SparseMollifier",
        "SparseProjection",
        "mollifier_divergences_sparse",
        "relative_mollifier_kl_sparse",
        "relative_mollifier_tv_sparse",
        "sparse_mollifier",
    }
    assert set(mollifier_package.__all__) == {
        "mollifier_bounds",
        *(f.__name__ for f in PUBLIC),
        *sparse,
    }
    for name in mollifier_package.__all__:
        fn = getattr(mollifier_package, name)
        assert getattr(ldpsample, name) is fn
        assert fn.__module__.startswith("ldpsample.mollifier.")
        assert getattr(importlib.import_module(fn.__module__), name) is fn


# --------------------------------------------------------------------------------------------
# helpers and strategies
# --------------------------------------------------------------------------------------------


def kl_finite(P: np.ndarray, Q: np.ndarray, q: np.ndarray) -> np.ndarray:
    """sum_{q_i > 0, p_i > 0} p_i log(p_i / Q_i): KL when p << q, its finite part otherwise."""
    mask = (q > 0) & (P > 0)
    safe_p = np.where(mask, P, 1.0)
    safe_q = np.where(mask, Q, 1.0)
    return np.where(mask, P * np.log(safe_p / safe_q), 0.0).sum(axis=-1)


def assert_in_mollifier(Q: np.ndarray, q: np.ndarray, epsilon: float) -> None:
    lower, upper = mollifier_bounds(q, epsilon=epsilon)
    below = np.maximum(lower * (1 - 1e-12) - Q, 0)
    above = np.maximum(Q - upper * (1 + 1e-12), 0)
    assert not below.any() and not above.any()
    assert np.all(Q[..., q == 0] == 0)
    np.testing.assert_allclose(Q.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def bisection_kl(p: np.ndarray, q: np.ndarray, epsilon: float) -> np.ndarray:
    """KL projection by bisection on λ = 1/C in h(λ) = sum clip(λ p, a, b) = 1 (non-degenerate)."""
    lower, upper = mollifier_bounds(q, epsilon=epsilon)

    def h(lam: float) -> float:
        return float(np.clip(lam * p, lower, upper).sum())

    lo, hi = 0.0, 1.0
    while h(hi) < 1.0:
        hi *= 2.0
    while True:
        mid = lo + (hi - lo) / 2
        if not lo < mid < hi:
            break
        if h(mid) < 1.0:
            lo = mid
        else:
            hi = mid
    return np.clip(hi * p, lower, upper)


@st.composite
def distributions_q(draw: st.DrawFn, n: int) -> np.ndarray:
    weights = draw(
        st.lists(st.integers(0, 20), min_size=n, max_size=n).filter(lambda w: sum(w) > 0)
    )
    q = np.asarray(weights, dtype=float)
    return q / q.sum()


@st.composite
def user_rows(draw: st.DrawFn, n: int, users: int) -> np.ndarray:
    rows = []
    for _ in range(users):
        kind = draw(st.sampled_from(["point", "sparse", "dense"]))
        if kind == "point":
            row = np.zeros(n)
            row[draw(st.integers(0, n - 1))] = 1.0
        else:
            low = 0 if kind == "sparse" else 1
            weights = draw(
                st.lists(st.integers(low, 9), min_size=n, max_size=n).filter(lambda w: sum(w) > 0)
            )
            row = np.asarray(weights, dtype=float) / sum(weights)
        rows.append(row)
    return np.array(rows)


@st.composite
def instances(draw: st.DrawFn, max_users: int = 4, min_epsilon: float = 1e-3):
    n = draw(st.integers(2, 8))
    q = draw(distributions_q(n))
    P = draw(user_rows(n, draw(st.integers(1, max_users))))
    epsilon = draw(st.floats(min_value=min_epsilon, max_value=10.0))
    return P, q, epsilon


# --------------------------------------------------------------------------------------------
# fast projections against the cvxpy reference
# --------------------------------------------------------------------------------------------


@settings(max_examples=CVXPY_EXAMPLES)
@given(instances())
def test_kl_matches_cvxpy(instance) -> None:
    P, q, epsilon = instance
    fast = relative_mollifier_kl(P, q, epsilon=epsilon)
    reference = mollifier_projection(P, q, epsilon=epsilon, divergence="kl")
    assert_in_mollifier(fast, q, epsilon)
    assert_in_mollifier(reference, q, epsilon)
    fast_value = kl_finite(P, fast, q)
    reference_value = kl_finite(P, reference, q)
    np.testing.assert_allclose(fast_value, reference_value, rtol=0, atol=1e-7)
    assert np.all(fast_value <= reference_value + 1e-12)  # the closed form is the optimum


@settings(max_examples=CVXPY_EXAMPLES)
@given(instances())
def test_tv_matches_cvxpy(instance) -> None:
    P, q, epsilon = instance
    fast = relative_mollifier_tv(P, q, epsilon=epsilon)
    reference = mollifier_projection(P, q, epsilon=epsilon, divergence="tv")
    assert_in_mollifier(fast, q, epsilon)
    value = mollifier_tv_value(P, q, epsilon=epsilon)
    np.testing.assert_allclose(tv_distance(P, fast), value, rtol=0, atol=1e-12)
    np.testing.assert_allclose(tv_distance(P, reference), value, rtol=0, atol=1e-7)


@given(instances(max_users=6, min_epsilon=0.0).filter(lambda inst: inst[2] > 0))
def test_fast_projections_lie_in_mollifier(instance) -> None:
    P, q, epsilon = instance
    for projection in FAST:
        assert_in_mollifier(projection(P, q, epsilon=epsilon), q, epsilon)


@given(instances(max_users=6, min_epsilon=1e-6))
def test_kl_normaliser_matches_bisection(instance) -> None:
    """KKT: p_hat = clip(p / C, a, b) with the C found by bisection, on non-degenerate rows."""
    P, q, epsilon = instance
    lower, upper = mollifier_bounds(q, epsilon=epsilon)
    fast = relative_mollifier_kl(P, q, epsilon=epsilon)
    for p, Q in zip(P, fast, strict=True):
        if np.where(p > 0, upper, lower).sum() < 1.0:
            continue  # degenerate: tested separately
        np.testing.assert_allclose(Q, bisection_kl(p, q, epsilon), rtol=0, atol=1e-12)


def test_kl_exact_with_tiny_masses_next_to_large_ones() -> None:
    """Rows with a mass of 1e-18..1e-15 next to O(1) ones: the Newton steps use direct sums at
    every λ (nothing accumulated across breakpoints), so the result is exact to 1e-14, and rows
    leave the working set as they finish."""
    rng = np.random.default_rng(1)
    big = rng.uniform(0.1, 1.0, size=(100, 3))
    tiny = 10.0 ** rng.uniform(-18, -15, size=(100, 1))
    P = np.hstack([big / big.sum(axis=1, keepdims=True) * (1 - tiny), tiny])
    q = np.array([0.05, 0.07, 0.08, 0.8])
    P = np.vstack([P, np.tile(q, (10, 1))])  # rows in M: finished at the first evaluation
    sizes = []
    original = kl_normaliser_module._h_exact

    def spy(lam, P_rows, *args):
        sizes.append(P_rows.shape[0])
        return original(lam, P_rows, *args)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kl_normaliser_module, "_h_exact", spy)
        fast = relative_mollifier_kl(P, q, epsilon=0.5)
    assert max(sizes) == P.shape[0] and min(sizes) < P.shape[0]
    reference = np.array([bisection_kl(p, q, 0.5) for p in P])
    np.testing.assert_allclose(fast, reference, rtol=0, atol=1e-14)
    assert_in_mollifier(fast, q, 0.5)


def bisection_clip(p: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray | None:
    """clip(λ p, lower, upper) summing to 1, λ by bisection; None if no λ exists."""

    def h(lam: float) -> float:
        return float(np.clip(lam * p, lower, upper).sum())

    if np.where(p > 0, upper, lower).sum() < 1.0:
        return None
    lo, hi = 0.0, 1.0
    while h(hi) < 1.0:
        hi *= 2.0
    while True:
        mid = lo + (hi - lo) / 2
        if not lo < mid < hi:
            break
        if h(mid) < 1.0:
            lo = mid
        else:
            hi = mid
    return np.clip(hi * p, lower, upper)


@st.composite
def clip_instances(draw: st.DrawFn):
    """General bounds (the clip_normalize contract), rows not summing to 1, ties, zeros and
    masses spread over many orders of magnitude."""
    n = draw(st.integers(1, 12))
    lower = np.array(draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), dtype=float)
    extra = np.array(draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), dtype=float)
    if lower.sum() > 0:
        lower *= draw(st.floats(0.05, 0.99)) / lower.sum()
    upper = lower + extra
    if upper.sum() < 1.0:
        upper = upper + (1.0 - upper.sum()) / n + 0.01
    rows = draw(st.integers(1, 5))
    exponent = st.integers(-300, 2) if draw(st.booleans()) else st.integers(-3, 0)
    P = np.array(
        [
            [
                0.0 if draw(st.booleans()) else draw(st.integers(1, 9)) * 10.0 ** draw(exponent)
                for _ in range(n)
            ]
            for _ in range(rows)
        ]
    )
    return P, lower, upper


@given(clip_instances())
def test_kl_core_matches_bisection_on_general_bounds(instance) -> None:
    P, lower, upper = instance
    Q = kl_module.kl_projection_rows(P, lower, upper, upper > 0)
    assert np.all(lower * (1 - 1e-12) <= Q) and np.all(upper * (1 + 1e-12) >= Q)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    for p, row in zip(P, Q, strict=True):
        expected = bisection_clip(p, lower, upper)
        if expected is not None:
            np.testing.assert_allclose(row, expected, rtol=0, atol=1e-12)
        else:  # degenerate: p > 0 coordinates at their upper bound
            np.testing.assert_allclose(row[(p > 0) & (upper > 0)], upper[(p > 0) & (upper > 0)])


@given(instances(max_users=6, min_epsilon=1e-6), st.sampled_from([0, 1, 3]))
def test_kl_bisection_steps_give_the_same_projection(instance, newton_steps: int) -> None:
    """Newton alternating with bisection from the start (and regula falsi where Newton leaves
    the bracket) reaches the same point as plain Newton."""
    P, q, epsilon = instance
    expected = relative_mollifier_kl(P, q, epsilon=epsilon)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kl_normaliser_module, "_NEWTON_STEPS", newton_steps)
        np.testing.assert_allclose(
            relative_mollifier_kl(P, q, epsilon=epsilon), expected, rtol=0, atol=1e-12
        )


def test_kl_flat_piece_at_the_first_guess() -> None:
    """At λ = 1 every coordinate is clipped (slope 0): regula falsi on the bracket takes over."""
    q = np.array([0.5, 0.5])
    p = np.array([0.9, 0.1])
    lower, upper = mollifier_bounds(q, epsilon=0.5)
    assert p[0] > upper[0] and p[1] < lower[1]
    Q = relative_mollifier_kl(p, q, epsilon=0.5)
    np.testing.assert_allclose(Q, bisection_kl(p, q, 0.5), rtol=0, atol=1e-15)
    np.testing.assert_allclose(Q.sum(), 1.0, rtol=0, atol=1e-15)


def test_kl_unnormalised_rows_within_tolerance_and_1d() -> None:
    """Rows are not rescaled before the KL projection (λ absorbs the scale)."""
    rng = np.random.default_rng(9)
    q = rng.dirichlet(np.ones(30))
    P = rng.dirichlet(np.full(30, 0.3), size=20)
    scaled = P * (1 + 4e-10)
    Q = relative_mollifier_kl(scaled, q, epsilon=0.9)
    np.testing.assert_allclose(Q, relative_mollifier_kl(P, q, epsilon=0.9), rtol=0, atol=1e-15)
    np.testing.assert_allclose(relative_mollifier_kl(P[3], q, epsilon=0.9), Q[3], atol=1e-15)


def test_threads_do_not_change_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4)
    q = rng.dirichlet(np.ones(9))
    P = rng.dirichlet(np.full(9, 0.4), size=300)
    P[::7] = np.eye(9)[rng.integers(0, 9, size=P[::7].shape[0])]  # some degenerate rows
    monkeypatch.setattr(chunks_module, "_CHUNK_ELEMENTS", 90)  # 10 rows per chunk
    single = relative_mollifier_kl(P, q, epsilon=0.3)
    monkeypatch.setattr(kl_module, "_THREADED_ELEMENTS", 1)
    np.testing.assert_array_equal(relative_mollifier_kl(P, q, epsilon=0.3), single)


def test_chunks_do_not_change_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    q = rng.dirichlet(np.ones(7))
    P = rng.dirichlet(np.full(7, 0.5), size=50)
    whole = [f(P, q, epsilon=0.7) for f in FAST]
    monkeypatch.setattr(chunks_module, "_CHUNK_ELEMENTS", 20)  # 2 rows of 7 per chunk
    for f, expected in zip(FAST, whole, strict=True):
        np.testing.assert_array_equal(f(P, q, epsilon=0.7), expected)


# --------------------------------------------------------------------------------------------
# the degenerate KL case and other edge cases
# --------------------------------------------------------------------------------------------


def test_degenerate_point_mass() -> None:
    q = np.full(5, 0.2)
    epsilon = 0.1
    p = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
    lower, upper = mollifier_bounds(q, epsilon=epsilon)
    assert upper[0] + lower[1:].sum() < 1  # no normaliser exists

    # What the published code does: brentq on sum clip(x p, a, b) - 1 over [0, 1e4] raises.
    def gap(x: float) -> float:
        return float(np.minimum(np.maximum(lower, x * p), upper).sum() - 1)

    with pytest.raises(ValueError, match="different signs"):
        brentq(gap, 0, 1e4)

    Q = relative_mollifier_kl(p, q, epsilon=epsilon)
    assert_in_mollifier(Q, q, epsilon)
    expected = np.r_[upper[0], np.full(4, (1 - upper[0]) / 4)]  # b on p > 0, t q elsewhere
    np.testing.assert_allclose(Q, expected, rtol=0, atol=1e-15)
    reference = mollifier_projection(p, q, epsilon=epsilon)
    np.testing.assert_allclose(kl_finite(p, Q, q), kl_finite(p, reference, q), atol=1e-7)
    np.testing.assert_allclose(kl_finite(p, Q, q), -math.log(upper[0]), rtol=1e-14)


def test_degenerate_rows_mixed_with_regular_rows() -> None:
    q = np.array([0.1, 0.2, 0.3, 0.4])
    P = np.array([[0.0, 0.0, 0.0, 1.0], [0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0]])
    Q = relative_mollifier_kl(P, q, epsilon=0.2)
    assert_in_mollifier(Q, q, 0.2)
    upper = mollifier_bounds(q, epsilon=0.2)[1]
    np.testing.assert_allclose(Q[0, 3], upper[3])
    np.testing.assert_allclose(Q[0, :3] / q[:3], Q[0, 0] / q[0])  # proportional to q
    np.testing.assert_allclose(Q[2, :2], upper[:2])
    reference = mollifier_projection(P, q, epsilon=0.2)
    np.testing.assert_allclose(kl_finite(P, Q, q), kl_finite(P, reference, q), atol=1e-7)


def test_q_zero_coordinates() -> None:
    q = np.array([0.5, 0.0, 0.5])
    # Mass where q = 0: KL = inf on all of M; the finite part's minimiser is the projection of
    # p conditioned on supp(q).
    p = np.array([0.2, 0.6, 0.2])
    Q = relative_mollifier_kl(p, q, epsilon=1.0)
    assert Q[1] == 0
    np.testing.assert_allclose(Q, relative_mollifier_kl([0.5, 0.0, 0.5], q, epsilon=1.0))
    np.testing.assert_allclose(Q, [0.5, 0.0, 0.5])
    # No mass on supp(q) at all: every Q in M is optimal for the finite part; q is returned.
    only_outside = np.array([0.0, 1.0, 0.0])
    np.testing.assert_allclose(relative_mollifier_kl(only_outside, q, epsilon=1.0), q)
    for f in FAST:
        assert_in_mollifier(f(only_outside, q, epsilon=1.0), q, 1.0)
    np.testing.assert_allclose(mollifier_tv_value(only_outside, q, epsilon=1.0), 1.0)


def test_epsilon_zero_gives_q() -> None:
    q = np.array([0.1, 0.2, 0.7])
    P = np.eye(3)
    for f in (*FAST, mollifier_projection):
        np.testing.assert_allclose(f(P, q, epsilon=0.0), np.tile(q, (3, 1)), atol=1e-15)
    np.testing.assert_allclose(mollifier_tv_value(P, q, epsilon=0), tv_distance(P, q))


@pytest.mark.parametrize("epsilon", [80.0, 1500.0, 1e300])
def test_large_epsilon_does_not_overflow(epsilon: float) -> None:
    q = np.array([0.25, 0.25, 0.5, 0.0])
    P = np.array([[0.1, 0.2, 0.7, 0.0], [0.0, 0.0, 0.5, 0.5]])
    upper = mollifier_bounds(q, epsilon=epsilon)[1]
    assert np.all(np.isfinite(upper)) and np.all(upper <= 1)
    Q = relative_mollifier_kl(P, q, epsilon=epsilon)
    np.testing.assert_allclose(Q[0], P[0], atol=1e-12)  # M is (almost) the whole simplex
    np.testing.assert_allclose(Q[1], [0.0, 0.0, 1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(mollifier_tv_value(P, q, epsilon=epsilon), [0.0, 0.5], atol=1e-12)


def test_shapes() -> None:
    q = np.array([0.3, 0.3, 0.4])
    p = np.array([1.0, 0.0, 0.0])
    for f in (*FAST, mollifier_projection):
        assert f(p, q, epsilon=1.0).shape == (3,)
        assert f(p[None], q, epsilon=1.0).shape == (1, 3)
    assert mollifier_tv_value(p, q, epsilon=1.0).shape == ()
    assert mollifier_tv_value(np.tile(p, (4, 1)), q, epsilon=1.0).shape == (4,)
    lower, upper = mollifier_bounds(q, epsilon=2.0)
    np.testing.assert_allclose(lower, q / math.e)
    np.testing.assert_allclose(upper, np.minimum(q * math.e, 1.0))  # capped at 1: same M


# --------------------------------------------------------------------------------------------
# TV closed form, and the KL point being optimal for every f-divergence
# --------------------------------------------------------------------------------------------


@given(instances(max_users=6, min_epsilon=0.0))
def test_tv_value_is_max_of_excess_and_deficit(instance) -> None:
    P, q, epsilon = instance
    lower, upper = mollifier_bounds(q, epsilon=epsilon)
    excess = np.maximum(P - upper, 0).sum(axis=1)
    deficit = np.maximum(lower - P, 0).sum(axis=1)
    value = mollifier_tv_value(P, q, epsilon=epsilon)
    np.testing.assert_allclose(value, np.maximum(excess, deficit), rtol=0, atol=1e-15)
    Q = relative_mollifier_tv(P, q, epsilon=epsilon)
    np.testing.assert_allclose(tv_distance(P, Q), value, rtol=0, atol=1e-12)
    # clip(p / C, a, b) also attains it (docs/mollifier.md): the KL point is TV-optimal too.
    Q_kl = relative_mollifier_kl(P, q, epsilon=epsilon)
    np.testing.assert_allclose(tv_distance(P, Q_kl), value, rtol=0, atol=1e-12)


@pytest.mark.parametrize("divergence", ["chi2", "hellinger"])
def test_kl_point_is_optimal_for_other_divergences(divergence: str) -> None:
    q = np.array([0.05, 0.1, 0.15, 0.2, 0.5])
    P = np.array([[0.5, 0.2, 0.1, 0.1, 0.1], [0.0, 0.0, 0.0, 1.0, 0.0], [0.2, 0.2, 0.2, 0.2, 0.2]])
    Q_kl = relative_mollifier_kl(P, q, epsilon=0.8)
    reference = mollifier_projection(P, q, epsilon=0.8, divergence=divergence)
    assert_in_mollifier(reference, q, 0.8)
    np.testing.assert_allclose(
        f_divergence(P, reference, divergence), f_divergence(P, Q_kl, divergence), atol=1e-6
    )
    gap = f_divergence(P, reference, divergence) - f_divergence(P, Q_kl, divergence)
    assert np.all(gap >= -1e-9)


def test_projection_with_user_divergence() -> None:
    def builder(p, Q):
        import cvxpy as cp

        return 2 * cp.sum(cp.kl_div(p, Q))

    twice_kl = Divergence.from_function(
        lambda t: 2 * KL.f(t), name="2kl", f_at_zero=0.0, cvxpy_objective=builder
    )
    q = np.array([0.2, 0.3, 0.5])
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    Q = mollifier_projection(P, q, epsilon=0.5, divergence=twice_kl)
    np.testing.assert_allclose(
        kl_finite(P, Q, q), kl_finite(P, relative_mollifier_kl(P, q, epsilon=0.5), q), atol=1e-7
    )


def test_batches_are_independent() -> None:
    rng = np.random.default_rng(5)
    q = rng.dirichlet(np.ones(6))
    P = rng.dirichlet(np.ones(6), size=7)
    one = mollifier_projection(P, q, epsilon=1.0, batch_size=1)
    three = mollifier_projection(P, q, epsilon=1.0, batch_size=3)
    np.testing.assert_allclose(kl_finite(P, one, q), kl_finite(P, three, q), atol=1e-7)


# --------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------

Q3 = np.array([0.2, 0.3, 0.5])
P3 = np.array([[0.6, 0.2, 0.2]])


@pytest.mark.parametrize("function", PUBLIC)
@pytest.mark.parametrize(
    ("epsilon", "error"),
    [
        (math.nan, ValueError),
        (-0.1, ValueError),
        (math.inf, ValueError),
        ("1", TypeError),
        (None, TypeError),
        (True, TypeError),
    ],
)
def test_bad_epsilon(function, epsilon, error) -> None:
    with pytest.raises(error, match="epsilon"):
        function(P3, Q3, epsilon=epsilon)


def test_bad_epsilon_bounds() -> None:
    with pytest.raises(ValueError, match="epsilon"):
        mollifier_bounds(Q3, epsilon=-1)


@pytest.mark.parametrize("function", PUBLIC)
@pytest.mark.parametrize(
    ("q", "match"),
    [
        ([0.2, 0.3, 0.4], "sum to 1"),
        ([-0.2, 0.7, 0.5], "non-negative"),
        ([[0.2, 0.3, 0.5]], "one distribution"),
        ([0.2, math.nan, 0.8], "finite"),
    ],
)
def test_bad_q(function, q, match) -> None:
    with pytest.raises(ValueError, match=match):
        function(P3, q, epsilon=1.0)


@pytest.mark.parametrize("function", PUBLIC)
def test_bad_P(function) -> None:
    with pytest.raises(ValueError, match="items"):
        function([[0.5, 0.5]], Q3, epsilon=1.0)  # shape mismatch
    with pytest.raises(ValueError, match="sum to 1"):
        function([[0.5, 0.4, 0.0]], Q3, epsilon=1.0)
    with pytest.raises(TypeError):
        function("abc", Q3, epsilon=1.0)
    with pytest.raises(TypeError, match="positional"):
        function(P3, Q3, 1.0)  # epsilon is keyword-only


def test_bad_projection_arguments() -> None:
    with pytest.raises(ValueError, match="unknown divergence"):
        mollifier_projection(P3, Q3, epsilon=1.0, divergence="wasserstein")
    with pytest.raises(TypeError, match="divergence"):
        mollifier_projection(P3, Q3, epsilon=1.0, divergence=3)
    no_builder = Divergence.from_function(lambda t: (t - 1) ** 4, name="quartic")
    with pytest.raises(ValueError, match="cvxpy_objective"):
        mollifier_projection(P3, Q3, epsilon=1.0, divergence=no_builder)
    with pytest.raises(ValueError, match="batch_size"):
        mollifier_projection(P3, Q3, epsilon=1.0, batch_size=0)
    with pytest.raises(TypeError, match="batch_size"):
        mollifier_projection(P3, Q3, epsilon=1.0, batch_size=2.5)
    with pytest.raises(ValueError, match="not installed"):
        mollifier_projection(P3, Q3, epsilon=1.0, solver="NOT_A_SOLVER")
    with pytest.raises(TypeError, match="solver"):
        mollifier_projection(P3, Q3, epsilon=1.0, solver=1)
    with pytest.raises(ValueError, match="tol"):
        mollifier_projection(P3, Q3, epsilon=1.0, tol=-1.0)
    with pytest.raises(TypeError, match="solver_options"):
        mollifier_projection(P3, Q3, epsilon=1.0, solver_options=[1])


# --------------------------------------------------------------------------------------------
# solver failures
# --------------------------------------------------------------------------------------------


def test_solver_that_cannot_handle_the_problem() -> None:
    with pytest.raises(RuntimeError, match=r"batch 0 .*HIGHS: solver error"):
        mollifier_projection(P3, Q3, epsilon=1.0, divergence="kl", solver="highs")


def test_non_optimal_status_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    import cvxpy as cp

    monkeypatch.setattr(cp.Problem, "status", property(lambda self: cp.INFEASIBLE))
    P = np.tile(P3, (5, 1))
    with pytest.raises(RuntimeError) as info:
        mollifier_projection(P, Q3, epsilon=1.0, batch_size=2)
    message = str(info.value)
    assert "batch 0 (users 0:2" in message
    assert "CLARABEL" in message and "SCS" in message
    assert "status 'infeasible'" in message


def test_constraint_violation_raises() -> None:
    P = np.array([[0.6, 0.2, 0.2], [0.1, 0.1, 0.8]])
    with pytest.raises(RuntimeError, match="constraint violation"):
        mollifier_projection(P, Q3, epsilon=1.0, solver="SCS", tol=1e-300)


@pytest.mark.parametrize("threads", [None, 1, 2, 3])
def test_kl_does_not_depend_on_threads(monkeypatch: pytest.MonkeyPatch, threads) -> None:
    """``threads`` (a cluster allocation passed down) changes no bit of the result."""
    rng = np.random.default_rng(13)
    q = rng.dirichlet(np.ones(9))
    P = rng.dirichlet(np.full(9, 0.4), size=300)
    P[::7] = np.eye(9)[rng.integers(0, 9, size=P[::7].shape[0])]  # some degenerate rows
    expected = relative_mollifier_kl(P, q, epsilon=0.3, threads=1)
    monkeypatch.setattr(chunks_module, "_CHUNK_ELEMENTS", 90)  # 10 rows per chunk
    monkeypatch.setattr(kl_module, "_THREADED_ELEMENTS", 1)
    np.testing.assert_array_equal(
        relative_mollifier_kl(P, q, epsilon=0.3, threads=threads), expected
    )


@pytest.mark.parametrize(
    ("threads", "error"), [(0, ValueError), (2.0, TypeError), (False, TypeError)]
)
def test_kl_invalid_threads(threads: object, error: type[Exception]) -> None:
    q = np.array([0.25, 0.75])
    with pytest.raises(error, match="threads"):
        relative_mollifier_kl(q, q, epsilon=1.0, threads=threads)


def test_kl_same_bits_for_any_memory_layout() -> None:
    rng = np.random.default_rng(5)
    q = rng.dirichlet(np.ones(50))
    P = rng.dirichlet(np.full(50, 0.5), size=300)
    expected = relative_mollifier_kl(P, q, epsilon=1.0)
    np.testing.assert_array_equal(
        relative_mollifier_kl(np.asfortranarray(P), q, epsilon=1.0), expected
    )
    np.testing.assert_array_equal(relative_mollifier_kl(P[::-1], q, epsilon=1.0), expected[::-1])
