"""The minimax-optimal kernel: closed form vs the paper's recursion, Theorem 1, Proposition 1."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle import base_case, epsilons, oracle_kernel, priors

from ldpsample.audit import realized_epsilon, worst_case_divergence
from ldpsample.divergences import tv_distance
from ldpsample.minimax import (
    MinimaxKernel,
    apply_minimax,
    binary_kernel,
    minimax_coefficients,
    minimax_kernel,
    minimax_risk,
)

DIVERGENCE_NAMES = ["tv", "kl", "chi2", "hellinger"]


def _prior(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "random":
        q = rng.random(n) ** 3
    elif kind == "ties":
        q = rng.integers(1, 4, n).astype(float)
    else:  # zeros, including a zero in the first (smallest) position when n > 1
        q = rng.random(n)
        q[rng.random(n) < 0.3] = 0.0
        q[-1] = 0.5
        if n > 1:
            q[0] = 0.0
    return q / q.sum()


# --- Closed form == Algorithm 1 -------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 30, 100, 300])
@pytest.mark.parametrize("kind", ["random", "ties", "zeros"])
@pytest.mark.parametrize("ordered", [True, False])
@pytest.mark.parametrize("epsilon", [0.0, 0.5, 3.0, 20.0])
def test_closed_form_matches_recursion(n: int, kind: str, ordered: bool, epsilon: float) -> None:
    rng = np.random.default_rng(1000 * n + len(kind))
    q = _prior(kind, n, rng)
    q = np.sort(q) if ordered else rng.permutation(q)
    K = minimax_kernel(q, epsilon=epsilon)
    np.testing.assert_allclose(K, oracle_kernel(q, epsilon), rtol=0, atol=1e-12)


def test_unsorted_input_is_the_permuted_sorted_kernel() -> None:
    rng = np.random.default_rng(7)
    q = rng.dirichlet(np.ones(12))
    perm = rng.permutation(12)
    K = minimax_kernel(q, epsilon=1.5)
    K_perm = minimax_kernel(q[perm], epsilon=1.5)
    np.testing.assert_allclose(K_perm, K[np.ix_(perm, perm)], rtol=0, atol=1e-15)


def test_ties_get_equal_coefficients_so_order_among_ties_is_irrelevant() -> None:
    q = np.array([0.1, 0.2, 0.2, 0.2, 0.3])
    kernel = minimax_coefficients(q, epsilon=2.0)
    assert kernel.c[1] == kernel.c[2] == kernel.c[3]
    swap = [0, 3, 2, 1, 4]
    K = minimax_kernel(q, epsilon=2.0)
    assert np.array_equal(K[np.ix_(swap, swap)], K)


def test_coefficients_non_increasing_and_read_only() -> None:
    kernel = minimax_coefficients(np.array([0.4, 0.0, 0.1, 0.5]), epsilon=3.0)
    assert np.all(np.diff(kernel.c) <= 0)
    assert np.array_equal(kernel.order, [1, 2, 0, 3])
    assert not kernel.is_sorted
    with pytest.raises(ValueError, match="read-only"):
        kernel.c[0] = 1.0
    np.testing.assert_allclose(kernel.q, [0.4, 0.0, 0.1, 0.5])


def test_closed_form_coefficients_match_the_S_k_product() -> None:
    """c_k = S_{k-1} / ((e^ε - 1) q_k + R_k) computed naively, for a moderate case."""
    q = np.sort(np.random.default_rng(3).dirichlet(np.ones(8)))
    eps = 1.2
    w = math.expm1(eps)
    tails = np.cumsum(q[::-1])[::-1]
    S, c = 1.0, []
    for k in range(8):
        c.append(S / (w * q[k] + tails[k]))
        following = tails[k + 1] if k + 1 < 8 else 0.0
        S *= (w * q[k] + following) / (w * q[k] + tails[k])
    np.testing.assert_allclose(minimax_coefficients(q, epsilon=eps).c, c, rtol=1e-13)


# --- Properties (Theorem 1) on random priors --------------------------------------------------


@given(q=priors(), epsilon=epsilons)
def test_kernel_is_a_private_prior_preserving_markov_kernel(q: np.ndarray, epsilon: float) -> None:
    K = minimax_kernel(q, epsilon=epsilon)
    assert K.shape == (q.size, q.size)
    assert K.min() >= 0
    np.testing.assert_allclose(K.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(q @ K, q, rtol=0, atol=1e-12)
    realized = realized_epsilon(K)
    assert realized <= epsilon + 1e-12
    if q.size >= 2 and np.all(q > 0):
        assert realized == pytest.approx(epsilon, abs=1e-12)  # the constraint is tight


@given(q=priors(), epsilon=epsilons)
def test_worst_case_equals_theorem_1(q: np.ndarray, epsilon: float) -> None:
    K = minimax_kernel(q, epsilon=epsilon)
    gamma_tv = minimax_risk(q, epsilon=epsilon)
    assert 1.0 - np.diagonal(K).min() == pytest.approx(gamma_tv, rel=1e-12, abs=1e-12)
    q_min = q.min()
    e = math.exp(epsilon)
    assert gamma_tv == pytest.approx((1 - q_min) / (e * q_min + 1 - q_min), rel=1e-12, abs=1e-15)
    for name in DIVERGENCE_NAMES:
        worst = worst_case_divergence(K, name)
        risk = minimax_risk(q, epsilon=epsilon, divergence=name)
        if math.isinf(risk):
            assert worst == risk
        else:
            # both sides round 1 - K_min when it is tiny (ε = 20), hence the relative slack
            assert worst == pytest.approx(risk, rel=1e-6, abs=1e-12), name


@given(q=priors(), epsilon=epsilons, users=st.integers(0, 6), seed=st.integers(0, 2**32 - 1))
def test_apply_matches_dense_product(q: np.ndarray, epsilon: float, users: int, seed: int) -> None:
    P = np.random.default_rng(seed).dirichlet(np.ones(q.size), size=users)
    K = minimax_kernel(q, epsilon=epsilon)
    out = apply_minimax(P, q, epsilon=epsilon)
    assert out.shape == P.shape
    np.testing.assert_allclose(out, P @ K, rtol=0, atol=1e-12)


def test_theorem_1_risk_formula_for_each_divergence() -> None:
    q, eps = np.array([0.2, 0.3, 0.5]), 1.0
    e = math.e
    d = e * 0.2 + 0.8
    k = e * 0.2 / d
    assert minimax_risk(q, epsilon=eps) == pytest.approx(0.8 / d, rel=1e-14)
    assert minimax_risk(q, epsilon=eps, divergence="kl") == pytest.approx(
        math.log(1 / k), rel=1e-14
    )
    assert minimax_risk(q, epsilon=eps, divergence="chi2") == pytest.approx(
        k * (1 / k - 1) ** 2 + (1 - k), rel=1e-14
    )
    assert minimax_risk(q, epsilon=eps, divergence="hellinger") == pytest.approx(
        k * (math.sqrt(1 / k) - 1) ** 2 + (1 - k), rel=1e-14
    )


def test_zero_prior_items_are_never_released() -> None:
    q = np.array([0.3, 0.0, 0.7, 0.0])
    K = minimax_kernel(q, epsilon=4.0)
    assert np.all(K[:, [1, 3]] == 0.0)
    np.testing.assert_array_equal(K[1], q)
    np.testing.assert_array_equal(K[3], q)
    assert minimax_risk(q, epsilon=4.0) == 1.0
    assert minimax_risk(q, epsilon=4.0, divergence="kl") == math.inf
    assert minimax_risk(q, epsilon=4.0, divergence="hellinger") == 2.0


def test_epsilon_zero_releases_the_prior_whatever_the_input() -> None:
    q = np.array([0.1, 0.6, 0.3])
    K = minimax_kernel(q, epsilon=0.0)
    np.testing.assert_allclose(K, np.tile(q, (3, 1)), rtol=0, atol=1e-15)


def test_single_item_is_the_identity() -> None:
    assert np.array_equal(minimax_kernel([1.0], epsilon=3.0), [[1.0]])
    assert minimax_risk([1.0], epsilon=3.0, divergence="kl") == 0.0
    assert np.array_equal(apply_minimax([[1.0], [1.0]], [1.0], epsilon=1.0), [[1.0], [1.0]])


@pytest.mark.parametrize("epsilon", [50.0, 800.0, 1e6])
def test_huge_epsilon_stays_finite_and_tends_to_the_identity(epsilon: float) -> None:
    q = np.array([0.5, 0.0, 0.2, 0.3])
    K = minimax_kernel(q, epsilon=epsilon)
    assert np.isfinite(K).all()
    expected = np.eye(4)
    expected[1] = q  # a zero-prior input can only be released as the prior
    np.testing.assert_allclose(K, expected, rtol=0, atol=1e-20)
    P = np.array([[0.1, 0.2, 0.3, 0.4]])
    np.testing.assert_allclose(apply_minimax(P, q, epsilon=epsilon), P @ K, rtol=0, atol=1e-15)
    assert minimax_risk(q, epsilon=epsilon) == 1.0


def test_large_n_and_epsilon_with_zeros_is_stable() -> None:
    rng = np.random.default_rng(11)
    n = 10_000
    q = rng.random(n) ** 4
    q[rng.random(n) < 0.05] = 0.0
    q /= q.sum()
    kernel = minimax_coefficients(q, epsilon=20.0)
    assert np.isfinite(kernel.c).all() and kernel.c.min() > 0
    np.testing.assert_allclose(apply_minimax(q, kernel), q, rtol=0, atol=1e-13)  # qK = q
    rows = np.zeros((5, n))
    rows[np.arange(5), rng.choice(n, 5, replace=False)] = 1.0  # point masses: rows of K
    np.testing.assert_allclose(apply_minimax(rows, kernel).sum(axis=1), 1.0, atol=1e-12)
    small = minimax_kernel(q[:3000] / q[:3000].sum(), epsilon=20.0)
    np.testing.assert_allclose(small.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert realized_epsilon(small) <= 20.0 + 1e-12


# --- apply_minimax -------------------------------------------------------------------------


def test_apply_with_precomputed_kernel_and_across_blocks() -> None:
    rng = np.random.default_rng(5)
    q = rng.dirichlet(np.ones(100))
    P = rng.dirichlet(np.ones(100), size=9000)  # several blocks, the last one partial
    kernel = minimax_coefficients(q, epsilon=1.0)
    assert isinstance(kernel, MinimaxKernel) and kernel.n == 100
    K = minimax_kernel(q, epsilon=1.0)
    expected = P @ K
    np.testing.assert_allclose(apply_minimax(P, kernel), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(kernel.apply(P), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(apply_minimax(P, q, epsilon=1.0), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(apply_minimax(P, kernel, epsilon=1.0), expected, atol=1e-12)
    np.testing.assert_allclose(apply_minimax(np.asfortranarray(P), kernel), expected, atol=1e-12)
    np.testing.assert_allclose(apply_minimax(P[3], kernel), expected[3], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(kernel.dense(), K)
    np.testing.assert_allclose(kernel.diagonal, np.diagonal(K), rtol=0, atol=0)


def test_apply_is_linear_in_rows_within_the_sum_tolerance() -> None:
    q = np.array([0.2, 0.5, 0.3])
    p = np.array([0.3, 0.3, 0.4 + 5e-10])
    np.testing.assert_allclose(
        apply_minimax(p, q, epsilon=1.0), p @ minimax_kernel(q, epsilon=1.0), rtol=0, atol=1e-16
    )


def test_apply_rejects_mismatched_kernel_epsilon() -> None:
    kernel = minimax_coefficients([0.5, 0.5], epsilon=1.0)
    with pytest.raises(ValueError, match="does not match"):
        apply_minimax([0.5, 0.5], kernel, epsilon=2.0)


def test_apply_requires_epsilon_with_an_array_prior() -> None:
    with pytest.raises(TypeError, match="None"):
        apply_minimax([0.5, 0.5], [0.5, 0.5])


# --- Proposition 1 and Example 1 -------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.0, 0.01, 0.2, 0.5])
@pytest.mark.parametrize("epsilon", [0.0, 0.3, 2.0, 9.0])
def test_binary_kernel_is_proposition_1(alpha: float, epsilon: float) -> None:
    e = math.exp(epsilon)
    expected = np.array([[e * alpha, 1 - alpha], [alpha, (e - 1) * alpha + 1 - alpha]]) / (
        e * alpha + 1 - alpha
    )
    K = binary_kernel(alpha, epsilon=epsilon)
    np.testing.assert_allclose(K, expected, rtol=0, atol=1e-14)
    np.testing.assert_allclose(K, base_case(alpha, epsilon), rtol=0, atol=1e-14)


def test_binary_kernel_swaps_roles_above_one_half() -> None:
    K = binary_kernel(0.8, epsilon=1.0)
    np.testing.assert_allclose(K, binary_kernel(0.2, epsilon=1.0)[::-1, ::-1], atol=1e-15)
    assert realized_epsilon(K) == pytest.approx(1.0, abs=1e-12)


def test_example_1_of_the_paper() -> None:
    """q = (0.01, 0.99), p = (0.05, 0.95), ε = 2: TV(p, pK) = 0.03760 vs 0.10728 with uniform q.

    The paper prints these as Γ_TV ≈ 0.03 and 0.1, but they are the errors for this one p;
    Theorem 1's worst case over p is Γ_TV = 0.99 / (0.01 e^2 + 0.99) ≈ 0.9305.
    """
    q, p, eps = np.array([0.01, 0.99]), np.array([0.05, 0.95]), 2.0
    e2 = math.exp(2.0)
    d = 0.01 * e2 + 0.99
    released_1 = (0.05 * e2 * 0.01 + 0.95 * 0.01) / d  # closed form of (pK)_1, Proposition 1
    exact_public = 0.05 - released_1
    exact_uniform = (0.05 * e2 + 0.95) / (e2 + 1) - 0.05  # (pRR)_1 - p_1, RR of n = 2
    public = float(tv_distance(p, apply_minimax(p, q, epsilon=eps)))
    uniform = float(tv_distance(p, apply_minimax(p, [0.5, 0.5], epsilon=eps)))
    assert public == pytest.approx(exact_public, rel=1e-12)
    assert uniform == pytest.approx(exact_uniform, rel=1e-12)
    # The values as rounded here (0.0376, 0.107) and in the paper (0.03, 0.1).
    assert round(public, 4) == 0.0376 and public == pytest.approx(0.0376, abs=1e-4)
    assert round(uniform, 3) == 0.107 and uniform == pytest.approx(0.1073, abs=1e-4)
    assert math.floor(100 * public) / 100 == 0.03 and math.floor(10 * uniform) / 10 == 0.1
    assert minimax_risk(q, epsilon=eps) == pytest.approx(0.99 / d, rel=1e-14)
    assert minimax_risk(q, epsilon=eps) == pytest.approx(0.9305, abs=1e-4)


# --- Input validation -----------------------------------------------------------------------

BAD_EPSILONS = [
    (math.nan, ValueError),
    (-1.0, ValueError),
    (math.inf, ValueError),
    ("2", TypeError),
    (None, TypeError),
    (True, TypeError),
]
BAD_PRIORS = [
    ([0.5, -0.1, 0.6], "non-negative"),
    ([0.5, math.nan, 0.5], "finite"),
    ([0.3, 0.6], "sum to 1"),
    ([[0.5, 0.5], [0.5, 0.5]], "one distribution"),
]


def _calls(q: object, epsilon: object) -> list:
    return [
        lambda: minimax_kernel(q, epsilon=epsilon),
        lambda: minimax_coefficients(q, epsilon=epsilon),
        lambda: minimax_risk(q, epsilon=epsilon),
        lambda: apply_minimax([0.5, 0.5], q, epsilon=epsilon),
    ]


@pytest.mark.parametrize(("epsilon", "error"), BAD_EPSILONS)
def test_bad_epsilon_is_rejected_everywhere(epsilon: object, error: type) -> None:
    for call in [*_calls([0.5, 0.5], epsilon), lambda: binary_kernel(0.3, epsilon=epsilon)]:
        with pytest.raises(error, match="epsilon"):
            call()


@pytest.mark.parametrize(("q", "message"), BAD_PRIORS)
def test_bad_prior_is_rejected_everywhere(q: object, message: str) -> None:
    for call in _calls(q, 1.0):
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.parametrize("P", [[0.2, 0.3, 0.5], [[0.2, 0.8, 0.0]], np.ones((2, 3)) / 3])
def test_apply_rejects_wrong_number_of_items(P: object) -> None:
    with pytest.raises(ValueError, match="2 were expected"):
        apply_minimax(P, [0.5, 0.5], epsilon=1.0)


@pytest.mark.parametrize(
    ("alpha", "error"),
    [
        (-0.1, ValueError),
        (1.5, ValueError),
        (math.nan, ValueError),
        ("0.2", TypeError),
        (None, TypeError),
        (False, TypeError),
    ],
)
def test_binary_kernel_rejects_bad_alpha(alpha: object, error: type) -> None:
    with pytest.raises(error, match="alpha"):
        binary_kernel(alpha, epsilon=1.0)  # type: ignore[arg-type]


def test_threaded_dense_build_equals_the_row_by_row_release():
    """Kernels past the threading threshold (n * n >= 2**20) are filled by several threads;
    they must equal I @ K computed by the O(n) release path, entry for entry."""
    rng = np.random.default_rng(7)
    n = 1100
    q = rng.uniform(size=n)
    q[::9] = 0.0
    q /= q.sum()
    K = minimax_kernel(q, epsilon=2.5)
    np.testing.assert_allclose(K, apply_minimax(np.eye(n), q, epsilon=2.5), rtol=1e-13, atol=1e-17)


# --- apply_minimax: the chunked layout (widths, padding, blocks, threads) ----------------------


@given(
    q=priors(max_n=40),
    epsilon=epsilons,
    users=st.integers(1, 7),
    seed=st.integers(0, 2**32 - 1),
    width=st.sampled_from([1, 2, 3, 5, 16]),
    block=st.sampled_from([1, 7, 64, 65_536]),
)
def test_apply_layout_matches_the_recursion(
    q: np.ndarray,
    epsilon: float,
    users: int,
    seed: int,
    width: int,
    block: int,
) -> None:
    """Any chunk width (padding or not), block size (one row per block up to all rows) and prior
    (ties, zeros, any order) gives P @ K of the paper's recursion."""
    import ldpsample.minimax as minimax_module

    P = np.random.default_rng(seed).dirichlet(np.ones(q.size), size=users)
    P[0] = 0.0
    P[0, seed % q.size] = 1.0  # a point mass: a row of K, exactly
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(minimax_module, "_SCAN_MAX_WIDTH", width)
        mp.setattr(minimax_module, "_BLOCK_ENTRIES", block)
        out = apply_minimax(P, q, epsilon=epsilon)
    K = oracle_kernel(q, epsilon)
    np.testing.assert_allclose(out, P @ K, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[0], K[seed % q.size], rtol=1e-13, atol=1e-17)


@pytest.mark.parametrize("n", [1, 2, 17, 257, 4001])
def test_apply_threads_give_the_same_bits(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    import ldpsample.minimax as minimax_module

    rng = np.random.default_rng(n)
    q = rng.dirichlet(np.ones(n))
    P = rng.dirichlet(np.ones(n), size=40)
    kernel = minimax_coefficients(q, epsilon=0.7)
    monkeypatch.setattr(minimax_module, "_BLOCK_ENTRIES", 3 * n)  # several blocks
    single = apply_minimax(P, kernel)
    monkeypatch.setattr(minimax_module, "_APPLY_THREADED_ENTRIES", 1)
    np.testing.assert_array_equal(apply_minimax(P, kernel), single)
    np.testing.assert_allclose(single, P @ kernel.dense(), rtol=0, atol=1e-13)


@pytest.mark.parametrize("epsilon", [0.0, 1e-12, 30.0, 750.0])
def test_apply_small_and_huge_epsilon_at_n_4000(epsilon: float) -> None:
    rng = np.random.default_rng(4)
    n = 4000
    q = rng.random(n) ** 3
    q[::7] = 0.0
    q /= q.sum()
    P = rng.dirichlet(np.full(n, 0.3), size=6)
    kernel = minimax_coefficients(q, epsilon=epsilon)
    out = apply_minimax(P, kernel)
    assert np.isfinite(out).all() and out.min() >= 0
    np.testing.assert_allclose(out, P @ kernel.dense(), rtol=0, atol=1e-13)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(apply_minimax(P[2], kernel), out[2], rtol=0, atol=0)  # 1-D input


@pytest.mark.parametrize("threads", [None, 1, 2, 3])
def test_results_do_not_depend_on_threads(monkeypatch: pytest.MonkeyPatch, threads) -> None:
    """``threads`` (a cluster allocation passed down) changes no bit of any result."""
    import ldpsample.minimax as minimax_module

    rng = np.random.default_rng(13)
    n = 300
    q = rng.dirichlet(np.ones(n))
    P = rng.dirichlet(np.ones(n), size=50)
    kernel = minimax_coefficients(q, epsilon=1.3)
    expected_apply = apply_minimax(P, kernel, threads=1)
    expected_dense = kernel.dense(threads=1)
    monkeypatch.setattr(minimax_module, "_BLOCK_ENTRIES", 4 * n)  # several blocks
    monkeypatch.setattr(minimax_module, "_APPLY_THREADED_ENTRIES", 1)
    monkeypatch.setattr(minimax_module, "_DENSE_THREADED_ENTRIES", 1)
    np.testing.assert_array_equal(apply_minimax(P, kernel, threads=threads), expected_apply)
    np.testing.assert_array_equal(kernel.apply(P, threads=threads), expected_apply)
    np.testing.assert_array_equal(kernel.dense(threads=threads), expected_dense)
    np.testing.assert_array_equal(minimax_kernel(q, epsilon=1.3, threads=threads), expected_dense)


def test_threads_one_starts_no_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    import ldpsample._threads as threads_module
    import ldpsample.minimax as minimax_module

    def no_pool(*args, **kwargs):
        raise AssertionError("threads=1 must not start a thread pool")

    monkeypatch.setattr(threads_module, "ThreadPoolExecutor", no_pool)
    monkeypatch.setattr(minimax_module, "_APPLY_THREADED_ENTRIES", 1)
    monkeypatch.setattr(minimax_module, "_DENSE_THREADED_ENTRIES", 1)
    monkeypatch.setattr(minimax_module, "_BLOCK_ENTRIES", 64)
    q = np.full(20, 0.05)
    P = np.tile(q, (30, 1))
    kernel = minimax_coefficients(q, epsilon=1.0)
    np.testing.assert_allclose(apply_minimax(P, kernel, threads=1), P, rtol=0, atol=1e-15)
    np.testing.assert_allclose(kernel.dense(threads=1).sum(axis=1), 1.0, rtol=0, atol=1e-14)


@pytest.mark.parametrize(
    ("threads", "error"), [(0, ValueError), (-2, ValueError), (1.5, TypeError), (True, TypeError)]
)
def test_invalid_threads(threads: object, error: type[Exception]) -> None:
    q = np.array([0.25, 0.75])
    with pytest.raises(error, match="threads"):
        apply_minimax(q, q, epsilon=1.0, threads=threads)
    with pytest.raises(error, match="threads"):
        minimax_kernel(q, epsilon=1.0, threads=threads)


@pytest.mark.parametrize("n", [1, 3, 100, 4000])
def test_a_row_does_not_depend_on_the_rest_of_the_batch(n: int) -> None:
    """The matrix products run on full tiles of rows, so a row gets the same bits alone (1-D),
    in any prefix or suffix of the batch and in a short last block."""
    rng = np.random.default_rng(n)
    q = rng.dirichlet(np.ones(n))
    P = rng.dirichlet(np.ones(n), size=37)
    kernel = minimax_coefficients(q, epsilon=0.7)
    full = apply_minimax(P, kernel)
    for r in (1, 2, 5, 16, 17, 33):
        np.testing.assert_array_equal(apply_minimax(P[:r], kernel), full[:r])
        np.testing.assert_array_equal(apply_minimax(P[-r:], kernel), full[-r:])
    for i in (0, 15, 36):
        np.testing.assert_array_equal(apply_minimax(P[i], kernel), full[i])
