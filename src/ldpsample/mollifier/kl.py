"""KL projection onto the relative mollifier: ``clip(λ p, a, b)`` with ``λ`` normalising each row.

Holds :func:`relative_mollifier_kl` (public: validation, row chunks, threads) and its
library-internal core :func:`kl_projection_rows` (also the clip-normaliser of
:func:`ldpsample.wasserstein.clip_normalize`), with its steps: the closed form when
``sum(lower) >= 1``, the bracket ``[0, λ_max]`` and the largest value of ``h`` per row
(``_kl_bracket``), the regular rows (``λ`` from :mod:`~ldpsample.mollifier.kl_normaliser`), the
degenerate rows that no ``λ`` normalises (closed form) and the final row-sum fix. Proofs:
``docs/mollifier.md``.

Uses the sibling modules :mod:`~ldpsample.mollifier.bounds`,
:mod:`~ldpsample.mollifier.chunks` and :mod:`~ldpsample.mollifier.kl_normaliser`, and
:mod:`ldpsample._threads`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ldpsample._threads import check_threads, run_split, worker_count
from ldpsample._types import FloatArray
from ldpsample.mollifier.bounds import _bounds, _fill_to_one, _finish, _prepare
from ldpsample.mollifier.chunks import _chunk_rows
from ldpsample.mollifier.kl_normaliser import _H_TOL, _kl_normaliser

__all__ = ["relative_mollifier_kl"]

#: :func:`relative_mollifier_kl` splits its chunks over threads from this many entries on.
_THREADED_ELEMENTS = 1 << 20


def kl_projection_rows(
    P: FloatArray,
    lower: FloatArray,
    upper: FloatArray,
    q_pos: NDArray[np.bool_],
    out: FloatArray | None = None,
) -> FloatArray:
    """``clip(λ p, lower, upper)`` normalised per row: the KL projection onto the box ∩ simplex.

    Library-internal (not in ``__all__``, no validation): the core of
    :func:`relative_mollifier_kl` and of :func:`ldpsample.wasserstein.clip_normalize`, which call
    it on blocks of rows. Contract: ``P`` of shape ``(rows, n)`` with non-negative rows (they
    need not sum to 1); bounds of shape ``(n,)`` with ``0 <= lower <= upper`` and
    ``sum(lower) <= 1 <= sum(upper)``; ``q_pos`` marks the coordinates that may be positive
    (``upper > 0``). The result is written to ``out`` when given, and returned.

    Steps: the closed form where ``sum(lower) >= 1`` (:func:`_kl_rows_at_lower_total`); the
    bracket ``[0, λ_max]`` and the largest value ``h_max`` of ``h`` per row
    (:func:`_kl_bracket`); ``λ`` from :func:`_kl_normaliser` (no sort) on the rows with
    ``h_max >= 1`` (:func:`_kl_regular_rows`); the closed form on the others
    (:func:`_kl_degenerate_rows`: the ``p > 0`` coordinates at ``upper``, the rest of the mass in
    proportion to ``lower``); finally :func:`_fix_row_sums`.
    """
    Q = np.empty_like(P) if out is None else out
    if lower.sum() >= 1.0:  # ε ~ 0: M = {q} up to rounding
        return _kl_rows_at_lower_total(Q, lower, upper)
    h_max, lam_max = _kl_bracket(P, lower, upper)
    degenerate = ~(h_max >= 1.0)
    regular = np.flatnonzero(~degenerate)
    sums = np.empty(P.shape[0])
    if regular.size:
        sums[regular] = _kl_regular_rows(P, lower, upper, regular, lam_max, h_max, Q)
    if degenerate.any():
        d = np.flatnonzero(degenerate)
        _kl_degenerate_rows(P[d] > 0, lower, upper, q_pos, d, Q)
        sums[d] = Q[d].sum(axis=1)
    return _fix_row_sums(Q, lower, upper, sums)


def _kl_rows_at_lower_total(Q: FloatArray, lower: FloatArray, upper: FloatArray) -> FloatArray:
    """Every row of ``Q`` set to ``lower`` moved to sum 1: the only point of ``M`` when
    ``sum(lower) >= 1`` (ε ~ 0, ``M = {q}`` up to rounding)."""
    Q[:] = lower
    Q[:] = _fill_to_one(Q, lower, upper)
    return Q


def _kl_bracket(
    P: FloatArray, lower: FloatArray, upper: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """``(h_max, λ_max)`` per row of ``P``.

    Only coordinates with ``p_i > 0`` depend on ``λ``: ``clip(λ p_i, a_i, b_i) = a_i`` on the
    others, and ``q_i = 0`` coordinates (``a_i = b_i = 0``) give 0 for every ``λ``, so no mask by
    ``q`` is needed. ``h`` is largest, ``h_max = sum_{p_i>0} b_i + sum_{p_i=0} a_i``, from
    ``max_i b_i / p_i`` on; ``λ_max = max(b) / min_{p_i>0} p_i`` (capped at the largest float)
    is at least that and closes the initial bracket. Rows with ``h_max < 1`` have no normaliser.
    One ``min`` pass serves the rows without a zero (``h_max = sum(b)``); only rows with a
    ``p_i = 0`` need the masked sums.
    """
    p_min = P.min(axis=1)
    h_max = np.full(P.shape[0], float(lower.sum()) + float(np.sum(upper - lower)))
    zero = np.flatnonzero(p_min == 0.0)
    if zero.size:
        Pz = P[zero]
        positive = Pz > 0
        h_max[zero] = float(lower.sum()) + np.vecdot(positive, upper - lower)
        p_min[zero] = np.min(Pz, axis=1, where=positive, initial=np.inf)
    with np.errstate(divide="ignore", over="ignore"):
        lam_max = float(upper.max()) / p_min
    return h_max, np.minimum(lam_max, np.finfo(float).max)


def _kl_regular_rows(
    P: FloatArray,
    lower: FloatArray,
    upper: FloatArray,
    regular: NDArray[np.intp],
    lam_max: FloatArray,
    h_max: FloatArray,
    Q: FloatArray,
) -> None:
    """``Q[regular] = clip(λ p, lower, upper)`` with ``λ`` from :func:`_kl_normaliser` (in place
    when every row is regular); returns the rows' sums."""
    all_rows = regular.size == P.shape[0]
    Pr = P if all_rows else P[regular]
    Qr = Q if all_rows else np.empty_like(Pr)
    _, sums = _kl_normaliser(Pr, lower, upper, lam_max[regular], h_max[regular], Qr)
    if not all_rows:
        Q[regular] = Qr
    return sums


def _kl_degenerate_rows(
    positive_d: NDArray[np.bool_],
    lower: FloatArray,
    upper: FloatArray,
    q_pos: NDArray[np.bool_],
    d: NDArray[np.intp],
    Q: FloatArray,
) -> None:
    """``Q[d]`` for the rows ``d`` that no ``λ`` normalises (``positive_d = P[d] > 0``).

    Every ``p_i > 0`` coordinate sits at its upper bound ``b_i`` and the rest of the mass ``R``
    goes to the ``p_i = 0`` coordinates as ``t q_i``, ``t = R / sum_{p_i = 0} q_i``, which lies in
    ``[e^{-ε/2}, e^{ε/2}]`` (``docs/mollifier.md``).
    """
    act = positive_d & q_pos
    free = (~act) & q_pos
    Qd = np.where(act, upper, 0.0)
    rest = 1.0 - Qd.sum(axis=1)
    s0 = np.where(free, lower, 0.0).sum(axis=1)  # e^{-ε/2} sum_{free} q (avoids dividing q)
    t = np.divide(rest, s0, out=np.zeros_like(rest), where=s0 > 0)  # in units of a_i
    Q[d] = np.where(free, np.clip(t[:, None] * lower, lower, upper), Qd)


def _fix_row_sums(
    Q: FloatArray, lower: FloatArray, upper: FloatArray, sums: FloatArray
) -> FloatArray:
    """``Q`` with the rows whose sum (``sums``, i.e. ``Q.sum(axis=1)``) is more than
    :data:`_H_TOL` off 1 moved onto their slack.

    Rounding leaves sums within ~n ulp of 1; rows further off (degenerate rows whose fill was
    clipped, cancellations) get the residual moved by :func:`_fill_to_one`.
    """
    off = np.flatnonzero(np.abs(sums - 1.0) > _H_TOL)
    if off.size:
        Q[off] = _fill_to_one(Q[off], lower, upper)
    return Q


def relative_mollifier_kl(
    P: ArrayLike, q: ArrayLike, *, epsilon: float, threads: int | None = None
) -> FloatArray:
    """KL projection of each user's distribution onto the relative mollifier around ``q``.

    Computes ``p_hat = argmin_{Q in M} KL(p || Q)`` with ``M`` the relative mollifier
    (:func:`mollifier_bounds`), the baseline sampler of Husain et al. (2020) as evaluated by
    Zamanlooy et al. (2025, baselines). By the KKT conditions the solution is

        p_hat_i = clip(λ p_i, e^{-ε/2} q_i, e^{ε/2} q_i),   i.e. clip(p_i / C, ...), C = 1 / λ,

    with ``λ`` chosen so that ``p_hat`` sums to 1. ``h(λ) = sum_i clip(λ p_i, a_i, b_i)`` is
    continuous, non-decreasing and affine between the breakpoints ``a_i / p_i`` and ``b_i / p_i``.
    Newton's method on ``h`` (:func:`_kl_normaliser`) jumps from piece to piece: each step solves
    the affine piece through the current ``λ`` in closed form, so it is exact once it reaches the
    piece where ``h`` crosses 1 (typically after 2-5 steps of a few O(n) passes), with a bracket,
    regula falsi and bisection as safeguards. It is vectorised over users (no per-user root
    finder, no sort of the ``2n`` breakpoints).

    Degenerate case (the published code's ``brentq`` raises there): if
    ``sum_{p_i > 0} b_i + sum_{p_i = 0} a_i < 1`` no ``λ`` exists (e.g. a point mass ``p`` with a
    small ε). The objective then does not depend on the ``p_i = 0`` coordinates; the optimum puts
    every ``p_i > 0`` coordinate at ``b_i`` (each term ``-p_i log Q_i`` is minimised there) and
    this function spreads the remaining mass over the ``p_i = 0`` coordinates in proportion to
    ``q`` (``Q_i = t q_i`` with a common ``t`` in ``[e^{-ε/2}, e^{ε/2}]``). See
    ``docs/mollifier.md`` for the proofs.

    Coordinates with ``q_i = 0`` get ``Q_i = 0``; if ``p_i > 0`` there, ``KL = inf`` on all of
    ``M`` and the minimiser of the finite part is returned (package docstring).

    The same point minimises every f-divergence ``D_f(p || Q)`` over ``M`` (χ², Hellinger, TV,
    ...): it satisfies their KKT conditions too (``docs/mollifier.md``).

    Parameters
    ----------
    P
        User distributions, shape ``(users, n)`` or ``(n,)``.
    q
        Public prior, shape ``(n,)``.
    epsilon
        Privacy parameter ε >= 0 (keyword-only).
    threads
        Most threads used for large inputs (``users * n >= 2**20``): None (default) uses up to
        ``min(os.cpu_count(), 8)``; pass the allocation's core count on a cluster node (e.g. a
        Snakemake rule's ``threads``); 1 runs in this thread with no thread pool. The result does
        not depend on it (the row chunks are independent).

    Returns
    -------
    numpy.ndarray
        Projected distributions, same shape as ``P``; each row lies in ``M`` (bounds hold exactly,
        sums equal 1 to rounding).

    Raises
    ------
    TypeError, ValueError
        For invalid ``P``, ``q``, ``epsilon`` or ``threads``, or ``P`` and ``q`` of different
        lengths.
    """
    threads = check_threads(threads)
    P2, q_arr, eps, was_1d = _prepare(P, q, epsilon, rescale=False)
    P2 = np.ascontiguousarray(P2)  # row sums and dot products then round the same for any layout
    lower, upper = _bounds(q_arr, eps)
    q_pos = q_arr > 0
    out = np.empty_like(P2)
    rows = _chunk_rows(P2.shape[1])
    starts = range(0, P2.shape[0], rows)

    def run(first: int, last: int) -> None:
        for start in starts[first:last]:
            stop = start + rows
            kl_projection_rows(P2[start:stop], lower, upper, q_pos, out=out[start:stop])

    # Chunks are independent and numpy releases the GIL in its loops: large inputs split them
    # over threads (the result does not depend on the split).
    large = P2.size >= _THREADED_ELEMENTS
    run_split(run, len(starts), worker_count(threads, len(starts), large=large))
    return _finish(out, was_1d)
