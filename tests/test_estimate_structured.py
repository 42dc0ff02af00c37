"""The minimax kernel's O(n) linear algebra (ldpsample.estimate.structured) against dense
numpy on the same kernel: products from both sides, the solve, every entry of K^{-1}, the
variance moments and cond_1; the facts the analyst relies on (K invertible for ε > 0 and q > 0,
its condition numbers, randomized response at uniform q)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ldpsample import minimax_kernel
from ldpsample.estimate import structured_kernel
from ldpsample.estimate.structured import positive_support


def zipf(n):
    q = 1.0 / np.arange(1, n + 1)
    return q / q.sum()


@st.composite
def priors(draw):
    n = draw(st.integers(1, 40))
    kind = draw(st.sampled_from(["random", "ties", "uniform", "tiny"]))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    if kind == "random":
        q = rng.random(n) ** 3 + 1e-4
    elif kind == "tiny":  # masses from 1e-12 to 1 (rare items of a public prior)
        q = rng.permutation(np.geomspace(1e-12, 1.0, n))
    elif kind == "ties":
        q = rng.integers(1, 4, n).astype(float)
    else:
        q = np.ones(n)
    return q / q.sum(), seed


# Up to the schema's largest ε: from ε ≈ 16 the banded solve E^T T^{-1} E r loses digits to
# cancellation (inf in K^{-1}'s entries from ε ≈ 37, the inversion off by 1e-4 at ε = 30 for
# masses of 1e-12), where the series of StructuredKernel._solve_g_series takes over.
EPSILONS = [0.05, 0.5, 1.0, 3.0, 8.0, 16.0, 24.0, 40.0, 100.0, 700.0]


@given(priors(), st.sampled_from(EPSILONS))
def test_products_solve_and_inverse_match_dense_numpy(prior, epsilon):
    q, seed = prior
    n = q.shape[0]
    rng = np.random.default_rng(seed + 1)
    K = minimax_kernel(q, epsilon=epsilon)
    S = structured_kernel(q, epsilon=epsilon)
    P = rng.dirichlet(np.ones(n), size=3)
    assert np.allclose(S.apply(P), P @ K, rtol=1e-12, atol=1e-15)
    assert np.allclose(S.apply_columns(P), (K @ P.T).T, rtol=1e-12, atol=1e-15)
    inverse = np.linalg.inv(K)
    scale = np.abs(inverse).max()
    assert np.allclose(S.inverse_dense(), inverse, rtol=0, atol=1e-9 * scale)
    assert np.allclose(S.solve(P @ K), P, rtol=0, atol=1e-9 * scale)
    moments = (P[:, :, None] * inverse**2).sum(axis=1)
    assert np.allclose(S.inverse_column_moments(P), moments, rtol=1e-7, atol=1e-12)
    assert S.condition_number() == pytest.approx(np.linalg.cond(K, 1), rel=1e-7)


@given(priors(), st.sampled_from([0.05, 1.0, 8.0]))
def test_the_kernel_is_invertible_with_a_positive_determinant(prior, epsilon):
    """det K = prod(q) det T; T (the tridiagonal of the solve) has a positive determinant."""
    q, _ = prior
    S = structured_kernel(q, epsilon=epsilon)
    ab = S._banded
    T = np.diag(ab[1]) + np.diag(ab[0, 1:], 1) + np.diag(ab[2, :-1], -1)
    sign, log_det_t = np.linalg.slogdet(T)
    assert sign == 1.0
    sign_k, log_det_k = np.linalg.slogdet(minimax_kernel(q, epsilon=epsilon))
    assert sign_k == 1.0
    assert log_det_k == pytest.approx(np.log(q).sum() + log_det_t, abs=1e-8)


@pytest.mark.parametrize(("n", "cond2"), [(18, 63.6), (100, 1149.5)])
def test_condition_numbers_of_zipf_priors_at_epsilon_1(n, cond2):
    K = minimax_kernel(zipf(n), epsilon=1.0)
    assert np.linalg.cond(K) == pytest.approx(cond2, abs=0.1)
    S = structured_kernel(zipf(n), epsilon=1.0)
    assert S.condition_number() == pytest.approx(np.linalg.cond(K, 1), rel=1e-9)


def test_uniform_prior_inverse_is_randomized_responses():
    """K = RR at uniform q: K^{-1} = (I (e^ε + n - 1) - 1 1^T) / (e^ε - 1)."""
    n, eps = 7, 1.3
    S = structured_kernel(np.full(n, 1 / n), epsilon=eps)
    expected = (np.eye(n) * (np.exp(eps) + n - 1) - 1.0) / np.expm1(eps)
    assert np.allclose(S.inverse_dense(), expected, rtol=1e-13, atol=1e-13)


def test_large_domain_solve_round_trips():
    q = zipf(100_000)
    S = structured_kernel(q, epsilon=4.0)
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(100_000))
    assert np.abs(S.solve(S.apply(p)) - p).max() < 1e-9


def test_zero_prior_and_zero_epsilon_are_refused():
    q = np.array([0.0, 0.5, 0.5])
    assert positive_support(q).tolist() == [False, True, True]
    with pytest.raises(ValueError, match="probability 0"):
        structured_kernel(q, epsilon=1.0)
    with pytest.raises(ValueError, match=r"epsilon=0\.0"):
        structured_kernel([0.5, 0.5], epsilon=0.0)
