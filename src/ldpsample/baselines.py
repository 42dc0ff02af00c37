"""Baselines without public data: randomized response and the samplers of Park et al. (2024).

* :func:`randomized_response` — the n-ary randomized-response kernel, which is also the
  minimax-optimal kernel of Algorithm 1 for a uniform prior (Corollary 2 of Zamanlooy, Diaz and
  Asoodeh, AISTATS 2025).
* :func:`linear_minimax` — ``P @ RR``, the optimal *linear* private sampler;
  :func:`randomized_response_sparse` and :func:`randomized_response_divergences_sparse` — the
  same for sparse users (CSR histograms), O(k) per user with k items.
* :func:`nonlinear_minimax` — the minimax-optimal private sampler of Park et al. (NeurIPS 2024),
  ``Q = max(p / r, 1 / (e^ε + n - 1))`` with ``r > 0`` chosen so that ``Q`` sums to 1.

All formulas are written with ``t = e^-ε`` so that they stay finite for any finite ε.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ldpsample._types import FloatArray
from ldpsample._validation import check_distributions, check_epsilon, check_integer
from ldpsample.divergences import rel_entr_terms
from ldpsample.minimax_sparse import check_csr, csr_masses

__all__ = [
    "linear_minimax",
    "nonlinear_minimax",
    "randomized_response",
    "randomized_response_divergences_sparse",
    "randomized_response_sparse",
]


def _rr_weights(n: int, epsilon: float) -> tuple[float, float]:
    """``(diagonal, off-diagonal)`` of randomized response: ``e^ε m`` and ``m``."""
    t = math.exp(-epsilon)
    scale = 1.0 + (n - 1) * t
    return 1.0 / scale, t / scale


def randomized_response(n: int, *, epsilon: float) -> FloatArray:
    """The n-ary randomized-response kernel ``(e^ε I + (J - I)) / (e^ε + n - 1)``.

    It is ε-LDP, preserves the uniform distribution, and equals
    :func:`ldpsample.minimax.minimax_kernel` with a uniform prior (Corollary 2).

    Parameters
    ----------
    n
        Number of items (integer >= 1).
    epsilon
        Privacy parameter ε >= 0.

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` row-stochastic matrix.
    """
    eps = check_epsilon(epsilon)
    size = check_integer(n, name="n", minimum=1)
    diagonal, off = _rr_weights(size, eps)
    K = np.full((size, size), off)
    np.fill_diagonal(K, diagonal)
    return K


def linear_minimax(P: ArrayLike, *, epsilon: float, check_input: bool = True) -> FloatArray:
    """``P @ RR`` for randomized response ``RR``, without forming ``RR``.

    ``(pRR)_j = ((e^ε - 1) p_j + sum_i p_i) / (e^ε + n - 1)``: the optimal linear sampler without
    public data (Park et al., 2024). O(users * n).

    Parameters
    ----------
    P
        Distributions, shape ``(users, n)`` or ``(n,)``.
    epsilon
        Privacy parameter ε >= 0.
    check_input
        Validate ``P`` (finite, non-negative, rows summing to 1); ``False`` checks only its
        shape, for distributions the caller has checked. The result is the same.

    Returns
    -------
    numpy.ndarray
        Same shape as ``P``; each row depends on that row of ``P`` only (elementwise, no
        matrix product whose blocking could change a row's last bits with the batch). Equal to
        ``P @ randomized_response(n, epsilon=epsilon)`` within rounding (1e-15, tested).
    """
    eps = check_epsilon(epsilon)
    P_arr = check_distributions(P, name="P", check_values=check_input)
    n = P_arr.shape[-1]
    diagonal, off = _rr_weights(n, eps)
    out = P_arr * (diagonal - off)
    out += off * P_arr.sum(axis=-1, keepdims=True)
    return out


def nonlinear_minimax(P: ArrayLike, *, epsilon: float) -> FloatArray:
    """The minimax-optimal (non-linear) ε-LDP sampler of Park et al. (2024), without public data.

    Each row becomes ``Q = max(p / r, m)`` with ``m = 1 / (e^ε + n - 1)`` and ``r > 0`` the unique
    value making ``Q`` sum to 1. Every ``Q_j`` lies in ``[m, e^ε m]`` (the upper end is reached
    by point masses), so releasing a sample of ``Q`` is ε-LDP.

    The solve is exact and vectorised over users: with ``p`` sorted in decreasing order and
    ``s_k`` its partial sums, the items with ``Q_j > m`` are the ``k*`` largest, where ``k*`` is
    the largest ``k`` with ``s_{k-1} <= p_(k) (e^ε + k - 2)``, and then
    ``r = s_{k*} / ((e^ε + k* - 1) m)``. (The condition says ``sum_j max(p_j m / p_(k), m) <= 1``,
    which is monotone in ``k``.) O(users * n log n) for the sort.

    Parameters
    ----------
    P
        Distributions, shape ``(users, n)`` or ``(n,)``.
    epsilon
        Privacy parameter ε >= 0.

    Returns
    -------
    numpy.ndarray
        Same shape as ``P``: the distribution each user samples from.
    """
    eps = check_epsilon(epsilon)
    P_arr = check_distributions(P, name="P")
    squeeze = P_arr.ndim == 1
    P2 = P_arr[None, :] if squeeze else P_arr
    n = P2.shape[1]
    t = math.exp(-eps)
    desc = -np.sort(-P2, axis=1)
    partial = np.cumsum(desc, axis=1)
    k = np.arange(1, n + 1)
    # s_{k-1} <= p_(k) (e^ε + k - 2), multiplied by t = e^-ε to stay finite.
    previous = partial - desc
    active = t * previous <= desc * (1.0 + (k - 2) * t)
    k_star = np.maximum(active.sum(axis=1), 1)
    s_star = np.take_along_axis(partial, (k_star - 1)[:, None], axis=1)
    # p / r = p (e^ε + k* - 1) m / s_{k*} = p (1 + (k* - 1) t) / ((1 + (n - 1) t) s_{k*}).
    scale = 1.0 + (n - 1) * t
    gain = (1.0 + (k_star[:, None] - 1) * t) / (scale * s_star)
    out = np.maximum(P2 * gain, t / scale)
    return out[0] if squeeze else out


def _sparse_rr(indptr, indices, data, n, epsilon):
    eps = check_epsilon(epsilon)
    size = check_integer(n, name="n", minimum=1)
    ptr, idx, values = check_csr(size, indptr, indices, data, of="randomized response")
    row, p, lengths = csr_masses(ptr, idx, values, size)
    if lengths.size and not lengths.min() > 0:
        raise ValueError(
            f"row {int(np.argmin(lengths))} is empty: randomized response needs each user's "
            "data (it has no public prior to stand for a user without any)"
        )
    diagonal, off = _rr_weights(size, eps)
    return row, p, lengths, p * (diagonal - off) + off, off


def randomized_response_sparse(
    indptr: ArrayLike, indices: ArrayLike, data: ArrayLike, *, n: int, epsilon: float
) -> tuple[FloatArray, float]:
    """``p RR`` of sparse users (CSR histograms): its value at each entry and off the support.

    ``(pRR)_j = ((e^ε - 1) p_j + 1) / (e^ε + n - 1)`` (:func:`linear_minimax` with
    ``sum_i p_i = 1``): on row ``u``'s support from its own entries, and ``1 / (e^ε + n - 1)``
    at every other item. O(k) per user with k items.

    Parameters
    ----------
    indptr, indices, data
        The users' histograms in CSR form (as :func:`ldpsample.minimax_divergences_sparse`);
        every row non-empty.
    n
        Number of items (integer >= 1).
    epsilon
        Privacy parameter ε >= 0.

    Returns
    -------
    (values, off) : tuple of numpy.ndarray and float
        ``values[e]`` is ``(pRR)_j`` at CSR entry ``e``; ``off`` the value at any item off the
        row's support. Equal to ``linear_minimax`` on the dense rows within rounding (tested to
        1e-12).

    Raises
    ------
    TypeError, ValueError
        For malformed CSR arrays, items outside ``[0, n)``, negative or non-finite counts, a
        row listing an item twice, a row whose counts sum to 0 or an empty row.
    """
    _, _, _, values, off = _sparse_rr(indptr, indices, data, n, epsilon)
    return values, off


def randomized_response_divergences_sparse(
    indptr: ArrayLike, indices: ArrayLike, data: ArrayLike, *, n: int, epsilon: float
) -> tuple[FloatArray, FloatArray]:
    """``TV(p, pRR)`` and ``KL(p || pRR)`` of each sparse user, O(k) per user with k items.

    Off the support ``p_j = 0`` and ``(pRR)_j = m = 1 / (e^ε + n - 1)``: those ``n - k`` items
    add ``m / 2`` each to TV and nothing to KL, so
    ``TV = (sum_{supp} |p_j - (pRR)_j| + (n - k) m) / 2`` and
    ``KL = sum_{supp} p_j log(p_j / (pRR)_j)``. Equal to ``tv_distance(P, linear_minimax(P))``
    and ``kl_divergence(...)`` on the dense rows within rounding (tested to 1e-12).

    Parameters, raises: as :func:`randomized_response_sparse`.
    """
    row, p, lengths, values, off = _sparse_rr(indptr, indices, data, n, epsilon)
    users = lengths.size
    gap = np.bincount(row, weights=np.abs(p - values), minlength=users)
    tv = 0.5 * (gap + (n - lengths) * off)
    kl = np.bincount(row, weights=rel_entr_terms(p, values), minlength=users)
    return tv.astype(np.float64, copy=False), kl.astype(np.float64, copy=False)
