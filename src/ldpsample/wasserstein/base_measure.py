"""Base measures for the WPM: worst-case cost and its minimisation.

The worst case of ``P -> min_{Q in M_ε(μ)} W_r^r(P, Q)`` over the simplex is attained at a Dirac
input (the map is convex in ``P``: it is the value of a linear programme whose right-hand side
is affine in ``P``). For ``P = δ_i`` every plan sends everything from ``x_i``, so the projection
is the fractional knapsack

    cost_i(μ) = min_{Q in M_ε(μ)} sum_j C_ij Q_j:
    Q = μ, then the remaining 1 - sum(μ) on the cheapest j first, at most (e^ε - 1) μ_j each.

``φ(μ) = max_i cost_i(μ)`` is convex in μ; by LP duality, with ``τ_i`` the threshold cost of the
knapsack (the cost of the last item filled),

    cost_i(μ) = sum_j C_ij μ_j + τ_i (1 - sum μ) - (e^ε - 1) sum_j (τ_i - C_ij)_+ μ_j,

a maximum of affine functions of μ, so ``g_j = C_ij - τ_i - (e^ε - 1)(τ_i - C_ij)_+`` at the
maximising ``i`` is a subgradient of φ. :func:`optimal_base_measure` minimises φ over
``{μ >= 0 : e^{-ε} <= sum(μ) <= 1}`` by mirror descent (exponentiated gradient), or exactly by
the epigraph linear programme.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse
from scipy.optimize import linprog

from ldpsample._types import FloatArray
from ldpsample._validation import check_epsilon, check_integer
from ldpsample.wasserstein._common import check_base_measure, check_cost

__all__ = [
    "BaseMeasureResult",
    "dirac_projection",
    "optimal_base_measure",
    "optimal_uniform_base_measure",
    "uniform_base_measure",
    "worst_case_cost",
]


@dataclass(frozen=True)
class BaseMeasureResult:
    """Output of :func:`optimal_base_measure` and :func:`optimal_uniform_base_measure`.

    Attributes
    ----------
    mu
        The base measure, shape ``(m,)``, with ``e^{-ε} <= sum(μ) <= 1``.
    value
        Its worst-case cost ``φ(μ) = max_i min_{Q in M_ε(μ)} <C_i, Q>`` (``W_r^r`` units).
    method
        ``"mirror"``, ``"lp"`` or ``"uniform"``.
    iterations
        Mirror-descent iterations (0 for the other methods).
    history
        Mirror descent: best value found after each iteration (empty otherwise).
    """

    mu: FloatArray
    value: float
    method: str
    iterations: int = 0
    history: FloatArray = field(default_factory=lambda: np.empty(0))


def uniform_base_measure(m: int, scale: float = 1.0) -> FloatArray:
    """The uniform base measure ``μ = (scale / m) 1`` of total mass ``scale``.

    ``M_ε(μ)`` is non-empty iff ``e^{-ε} <= scale <= 1``; ``scale = 1`` forces ``Q = μ``
    (uniform output), ``scale = e^{-ε}`` forces ``Q = e^ε μ`` as well, and values in between
    trade utility at the input's support against mass elsewhere.

    Raises
    ------
    TypeError
        If ``m`` is not an integer or ``scale`` not a real number.
    ValueError
        If ``m < 1`` or ``scale`` is not in ``(0, 1]``.
    """
    m = check_integer(m, name="m", minimum=1)
    if isinstance(scale, bool) or not isinstance(scale, int | float | np.integer | np.floating):
        raise TypeError(f"scale must be a real number in (0, 1], got {scale!r}")
    if not (0.0 < float(scale) <= 1.0):
        raise ValueError(f"scale must be in (0, 1], got {scale!r}")
    return np.full(int(m), float(scale) / int(m))


class _Knapsack:
    """Fractional knapsack for every Dirac input, with each row's cost order sorted once.

    ``extra(μ)[i]`` is the mass added on top of ``μ`` for ``δ_i``, ``costs(μ)[i]`` its cost and
    ``threshold(μ, i)`` the knapsack's threshold cost ``τ_i`` (a valid dual value even when the
    remaining mass is 0 or fills every capacity).
    """

    def __init__(self, C: FloatArray, epsilon: float) -> None:
        self.C = C
        self.order = np.argsort(C, axis=1, kind="stable")
        self.C_sorted = np.take_along_axis(C, self.order, axis=1)
        self.growth = math.expm1(min(epsilon, 700.0))

    def _fill(self, mu: FloatArray, rows=slice(None)) -> FloatArray:
        cap = np.minimum(self.growth * mu, 1.0)  # never more than 1 on one item
        remaining = max(1.0 - float(mu.sum()), 0.0)
        cap_s = cap[self.order[rows]]
        before = np.cumsum(cap_s, axis=-1) - cap_s
        return np.clip(remaining - before, 0.0, cap_s)

    def costs(self, mu: FloatArray) -> FloatArray:
        return self.C @ mu + (self._fill(mu) * self.C_sorted).sum(axis=1)

    def extra(self, mu: FloatArray) -> FloatArray:
        out = np.zeros(self.C.shape)
        np.put_along_axis(out, self.order, self._fill(mu), axis=1)
        return out

    def threshold(self, mu: FloatArray, i: int) -> float:
        cap_s = np.minimum(self.growth * mu, 1.0)[self.order[i]]
        remaining = max(1.0 - float(mu.sum()), 0.0)
        has_cap = cap_s > 0
        reach = (np.cumsum(cap_s) >= remaining) & has_cap
        # If every capacity is used: the most expensive item with capacity.
        last = cap_s.size - 1 - int(np.argmax(has_cap[::-1]))
        k = int(np.argmax(reach)) if reach.any() else last
        return float(self.C_sorted[i, k])


def dirac_projection(
    C: ArrayLike, mu: ArrayLike, *, epsilon: float
) -> tuple[FloatArray, FloatArray]:
    """WPM output and cost for every Dirac input ``δ_i`` (the fractional knapsack).

    Parameters
    ----------
    C
        Cost matrix, shape ``(n, m)``.
    mu
        Base measure, shape ``(m,)``, ``sum(μ) <= 1 <= e^ε sum(μ)``.
    epsilon
        Privacy parameter ε >= 0.

    Returns
    -------
    Q, cost
        ``Q[i]`` (shape ``(n, m)``) is an optimal ``argmin_{Q in M_ε(μ)} W_r^r(δ_i, Q)`` and
        ``cost[i]`` (shape ``(n,)``) its value ``sum_j C_ij Q_ij``.
    """
    eps = check_epsilon(epsilon)
    C_arr = check_cost(C)
    mu_arr = check_base_measure(mu, epsilon=eps, m=C_arr.shape[1])
    knapsack = _Knapsack(C_arr, eps)
    return mu_arr[None, :] + knapsack.extra(mu_arr), knapsack.costs(mu_arr)


def worst_case_cost(mu: ArrayLike, C: ArrayLike, *, epsilon: float) -> float:
    """``φ(μ) = max_P min_{Q in M_ε(μ)} W_r^r(P, Q)``, attained at a Dirac input.

    Equal to ``max_i`` of :func:`dirac_projection`'s costs.
    """
    return float(dirac_projection(C, mu, epsilon=epsilon)[1].max())


def _project_mass(mu: FloatArray, low: float) -> FloatArray:
    """Generalised-KL projection onto ``{μ >= 0 : low <= sum μ <= 1}``: a rescaling."""
    total = float(mu.sum())
    return mu * (min(max(total, low), 1.0) / total)


def _uniform_value(knapsack: _Knapsack, scale: float) -> float:
    m = knapsack.C.shape[1]
    return float(knapsack.costs(np.full(m, scale / m)).max())


def optimal_uniform_base_measure(C: ArrayLike, *, epsilon: float) -> BaseMeasureResult:
    """The uniform base measure ``(c/m) 1`` minimising the worst-case cost over ``c``.

    ``c -> φ((c/m) 1)`` is convex on ``[e^{-ε}, 1]`` (a restriction of the convex φ), so a
    golden-section search finds the best scale (to ~1e-12 relative on ``c``).
    """
    eps = check_epsilon(epsilon)
    C_arr = check_cost(C)
    knapsack = _Knapsack(C_arr, eps)
    lo, hi = math.exp(-eps), 1.0
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c1, c2 = b - ratio * (b - a), a + ratio * (b - a)
    f1, f2 = _uniform_value(knapsack, c1), _uniform_value(knapsack, c2)
    while b - a > 1e-12 * b:
        if f1 <= f2:
            b, c2, f2 = c2, c1, f1
            c1 = b - ratio * (b - a)
            f1 = _uniform_value(knapsack, c1)
        else:
            a, c1, f1 = c1, c2, f2
            c2 = a + ratio * (b - a)
            f2 = _uniform_value(knapsack, c2)
    candidates = [(f1, c1), (f2, c2)]
    candidates += [(_uniform_value(knapsack, c), c) for c in (lo, hi)]
    value, scale = min(candidates)
    m = C_arr.shape[1]
    return BaseMeasureResult(mu=np.full(m, scale / m), value=value, method="uniform")


def _lp_base_measure(C: FloatArray, eps: float) -> tuple[FloatArray, float]:
    """Epigraph LP: min t s.t. sum_j C_ij (μ_j + x_ij) <= t, 0 <= x_ij <= (e^ε - 1) μ_j,
    sum_j x_ij + sum_j μ_j = 1. (``sum μ >= e^{-ε}`` and ``<= 1`` are implied.)"""
    n, m = C.shape
    growth = math.expm1(eps)
    nx = n * m
    # Variables: [x (n*m), μ (m), t].
    I_n = sparse.eye(n)
    A_cost = sparse.hstack(
        [
            sparse.block_diag([C[i][None, :] for i in range(n)]),
            sparse.csr_matrix(C),
            -sparse.csr_matrix(np.ones((n, 1))),
        ]
    )
    A_cap = sparse.hstack(
        [
            sparse.eye(nx),
            -growth * sparse.kron(np.ones((n, 1)), sparse.eye(m)),
            sparse.csr_matrix((nx, 1)),
        ]
    )
    A_ub = sparse.vstack([A_cost, A_cap]).tocsr()
    b_ub = np.zeros(n + nx)
    A_eq = sparse.hstack(
        [
            sparse.kron(I_n, np.ones((1, m))),
            sparse.csr_matrix(np.ones((n, m))),
            sparse.csr_matrix((n, 1)),
        ]
    ).tocsr()
    b_eq = np.ones(n)
    c = np.zeros(nx + m + 1)
    c[-1] = 1.0
    bounds = [(0, None)] * (nx + m) + [(None, None)]
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the base-measure LP: {res.message}")
    mu = np.clip(res.x[nx : nx + m], 0.0, None)
    return _project_mass(mu, math.exp(-eps)), float(res.fun)


def optimal_base_measure(
    C: ArrayLike,
    *,
    epsilon: float,
    method: str = "mirror",
    max_iter: int = 2000,
    step: float = 1.0,
    mu0: ArrayLike | None = None,
) -> BaseMeasureResult:
    """Base measure minimising the worst-case cost ``φ(μ) = max_i cost_i(μ)`` (module docstring).

    Parameters
    ----------
    C
        Cost matrix, shape ``(n, m)``.
    epsilon
        Privacy parameter ε >= 0.
    method
        ``"mirror"``: mirror descent with the entropy mirror map (exponentiated gradient),
        ``μ <- μ exp(-γ_t g)`` followed by the generalised-KL projection onto
        ``{μ >= 0 : e^{-ε} <= sum μ <= 1}`` (a rescaling of the total mass), with the knapsack
        subgradient ``g`` and steps ``γ_t = step * sqrt(2 log m / t) / ||g||_inf``; returns the
        best iterate. ``"lp"``: the epigraph linear programme solved exactly by HiGHS
        (``n m + m + 1`` variables; for small instances and as a reference).
    max_iter
        Mirror-descent iterations.
    step
        Multiplier of the mirror-descent step size.
    mu0
        Starting point for mirror descent (default: the best uniform base measure).

    Returns
    -------
    BaseMeasureResult
    """
    eps = check_epsilon(epsilon)
    C_arr = check_cost(C)
    _n, m = C_arr.shape
    if method == "lp":
        mu, value = _lp_base_measure(C_arr, eps)
        value = float(_Knapsack(C_arr, eps).costs(mu).max())
        return BaseMeasureResult(mu=mu, value=value, method="lp")
    if method != "mirror":
        raise ValueError(f"method must be 'mirror' or 'lp', got {method!r}")
    max_iter = check_integer(max_iter, name="max_iter", minimum=1)
    if isinstance(step, bool) or not (isinstance(step, int | float) and step > 0):
        raise ValueError(f"step must be a real number > 0, got {step!r}")
    knapsack = _Knapsack(C_arr, eps)
    low = math.exp(-eps)
    if mu0 is None:
        mu = optimal_uniform_base_measure(C_arr, epsilon=eps).mu
    else:
        mu = check_base_measure(mu0, epsilon=eps, m=m).copy()
    # Exponentiated gradient never reaches 0: start strictly positive.
    floor = 1e-300
    mu = np.maximum(mu, floor)
    mu = _project_mass(mu, low)
    growth = math.expm1(min(eps, 700.0))
    radius = math.sqrt(2.0 * math.log(max(m, 2)))
    best_mu, best_val = mu.copy(), math.inf
    history = np.empty(int(max_iter))
    for t in range(1, int(max_iter) + 1):
        cost = knapsack.costs(mu)
        i = int(np.argmax(cost))
        if cost[i] < best_val:
            best_val, best_mu = float(cost[i]), mu.copy()
        history[t - 1] = best_val
        c_i = C_arr[i]
        tau = knapsack.threshold(mu, i)
        g = c_i - tau - growth * np.maximum(tau - c_i, 0.0)
        scale = float(np.abs(g).max())
        if scale == 0.0:
            break
        gamma = step * radius / (math.sqrt(t) * scale)
        mu = np.maximum(mu * np.exp(-gamma * g), floor)
        mu = _project_mass(mu, low)
    return BaseMeasureResult(
        mu=best_mu, value=best_val, method="mirror", iterations=t, history=history[:t]
    )
