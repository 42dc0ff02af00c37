"""Sparse users (CSR histograms): TV, KL and draws against the dense path (apply_minimax)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from oracle import epsilons, priors

import ldpsample.minimax_sparse as minimax_sparse
from ldpsample.divergences import kl_divergence, tv_distance
from ldpsample.minimax import apply_minimax, minimax_coefficients
from ldpsample.minimax_sparse import (
    inverse_cdf_sorted,
    minimax_divergences_sparse,
    sample_minimax_sparse,
)
from ldpsample.sampling import sample_categorical


def _csr(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    matrix = sp.csr_array(counts)
    return matrix.indptr, matrix.indices, matrix.data


def _dense(counts: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Each row normalised; an empty row is the prior (a user with no data, p := q)."""
    totals = counts.sum(axis=1, keepdims=True)
    safe = np.where(totals > 0, totals, 1.0)
    return np.where(totals > 0, counts / safe, q)


def _counts(rng: np.random.Generator, users: int, n: int) -> np.ndarray:
    """Sparse counts: density from 0 (empty rows) to 1, single items, integer and real counts."""
    counts = rng.random((users, n)) * (rng.random((users, n)) < rng.random())
    counts[rng.random(users) < 0.2] = 0.0
    single = rng.random(users) < 0.2
    counts[single] = 0.0
    counts[single, rng.integers(0, n, single.sum())] = rng.integers(1, 5, single.sum())
    if rng.random() < 0.5:
        counts = np.ceil(counts * 5)
    return counts


@st.composite
def sparse_cases(draw: st.DrawFn):
    q = draw(priors(max_n=30))
    epsilon = draw(st.one_of(epsilons, st.sampled_from([50.0, 700.0])))
    users = draw(st.integers(0, 12))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    return q, epsilon, _counts(rng, users, q.size), rng.random(users)


@given(case=sparse_cases())
def test_divergences_match_the_dense_path(case) -> None:
    q, epsilon, counts, _ = case
    kernel = minimax_coefficients(q, epsilon=epsilon)
    P = _dense(counts, q)
    released = apply_minimax(P, kernel)
    tv, kl = minimax_divergences_sparse(kernel, *_csr(counts))
    assert tv.shape == kl.shape == (counts.shape[0],)
    np.testing.assert_allclose(tv, tv_distance(P, released), rtol=0, atol=1e-12)
    dense_kl = kl_divergence(P, released)
    assert np.array_equal(np.isinf(kl), np.isinf(dense_kl))
    finite = np.isfinite(dense_kl)
    np.testing.assert_allclose(kl[finite], dense_kl[finite], rtol=1e-12, atol=1e-12)
    empty = counts.sum(axis=1) == 0
    assert np.all(tv[empty] == 0) and np.all(kl[empty] == 0)  # p := q releases qK = q


def _near_a_boundary(released: np.ndarray, order: np.ndarray, u: np.ndarray) -> np.ndarray:
    cdf = np.cumsum(released[:, order], axis=1)
    return np.abs(cdf - u[:, None]).min(axis=1) < 1e-12


def _inverse_cdf_within_rounding(
    released: np.ndarray, order: np.ndarray, u: np.ndarray, drawn: np.ndarray
) -> np.ndarray:
    """Whether each drawn item is the dense inverse CDF's answer for a uniform within 1e-12 of
    ``u``: the dense CDF before the item is <= u + 1e-12 and after it > u - 1e-12."""
    cdf = np.cumsum(released[:, order], axis=1)
    rank = np.argsort(order)[drawn]
    rows = np.arange(u.size)
    before = np.where(rank > 0, cdf[rows, np.maximum(rank - 1, 0)], 0.0)
    return (before <= u + 1e-12) & (cdf[rows, rank] > u - 1e-12)


@given(case=sparse_cases())
def test_draws_match_the_dense_inverse_cdf(case) -> None:
    """The same uniforms give the same items as the dense route, but where a uniform lies
    within rounding of a cumulative sum; a released item always has positive mass."""
    q, epsilon, counts, u = case
    kernel = minimax_coefficients(q, epsilon=epsilon)
    released = apply_minimax(_dense(counts, q), kernel)
    drawn = sample_minimax_sparse(kernel, *_csr(counts), uniforms=u)
    expected = inverse_cdf_sorted(released, kernel, uniforms=u)
    assert drawn.dtype == np.intp and drawn.shape == (counts.shape[0],)
    differ = drawn != expected
    assert not np.any(differ & ~_near_a_boundary(released, kernel.order, u))
    assert np.all(_inverse_cdf_within_rounding(released, kernel.order, u, drawn))
    assert np.all(released[np.arange(u.size), drawn] > 0)


@given(case=sparse_cases(), where=st.sampled_from(["cdf", "top"]))
def test_draws_at_the_boundaries(case, where: str) -> None:
    """Uniforms placed exactly on the dense CDF's values (0 included) and just below 1 (beyond
    the rounded total: the last item of positive mass) still release items of positive mass,
    each the dense inverse CDF's item for a uniform within rounding (items of mass far below
    1e-12, as at ε = 50, may lie between the two routes' items)."""
    q, epsilon, counts, u = case
    kernel = minimax_coefficients(q, epsilon=epsilon)
    released = apply_minimax(_dense(counts, q), kernel)
    users = counts.shape[0]
    if where == "top":
        u = np.full(users, np.nextafter(1.0, 0.0))
    elif users:
        cdf = np.cumsum(released[:, kernel.order], axis=1)
        u = np.minimum(cdf[np.arange(users), np.arange(users) % q.size], np.nextafter(1.0, 0.0))
        u[0] = 0.0
    drawn = sample_minimax_sparse(kernel, *_csr(counts), uniforms=u)
    assert np.all(released[np.arange(users), drawn] > 0)
    assert np.all(_inverse_cdf_within_rounding(released, kernel.order, u, drawn))
    expected = inverse_cdf_sorted(released, kernel, uniforms=u)
    assert np.all(_inverse_cdf_within_rounding(released, kernel.order, u, expected))


def test_inverse_cdf_sorted_is_sample_categorical_on_a_sorted_prior() -> None:
    """With q already ascending the sorted order is the caller's: the dense reference is
    sample_categorical with the generator's uniforms, overflow rule included."""
    rng = np.random.default_rng(3)
    q = np.sort(rng.dirichlet(np.ones(50)))
    kernel = minimax_coefficients(q, epsilon=1.0)
    assert kernel.is_sorted
    released = apply_minimax(rng.dirichlet(np.full(50, 0.3), size=2000), kernel)
    expected = sample_categorical(released, rng=np.random.default_rng(9))
    u = np.random.default_rng(9).random(2000)
    assert np.array_equal(inverse_cdf_sorted(released, kernel, uniforms=u), expected)
    short = released * (1 - 1e-15)  # totals below 1 within the tolerance: the overflow rule
    top = np.full(2000, np.nextafter(1.0, 0.0))
    assert np.array_equal(inverse_cdf_sorted(short, kernel, uniforms=top), np.full(2000, 49))


@pytest.mark.parametrize("epsilon", [0.5, 3.0])
def test_empirical_frequencies_match_pK(epsilon: float) -> None:
    """200,000 draws of each of three users (spread, single item, empty) against pK: every
    item's frequency within 5 standard deviations, and a chi-square well below its 1e-6 tail."""
    rng = np.random.default_rng(11)
    n = 40
    q = rng.dirichlet(np.ones(n))
    q[[3, 17]] = 0.0
    q[[5, 6, 7]] = q[5]  # ties
    q /= q.sum()
    kernel = minimax_coefficients(q, epsilon=epsilon)
    counts = np.zeros((3, n))
    counts[0, [0, 5, 9, 17, 30]] = [3, 1, 2, 1, 5]
    counts[1, 12] = 4
    draws = 200_000
    for user in range(3):
        row = np.repeat(counts[user : user + 1], draws, axis=0)
        drawn = sample_minimax_sparse(kernel, *_csr(row), uniforms=rng.random(draws))
        frequency = np.bincount(drawn, minlength=n) / draws
        pK = apply_minimax(_dense(counts[user : user + 1], q), kernel)[0]
        assert np.all(frequency[pK == 0] == 0)
        sd = np.sqrt(pK * (1 - pK) / draws)
        assert np.all(np.abs(frequency - pK) <= 5 * sd + 1e-12)
        used = pK > 0
        chi2 = draws * np.sum((frequency[used] - pK[used]) ** 2 / pK[used])
        assert chi2 < used.sum() + 10 * math.sqrt(2 * used.sum())


def test_a_user_does_not_depend_on_the_batch(monkeypatch) -> None:
    """A user's TV, KL and draw are the same bits alone, among other users and whatever the
    block size: rows are processed on their own (padding adds zeros only)."""
    rng = np.random.default_rng(4)
    n = 300
    q = rng.dirichlet(np.full(n, 0.5))
    kernel = minimax_coefficients(q, epsilon=2.0)
    lengths = rng.integers(0, 70, 500)
    counts = np.zeros((500, n))
    for user, k in enumerate(lengths):
        counts[user, rng.choice(n, k, replace=False)] = rng.integers(1, 9, k)
    u = rng.random(500)
    csr = _csr(counts)
    tv, kl = minimax_divergences_sparse(kernel, *csr)
    drawn = sample_minimax_sparse(kernel, *csr, uniforms=u)
    monkeypatch.setattr(minimax_sparse, "_BLOCK_ENTRIES", 64)
    tv_small, kl_small = minimax_divergences_sparse(kernel, *csr)
    assert np.array_equal(tv, tv_small) and np.array_equal(kl, kl_small)
    assert np.array_equal(drawn, sample_minimax_sparse(kernel, *csr, uniforms=u))
    for user in (0, 7, 123, 499):
        one = _csr(counts[user : user + 1])
        tv1, kl1 = minimax_divergences_sparse(kernel, *one)
        assert tv1[0] == tv[user] and kl1[0] == kl[user]
        assert sample_minimax_sparse(kernel, *one, uniforms=u[user : user + 1])[0] == drawn[user]


def test_unsorted_rows_and_integer_counts() -> None:
    """Items in any order within a row, counts of any integer dtype, 32-bit indices."""
    q = np.array([0.4, 0.1, 0.2, 0.3])
    kernel = minimax_coefficients(q, epsilon=1.0)
    indptr = np.array([0, 3], dtype=np.int32)
    indices = np.array([3, 0, 1], dtype=np.int32)
    data = np.array([1, 2, 1], dtype=np.uint8)
    p = np.array([[2, 1, 0, 1]]) / 4
    tv, kl = minimax_divergences_sparse(kernel, indptr, indices, data)
    released = apply_minimax(p, kernel)
    assert tv[0] == pytest.approx(float(tv_distance(p, released)[0]), abs=1e-15)
    assert kl[0] == pytest.approx(float(kl_divergence(p, released)[0]), abs=1e-15)


def test_no_users() -> None:
    kernel = minimax_coefficients([0.5, 0.5], epsilon=1.0)
    tv, kl = minimax_divergences_sparse(kernel, [0], [], [])
    assert tv.shape == kl.shape == (0,)
    drawn = sample_minimax_sparse(kernel, [0], [], [], uniforms=[])
    assert drawn.shape == (0,) and drawn.dtype == np.intp


def test_an_item_of_prior_zero_makes_kl_infinite_and_is_never_released() -> None:
    q = np.array([0.0, 0.5, 0.5])
    kernel = minimax_coefficients(q, epsilon=2.0)
    tv, kl = minimax_divergences_sparse(kernel, [0, 1, 3], [0, 0, 2], [1.0, 1.0, 1.0])
    assert kl[0] == math.inf and kl[1] == math.inf
    assert tv[0] == 1.0  # all of p sits where pK is 0
    drawn = sample_minimax_sparse(kernel, [0, 1, 3], [0, 0, 2], [1.0, 1.0, 1.0], uniforms=[0, 0])
    assert np.all(drawn != 0)


def test_single_item_catalogue() -> None:
    kernel = minimax_coefficients([1.0], epsilon=1.0)
    tv, kl = minimax_divergences_sparse(kernel, [0, 1, 1], [0], [3.0])
    assert np.array_equal(tv, [0.0, 0.0]) and np.array_equal(kl, [0.0, 0.0])
    drawn = sample_minimax_sparse(kernel, [0, 1, 1], [0], [3.0], uniforms=[0.9, 0.0])
    assert np.array_equal(drawn, [0, 0])


_KERNEL = minimax_coefficients([0.2, 0.3, 0.5], epsilon=1.0)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("K", [0, 1], [0], [1.0]), TypeError, "MinimaxKernel .*got 'K' of type str"),
        ((_KERNEL, [0.0, 1.0], [0], [1.0]), TypeError, "indptr must be a 1-D array of integers"),
        ((_KERNEL, [0, 1], [0.5], [1.0]), TypeError, "indices must be a 1-D array of integers"),
        ((_KERNEL, [0, 1], [0], ["a"]), TypeError, "data must be a 1-D array of real counts"),
        ((_KERNEL, [0, 1], [0], [True]), TypeError, "data must be a 1-D array of real counts"),
        ((_KERNEL, [[0, 1]], [0], [1.0]), ValueError, "indptr must be a 1-D array"),
        ((_KERNEL, [1, 1], [0], [1.0]), ValueError, "indptr must start with 0.*got 1"),
        ((_KERNEL, [], [], []), ValueError, "indptr must start with 0.*got None"),
        ((_KERNEL, [0, 2, 1], [0, 1], [1.0, 1.0]), ValueError, r"indptr\[1\] = 2 > indptr\[2\]"),
        ((_KERNEL, [0, 2], [0], [1.0]), ValueError, "indptr\\[-1\\] = 2, len\\(indices\\) = 1"),
        ((_KERNEL, [0, 1], [3], [1.0]), ValueError, r"items in \[0, 3\).*got 3 at position 0"),
        ((_KERNEL, [0, 1], [-1], [1.0]), ValueError, "got -1 at position 0"),
        ((_KERNEL, [0, 2], [0, 1], [1.0, -2.0]), ValueError, "got -2.0 at position 1"),
        ((_KERNEL, [0, 1], [0], [math.nan]), ValueError, "finite non-negative counts, got nan"),
        ((_KERNEL, [0, 1, 3], [0, 1, 1], [1, 1, 1]), ValueError, "row 1 lists item 1 more"),
        ((_KERNEL, [0, 0, 2], [0, 1], [0, 0]), ValueError, "row 1 has counts summing to 0"),
    ],
)
def test_bad_csr_input_is_named(args, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        minimax_divergences_sparse(*args)
    with pytest.raises(error, match=message):
        sample_minimax_sparse(*args, uniforms=np.zeros(max(len(args[1]) - 1, 0)))


@pytest.mark.parametrize(
    ("uniforms", "error", "message"),
    [
        ([0.5], ValueError, r"shape \(2,\), one per user, got \(1,\)"),
        ([0.5, 1.0], ValueError, r"\[0, 1\), got 1.0 at index 1"),
        ([-0.1, 0.5], ValueError, "got -0.1 at index 0"),
        ([math.nan, 0.5], ValueError, "got nan at index 0"),
        (["a", "b"], TypeError, "uniforms must be an array of floats"),
        ([True, False], TypeError, "uniforms must be an array of floats"),
    ],
)
def test_bad_uniforms_are_named(uniforms, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        sample_minimax_sparse(_KERNEL, [0, 1, 1], [0], [1.0], uniforms=uniforms)


def test_inverse_cdf_sorted_checks_its_input() -> None:
    with pytest.raises(ValueError, match=r"shape \(users, n\)"):
        inverse_cdf_sorted([0.2, 0.3, 0.5], _KERNEL, uniforms=[0.1])
    with pytest.raises(ValueError, match="probs has 2 items but 3 were expected"):
        inverse_cdf_sorted([[0.5, 0.5]], _KERNEL, uniforms=[0.1])
    with pytest.raises(TypeError, match="kernel must be a MinimaxKernel"):
        inverse_cdf_sorted([[0.2, 0.3, 0.5]], None, uniforms=[0.1])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="uniforms must have shape"):
        inverse_cdf_sorted([[0.2, 0.3, 0.5]], _KERNEL, uniforms=[0.1, 0.2])
