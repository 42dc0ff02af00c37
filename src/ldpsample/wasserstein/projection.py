"""The Wasserstein projection mechanism (WPM) and the KL projection mechanism (KPM).

WPM (paper, definition of the mechanism): ``Q*(P) = argmin_{Q in M_ε(μ)} W_r(P, Q)``. Its exact
value is the linear programme

    min sum_ij C_ij π_ij   s.t.   π 1 = P,   μ <= π^T 1 <= e^ε μ,   π >= 0,

a min-cost flow. The entropic approximation replaces the objective by
``<C, π> + η KL(π || 1)``: starting from the Gibbs kernel ``exp(-C/η)`` it alternates KL
projections onto the row constraint and onto the column constraint (whose projection is the
KPM step on the column sums). See ``docs/wasserstein.md`` for the derivations and choices.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ldpsample._types import FloatArray
from ldpsample._validation import check_distributions, check_epsilon, check_integer
from ldpsample.wasserstein._common import (
    _clip_normalise,
    check_base_measure,
    check_cost,
    check_inputs,
    polytope_bounds,
)
from ldpsample.wasserstein._entropic import (
    Sinkhorn,
    check_variant,
    choose_domain,
    entropic_projection,
)
from ldpsample.wasserstein._exact import emd, exact_projection, resolve_solver, wpm_exact_highs

__all__ = [
    "ProjectionResult",
    "kl_projection_mechanism",
    "sinkhorn_iterates",
    "transport_cost",
    "wasserstein_projection",
]


@dataclass(frozen=True)
class ProjectionResult:
    """Output of :func:`wasserstein_projection`.

    Attributes
    ----------
    Q
        Projected distributions, shape ``(batch, m)`` (or ``(m,)`` for one input). Every row lies
        in ``M_ε(μ)``, so releasing a sample from it is ε-LDP.
    cost
        Transport cost ``sum_ij C_ij π_ij`` of the returned plan, shape ``(batch,)`` (or ``()``):
        for ``method="exact"`` the optimum ``W_r(P, Q*)^r``; for ``"sinkhorn"`` the cost of the
        entropic plan, whose row marginals match ``P`` only up to ``marginal_error``.
    method
        ``"exact"`` or ``"sinkhorn"``.
    solver
        Backend that produced the result (``"pot"``, ``"highs"``, ``"linear"``, ``"log"``).
    iterations
        Sinkhorn only: number of (row, column) projection pairs per input.
    marginal_error
        Sinkhorn only: ``||π 1 - P||_1`` of the returned plan per input (its column marginal is
        ``Q`` exactly).
    eta
        Sinkhorn only: the regularisation parameter used.
    tol
        Sinkhorn only: the requested tolerance on ``marginal_error``.
    """

    Q: FloatArray
    cost: FloatArray
    method: str
    solver: str
    iterations: NDArray[np.int64] | None = None
    marginal_error: FloatArray | None = None
    eta: float | None = None
    tol: float | None = None

    @property
    def converged(self) -> NDArray[np.bool_] | None:
        """Sinkhorn only: whether each input reached ``marginal_error <= tol``."""
        if self.tol is None or self.marginal_error is None:
            return None
        return np.asarray(self.marginal_error <= self.tol)


# --------------------------------------------------------------------------------------------
# KPM
# --------------------------------------------------------------------------------------------


def kl_projection_mechanism(P: ArrayLike, mu: ArrayLike, *, epsilon: float) -> FloatArray:
    """KL projection mechanism (KPM): ``Q = argmin_{Q in M_ε(μ)} KL(P || Q)``.

    The f-divergence baseline of the paper; it needs the input and output spaces to coincide.
    By the KKT conditions ``Q = clip(P / r, μ, e^ε μ)`` with ``r`` normalising, computed exactly
    and vectorised over a batch by :func:`ldpsample.wasserstein.clip_normalize`. If no ``r``
    exists (``P`` concentrated where ``e^ε μ`` is small), the support of ``P`` is set to its upper
    bounds and the rest of the mass is spread over the other outputs in proportion to ``μ``.

    Parameters
    ----------
    P
        Input distributions, shape ``(batch, m)`` or ``(m,)``.
    mu
        Base measure, shape ``(m,)``, with ``sum(μ) <= 1 <= e^ε sum(μ)``.
    epsilon
        Privacy parameter ε >= 0.

    Returns
    -------
    numpy.ndarray
        Same shape as ``P``, every row in ``M_ε(μ)``.
    """
    eps = check_epsilon(epsilon)
    mu_arr = check_base_measure(mu, epsilon=eps)
    P2, was_1d = check_inputs(P, mu_arr.size)
    lower, upper = polytope_bounds(mu_arr, eps)
    Q = _clip_normalise(P2, lower, upper)
    return Q[0] if was_1d else Q


# --------------------------------------------------------------------------------------------
# Exact WPM
# --------------------------------------------------------------------------------------------


def _check_eta(eta: object, C: FloatArray) -> float:
    if eta is None:
        scale = float(C.max())
        return 0.01 * scale if scale > 0 else 1.0
    if isinstance(eta, bool) or not isinstance(eta, int | float | np.floating | np.integer):
        raise TypeError(f"eta must be a positive real number, got {eta!r}")
    value = float(eta)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"eta must be a finite real number > 0, got {eta!r}")
    return value


def _check_tol(tol: object) -> float:
    if isinstance(tol, bool) or not isinstance(tol, int | float | np.floating | np.integer):
        raise TypeError(f"tol must be a real number >= 0, got {tol!r}")
    if not (float(tol) >= 0 and math.isfinite(float(tol))):
        raise ValueError(f"tol must be a finite real number >= 0, got {tol!r}")
    return float(tol)


def _prepare(P, C, mu, epsilon):
    eps = check_epsilon(epsilon)
    C_arr = check_cost(C)
    mu_arr = check_base_measure(mu, epsilon=eps, m=C_arr.shape[1])
    P2, was_1d = check_inputs(P, C_arr.shape[0])
    lower, upper = polytope_bounds(mu_arr, eps)
    return P2, was_1d, C_arr, lower, upper


def sinkhorn_iterates(
    P: ArrayLike,
    C: ArrayLike,
    mu: ArrayLike,
    *,
    epsilon: float,
    eta: float | None = None,
    max_iter: int = 1000,
    domain: str = "auto",
    variant: str = "dykstra",
) -> Iterator[tuple[int, FloatArray, FloatArray]]:
    """Yield ``(t, Q_t, marginal_error_t)`` after every iteration of the entropic WPM.

    ``Q_t`` (shape ``(batch, m)``, always 2-D) is the column marginal after the ``t``-th column
    projection -- a member of ``M_ε(μ)``, hence an ε-LDP output whatever ``t`` -- and
    ``marginal_error_t = ||π_t 1 - P||_1``. Used to draw convergence curves; parameters as in
    :func:`wasserstein_projection`. No tolerance: the caller stops iterating.
    """
    P2, _, C_arr, lower, upper = _prepare(P, C, mu, epsilon)
    eta_v = _check_eta(eta, C_arr)
    iters = check_integer(max_iter, name="max_iter", minimum=1)
    check_variant(variant)
    cols = np.flatnonzero(upper > 0)
    C_c = C_arr[:, cols]
    dom = choose_domain(C_c, eta_v, domain)
    state = Sinkhorn(P2, C_c, lower[cols], upper[cols], eta_v, dom, variant)
    return _iterate(state, cols, C_arr.shape[1], iters)  # validated eagerly, iterated lazily


def _iterate(
    state: Sinkhorn, cols: NDArray[np.int64], m: int, iters: int
) -> Iterator[tuple[int, FloatArray, FloatArray]]:
    everyone = np.arange(state.P.shape[0])
    Q = np.zeros((state.P.shape[0], m))
    for t in range(1, iters + 1):
        state.step(everyone)
        err = state.row_error(everyone)
        Q[:, cols] = state.Q
        yield t, Q.copy(), err


# --------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------


def wasserstein_projection(
    P: ArrayLike,
    C: ArrayLike,
    mu: ArrayLike,
    *,
    epsilon: float,
    method: str = "exact",
    eta: float | None = None,
    max_iter: int = 1000,
    tol: float = 1e-9,
    solver: str = "auto",
    domain: str = "auto",
    variant: str = "dykstra",
) -> ProjectionResult:
    """Wasserstein projection mechanism: ``Q*(P) = argmin_{Q in M_ε(μ)} W_r(P, Q)``.

    The paper's mechanism: release one sample of ``Q*(P)``. Every output lies in
    ``M_ε(μ) = {Q in Δ_m : μ <= Q <= e^ε μ}``, so the mechanism is ε-LDP for any input.

    Parameters
    ----------
    P
        Input distributions over ``x_1..x_n``, shape ``(batch, n)`` or ``(n,)``.
    C
        Cost matrix ``C[i, j] = d(x_i, y_j)^r``, shape ``(n, m)``, finite and non-negative.
    mu
        Base measure, shape ``(m,)``, ``μ >= 0`` with ``sum(μ) <= 1 <= e^ε sum(μ)``.
    epsilon
        Privacy parameter ε >= 0.
    method
        ``"exact"``: the linear programme (one min-cost flow per input). ``"sinkhorn"``: the
        entropic approximation by alternating KL projections (vectorised over the batch).
    eta
        Entropic regularisation η > 0 (``"sinkhorn"`` only); default ``0.01 * max(C)``.
    max_iter, tol
        ``"sinkhorn"`` only: stop an input once ``||π 1 - P||_1 <= tol`` or after ``max_iter``
        iterations. The output is in ``M_ε(μ)`` whatever the number of iterations.
    solver
        ``"exact"`` only: ``"pot"`` (POT's network simplex on an equivalent balanced transport
        problem), ``"highs"`` (scipy's HiGHS on the LP) or ``"auto"`` (POT if installed).
    domain
        ``"sinkhorn"`` only: ``"linear"`` (scalings and matrix products; fast),
        ``"log"`` (log-sum-exp; robust for small η) or ``"auto"`` (linear while
        ``(max C - min C) / η <= 400`` on every row).
    variant
        ``"sinkhorn"`` only: ``"dykstra"`` (default) projects the column sums of ``diag(u) K``,
        the Dykstra-corrected step that converges to the entropic optimum
        ``argmin <C, π> - η H(π)`` (the scaling algorithm of Chizat et al. 2018);
        ``"vanilla"`` projects the current plan's column sums, which converges to a different,
        worse point of ``M_ε(μ)`` (``docs/wasserstein.md``). Both are ε-LDP at every iteration.

    Returns
    -------
    ProjectionResult
        ``Q``, ``cost`` and, for ``"sinkhorn"``, ``iterations``, ``marginal_error`` and ``eta``.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments: ``P`` not distributions over ``n`` points, a negative or
        non-finite cost, ``μ`` outside ``sum(μ) <= 1 <= e^ε sum(μ)``, unknown method, etc.
    """
    P2, was_1d, C_arr, lower, upper = _prepare(P, C, mu, epsilon)
    if method == "exact":
        backend = resolve_solver(solver)
        Q, cost = exact_projection(P2, C_arr, lower, upper, backend)
        result = ProjectionResult(Q=Q, cost=cost, method="exact", solver=backend)
    elif method == "sinkhorn":
        eta_v = _check_eta(eta, C_arr)
        iters = check_integer(max_iter, name="max_iter", minimum=1)
        tol_v = _check_tol(tol)
        var = check_variant(variant)
        Q, cost, it, err, dom = entropic_projection(
            P2, C_arr, lower, upper, eta_v, iters, tol_v, domain, var
        )
        result = ProjectionResult(
            Q=Q,
            cost=cost,
            method="sinkhorn",
            solver=dom,
            iterations=it,
            marginal_error=err,
            eta=eta_v,
            tol=tol_v,
        )
    else:
        raise ValueError(f"method must be 'exact' or 'sinkhorn', got {method!r}")
    if was_1d:
        result = _squeeze(result)
    return result


def _squeeze(r: ProjectionResult) -> ProjectionResult:
    def first(x):
        return None if x is None else x[0]

    return ProjectionResult(
        Q=r.Q[0],
        cost=r.cost.reshape(()),
        method=r.method,
        solver=r.solver,
        iterations=first(r.iterations),
        marginal_error=first(r.marginal_error),
        eta=r.eta,
        tol=r.tol,
    )


# --------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------


def transport_cost(P: ArrayLike, Q: ArrayLike, C: ArrayLike, *, solver: str = "auto") -> FloatArray:
    """Exact optimal transport cost ``min_π <C, π>`` between ``P`` and ``Q`` (``W_r^r``).

    Evaluation helper (not a mechanism). ``P`` has shape ``(batch, n)`` or ``(n,)``, ``Q`` shape
    ``(batch, m)`` or ``(m,)`` (broadcast against each other along the batch), ``C`` shape
    ``(n, m)``. Solved per pair by POT's network simplex, or by HiGHS when POT is absent.

    Returns
    -------
    numpy.ndarray
        Shape ``(batch,)``, or ``()`` when both inputs are 1-D.
    """
    C_arr = check_cost(C)
    P2, p1 = check_inputs(P, C_arr.shape[0])
    Qv, q1 = _check_q(Q, C_arr.shape[1])
    backend = resolve_solver(solver)
    if P2.shape[0] != Qv.shape[0]:
        if P2.shape[0] == 1:
            P2 = np.repeat(P2, Qv.shape[0], axis=0)
        elif Qv.shape[0] == 1:
            Qv = np.repeat(Qv, P2.shape[0], axis=0)
        else:
            raise ValueError(f"P and Q batches differ: {P2.shape[0]} vs {Qv.shape[0]}")
    out = np.empty(P2.shape[0])
    for b in range(P2.shape[0]):
        rows, cols = np.flatnonzero(P2[b] > 0), np.flatnonzero(Qv[b] > 0)
        Cb = C_arr[np.ix_(rows, cols)]
        if backend == "pot":
            plan = emd(P2[b, rows], Qv[b, cols] * (P2[b, rows].sum() / Qv[b, cols].sum()), Cb)
        else:
            q = Qv[b, cols]
            plan = wpm_exact_highs(P2[b, rows], Cb, q, q)
        out[b] = float((plan * Cb).sum())
    return out[0].reshape(()) if (p1 and q1) else out


def _check_q(Q: ArrayLike, m: int) -> tuple[FloatArray, bool]:
    arr = check_distributions(Q, name="Q", n=m)
    return np.atleast_2d(arr) / np.atleast_2d(arr).sum(axis=1, keepdims=True), arr.ndim == 1
