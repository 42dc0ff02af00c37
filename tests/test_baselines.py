"""Randomized response (Corollary 2) and the samplers of Park et al. (2024) without public data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle import epsilons, priors

from ldpsample.audit import realized_epsilon
from ldpsample.baselines import linear_minimax, nonlinear_minimax, randomized_response
from ldpsample.minimax import minimax_kernel


def _bisection_reference(p: np.ndarray, epsilon: float) -> np.ndarray:
    """``max(p / r, m)`` with ``r`` found by bisection on ``sum_j max(p_j / r, m) = 1``."""
    n = p.size
    m = 1.0 / (math.exp(epsilon) + n - 1)
    total = lambda r: float(np.maximum(p / r, m).sum())  # noqa: E731 - decreasing in r
    lo, hi = 1e-12, 2.0 * p.max() / m  # total(lo) > 1 >= total(hi) = n m
    for _ in range(400):
        mid = math.sqrt(lo * hi)
        if total(mid) > 1.0:
            lo = mid
        else:
            hi = mid
    return np.maximum(p / hi, m)


@pytest.mark.parametrize("n", [1, 2, 3, 10, 64])
@pytest.mark.parametrize("epsilon", [0.0, 0.7, 3.0, 20.0])
def test_randomized_response_is_minimax_with_uniform_prior(n: int, epsilon: float) -> None:
    K = randomized_response(n, epsilon=epsilon)
    e = math.exp(epsilon)
    expected = (e * np.eye(n) + (np.ones((n, n)) - np.eye(n))) / (e + n - 1)
    np.testing.assert_allclose(K, expected, rtol=1e-14, atol=0)
    np.testing.assert_allclose(minimax_kernel(np.full(n, 1 / n), epsilon=epsilon), K, atol=1e-14)
    np.testing.assert_allclose(K.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    if n > 1:
        assert realized_epsilon(K) == pytest.approx(epsilon, abs=1e-12)


@given(n=st.integers(1, 30), epsilon=epsilons, users=st.integers(0, 5), seed=st.integers(0, 99))
def test_linear_minimax_is_P_times_RR(n: int, epsilon: float, users: int, seed: int) -> None:
    P = np.random.default_rng(seed).dirichlet(np.ones(n), size=users)
    out = linear_minimax(P, epsilon=epsilon)
    np.testing.assert_allclose(out, P @ randomized_response(n, epsilon=epsilon), atol=1e-15)
    if users:
        np.testing.assert_allclose(linear_minimax(P[0], epsilon=epsilon), out[0], atol=0)


@given(p=priors(max_n=20), epsilon=epsilons)
def test_nonlinear_minimax_matches_bisection_and_bounds(p: np.ndarray, epsilon: float) -> None:
    n = p.size
    Q = nonlinear_minimax(p, epsilon=epsilon)
    low = 1.0 / (math.exp(epsilon) + n - 1)
    assert Q.shape == p.shape
    assert Q.sum() == pytest.approx(1.0, abs=1e-12)
    assert Q.min() >= low * (1 - 1e-12)
    assert Q.max() <= math.exp(epsilon) * low * (1 + 1e-12)
    np.testing.assert_allclose(Q, _bisection_reference(p, epsilon), rtol=1e-9, atol=1e-15)
    # a sample from Q is ε-LDP: any two users' release probabilities differ by at most e^ε
    assert Q.max() / Q.min() <= math.exp(epsilon) * (1 + 1e-12)


def test_nonlinear_minimax_vectorised_over_users() -> None:
    rng = np.random.default_rng(2)
    P = rng.dirichlet(np.full(8, 0.3), size=50)
    P[0] = np.eye(8)[3]
    P[1] = 1 / 8
    Q = nonlinear_minimax(P, epsilon=1.5)
    for p, row in zip(P, Q, strict=True):
        np.testing.assert_allclose(row, _bisection_reference(p, 1.5), rtol=1e-9)
    e = math.exp(1.5)
    assert Q[0, 3] == pytest.approx(e / (e + 7), rel=1e-14)  # a point mass hits the upper bound
    np.testing.assert_allclose(Q[1], 1 / 8, rtol=1e-14)  # the uniform is released unchanged


def test_nonlinear_minimax_limits() -> None:
    p = np.array([0.6, 0.3, 0.1, 0.0])
    np.testing.assert_allclose(nonlinear_minimax(p, epsilon=0.0), 0.25, rtol=1e-14)
    np.testing.assert_allclose(nonlinear_minimax(p, epsilon=1e4), p, rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    ("n", "error"),
    [
        (0, ValueError),
        (-3, ValueError),
        (2.0, TypeError),
        ("3", TypeError),
        (True, TypeError),
        (None, TypeError),
    ],
)
def test_randomized_response_rejects_bad_n(n: object, error: type) -> None:
    with pytest.raises(error, match="n must"):
        randomized_response(n, epsilon=1.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("epsilon", "error"),
    [
        (math.nan, ValueError),
        (-1.0, ValueError),
        (math.inf, ValueError),
        ("2", TypeError),
        (None, TypeError),
        (True, TypeError),
    ],
)
def test_baselines_reject_bad_epsilon(epsilon: object, error: type) -> None:
    with pytest.raises(error, match="epsilon"):
        randomized_response(3, epsilon=epsilon)  # type: ignore[arg-type]
    with pytest.raises(error, match="epsilon"):
        linear_minimax([0.5, 0.5], epsilon=epsilon)  # type: ignore[arg-type]
    with pytest.raises(error, match="epsilon"):
        nonlinear_minimax([0.5, 0.5], epsilon=epsilon)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("P", "message"),
    [
        ([0.5, -0.1, 0.6], "non-negative"),
        ([0.5, math.nan], "finite"),
        ([0.3, 0.6], "sum to 1"),
        (np.ones((2, 2, 2)) / 2, "shape"),
    ],
)
def test_baselines_reject_bad_distributions(P: object, message: str) -> None:
    for mechanism in (linear_minimax, nonlinear_minimax):
        with pytest.raises(ValueError, match=message):
            mechanism(P, epsilon=1.0)
