"""Wasserstein projection mechanism: privacy, optimality and cross-checks between solvers."""

from __future__ import annotations

import itertools
import math

import cvxpy as cp
import numpy as np
import ot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpsample.divergences import kl_divergence
from ldpsample.wasserstein import (
    clip_normalize,
    dirac_projection,
    exponential_mechanism,
    exponential_sensitivity,
    kl_projection_mechanism,
    optimal_base_measure,
    optimal_uniform_base_measure,
    sample_outputs,
    sinkhorn_iterates,
    transport_cost,
    uniform_base_measure,
    wasserstein_projection,
    worst_case_cost,
)

# --------------------------------------------------------------------------------------------
# Fixtures and helpers
# --------------------------------------------------------------------------------------------


def planar(n: int, m: int, seed: int) -> np.ndarray:
    """Euclidean cost between n random input points and m random output points in [0, 1]^2."""
    rng = np.random.default_rng(seed)
    x, y = rng.random((n, 2)), rng.random((m, 2))
    return np.linalg.norm(x[:, None] - y[None], axis=2)


def random_mu(m: int, total: float, seed: int) -> np.ndarray:
    w = np.random.default_rng(seed).random(m) + 0.1
    return w / w.sum() * total


def in_polytope(Q: np.ndarray, mu: np.ndarray, eps: float, tol: float = 1e-12) -> bool:
    upper = np.minimum(np.exp(eps) * mu, 1.0)
    return bool(
        (mu * (1 - 1e-12) - tol <= Q).all()
        and (upper * (1 + 1e-12) + tol >= Q).all()
        and np.allclose(Q.sum(axis=-1), 1.0, atol=1e-12)
    )


def realised_epsilon(Q: np.ndarray) -> float:
    """max_y max_{P, P'} log Q(y|P) / Q(y|P') over the rows (inputs) of Q."""
    with np.errstate(divide="ignore"):
        logq = np.log(Q)
    return float((logq.max(axis=0) - logq.min(axis=0)).max())


# --------------------------------------------------------------------------------------------
# Privacy: every output in M_ε(μ), realised ε <= ε
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_all_mechanisms_are_epsilon_ldp(eps):
    n, m = 15, 12
    C = planar(n, m, seed=1)
    rng = np.random.default_rng(2)
    P = np.vstack([np.eye(n), rng.dirichlet(np.full(n, 0.3), size=20)])
    mu = random_mu(m, total=0.5 * (1 + math.exp(-eps)), seed=3)
    outputs = {
        "exact": wasserstein_projection(P, C, mu, epsilon=eps).Q,
        "sinkhorn": wasserstein_projection(P, C, mu, epsilon=eps, method="sinkhorn", eta=0.02).Q,
        "vanilla": wasserstein_projection(
            P, C, mu, epsilon=eps, method="sinkhorn", eta=0.02, variant="vanilla"
        ).Q,
        "one_iteration": wasserstein_projection(
            P, C, mu, epsilon=eps, method="sinkhorn", eta=1e-3, max_iter=1
        ).Q,
        "dirac": dirac_projection(C, mu, epsilon=eps)[0],
    }
    for name, Q in outputs.items():
        assert in_polytope(Q, mu, eps), name
        assert realised_epsilon(Q) <= eps + 1e-9, name
    Pk = rng.dirichlet(np.full(m, 0.5), size=30)
    Qk = kl_projection_mechanism(np.vstack([Pk, np.eye(m)]), mu, epsilon=eps)
    assert in_polytope(Qk, mu, eps)
    assert realised_epsilon(Qk) <= eps + 1e-9
    for sens in ("standard", "pairwise"):
        Qe = exponential_mechanism(P, C, epsilon=eps, sensitivity=sens)
        assert realised_epsilon(Qe) <= eps + 1e-9


def test_every_sinkhorn_iterate_is_private():
    C = planar(10, 10, seed=4)
    mu = uniform_base_measure(10, 0.6)
    P = np.random.default_rng(5).dirichlet(np.ones(10), size=6)
    for _, Q, err in sinkhorn_iterates(P, C, mu, epsilon=0.7, eta=0.01, max_iter=30):
        assert in_polytope(Q, mu, 0.7)
        assert err.shape == (6,)


def test_exponential_mechanism_needs_the_factor_two():
    """k = ε/Δu is not ε-LDP for this utility: many outputs far from x_0 and near x_1."""
    N, eps = 200, 1.0
    C = np.zeros((2, N + 1))
    C[0, 1:] = 1.0  # y_0 near x_0, y_1..y_N near x_1
    C[1, 0] = 1.0
    delta_u = 1.0
    logits = -(eps / delta_u) * C
    Q = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    assert realised_epsilon(Q) > 1.5 * eps
    assert exponential_sensitivity(C) == pytest.approx(2 * delta_u)
    assert exponential_sensitivity(C, sensitivity="pairwise") == pytest.approx(2 * delta_u)
    assert realised_epsilon(exponential_mechanism(np.eye(2), C, epsilon=eps)) <= eps


def test_pairwise_sensitivity_never_exceeds_standard():
    for seed in range(5):
        C = planar(7, 9, seed)
        assert exponential_sensitivity(C, sensitivity="pairwise") <= exponential_sensitivity(C) * (
            1 + 1e-12
        )


# --------------------------------------------------------------------------------------------
# Exact LP: solvers agree, Dirac closed form, POT where the constraint is inactive
# --------------------------------------------------------------------------------------------


def test_exact_backends_agree_and_cost_is_the_transport_cost():
    C = planar(20, 15, seed=6)
    mu = random_mu(15, 0.55, seed=7)
    P = np.random.default_rng(8).dirichlet(np.full(20, 0.5), size=8)
    a = wasserstein_projection(P, C, mu, epsilon=1.0, solver="pot")
    b = wasserstein_projection(P, C, mu, epsilon=1.0, solver="highs")
    np.testing.assert_allclose(a.cost, b.cost, rtol=1e-9, atol=1e-12)
    # The reported cost is the optimal transport cost between P and the returned Q.
    np.testing.assert_allclose(transport_cost(P, a.Q, C), a.cost, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        transport_cost(P, b.Q, C, solver="highs"), b.cost, rtol=1e-7, atol=1e-10
    )


@pytest.mark.parametrize("eps", [0.3, 1.0, 5.0])
def test_dirac_inputs_match_the_knapsack(eps):
    n, m = 12, 10
    C = planar(n, m, seed=9)
    mu = random_mu(m, total=math.exp(-eps / 2), seed=10)
    Qk, cost_k = dirac_projection(C, mu, epsilon=eps)
    for solver in ("pot", "highs"):
        exact = wasserstein_projection(np.eye(n), C, mu, epsilon=eps, solver=solver)
        np.testing.assert_allclose(exact.cost, cost_k, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose((Qk * C).sum(axis=1), cost_k, rtol=1e-12)
    assert worst_case_cost(mu, C, epsilon=eps) == pytest.approx(cost_k.max())


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), eps=st.floats(0.05, 4.0), frac=st.floats(0.0, 1.0))
def test_worst_case_is_a_dirac_and_wpm_beats_kpm(seed, eps, frac):
    """No input costs more than the worst Dirac; on a shared support WPM <= KPM in W."""
    m = 8
    C = planar(m, m, seed)  # same support for input and output points
    C[np.arange(m), np.arange(m)] = 0.0
    total = math.exp(-eps) + frac * (1 - math.exp(-eps))
    mu = random_mu(m, total, seed + 1)
    P = np.random.default_rng(seed).dirichlet(np.full(m, 0.4), size=5)
    res = wasserstein_projection(P, C, mu, epsilon=eps)
    assert (res.cost <= worst_case_cost(mu, C, epsilon=eps) + 1e-12).all()
    kpm = kl_projection_mechanism(P, mu, epsilon=eps)
    assert (res.cost <= transport_cost(P, kpm, C) + 1e-12).all()


def test_inactive_constraint_matches_plain_optimal_transport():
    """ε large and μ tiny: M_ε(μ) is (numerically) the whole simplex."""
    n, m, eps = 25, 18, 60.0
    C = planar(n, m, seed=11)
    mu = uniform_base_measure(m, math.exp(-eps / 2))
    P = np.random.default_rng(12).dirichlet(np.ones(n), size=4)
    res = wasserstein_projection(P, C, mu, epsilon=eps)
    # Unconstrained optimum: every input point to its nearest output point.
    np.testing.assert_allclose(res.cost, P @ C.min(axis=1), rtol=1e-9)
    for p, q, c in zip(P, res.Q, res.cost, strict=True):
        assert ot.emd2(p, q, C) == pytest.approx(c, rel=1e-9)


def test_same_support_input_inside_polytope_is_returned():
    m, eps = 10, 2.0
    C = planar(m, m, seed=13)
    C[np.arange(m), np.arange(m)] = 0.0
    mu = uniform_base_measure(m, 0.5)
    P = np.random.default_rng(14).uniform(0.6, 1.0, size=(3, m))
    P /= P.sum(axis=1, keepdims=True)  # every entry in [0.6/10, 1/6] ⊂ [0.05, 0.37]
    res = wasserstein_projection(P, C, mu, epsilon=eps)
    np.testing.assert_allclose(res.Q, P, atol=1e-12)
    np.testing.assert_allclose(res.cost, 0.0, atol=1e-12)
    np.testing.assert_allclose(kl_projection_mechanism(P, mu, epsilon=eps), P, atol=1e-12)


# --------------------------------------------------------------------------------------------
# Entropic WPM
# --------------------------------------------------------------------------------------------


def test_sinkhorn_approaches_the_exact_value_as_eta_shrinks():
    n, m, eps = 20, 20, 1.0
    C = planar(n, m, seed=15)
    mu = random_mu(m, 0.6, seed=16)
    P = np.random.default_rng(17).dirichlet(np.full(n, 0.5), size=5)
    exact = wasserstein_projection(P, C, mu, epsilon=eps).cost
    gaps = []
    for eta in (0.2, 0.1, 0.05, 0.02, 0.01, 0.005):
        res = wasserstein_projection(
            P, C, mu, epsilon=eps, method="sinkhorn", eta=eta, max_iter=50_000, tol=1e-10
        )
        assert res.converged.all()
        gap = transport_cost(P, res.Q, C) - exact
        assert (gap >= -1e-12).all()  # Q is feasible, so it cannot beat the optimum
        assert (gap <= eta * math.log(n * m) + 1e-9).all()  # the O(η log(nm)) bound
        gaps.append(gap.mean())
    assert all(b <= a * 1.05 + 1e-9 for a, b in itertools.pairwise(gaps)), gaps
    assert gaps[-1] < 0.01 * exact.mean()


def test_sinkhorn_matches_the_entropic_optimum():
    """The default (Dykstra-corrected) alternation converges to argmin <C,π> - η H(π)."""
    n, m, eps, eta = 9, 8, 1.0, 0.05
    C = planar(n, m, seed=18)
    mu = random_mu(m, 0.6, seed=19)
    P = np.random.default_rng(20).dirichlet(np.full(n, 0.4))
    res = wasserstein_projection(
        P, C, mu, epsilon=eps, method="sinkhorn", eta=eta, max_iter=100_000, tol=1e-12
    )
    pi = cp.Variable((n, m), nonneg=True)
    objective = cp.sum(cp.multiply(C, pi)) - eta * cp.sum(cp.entr(pi))
    constraints = [
        cp.sum(pi, axis=1) == P,
        cp.sum(pi, axis=0) >= mu,
        cp.sum(pi, axis=0) <= math.e * mu,
    ]
    cp.Problem(cp.Minimize(objective), constraints).solve(solver="CLARABEL")
    np.testing.assert_allclose(res.Q, pi.value.sum(axis=0), atol=1e-5)
    assert res.cost == pytest.approx(float((C * pi.value).sum()), abs=1e-5)


@pytest.mark.parametrize("variant", ["dykstra", "vanilla"])
def test_linear_and_log_domains_agree(variant):
    C = planar(15, 12, seed=21)
    mu = random_mu(12, 0.7, seed=22)
    P = np.random.default_rng(23).dirichlet(np.ones(15), size=4)
    kw = {"epsilon": 0.8, "method": "sinkhorn", "eta": 0.03, "variant": variant}
    lin = wasserstein_projection(P, C, mu, domain="linear", **kw)
    log = wasserstein_projection(P, C, mu, domain="log", **kw)
    assert (lin.solver, log.solver) == ("linear", "log")
    np.testing.assert_allclose(lin.Q, log.Q, atol=1e-12)
    np.testing.assert_array_equal(lin.iterations, log.iterations)


def test_small_eta_does_not_underflow():
    C = planar(12, 12, seed=24)  # (max C - min C) / η ~ 500: exp(-C/η) reaches 1e-217
    mu = random_mu(12, 0.5, seed=25)
    P = np.random.default_rng(26).dirichlet(np.ones(12), size=3)
    eta = 2e-3
    res = wasserstein_projection(
        P, C, mu, epsilon=1.0, method="sinkhorn", eta=eta, max_iter=20_000, tol=1e-9
    )
    assert res.solver == "log" and res.converged.all()
    assert np.isfinite(res.Q).all() and in_polytope(res.Q, mu, 1.0)
    exact = wasserstein_projection(P, C, mu, epsilon=1.0)
    gap = transport_cost(P, res.Q, C) - exact.cost
    assert (gap >= -1e-12).all() and (gap <= eta * math.log(144)).all()


def test_iterations_and_marginal_error_are_reported():
    C = planar(10, 10, seed=27)
    mu = uniform_base_measure(10, 0.6)
    P = np.random.default_rng(28).dirichlet(np.ones(10), size=3)
    done = wasserstein_projection(P, C, mu, epsilon=1.0, method="sinkhorn", eta=0.05, tol=1e-10)
    assert done.converged.all() and (done.marginal_error <= 1e-10).all()
    assert (done.iterations >= 1).all() and (done.iterations < 1000).all()
    cut = wasserstein_projection(P, C, mu, epsilon=1.0, method="sinkhorn", eta=0.001, max_iter=2)
    assert (cut.iterations == 2).all() and not cut.converged.any()
    assert (cut.marginal_error > 0).all()
    one = wasserstein_projection(P[0], C, mu, epsilon=1.0, method="sinkhorn", eta=0.05)
    assert one.Q.shape == (10,) and one.cost.shape == () and one.iterations.shape == ()


# --------------------------------------------------------------------------------------------
# Base measures
# --------------------------------------------------------------------------------------------


def cvxpy_optimal_base_measure(C: np.ndarray, eps: float) -> float:
    """Epigraph LP: min t s.t. cost_i(μ) <= t with the knapsack written as a primal LP."""
    n, m = C.shape
    mu = cp.Variable(m, nonneg=True)
    X = cp.Variable((n, m), nonneg=True)
    t = cp.Variable()
    constraints = [
        C @ mu + cp.sum(cp.multiply(C, X), axis=1) <= t,
        math.expm1(eps) * np.ones((n, 1)) @ cp.reshape(mu, (1, m), order="C") >= X,
        cp.sum(X, axis=1) + cp.sum(mu) == 1,
    ]
    problem = cp.Problem(cp.Minimize(t), constraints)
    problem.solve(solver="HIGHS")
    return float(problem.value)


@pytest.mark.parametrize(("n", "m", "eps"), [(8, 10, 0.5), (12, 12, 1.0), (15, 9, 3.0)])
def test_optimal_base_measure_matches_cvxpy(n, m, eps):
    C = planar(n, m, seed=n + m)
    reference = cvxpy_optimal_base_measure(C, eps)
    lp = optimal_base_measure(C, epsilon=eps, method="lp")
    assert lp.value == pytest.approx(reference, rel=1e-7)
    md = optimal_base_measure(C, epsilon=eps, max_iter=3000)
    assert reference - 1e-9 <= md.value <= reference * 1.01
    assert md.value == pytest.approx(worst_case_cost(md.mu, C, epsilon=eps), rel=1e-12)
    assert math.exp(-eps) - 1e-12 <= md.mu.sum() <= 1 + 1e-12
    assert np.all(np.diff(md.history) <= 0)
    uniform = optimal_uniform_base_measure(C, epsilon=eps)
    assert md.value <= uniform.value + 1e-12
    # The best uniform measure is no worse than any uniform measure on a grid.
    for scale in np.geomspace(math.exp(-eps), 1.0, 15):
        mu = uniform_base_measure(m, float(scale))
        assert uniform.value <= worst_case_cost(mu, C, epsilon=eps) + 1e-12


def test_ring_optimal_base_measure_is_uniform():
    """On a ring every point is alike; the uniform measure is optimal (convexity + symmetry)."""
    n = 12
    k = np.arange(n)
    d = np.abs(k[:, None] - k[None])
    C = np.minimum(d, n - d) / n
    lp = optimal_base_measure(C, epsilon=1.0, method="lp")
    uniform = optimal_uniform_base_measure(C, epsilon=1.0)
    assert uniform.value == pytest.approx(lp.value, rel=1e-9)


# --------------------------------------------------------------------------------------------
# KPM and its normaliser
# --------------------------------------------------------------------------------------------


def test_kpm_matches_cvxpy_kl_projection():
    m, eps = 8, 1.0
    mu = random_mu(m, 0.6, seed=29)
    for seed in range(3):
        P = np.random.default_rng(seed).dirichlet(np.full(m, 0.5))
        Q = cp.Variable(m)
        constraints = [mu <= Q, math.e * mu >= Q, cp.sum(Q) == 1]
        cp.Problem(cp.Minimize(cp.sum(cp.kl_div(P, Q))), constraints).solve(solver="CLARABEL")
        ours = kl_projection_mechanism(P, mu, epsilon=eps)
        np.testing.assert_allclose(ours, Q.value, atol=1e-4)  # Clarabel's accuracy
        assert kl_divergence(P, ours) <= kl_divergence(P, Q.value) + 1e-7  # Clarabel: sum 1-1e-9


def test_clip_normalize_solves_for_the_normaliser():
    rng = np.random.default_rng(30)
    P = rng.random((50, 7))
    lower = np.full(7, 0.05)
    upper = np.full(7, 0.3)
    Q = clip_normalize(P, lower, upper)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, atol=1e-12)
    # Q = clip(λ p) for one λ per row: interior coordinates share the ratio Q / p.
    interior = (lower + 1e-12 < Q) & (upper - 1e-12 > Q)
    ratio = np.where(interior, Q / P, np.nan)
    spread = np.nanmax(ratio, axis=1) - np.nanmin(ratio, axis=1)
    assert np.nanmax(spread) < 1e-9
    # Degenerate row: no λ exists; the support sits at its upper bound, the rest ∝ lower.
    one = clip_normalize(np.array([1.0, 0, 0, 0]), np.full(4, 0.1), np.full(4, 0.35))
    np.testing.assert_allclose(one, [0.35, 0.65 / 3, 0.65 / 3, 0.65 / 3])


# --------------------------------------------------------------------------------------------
# Sampling
# --------------------------------------------------------------------------------------------


def test_sample_outputs_follows_q():
    Q = np.array([[0.0, 0.2, 0.0, 0.8], [0.5, 0.0, 0.5, 0.0]])
    draws = sample_outputs(np.repeat(Q, 20_000, axis=0), rng=np.random.default_rng(31))
    first, second = draws[:20_000], draws[20_000:]
    assert set(np.unique(first)) <= {1, 3} and set(np.unique(second)) <= {0, 2}
    assert abs((first == 3).mean() - 0.8) < 0.02
    assert abs((second == 0).mean() - 0.5) < 0.02
    assert np.ndim(sample_outputs(Q[0], rng=np.random.default_rng(0))) == 0
    with pytest.raises(TypeError, match="rng"):
        sample_outputs(Q, rng=0)


# --------------------------------------------------------------------------------------------
# Bad inputs
# --------------------------------------------------------------------------------------------

C_OK = planar(4, 3, seed=0)
MU_OK = uniform_base_measure(3, 0.7)
P_OK = np.full(4, 0.25)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"mu": np.full(3, 0.4)}, ValueError, r"sum\(mu\) = 1\.2"),
        ({"mu": np.full(3, 0.01)}, ValueError, r"sum\(mu\) in"),
        ({"mu": np.array([0.5, -0.1, 0.3])}, ValueError, "-0.1"),
        ({"mu": np.full(4, 0.2)}, ValueError, "4 entries"),
        ({"mu": np.full((3, 1), 0.3)}, ValueError, "shape"),
        ({"C": -C_OK}, ValueError, "non-negative"),
        ({"C": np.where(C_OK > 0.5, np.nan, C_OK)}, ValueError, "nan"),
        ({"C": np.ones(3)}, ValueError, r"\(n, m\) matrix"),
        ({"C": "cost"}, TypeError, "array of real numbers"),
        ({"P": np.full(5, 0.2)}, ValueError, "5 items"),
        ({"P": np.array([0.5, 0.5, 0.5, 0.5])}, ValueError, "sum 2"),
        ({"epsilon": -1.0}, ValueError, "-1.0"),
        ({"epsilon": "1"}, TypeError, "epsilon"),
        ({"method": "simplex"}, ValueError, "'simplex'"),
        ({"solver": "gurobi"}, ValueError, "'gurobi'"),
        ({"method": "sinkhorn", "eta": 0.0}, ValueError, "eta"),
        ({"method": "sinkhorn", "eta": -1}, ValueError, "-1"),
        ({"method": "sinkhorn", "max_iter": 0}, ValueError, "max_iter"),
        ({"method": "sinkhorn", "tol": math.nan}, ValueError, "tol"),
        ({"method": "sinkhorn", "variant": "fast"}, ValueError, "'fast'"),
        ({"method": "sinkhorn", "domain": "complex"}, ValueError, "'complex'"),
    ],
)
def test_bad_inputs_are_rejected(kwargs, error, match):
    args = {"P": P_OK, "C": C_OK, "mu": MU_OK, "epsilon": 1.0} | kwargs
    P, C, mu = args.pop("P"), args.pop("C"), args.pop("mu")
    with pytest.raises(error, match=match):
        wasserstein_projection(P, C, mu, **args)


def test_bad_inputs_elsewhere():
    with pytest.raises(ValueError, match="eta"):
        sinkhorn_iterates(P_OK, C_OK, MU_OK, epsilon=1.0, eta=-2.0)  # eager, not on next()
    with pytest.raises(ValueError, match="scale"):
        uniform_base_measure(3, 1.5)
    with pytest.raises(ValueError, match="m must be"):
        uniform_base_measure(0)
    with pytest.raises(TypeError, match="m must be"):
        uniform_base_measure(2.5)
    with pytest.raises(ValueError, match="3 were expected"):
        kl_projection_mechanism(np.full(4, 0.25), MU_OK, epsilon=1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        exponential_mechanism(P_OK, C_OK, epsilon=1.0, sensitivity="local")
    with pytest.raises(ValueError, match="method"):
        optimal_base_measure(C_OK, epsilon=1.0, method="newton")
    with pytest.raises(ValueError, match="infeasible"):
        clip_normalize(np.ones(3), np.full(3, 0.5), np.full(3, 0.6))
    with pytest.raises(ValueError, match="sum"):
        worst_case_cost(np.full(3, 0.9), C_OK, epsilon=1.0)
    with pytest.raises(ValueError, match="batches differ"):
        transport_cost(np.full((2, 4), 0.25), np.full((3, 3), 1 / 3), C_OK)


def test_log_space_normaliser_agrees_with_clip_normalize_and_warm_starts():
    from ldpsample.wasserstein._common import log_clip_normalise

    rng = np.random.default_rng(32)
    a = rng.random((40, 9)) + 1e-3
    lower, upper = np.full(9, 0.04), np.full(9, 0.3)
    expected = clip_normalize(a, lower, upper)
    cold, t = log_clip_normalise(np.log(a), lower, upper)
    np.testing.assert_allclose(np.exp(cold), expected, atol=1e-13)
    for guess in (t, t + rng.normal(size=40), np.zeros(40)):
        warm, _ = log_clip_normalise(np.log(a), lower, upper, guess)
        np.testing.assert_allclose(np.exp(warm), expected, atol=1e-13)
    # Column sums spanning 600 orders of magnitude (small η): still the cheapest-first fill.
    log_a = -np.array([0.0, 300.0, 600.0, 900.0, 1200.0, 1500.0])
    low6, up6 = np.full(6, 0.1), np.full(6, 0.25)
    q, _ = log_clip_normalise(log_a[None], low6, up6)
    np.testing.assert_allclose(np.exp(q[0]), [0.25, 0.25, 0.2, 0.1, 0.1, 0.1], atol=1e-12)
