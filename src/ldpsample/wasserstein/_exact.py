"""Exact WPM: the linear programme min <C, π> s.t. π 1 = P, μ <= π^T 1 <= e^ε μ, π >= 0.

Two backends, one input at a time (rows with ``P_i = 0`` and columns with ``μ_j = 0`` are
dropped first): POT's network simplex on an equivalent balanced transport problem, and scipy's
HiGHS on the LP itself. See ``docs/wasserstein.md``.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from ldpsample._types import FloatArray


def have_pot() -> bool:
    try:
        import ot  # noqa: F401
    except ImportError:  # pragma: no cover - POT is installed in the development environment
        return False
    return True


def resolve_solver(solver: str) -> str:
    if solver not in ("auto", "pot", "highs"):
        raise ValueError(f"solver must be 'auto', 'pot' or 'highs', got {solver!r}")
    if solver == "auto":
        return "pot" if have_pot() else "highs"
    if solver == "pot" and not have_pot():
        raise ValueError("solver='pot' needs the POT package (pip install pot)")
    return solver


def emd(a: FloatArray, b: FloatArray, M: FloatArray) -> FloatArray:
    """Network simplex (POT) with its warnings turned into errors we raise ourselves."""
    import ot

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        G, log = ot.emd(a, b, M, numItermax=10_000_000, log=True, check_marginals=False)
    if log["result_code"] != 1:
        raise RuntimeError(f"POT network simplex did not reach optimality: {log['warning']}")
    return np.asarray(G)


def wpm_exact_pot(p: FloatArray, C: FloatArray, lower: FloatArray, upper: FloatArray):
    """Exact WPM for one input as a balanced OT problem solved by POT's network simplex.

    Output ``j`` is split into a mandatory copy with demand ``μ_j`` and an optional copy with
    capacity ``upper_j - μ_j``; a dummy source with supply ``sum(upper) - 1`` fills the unused
    optional capacity at cost 0 and may not reach the mandatory copies (cost ``big``). Any plan
    that used a forbidden edge could be improved by exchanging with a real source, because
    ``big > max C - min C``; so the optimum is exactly the WPM linear programme.
    """
    k, m = C.shape
    spare = float(upper.sum()) - 1.0
    a = np.append(p, max(spare, 0.0))
    b = np.concatenate([lower, upper - lower])
    big = 2.0 * (float(C.max()) - float(C.min())) + 1.0
    M = np.empty((k + 1, 2 * m))
    M[:k, :m] = C
    M[:k, m:] = C
    M[k, :m] = big
    M[k, m:] = 0.0
    b *= a.sum() / b.sum()  # remove rounding so the two sides balance exactly
    G = emd(a, b, M)
    plan = G[:k, :m] + G[:k, m:]
    return plan


def wpm_exact_highs(p: FloatArray, C: FloatArray, lower: FloatArray, upper: FloatArray):
    """Exact WPM for one input with scipy's HiGHS: variables ``π`` (k x m) and ``Q`` (m)."""
    k, m = C.shape
    rows_pi = sparse.kron(sparse.eye(k), np.ones((1, m)))  # sum_j π_ij = p_i
    cols_pi = sparse.kron(np.ones((1, k)), sparse.eye(m))  # sum_i π_ij - Q_j = 0
    A_eq = sparse.vstack(
        [
            sparse.hstack([rows_pi, sparse.csr_matrix((k, m))]),
            sparse.hstack([cols_pi, -sparse.eye(m)]),
        ]
    ).tocsr()
    b_eq = np.concatenate([p, np.zeros(m)])
    c = np.concatenate([C.ravel(), np.zeros(m)])
    bounds = np.concatenate(
        [
            np.column_stack([np.zeros(k * m), np.full(k * m, np.inf)]),
            np.column_stack([lower, upper]),
        ]
    )
    res = linprog(c, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the WPM linear programme: {res.message}")
    return np.clip(res.x[: k * m].reshape(k, m), 0.0, None)


def exact_projection(P2, C, lower, upper, solver):
    batch = P2.shape[0]
    cols = np.flatnonzero(upper > 0)
    lo, hi = lower[cols], upper[cols]
    Q = np.zeros((batch, C.shape[1]))
    cost = np.empty(batch)
    solve = wpm_exact_pot if solver == "pot" else wpm_exact_highs
    for b in range(batch):
        rows = np.flatnonzero(P2[b] > 0)
        Cb = C[np.ix_(rows, cols)]
        plan = solve(P2[b, rows], Cb, lo, hi)
        q = np.clip(plan.sum(axis=0), lo, hi)
        Q[b, cols] = q
        cost[b] = float((plan * Cb).sum())
    return Q, cost
