"""Sparse users (CSR histograms) under the relative mollifiers and randomized response: the
output distributions, TV and KL against the dense implementations."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from oracle import epsilons, priors

from ldpsample.baselines import (
    linear_minimax,
    randomized_response_divergences_sparse,
    randomized_response_sparse,
)
from ldpsample.divergences import kl_divergence, tv_distance
from ldpsample.mollifier import (
    mollifier_divergences_sparse,
    relative_mollifier_kl,
    relative_mollifier_kl_sparse,
    relative_mollifier_tv,
    relative_mollifier_tv_sparse,
    sparse,
    sparse_mollifier,
)

DENSE = {"tv": relative_mollifier_tv, "kl": relative_mollifier_kl}
SPARSE = {"tv": relative_mollifier_tv_sparse, "kl": relative_mollifier_kl_sparse}


def _csr(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    matrix = sp.csr_array(counts)
    return matrix.indptr, matrix.indices, matrix.data


@st.composite
def sparse_cases(draw: st.DrawFn):
    """A prior (zeros, ties), ε, and non-empty users: any density, single items (k = 1) and
    full rows (k = n), integer counts (ties in p) or real ones."""
    q = draw(priors(max_n=30))
    epsilon = draw(st.one_of(epsilons, st.sampled_from([50.0, 700.0])))
    users = draw(st.integers(1, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = q.size
    counts = rng.random((users, n)) * (rng.random((users, n)) < rng.random())
    single = rng.random(users) < 0.2
    counts[single] = 0.0
    counts[single, rng.integers(0, n, single.sum())] = rng.integers(1, 5, single.sum())
    full = rng.random(users) < 0.2
    counts[full] = rng.random((full.sum(), n)) + 0.01
    if rng.random() < 0.5:
        counts = np.ceil(counts * 3)
    empty = counts.sum(axis=1) == 0
    counts[empty, rng.integers(0, n, empty.sum())] = 1.0
    return q, epsilon, counts


def _check_divergences(tv, kl, P, released) -> None:
    np.testing.assert_allclose(tv, tv_distance(P, released), rtol=0, atol=1e-12)
    dense_kl = kl_divergence(P, released)
    assert np.array_equal(np.isinf(kl), np.isinf(dense_kl))
    finite = np.isfinite(dense_kl)
    np.testing.assert_allclose(kl[finite], dense_kl[finite], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("projection", ["tv", "kl"])
@given(case=sparse_cases())
def test_mollifier_projections_match_the_dense_path(projection, case) -> None:
    q, epsilon, counts = case
    P = counts / counts.sum(axis=1, keepdims=True)
    dense = DENSE[projection](P, q, epsilon=epsilon)
    mollifier = sparse_mollifier(q, epsilon=epsilon)
    csr = _csr(counts)
    released = SPARSE[projection](mollifier, *csr).to_dense(mollifier, *csr[:2])
    np.testing.assert_allclose(released, dense, rtol=0, atol=1e-12)
    tv, kl = mollifier_divergences_sparse(mollifier, *csr, projection=projection)
    _check_divergences(tv, kl, P, dense)


@given(case=sparse_cases())
def test_randomized_response_matches_the_dense_path(case) -> None:
    q, epsilon, counts = case
    n = q.size
    P = counts / counts.sum(axis=1, keepdims=True)
    dense = linear_minimax(P, epsilon=epsilon)
    csr = _csr(counts)
    values, off = randomized_response_sparse(*csr, n=n, epsilon=epsilon)
    released = np.full(P.shape, off)
    lengths = np.diff(csr[0])
    released[np.repeat(np.arange(lengths.size), lengths), csr[1]] = values
    np.testing.assert_allclose(released, dense, rtol=0, atol=1e-12)
    tv, kl = randomized_response_divergences_sparse(*csr, n=n, epsilon=epsilon)
    _check_divergences(tv, kl, P, dense)


@pytest.mark.parametrize("projection", ["tv", "kl"])
def test_a_projection_that_forgets_the_items_off_the_support_fails(projection, monkeypatch) -> None:
    """The comparison has teeth: with the mass off the support taken as 0 (each item there
    still at its lower bound) the same check fails."""
    q = np.array([0.4, 0.3, 0.15, 0.1, 0.05])
    counts = np.array([[0.0, 0.0, 3.0, 1.0, 0.0], [6.0, 0.0, 0.0, 0.0, 0.0]])
    P = counts / counts.sum(axis=1, keepdims=True)
    mollifier = sparse_mollifier(q, epsilon=1.0)
    csr = _csr(counts)
    monkeypatch.setattr(sparse, "_off_lower_mass", lambda m, scale, *rest: np.zeros(scale.size))
    tv, _ = mollifier_divergences_sparse(mollifier, *csr, projection=projection)
    dense = DENSE[projection](P, q, epsilon=1.0)
    assert np.abs(tv - tv_distance(P, dense)).max() > 1e-3


def test_an_empty_row_is_the_prior() -> None:
    q = np.array([0.5, 0.25, 0.25])
    mollifier = sparse_mollifier(q, epsilon=2.0)
    csr = (np.array([0, 0, 1]), np.array([2]), np.array([4.0]))
    for projection in ("tv", "kl"):
        out = SPARSE[projection](mollifier, *csr).to_dense(mollifier, *csr[:2])
        np.testing.assert_array_equal(out[0], q)
        tv, kl = mollifier_divergences_sparse(mollifier, *csr, projection=projection)
        assert tv[0] == 0.0 and kl[0] == 0.0 and tv[1] > 0.0
    with pytest.raises(ValueError, match="row 0 is empty"):
        randomized_response_divergences_sparse(*csr, n=3, epsilon=2.0)


@pytest.mark.parametrize(
    ("csr", "message"),
    [
        ((np.array([0, 2]), np.array([1, 1]), np.array([1.0, 2.0])), "row 0 lists item 1"),
        ((np.array([0, 2]), np.array([1, 0]), np.array([0.0, 0.0])), "row 0 has counts summing"),
        ((np.array([0, 1]), np.array([3]), np.array([1.0])), r"items in \[0, 3\) of the prior"),
        ((np.array([0, 1]), np.array([0]), np.array([-1.0])), "non-negative counts, got -1.0"),
    ],
)
def test_bad_rows_are_named(csr, message) -> None:
    mollifier = sparse_mollifier(np.array([0.5, 0.25, 0.25]), epsilon=1.0)
    with pytest.raises(ValueError, match=message):
        mollifier_divergences_sparse(mollifier, *csr, projection="kl")


def test_the_projection_is_named() -> None:
    mollifier = sparse_mollifier(np.array([0.5, 0.5]), epsilon=1.0)
    with pytest.raises(ValueError, match="projection must be 'tv' or 'kl', got 'chi2'"):
        mollifier_divergences_sparse(mollifier, [0, 1], [0], [1.0], projection="chi2")
    with pytest.raises(TypeError, match="mollifier must be a SparseMollifier"):
        mollifier_divergences_sparse(np.ones(2), [0, 1], [0], [1.0], projection="tv")


def test_no_users_give_empty_float_arrays() -> None:
    mollifier = sparse_mollifier(np.array([0.5, 0.5]), epsilon=1.0)
    csr = ([0], np.array([], dtype=np.int64), np.array([]))
    results = [
        *(mollifier_divergences_sparse(mollifier, *csr, projection=p) for p in ("tv", "kl")),
        randomized_response_divergences_sparse(*csr, n=2, epsilon=1.0),
    ]
    for tv, kl in results:
        assert tv.shape == kl.shape == (0,) and tv.dtype == kl.dtype == np.float64


def _realised_epsilon(Q: np.ndarray) -> float:
    """``max_x max_{u, v} log(Q_u(x) / Q_v(x))`` over the rows (0/0 counts as 1)."""
    high, low = Q.max(axis=0), Q.min(axis=0)
    with np.errstate(divide="ignore"):
        ratio = np.divide(high, low, out=np.ones_like(high), where=high > 0)
    return float(np.log(ratio).max())


@pytest.mark.parametrize("projection", ["tv", "kl"])
@given(case=sparse_cases())
def test_sparse_projections_are_epsilon_ldp(projection, case) -> None:
    """Every user's output lies in M, so any two users' outputs are within e^ε of each other
    item by item: sampling from it is ε-LDP. The users' own distributions (no projection) fail
    the same check."""
    q, epsilon, counts = case
    mollifier = sparse_mollifier(q, epsilon=epsilon)
    csr = _csr(counts)
    Q = SPARSE[projection](mollifier, *csr).to_dense(mollifier, *csr[:2])
    lower, upper = mollifier.lower, mollifier.upper
    assert np.all(lower * (1 - 1e-12) <= Q)
    assert np.all(upper * (1 + 1e-12) >= Q)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert _realised_epsilon(Q) <= epsilon * (1 + 1e-9) + 1e-9


def test_the_users_own_distributions_fail_the_privacy_check() -> None:
    q = np.full(4, 0.25)
    counts = np.array([[3.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
    P = counts / counts.sum(axis=1, keepdims=True)
    assert _realised_epsilon(P) > 1.0
    mollifier = sparse_mollifier(q, epsilon=1.0)
    csr = _csr(counts)
    Q = relative_mollifier_kl_sparse(mollifier, *csr).to_dense(mollifier, *csr[:2])
    assert _realised_epsilon(Q) <= 1.0 + 1e-12
