"""TV projection onto the relative mollifier, and the minimum TV in closed form.

Holds :func:`relative_mollifier_tv` (a deterministic TV-optimal point: clip to the bounds,
then move the missing or excess mass in proportion to the slack) and
:func:`mollifier_tv_value` (the optimal value ``max(E, D)``), with the clip they share
(``_clipped``). Proofs: ``docs/mollifier.md``.

Uses the sibling modules :mod:`~ldpsample.mollifier.bounds` and
:mod:`~ldpsample.mollifier.chunks`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ldpsample._types import FloatArray
from ldpsample.mollifier.bounds import _bounds, _fill_to_one, _finish, _prepare
from ldpsample.mollifier.chunks import _by_row_chunks

__all__ = ["mollifier_tv_value", "relative_mollifier_tv"]


def _clipped(P: FloatArray, lower: FloatArray, upper: FloatArray) -> FloatArray:
    """``np.clip(P, lower, upper)`` as two in-place passes (numpy's clip with array bounds is
    slower; the same values for inputs without NaN, which validation excludes)."""
    out = np.maximum(P, lower)
    return np.minimum(out, upper, out=out)


def relative_mollifier_tv(
    P: ArrayLike, q: ArrayLike, *, epsilon: float, check_input: bool = True
) -> FloatArray:
    """A TV projection of each user's distribution onto the relative mollifier around ``q``.

    Returns a minimiser of ``TV(p, Q) = sum_i (p_i - Q_i)_+`` over ``Q in M``, the TV baseline of
    Zamanlooy et al. (2025) built on Husain et al. (2020) (the published code solves one Gurobi LP
    per user). The minimiser is not unique; this one is deterministic: start from
    ``y = clip(p, a, b)``; if ``sum(y) < 1`` add the missing mass in proportion to the remaining
    capacity ``b - y``, otherwise remove the excess in proportion to ``y - a``. It attains the
    optimal value ``max(E, D)`` of :func:`mollifier_tv_value` (proof in ``docs/mollifier.md``).
    :func:`relative_mollifier_kl` returns another TV-optimal point (optimal for every
    f-divergence); reported TV values do not depend on which optimum is used.

    Parameters
    ----------
    P
        User distributions, shape ``(users, n)`` or ``(n,)``.
    q
        Public prior, shape ``(n,)``.
    epsilon
        Privacy parameter ε >= 0 (keyword-only).
    check_input
        Validate ``P`` (finite, non-negative, rows summing to 1). ``False`` skips that pass for
        distributions the caller has built or checked itself; the result is the same.

    Returns
    -------
    numpy.ndarray
        Projected distributions, same shape as ``P``, each in ``M``.

    Raises
    ------
    TypeError, ValueError
        For invalid ``P``, ``q`` or ``epsilon``, or ``P`` and ``q`` of different lengths.
    """
    P2, q_arr, eps, was_1d = _prepare(P, q, epsilon, check_input=check_input)
    lower, upper = _bounds(q_arr, eps)
    out = _by_row_chunks(
        P2, lambda chunk: _fill_to_one(_clipped(chunk, lower, upper), lower, upper)
    )
    return _finish(out, was_1d)


def mollifier_tv_value(P: ArrayLike, q: ArrayLike, *, epsilon: float) -> FloatArray:
    """Minimum total variation ``min_{Q in M} TV(p, Q)`` for each user, in closed form.

    With ``E = sum_i (p_i - b_i)_+`` (mass above the upper bounds) and ``D = sum_i (a_i - p_i)_+``
    (mass missing below the lower bounds), the minimum is ``max(E, D)``: every ``Q in M`` has
    ``sum (p - Q)_+ >= E`` and ``sum (Q - p)_+ >= D``, and the two sums are equal because both
    distributions sum to 1; :func:`relative_mollifier_tv` attains the bound.

    Parameters
    ----------
    P
        User distributions, shape ``(users, n)`` or ``(n,)``.
    q
        Public prior, shape ``(n,)``.
    epsilon
        Privacy parameter ε >= 0 (keyword-only).

    Returns
    -------
    numpy.ndarray
        Shape ``P.shape[:-1]`` (a 0-d array for one distribution).

    Raises
    ------
    TypeError, ValueError
        For invalid ``P``, ``q`` or ``epsilon``, or ``P`` and ``q`` of different lengths.
    """
    P2, q_arr, eps, was_1d = _prepare(P, q, epsilon)
    lower, upper = _bounds(q_arr, eps)
    excess = np.maximum(P2 - upper, 0.0).sum(axis=1)
    deficit = np.maximum(lower - P2, 0.0).sum(axis=1)
    value = np.maximum(excess, deficit)
    return value.reshape(()) if was_1d else value
