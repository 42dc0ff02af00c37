"""Estimators of a population's distribution from items released by the minimax sampler: the
unbiased inversion with its analytic standard errors, its projection onto the simplex
(Norm-Sub), the maximum-likelihood estimate (EM, also called iterative Bayesian update), and the
χ² test of "the population's distribution is the public prior".

Every user releases draws from ``p_u K`` with ``K = K_{q,ε}`` (Zamanlooy, Diaz & Asoodeh,
AISTATS 2025; /work/shared/papers/000_904d48b38ce41b65.txt, §2: "we focus on mechanisms that
enforce qK = q"). Pooled over users, the released frequencies ``ĥ`` have mean ``π = p̄ K``
(``p̄`` the user-weighted mean of the ``p_u``), so:

- ``p̂ = ĥ K^{-1}`` is unbiased for ``p̄``, with covariance ``K^{-T} (diag π - π π^T) K^{-1} / N``
  for ``N`` draws from the population; its diagonal is
  ``(sum_j π_j (K^{-1}[j, i])^2 - p̄_i^2) / N``, computed in O(n) and estimated by plugging in
  ``ĥ`` and ``p̂`` (Wang et al., USENIX Security 2017, for randomized response);
- Norm-Sub (Wang et al., NDSS 2020) is the Euclidean projection of ``p̂`` onto the simplex;
- EM maximises ``sum_j ĥ_j log (p K)_j`` over the simplex (Agrawal & Aggarwal 2001; the
  iterative Bayesian update of multi-freq-ldpy): ``p <- p ⊙ K (ĥ / (p K))``. It stops when
  ``max_i (K (ĥ / p K))_i - 1``, an upper bound on the log-likelihood (per draw) still to
  gain, is below ``tol``;
- since ``q K = q``, released items follow ``q`` exactly when ``p̄ = q``, so the χ² test of
  ``p̄ = q`` compares the released counts with ``N q`` and needs no inversion.

Every function takes arrays in the caller's item order and accepts a batch (one distribution or
count vector per row), so bootstrap replicates run as one array.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from ldpsample.estimate.structured import StructuredKernel

__all__ = [
    "ChiSquareTest",
    "analytic_standard_errors",
    "chi_square_test",
    "em_estimate",
    "inversion",
    "log_likelihood",
    "norm_sub",
]

log = logging.getLogger(__name__)

FloatArray = NDArray[np.float64]


def _frequencies(counts: ArrayLike) -> FloatArray:
    h = np.asarray(counts, dtype=float)
    total = h.sum(axis=-1, keepdims=True)
    if np.any(total <= 0):
        raise ValueError("counts: no released draw (the counts sum to 0)")
    return h / total


def inversion(kernel: StructuredKernel, *, counts: ArrayLike) -> FloatArray:
    """The unbiased estimate ``ĥ K^{-1}`` of ``p̄`` from released counts (rows: replicates).
    Its entries sum to 1 but may be negative."""
    return kernel.solve(_frequencies(counts))


def analytic_standard_errors(
    kernel: StructuredKernel, *, counts: ArrayLike, estimate: ArrayLike
) -> FloatArray:
    """Plug-in standard errors of :func:`inversion`:
    ``sqrt((sum_j ĥ_j (K^{-1}[j, i])^2 - p̂_i^2) / N)`` with ``N`` the number of draws."""
    h = np.asarray(counts, dtype=float)
    n_draws = h.sum(axis=-1, keepdims=True)
    variance = kernel.inverse_column_moments(h / n_draws) - np.asarray(estimate) ** 2
    return np.sqrt(np.maximum(variance, 0.0) / n_draws)


def norm_sub(estimate: ArrayLike) -> FloatArray:
    """Norm-Sub: the Euclidean projection onto the simplex, ``max(p̂_i - λ, 0)`` with ``λ`` such
    that the result sums to 1 (sort-based, O(n log n) per row)."""
    x = np.atleast_2d(np.asarray(estimate, dtype=float))
    ordered = -np.sort(-x, axis=1)
    running = np.cumsum(ordered, axis=1) - 1.0
    ranks = np.arange(1, x.shape[1] + 1)
    kept = ordered - running / ranks > 0
    last = x.shape[1] - 1 - np.argmax(kept[:, ::-1], axis=1)  # last rank kept
    shift = running[np.arange(x.shape[0]), last] / (last + 1)
    out = np.maximum(x - shift[:, None], 0.0)
    return out if np.ndim(estimate) > 1 else out[0]


def log_likelihood(kernel: StructuredKernel, *, counts: ArrayLike, p: ArrayLike) -> FloatArray:
    """``sum_j counts_j log (p K)_j`` (terms with a zero count are 0)."""
    h = np.asarray(counts, dtype=float)
    released = kernel.apply(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(h > 0, h * np.log(released), 0.0)
    return terms.sum(axis=-1)


def em_estimate(
    kernel: StructuredKernel,
    *,
    counts: ArrayLike,
    tol: float = 1e-10,
    max_iter: int = 10_000,
    start: ArrayLike | None = None,
    accelerate: bool = True,
) -> FloatArray:
    """The maximum-likelihood estimate of ``p̄`` on the simplex by EM, from ``start`` (default:
    the prior ``q``, which is uniform for randomized response).

    Parameters
    ----------
    kernel
        The release's kernel (every ``q_j > 0``).
    counts
        Released counts per item (rows: replicates).
    tol
        Stop when ``max_i (K (ĥ / p K))_i - 1 <= tol`` for every row: then the log-likelihood
        per draw is within ``tol`` of its maximum (concavity). ``0`` runs ``max_iter``
        EM steps.
    max_iter
        Most EM steps (evaluations of the EM map); a row still above ``tol`` then is logged as a
        warning.
    accelerate
        SQUAREM (Varadhan & Roland, Scand. J. Statist. 2008): after two EM steps, jump along the
        squared extrapolation and keep the jump only where it raises the likelihood above the
        second step's (and stays positive); else the plain second step. Same optimum, far
        fewer steps where plain EM crawls. False: plain EM, step by step as multi-freq-ldpy's
        ``IBU``.
    """
    h = kernel._sorted(_frequencies(counts))
    if start is None:
        start_sorted = kernel.kernel.q_sorted
    else:
        start_sorted = kernel._sorted(np.asarray(start, dtype=float))
    p = np.broadcast_to(start_sorted, h.shape).copy()
    apply, apply_columns = kernel._apply_sorted, kernel._apply_columns_sorted

    def likelihood(released: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore"):
            return np.where(h > 0, h * np.log(released), 0.0).sum(axis=-1)

    def normalised(x: FloatArray) -> FloatArray:
        return x / x.sum(axis=-1, keepdims=True)

    released = apply(p)
    steps, converged = 0, False
    while steps < max_iter:
        ratio = apply_columns(h / released)  # one EM step: p <- p ⊙ K (ĥ / p K)
        steps += 1
        p1 = normalised(p * ratio)
        if tol > 0 and np.max(ratio) - 1.0 <= tol:
            p, converged = p1, True
            break
        released1 = apply(p1)
        if not accelerate or steps >= max_iter:
            p, released = p1, released1
            continue
        p2 = normalised(p1 * apply_columns(h / released1))
        steps += 1
        r = p1 - p
        v = p2 - p1 - r
        norm_v = np.sqrt((v**2).sum(axis=-1, keepdims=True))
        norm_r = np.sqrt((r**2).sum(axis=-1, keepdims=True))
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = np.where(norm_v > 0, -norm_r / norm_v, -1.0)
        alpha = np.minimum(alpha, -1.0)
        jump = normalised(np.maximum(p - 2 * alpha * r + alpha**2 * v, 1e-3 * p2))
        released_jump = apply(jump)
        # keep the jump where it is at least as likely as the first EM step (EM never
        # decreases the likelihood, so every cycle makes progress); else the second step
        better = (likelihood(released_jump) >= likelihood(released1))[..., None]
        if better.all():
            p, released = jump, released_jump
        else:
            p = np.where(better, jump, p2)
            released = np.where(better, released_jump, apply(p2))
    if tol > 0 and not converged:
        log.warning("EM stopped after %d steps above tol=%g", max_iter, tol)
    return kernel._caller(p)


@dataclass(frozen=True)
class ChiSquareTest:
    """Pearson's χ² test of ``p̄ = q`` on released counts."""

    statistic: float
    dof: int
    p_value: float
    draws: int


def chi_square_test(*, counts: ArrayLike, q: ArrayLike) -> ChiSquareTest:
    """Pearson's ``sum_j (n_j - N q_j)^2 / (N q_j)`` with ``n - 1`` degrees of freedom.

    Under ``p̄ = q`` every released draw has marginal ``q`` (``q K = q``); draws of different
    users are independent, so with one draw per user the statistic is asymptotically χ²
    (conservative when users differ). Draws of one user (several ``samples``) are dependent:
    pass one draw per user.
    """
    n = np.asarray(counts, dtype=float)
    prior = np.asarray(q, dtype=float)
    total = float(n.sum())
    if total <= 0:
        raise ValueError("counts: no released draw (the counts sum to 0)")
    expected = total * prior
    statistic = float(((n - expected) ** 2 / expected).sum())
    dof = prior.shape[0] - 1
    p_value = float(stats.chi2.sf(statistic, dof)) if dof > 0 else 1.0
    return ChiSquareTest(statistic, dof, p_value, round(total))
