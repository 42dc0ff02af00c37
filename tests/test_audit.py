"""Kernel audits: realized ε, Lemma 1's worst case, prior preservation, check_kernel."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ldpsample.audit import check_kernel, preserves_prior, realized_epsilon, worst_case_divergence
from ldpsample.baselines import randomized_response
from ldpsample.divergences import f_divergence
from ldpsample.minimax import minimax_kernel


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
