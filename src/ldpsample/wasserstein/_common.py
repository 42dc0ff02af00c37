"""Validation, the LDP polytope's bounds, the clip-normaliser and the release sampler.

Shared by every module of :mod:`ldpsample.wasserstein`. Notation of the paper
(*Differentially Private Sampling from Distributions via Wasserstein Projection*): input points
``x_1..x_n``, output points ``y_1..y_m``, cost ``C[i, j] = d(x_i, y_j)^r``, base measure ``μ`` and
LDP polytope ``M_ε(μ) = {Q in Δ_m : μ <= Q <= e^ε μ}``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ldpsample._types import FloatArray, IntArray
from ldpsample._validation import SUM_TOLERANCE, _as_float_array, check_distributions
from ldpsample.mollifier.kl import kl_projection_rows

#: Rows handled at once by the clip-normaliser (bounds its memory at ~10 arrays of CHUNK x 2m).
_CHUNK = 4096


def check_cost(C: ArrayLike, *, name: str = "C") -> FloatArray:
    """Validate a cost matrix: 2-D, at least one row and column, finite and non-negative.

    Raises
    ------
    TypeError
        For non-numeric input.
    ValueError
        For a wrong number of dimensions, an empty axis, or a negative / non-finite entry (the
        message names the first one and its index).
    """
    arr = _as_float_array(C, name)
    if arr.ndim != 2 or 0 in arr.shape:
        raise ValueError(f"{name} must be a non-empty (n, m) matrix, got shape {arr.shape}")
    bad = ~(np.isfinite(arr) & (arr >= 0))
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be finite and non-negative, got {arr[idx]!r} at index {idx}")
    return arr


def check_base_measure(mu: ArrayLike, *, epsilon: float, m: int | None = None) -> FloatArray:
    """Validate a base measure ``μ`` for ``M_ε(μ)``: ``μ >= 0`` and ``sum μ <= 1 <= e^ε sum μ``.

    Both inequalities are accepted within :data:`ldpsample.SUM_TOLERANCE` (so that, e.g., a
    uniform measure of total mass 1 passes despite rounding); they are exactly the condition for
    ``M_ε(μ)`` to be non-empty.

    Raises
    ------
    TypeError
        For non-numeric input.
    ValueError
        For a shape other than ``(m,)``, a negative / non-finite entry, or a total mass outside
        ``[e^{-ε}, 1]`` (the message gives the total and the interval).
    """
    arr = _as_float_array(mu, "mu")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"mu must have shape (m,) with m >= 1, got shape {arr.shape}")
    if m is not None and arr.size != m:
        raise ValueError(f"mu has {arr.size} entries but the cost matrix has {m} columns")
    bad = ~(np.isfinite(arr) & (arr >= 0))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"mu must be finite and non-negative, got {arr[i]!r} at index {i}")
    total = float(arr.sum())
    low = math.exp(-epsilon)
    grown = total * math.exp(min(epsilon, 700.0))
    if not (total <= 1.0 + SUM_TOLERANCE and grown >= 1.0 - SUM_TOLERANCE):
        raise ValueError(
            f"mu must satisfy sum(mu) <= 1 <= e^epsilon * sum(mu), i.e. sum(mu) in "
            f"[{low!r}, 1] for epsilon={epsilon!r}; got sum(mu) = {total!r}"
        )
    return arr


def check_inputs(P: ArrayLike, n: int) -> tuple[FloatArray, bool]:
    """Validate ``P`` (one or a batch of distributions over ``n`` inputs); return it 2-D.

    Rows are rescaled to sum to exactly 1 (they are accepted within the tolerance).
    """
    arr = check_distributions(P, name="P", n=n)
    was_1d = arr.ndim == 1
    P2 = np.atleast_2d(arr)
    return P2 / P2.sum(axis=1, keepdims=True), was_1d


def polytope_bounds(mu: FloatArray, epsilon: float) -> tuple[FloatArray, FloatArray]:
    """``(μ, min(e^ε μ, 1))``: the bounds of ``M_ε(μ)`` (capping at 1 does not change the set).

    Finite for every finite ε (no overflow of ``e^ε``).
    """
    if epsilon >= 700.0:
        return mu, np.where(mu > 0, 1.0, 0.0)
    return mu, np.minimum(math.exp(epsilon) * mu, 1.0)


def clip_normalize(P: ArrayLike, lower: ArrayLike, upper: ArrayLike) -> FloatArray:
    """``clip(λ p, lower, upper)`` with ``λ`` such that every row sums to 1 (KL projection).

    For each row ``p`` (a non-negative vector) this is the KL projection of ``p`` onto
    ``{Q in Δ : lower <= Q <= upper}`` (``argmin KL(p || Q)``; it is also the column step of the
    entropic WPM, where ``p`` is the current column-sum vector). ``λ`` is found exactly, without
    sorting the breakpoints, by a safeguarded Newton iteration on the piecewise-linear
    ``λ -> sum clip(λ p, lower, upper)`` (each step solves the piece through the current ``λ``
    in closed form), vectorised over rows. When no ``λ`` exists (the ``p_j > 0`` coordinates at
    their upper bounds and the others at their lower bounds still sum to less than 1), the
    ``p_j > 0`` coordinates are set to their upper bounds and the remaining mass goes to the others
    in proportion to ``lower`` -- the limit of the projection of ``p + δ lower`` as ``δ -> 0``.

    This shares one implementation with :func:`ldpsample.mollifier.relative_mollifier_kl`
    (the library-internal :func:`ldpsample.mollifier.kl.kl_projection_rows`), whose bounds are
    ``(e^{-ε/2} q, e^{ε/2} q)``.

    Parameters
    ----------
    P
        Non-negative weights, shape ``(rows, m)`` or ``(m,)``; rows need not sum to 1 (an
        all-zero row gets the ``lower``-proportional fill).
    lower, upper
        Bounds of shape ``(m,)`` with ``0 <= lower <= upper`` and
        ``sum(lower) <= 1 <= sum(upper)`` (within :data:`ldpsample.SUM_TOLERANCE`).

    Returns
    -------
    numpy.ndarray
        Same shape as ``P``; each row within the bounds and summing to 1 (to rounding).

    Raises
    ------
    ValueError
        For negative / non-finite entries, mismatched shapes or infeasible bounds.
    """
    arr = _as_float_array(P, "P")
    lo = _as_float_array(lower, "lower")
    hi = _as_float_array(upper, "upper")
    if arr.ndim not in (1, 2) or lo.shape != (arr.shape[-1],) or hi.shape != lo.shape:
        raise ValueError(
            f"P must have shape (m,) or (rows, m) and lower, upper shape (m,); got {arr.shape}, "
            f"{lo.shape}, {hi.shape}"
        )
    for name, a in (("P", arr), ("lower", lo), ("upper", hi)):
        if not (np.isfinite(a).all() and (a >= 0).all()):
            raise ValueError(f"{name} must be finite and non-negative, got {a!r:.200}")
    if (lo > hi).any():
        j = int(np.argmax(lo > hi))
        raise ValueError(f"lower must not exceed upper, got {lo[j]!r} > {hi[j]!r} at index {j}")
    if not (lo.sum() <= 1.0 + SUM_TOLERANCE and hi.sum() >= 1.0 - SUM_TOLERANCE):
        raise ValueError(
            f"bounds are infeasible: need sum(lower) <= 1 <= sum(upper), got "
            f"{float(lo.sum())!r} and {float(hi.sum())!r}"
        )
    out = _clip_normalise(np.ascontiguousarray(np.atleast_2d(arr)), lo, hi)
    return out[0] if arr.ndim == 1 else out


def _clip_normalise(P: FloatArray, lower: FloatArray, upper: FloatArray) -> FloatArray:
    """Unvalidated :func:`clip_normalize` on a 2-D array, chunked over rows."""
    pos = upper > 0
    out = np.empty_like(P)
    for start in range(0, P.shape[0], _CHUNK):
        stop = start + _CHUNK
        kl_projection_rows(P[start:stop], lower, upper, pos, out=out[start:stop])
    return out


def _solve_on_segment(
    log_a: FloatArray, lower: FloatArray, upper: FloatArray, t_ref: FloatArray
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Solve ``h(t) = 1`` assuming the coordinates keep their classification at ``t_ref``.

    Returns the candidate ``t`` and whether any coordinate is interior (otherwise ``h`` is flat
    there and the candidate is meaningless).
    """
    log_l, log_u = np.log(lower), np.log(upper)
    below = t_ref[:, None] <= (log_l - log_a)
    above = t_ref[:, None] >= (log_u - log_a)
    interior = ~(below | above)
    A = np.where(below, lower, 0.0).sum(axis=1) + np.where(above, upper, 0.0).sum(axis=1)
    masked = np.where(interior, log_a, -np.inf)
    top = masked.max(axis=1)
    has = np.isfinite(top)
    safe_top = np.where(has, top, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_B = np.log(np.exp(masked - safe_top[:, None]).sum(axis=1)) + safe_top
        t = np.log(np.maximum(1.0 - A, 0.0)) - log_B
    return np.where(has, t, np.nan), has


def log_clip_normalise(
    log_a: FloatArray,
    lower: FloatArray,
    upper: FloatArray,
    t0: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """``log clip(λ a, lower, upper)`` with ``λ`` normalising each row, computed in log space.

    The column step of the entropic WPM: for small η the column sums ``a`` of the Gibbs plan
    span hundreds of orders of magnitude (``exp(-C/η)``), so ``λ`` may be astronomically large
    and ``a`` cannot be exponentiated. The breakpoints ``log(lower / a)`` and ``log(upper / a)``
    are sorted, the segment where ``h(t) = sum clip(e^t a, lower, upper)`` crosses 1 is found by
    a vectorised binary search evaluating ``h`` directly, and on it ``λ = (1 - A) / B`` with
    ``B = sum_{interior} a`` taken as a log-sum-exp (the interior ``a_j`` are all within the
    bounds' range of each other, so nothing is lost).

    ``t0`` (shape ``(rows,)``) is an optional guess of ``log λ`` -- the previous iteration's: the
    equation is first solved on the segment containing ``t0`` and the answer kept for the rows
    where it sums to 1 (to 1e-12); only the other rows are searched. ``h`` is non-decreasing, so
    a ``t`` with ``h(t) = 1`` gives the same ``clip`` as the exact root.

    ``log_a`` has shape ``(rows, m)`` and must be finite; ``0 < lower <= upper`` with
    ``sum(lower) <= 1 <= sum(upper)``. Returns ``(log Q, log λ)``.
    """
    rows, _m = log_a.shape
    log_l, log_u = np.log(lower), np.log(upper)
    t_out = np.empty(rows)
    todo_rows = np.arange(rows)
    if t0 is not None:
        t, has = _solve_on_segment(log_a, lower, upper, t0)
        with np.errstate(over="ignore", invalid="ignore"):
            total = np.clip(np.exp(t[:, None] + log_a), lower, upper).sum(axis=1)
        good = has & np.isfinite(t) & (np.abs(total - 1.0) <= 1e-12)
        t_out[good] = t[good]
        todo_rows = np.flatnonzero(~good)
    if todo_rows.size:
        t_out[todo_rows] = _search(log_a[todo_rows], lower, upper)
    return np.clip(t_out[:, None] + log_a, log_l, log_u), t_out


def _search(log_a: FloatArray, lower: FloatArray, upper: FloatArray) -> FloatArray:
    """Exact ``log λ`` by sorting the breakpoints and bisecting over them (see above)."""
    rows, m = log_a.shape
    log_l, log_u = np.log(lower), np.log(upper)
    keys = np.sort(np.concatenate([log_l - log_a, log_u - log_a], axis=1), axis=1)
    r = np.arange(rows)

    def h(t: FloatArray, idx: IntArray) -> FloatArray:
        with np.errstate(over="ignore"):
            return np.clip(np.exp(t[:, None] + log_a[idx]), lower, upper).sum(axis=1)

    lo = np.full(rows, -1)  # virtual breakpoint t = -inf, where h = sum(lower) <= 1
    hi = np.full(rows, 2 * m - 1)  # h = sum(upper) >= 1 at the last breakpoint
    while True:
        todo = np.flatnonzero(hi - lo > 1)
        if todo.size == 0:
            break
        mid = (lo[todo] + hi[todo]) // 2
        up = h(keys[todo, mid], todo) >= 1.0
        hi[todo] = np.where(up, mid, hi[todo])
        lo[todo] = np.where(up, lo[todo], mid)
    t_hi = keys[r, hi]
    t_lo = np.where(lo >= 0, keys[r, np.maximum(lo, 0)], -np.inf)
    t_mid = np.where(np.isfinite(t_lo), 0.5 * (t_lo + t_hi), t_hi - 1.0)
    t, has = _solve_on_segment(log_a, lower, upper, t_mid)
    t = np.where(has, t, t_hi)
    return np.minimum(np.maximum(t, t_lo), t_hi)
