"""The relative mollifier ``M`` itself, and what every projection onto it shares.

Holds :func:`mollifier_bounds` (the public bounds ``(e^{-ε/2} q, min(e^{ε/2} q, 1))``) and the
package-internal helpers of every projection in :mod:`ldpsample.mollifier`: the validation and
rescaling of ``(P, q, ε)`` (``_prepare``), the bounds without overflow (``_bounds``), the move
of rows onto sum 1 within the bounds (``_fill_to_one``: the TV optimum and the clean-up of
solver output) and the 1-D/2-D shape round trip (``_finish``). Conventions: the package
docstring.

Uses numpy and :mod:`ldpsample._validation` only; no sibling module.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ldpsample._types import FloatArray
from ldpsample._validation import (
    check_distribution,
    check_distributions,
    check_epsilon,
)

__all__ = ["mollifier_bounds"]


def _prepare(
    P: ArrayLike, q: ArrayLike, epsilon: object, *, rescale: bool = True, check_input: bool = True
) -> tuple[FloatArray, FloatArray, float, bool]:
    """Validate and renormalise; return ``(P2, q, eps, was_1d)`` with ``P2`` two-dimensional.

    ``rescale=False`` leaves the rows of ``P`` as given (within the sum tolerance): the KL
    projection ``clip(λ p, a, b)`` absorbs a row's scale into ``λ``, so it skips the copy.
    """
    q_arr = check_distribution(q, name="q")
    P_arr = check_distributions(P, name="P", n=q_arr.size, check_values=check_input)
    eps = check_epsilon(epsilon)
    was_1d = P_arr.ndim == 1
    P2 = np.atleast_2d(P_arr)
    if rescale:
        P2 = P2 / P2.sum(axis=1, keepdims=True)
    return P2, q_arr / q_arr.sum(), eps, was_1d


def _bounds(q: FloatArray, eps: float) -> tuple[FloatArray, FloatArray]:
    """``(e^{-ε/2} q, min(e^{ε/2} q, 1))`` without overflow for large finite ε."""
    half = eps / 2.0
    lower = math.exp(-half) * q  # underflows to 0 gracefully
    if half >= 700.0:  # e^{ε/2} q_i > 1 for every q_i > 0 representable in float64
        return lower, np.where(q > 0, 1.0, 0.0)
    return lower, np.minimum(math.exp(half) * q, 1.0)


def _fill_to_one(y: FloatArray, lower: FloatArray, upper: FloatArray) -> FloatArray:
    """Move each row of ``y`` (within ``[lower, upper]``) to sum 1, staying within the bounds.

    The missing mass ``s = 1 - sum(y)`` is added in proportion to the remaining capacity
    ``upper - y`` (``s > 0``) or removed in proportion to ``y - lower`` (``s < 0``). The total
    capacity suffices whenever ``sum(lower) <= 1 <= sum(upper)``. This is the deterministic
    optimal point of the TV projection, and the clean-up applied to solver output.
    """
    s = 1.0 - y.sum(axis=1)
    up = s > 0
    # cap = upper - y on rows that gain mass, y - lower on the others, then
    # out = y + (±frac) * cap clipped to [lower, upper], all in cap's buffer (the same values as
    # the expression written out, with one temporary instead of five).
    cap = np.subtract(upper, y)
    np.subtract(y, lower, out=cap, where=~up[:, None])
    total = cap.sum(axis=1)
    frac = np.divide(np.abs(s), total, out=np.zeros_like(s), where=total > 0)
    frac = np.minimum(frac, 1.0)
    cap *= (np.where(up, 1.0, -1.0) * frac)[:, None]
    cap += y
    np.maximum(cap, lower, out=cap)
    return np.minimum(cap, upper, out=cap)


def _finish(Q: FloatArray, was_1d: bool) -> FloatArray:
    return Q[0] if was_1d else Q


def mollifier_bounds(q: ArrayLike, *, epsilon: float) -> tuple[FloatArray, FloatArray]:
    """Element-wise bounds ``(lower, upper)`` of the relative mollifier around ``q``.

    ``M = {Q in the simplex : lower <= Q <= upper}`` with ``lower = e^{-ε/2} q`` and
    ``upper = min(e^{ε/2} q, 1)`` (Husain et al. 2020, Sec. 4; Zamanlooy et al. 2025, baselines).
    Capping the upper bound at 1 does not change ``M`` and keeps it finite for every finite ε.

    Parameters
    ----------
    q
        Public prior, a distribution of shape ``(n,)`` (renormalised to sum to exactly 1).
    epsilon
        Privacy parameter ε >= 0.

    Returns
    -------
    lower, upper
        Arrays of shape ``(n,)``; both are 0 where ``q`` is 0.

    Raises
    ------
    TypeError, ValueError
        For an invalid ``q`` or ``epsilon`` (see :func:`ldpsample.check_distribution`,
        :func:`ldpsample.check_epsilon`).
    """
    q_arr = check_distribution(q, name="q")
    eps = check_epsilon(epsilon)
    return _bounds(q_arr / q_arr.sum(), eps)
