"""Kernel audits: realized ε, Lemma 1's worst case, prior preservation, check_kernel."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle import epsilons, priors

from ldpsample.audit import (
    check_kernel,
    minimax_realized_epsilon,
    preserves_prior,
    realized_epsilon,
    worst_case_divergence,
)
from ldpsample.baselines import randomized_response
from ldpsample.divergences import f_divergence
from ldpsample.minimax import MinimaxKernel, minimax_coefficients, minimax_kernel


def test_realized_epsilon_exact_values() -> None:
    K = np.array([[0.5, 0.5], [0.2, 0.8]])
    assert realized_epsilon(K) == pytest.approx(math.log(2.5), rel=1e-15)
    assert realized_epsilon(np.full((3, 4), 0.25)) == 0.0
    assert realized_epsilon(np.array([[0.0, 1.0], [0.0, 1.0]])) == 0.0  # unused output
    assert realized_epsilon(np.array([[0.5, 0.5], [0.0, 1.0]])) == math.inf
    assert realized_epsilon(np.eye(3)) == math.inf


def test_realized_epsilon_rejects_non_kernels() -> None:
    with pytest.raises(ValueError, match="shape"):
        realized_epsilon([0.5, 0.5])
    with pytest.raises(ValueError, match="sum to 1"):
        realized_epsilon([[0.5, 0.4], [0.5, 0.5]])
    with pytest.raises(ValueError, match="non-negative"):
        realized_epsilon([[1.5, -0.5], [0.5, 0.5]])
    with pytest.raises(TypeError):
        realized_epsilon("K")


def _random_kernel(rng: np.random.Generator, n: int) -> np.ndarray:
    K = rng.dirichlet(np.full(n, 0.5), size=n)
    K[rng.random((n, n)) < 0.2] = 0.0  # exercise the zero conventions of D_f
    K[np.arange(n), rng.integers(0, n, n)] += 0.1
    return K / K.sum(axis=1, keepdims=True)


@given(n=st.integers(1, 8), seed=st.integers(0, 10**6))
def test_worst_case_divergence_is_the_sup_over_p(n: int, seed: int) -> None:
    """Lemma 1: the sup of D_f(p || pK) sits at a vertex and depends only on K_ii."""
    rng = np.random.default_rng(seed)
    K = _random_kernel(rng, n)
    vertices = np.eye(n)
    P = np.vstack([vertices, rng.dirichlet(np.ones(n), size=200)])
    for name in ("tv", "kl", "chi2", "hellinger"):
        worst = worst_case_divergence(K, name)
        at_vertices = f_divergence(vertices, vertices @ K, name)
        assert worst == pytest.approx(float(at_vertices.max()), rel=1e-12, abs=1e-15)
        values = f_divergence(P, P @ K, name)
        assert np.all(values <= worst * (1 + 1e-12) + 1e-15), name


def test_worst_case_divergence_of_randomized_response() -> None:
    e = math.exp(1.0)
    diag = e / (e + 3)
    assert worst_case_divergence(randomized_response(4, epsilon=1.0)) == pytest.approx(1 - diag)
    assert worst_case_divergence(randomized_response(4, epsilon=1.0), "kl") == pytest.approx(
        -math.log(diag)
    )
    assert worst_case_divergence(np.array([[0.0, 1.0], [0.5, 0.5]]), "kl") == math.inf
    with pytest.raises(ValueError, match="square"):
        worst_case_divergence(np.full((2, 3), 1 / 3))


def test_preserves_prior() -> None:
    q = np.array([0.2, 0.3, 0.5])
    assert preserves_prior(minimax_kernel(q, epsilon=1.0), q)
    assert not preserves_prior(randomized_response(3, epsilon=1.0), q)
    assert preserves_prior(randomized_response(3, epsilon=1.0), np.full(3, 1 / 3))
    with pytest.raises(ValueError, match="shape"):
        preserves_prior(np.eye(2), q)


def test_check_kernel_accepts_the_minimax_kernel() -> None:
    q = np.array([0.1, 0.0, 0.4, 0.5])
    K = minimax_kernel(q, epsilon=2.0)
    assert check_kernel(K, epsilon=2.0, q=q) is None
    check_kernel(K, epsilon=2.0 + 1e-3)


@pytest.mark.parametrize(
    ("K", "kwargs", "message"),
    [
        (np.array([[1.2, -0.2], [0.5, 0.5]]), {}, "negative entry: K\\[0, 1\\]"),
        (np.array([[0.6, 0.5], [0.5, 0.5]]), {}, "row 0 sums to"),
        (np.array([[0.9, 0.1], [0.1, 0.9]]), {}, "not epsilon-LDP"),
        (np.array([[0.7, 0.3], [0.3, 0.7]]), {"q": [0.2, 0.8]}, "does not preserve the prior"),
        (np.array([[0.7, 0.3], [0.3, 0.7]]), {"q": [0.2, 0.3, 0.5]}, "shape"),
        (np.array([0.5, 0.5]), {}, "2-D"),
        (np.array([[np.nan, 1.0], [0.5, 0.5]]), {}, "non-finite"),
    ],
)
def test_check_kernel_names_the_failure(K: np.ndarray, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_kernel(K, epsilon=1.0, **kwargs)


def test_check_kernel_rejects_bad_types_and_epsilon() -> None:
    with pytest.raises(TypeError, match="real numbers"):
        check_kernel(np.array([["a", "b"]]), epsilon=1.0)
    with pytest.raises(TypeError, match="epsilon"):
        check_kernel(np.eye(2), epsilon="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="epsilon"):
        check_kernel(np.eye(2), epsilon=-1.0)


# --- minimax_realized_epsilon: the O(n) audit against the dense one ---------------------------


@st.composite
def skewed_priors(draw: st.DrawFn) -> np.ndarray:
    """Priors with tiny masses (down to 1e-300), zeros and ties, in any order."""
    n = draw(st.integers(1, 12))
    exponents = draw(st.lists(st.integers(0, 300), min_size=n, max_size=n))
    q = 10.0 ** -np.asarray(exponents, dtype=float)
    q[np.asarray(draw(st.lists(st.booleans(), min_size=n, max_size=n)))] = 0.0
    if q.sum() == 0:
        q[-1] = 1.0
    return np.asarray(draw(st.permutations(list(q / q.sum()))))


@given(
    q=st.one_of(priors(), skewed_priors()),
    epsilon=st.one_of(epsilons, st.sampled_from([50.0, 700.0, 1e6])),
)
def test_minimax_audit_equals_the_dense_audit(q: np.ndarray, epsilon: float) -> None:
    """Ties, zeros, tiny masses, n = 1 and 2, large ε: the same number as the n x n matrix's
    audit (bit for bit: the same products and comparisons), inf included."""
    kernel = minimax_coefficients(q, epsilon=epsilon)
    assert minimax_realized_epsilon(kernel) == realized_epsilon(kernel.dense())


@given(q=priors(min_n=2, zeros=False), epsilon=st.floats(0.01, 20.0))
def test_minimax_audit_is_tight_without_zeros(q: np.ndarray, epsilon: float) -> None:
    assert minimax_realized_epsilon(minimax_coefficients(q, epsilon=epsilon)) == pytest.approx(
        epsilon, rel=1e-9
    )


def test_minimax_audit_exact_values() -> None:
    assert minimax_realized_epsilon(minimax_coefficients([1.0], epsilon=3.0)) == 0.0
    for alpha in (0.1, 0.5, 0.8):
        assert minimax_realized_epsilon(
            minimax_coefficients([alpha, 1 - alpha], epsilon=2.0)
        ) == pytest.approx(2.0, rel=1e-13)
    # A zero-prior item: its column is all zero (ignored), the rest stays tight.
    assert minimax_realized_epsilon(
        minimax_coefficients([0.0, 0.3, 0.7], epsilon=1.5)
    ) == pytest.approx(1.5, rel=1e-13)
    # ε = 0: K = 1 q^T, every column constant.
    assert minimax_realized_epsilon(minimax_coefficients([0.2, 0.3, 0.5], epsilon=0.0)) == 0.0
    # Huge ε: c underflows off the diagonal; the kernel is the identity on the support.
    assert minimax_realized_epsilon(minimax_coefficients([0.5, 0.5], epsilon=1e6)) == math.inf


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_minimax_audit_does_not_trust_the_stated_epsilon(epsilon: float) -> None:
    """Both sides of the privacy claim: coefficients built for 3ε under a label saying ε audit
    at 3ε (so a check against ε fails, as the dense audit does), the genuine kernel at ε."""
    q = np.random.default_rng(5).dirichlet(np.ones(40))
    genuine = minimax_coefficients(q, epsilon=epsilon)
    forged = dataclasses.replace(minimax_coefficients(q, epsilon=3 * epsilon), epsilon=epsilon)
    assert forged.epsilon == epsilon
    assert minimax_realized_epsilon(genuine) == pytest.approx(epsilon, rel=1e-12)
    assert minimax_realized_epsilon(forged) == pytest.approx(3 * epsilon, rel=1e-12)
    assert minimax_realized_epsilon(forged) > epsilon + 1e-9 * max(1.0, epsilon)
    check_kernel(genuine.dense(), epsilon=epsilon)
    with pytest.raises(ValueError, match="not epsilon-LDP"):
        check_kernel(forged.dense(), epsilon=epsilon)


def _kernel_from_arrays(kernel: MinimaxKernel) -> np.ndarray:
    """The sorted-order matrix the fast paths apply, ``K[i, j] = q_j c_{min(i, j)}`` and the
    stored diagonal, built entry by entry for any ``c`` (monotone or not)."""
    n = kernel.n
    i, j = np.indices((n, n))
    K = kernel.q_sorted[j] * kernel.c[np.minimum(i, j)]
    K[np.arange(n), np.arange(n)] = kernel.diagonal_sorted
    return K


@given(n=st.integers(1, 9), seed=st.integers(0, 2**32 - 1))
def test_minimax_audit_of_tampered_coefficients(n: int, seed: int) -> None:
    """Coefficients that are not non-increasing, a diagonal not equal to e^ε q c, zeros: the
    audit still reports what the matrix those arrays define would (it assumes nothing). The
    matrix is not row-stochastic, so its columns are audited here directly."""
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(np.ones(n))
    c = rng.random(n) * (rng.random(n) > 0.2)
    diagonal = rng.random(n) * (rng.random(n) > 0.2)
    K = _kernel_from_arrays(MinimaxKernel(1.0, np.arange(n), q, c, diagonal))
    high, low = K.max(axis=0), K.min(axis=0)
    used = high > 0
    if (low[used] == 0).any():
        expected = math.inf
    else:
        expected = max(
            (math.log(h / lo) for h, lo in zip(high[used], low[used], strict=True)), default=0.0
        )
    got = minimax_realized_epsilon(MinimaxKernel(1.0, np.arange(n), q, c, diagonal))
    assert got == expected or math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-15)


def test_minimax_audit_rejects_what_is_not_a_kernel() -> None:
    with pytest.raises(TypeError, match=r"MinimaxKernel .*got array"):
        minimax_realized_epsilon(np.eye(2))  # type: ignore[arg-type]
    kernel = minimax_coefficients([0.2, 0.3, 0.5], epsilon=1.0)
    bad_c = dataclasses.replace(kernel, c=np.array([1.0, np.nan, 0.5]))
    with pytest.raises(ValueError, match=r"kernel\.c must be finite and non-negative, got nan"):
        minimax_realized_epsilon(bad_c)
    negative = dataclasses.replace(kernel, diagonal_sorted=np.array([0.5, -0.1, 0.5]))
    with pytest.raises(ValueError, match=r"kernel\.diagonal_sorted .* got -0\.1 at index 1"):
        minimax_realized_epsilon(negative)
    short = dataclasses.replace(kernel, q_sorted=np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="one length"):
        minimax_realized_epsilon(short)
