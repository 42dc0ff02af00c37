"""Relative mollifiers for sparse users: the TV and KL projections of a user with k items in
O(k log k), after O(n log n) once per prior and ε, without a users x items matrix.

Holds :class:`SparseMollifier` (the bounds of ``M`` around ``q`` at ε and their aggregates,
built by :func:`sparse_mollifier`), the projections :func:`relative_mollifier_tv_sparse` and
:func:`relative_mollifier_kl_sparse` (each a :class:`SparseProjection`: the values on the
user's support and one rule for every other item) and :func:`mollifier_divergences_sparse`
(TV and KL of ``p`` against a projection).

Off a user's support ``p_j = 0``, so every item there starts from the same bound relative to
``q``: ``clip(λ p_j, a_j, b_j) = a_j`` for the KL projection (``clip(t a_j, a_j, b_j)`` in its
degenerate case) and ``clip(p_j, a_j, b_j) = a_j`` for the TV projection, and the final move
onto sum 1 (:func:`ldpsample.mollifier.bounds._fill_to_one`) takes one common fraction of each
item's slack. Their masses are therefore the global sums of the bounds less the support's
share, and the degenerate case's capped items are counted from the bounds' ratios sorted once.
The derivation, the equations of the papers it rests on and the complexity are in
``docs/mollifier.md`` ("Sparse users"). Users come as CSR arrays as in
:func:`ldpsample.minimax_divergences_sparse`; an empty row is a user with no data, ``p := q``,
whose projection is ``q`` itself (both divergences 0).

Uses numpy, scipy, :mod:`ldpsample._types`, :mod:`ldpsample._validation`,
:mod:`ldpsample.minimax_sparse` (the CSR checks) and the sibling modules
:mod:`~ldpsample.mollifier.bounds` and :mod:`~ldpsample.mollifier.kl_normaliser`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ldpsample._types import FloatArray
from ldpsample._validation import check_distribution, check_epsilon
from ldpsample.divergences import rel_entr_terms
from ldpsample.minimax_sparse import check_csr, csr_masses
from ldpsample.mollifier.bounds import _bounds
from ldpsample.mollifier.kl_normaliser import _H_TOL

__all__ = [
    "SparseMollifier",
    "SparseProjection",
    "mollifier_divergences_sparse",
    "relative_mollifier_kl_sparse",
    "relative_mollifier_tv_sparse",
    "sparse_mollifier",
]

#: Padded entries (rows x width) per block of users in the KL projection's sort.
_BLOCK_ENTRIES = 1 << 16


@dataclass(frozen=True, eq=False)
class SparseMollifier:
    """The relative mollifier ``M`` around ``q`` at ε, with what the sparse projections need.

    ``lower``/``upper`` are :func:`ldpsample.mollifier_bounds`' bounds ``a = e^{-ε/2} q`` and
    ``b = min(e^{ε/2} q, 1)``; ``lower_total``/``upper_total`` their sums; ``ratio`` the
    ratios ``b_j / a_j`` of the items with ``a_j > 0`` in ascending order, with the prefix
    sums ``ratio_lower``/``ratio_upper`` of ``a`` and ``b`` in that order (length + 1).
    """

    q: FloatArray
    epsilon: float
    lower: FloatArray
    upper: FloatArray
    lower_total: float
    upper_total: float
    ratio: FloatArray
    ratio_lower: FloatArray
    ratio_upper: FloatArray

    @property
    def n(self) -> int:
        """Number of items."""
        return int(self.q.size)


def sparse_mollifier(q: ArrayLike, *, epsilon: float) -> SparseMollifier:
    """The :class:`SparseMollifier` of prior ``q`` at ``epsilon``: O(n log n), once per
    (q, ε), shared by every user.

    Raises
    ------
    TypeError, ValueError
        For an invalid ``q`` or ``epsilon`` (:func:`ldpsample.check_distribution`,
        :func:`ldpsample.check_epsilon`).
    """
    q_arr = check_distribution(q, name="q")
    eps = check_epsilon(epsilon)
    q_arr = q_arr / q_arr.sum()
    lower, upper = _bounds(q_arr, eps)
    positive = np.flatnonzero(lower > 0)
    ratio = upper[positive] / lower[positive]
    order = np.argsort(ratio, kind="stable")
    ratio_lower = np.zeros(positive.size + 1)
    ratio_upper = np.zeros(positive.size + 1)
    np.cumsum(lower[positive][order], out=ratio_lower[1:])
    np.cumsum(upper[positive][order], out=ratio_upper[1:])
    return SparseMollifier(
        q=q_arr,
        epsilon=eps,
        lower=lower,
        upper=upper,
        lower_total=float(lower.sum()),
        upper_total=float(upper.sum()),
        ratio=ratio[order],
        ratio_lower=ratio_lower,
        ratio_upper=ratio_upper,
    )


@dataclass(frozen=True, eq=False)
class SparseProjection:
    """A projection of sparse users onto ``M``: ``values[e]`` is the projection at CSR entry
    ``e``; every item ``j`` off row ``u``'s support is

        y_j = clip(scale[u] a_j, a_j, b_j),
        Q_j = clip(y_j + fill[u] (b_j - y_j), a_j, b_j)   if fill[u] >= 0,
        Q_j = clip(y_j + fill[u] (y_j - a_j), a_j, b_j)   otherwise,

    and ``off_mass[u]`` is their total. An empty row (``p := q``) is ``q`` itself."""

    values: FloatArray
    scale: FloatArray
    fill: FloatArray
    off_mass: FloatArray

    def to_dense(
        self, mollifier: SparseMollifier, indptr: ArrayLike, indices: ArrayLike
    ) -> FloatArray:
        """The projected distributions as a ``(users, n)`` array (O(users n): for checks on
        a few users)."""
        ptr = np.asarray(indptr, dtype=np.int64)
        idx = np.asarray(indices, dtype=np.int64)
        a, b = mollifier.lower, mollifier.upper
        y = np.clip(self.scale[:, None] * a, a, b)
        f = self.fill[:, None]
        out = np.clip(np.where(f >= 0, y + f * (b - y), y + f * (y - a)), a, b)
        lengths = np.diff(ptr)
        out[lengths == 0] = mollifier.q
        out[np.repeat(np.arange(lengths.size), lengths), idx] = self.values
        return out


# --------------------------------------------------------------------------------------------
# Shared: checks, the mass off the support, the move onto sum 1, the divergences
# --------------------------------------------------------------------------------------------


def _sparse_rows(mollifier: object, indptr: ArrayLike, indices: ArrayLike, data: ArrayLike):
    if not isinstance(mollifier, SparseMollifier):
        raise TypeError(
            "mollifier must be a SparseMollifier (ldpsample.sparse_mollifier), got "
            f"{mollifier!r:.200} of type {type(mollifier).__name__}"
        )
    ptr, idx, values = check_csr(mollifier.n, indptr, indices, data, of="the prior")
    row, p, lengths = csr_masses(ptr, idx, values, mollifier.n)
    return ptr, idx, row, p, lengths


def _row_sum(row: NDArray[np.intp], x: FloatArray, users: int) -> FloatArray:
    """Per-row sums of entry values, each in entry order (one ``bincount``)."""
    return np.bincount(row, weights=x, minlength=users).astype(np.float64, copy=False)


def _off_lower_mass(
    m: SparseMollifier,
    scale: FloatArray,
    lower_off: FloatArray,
    upper_off: FloatArray,
    row: NDArray[np.intp],
    a: FloatArray,
    b: FloatArray,
) -> FloatArray:
    """``sum_{j off the support} clip(t a_j, a_j, b_j)`` per row, ``t = scale``.

    ``t <= 1``: every such item is at ``a_j`` (``lower_off``). ``t > 1``: ``t a_j`` less the
    excess ``(t a_j - b_j)_+`` of the items whose ratio ``b_j / a_j`` is below ``t``, counted
    over all items from the sorted ratios' prefix sums and less the support's own excess.
    """
    users = scale.size
    mass = lower_off.copy()
    up = np.flatnonzero(scale > 1.0)
    if up.size:
        t = scale[up]
        below = np.searchsorted(m.ratio, t, side="left")
        excess_all = t * m.ratio_lower[below] - m.ratio_upper[below]
        own = np.maximum(scale[row] * a - b, 0.0)
        excess = excess_all - _row_sum(row, own, users)[up]
        mass[up] = np.clip(
            t * lower_off[up] - np.maximum(excess, 0.0), lower_off[up], upper_off[up]
        )
    return mass


def _onto_one(
    m: SparseMollifier,
    ptr: NDArray[np.int64],
    row: NDArray[np.intp],
    a: FloatArray,
    b: FloatArray,
    y: FloatArray,
    scale: FloatArray,
    *,
    always: bool,
) -> SparseProjection:
    """``y`` (support) and ``clip(scale a, a, b)`` (elsewhere) moved onto sum 1 as
    :func:`ldpsample.mollifier.bounds._fill_to_one` moves a dense row: the missing mass in
    proportion to ``b - y``, an excess in proportion to ``y - a``; ``always=False`` moves only
    the rows more than :data:`~ldpsample.mollifier.kl_normaliser._H_TOL` off 1 (the KL
    projection's clean-up)."""
    users = scale.size
    lower_off = np.maximum(m.lower_total - _row_sum(row, a, users), 0.0)
    upper_off = np.maximum(m.upper_total - _row_sum(row, b, users), lower_off)
    y_off = _off_lower_mass(m, scale, lower_off, upper_off, row, a, b)
    s = 1.0 - (y_off + _row_sum(row, y, users))
    up = s > 0
    capacity = np.where(
        up,
        (upper_off - y_off) + _row_sum(row, b - y, users),
        (y_off - lower_off) + _row_sum(row, y - a, users),
    )
    frac = np.divide(np.abs(s), capacity, out=np.zeros(users), where=capacity > 0)
    frac = np.minimum(frac, 1.0)
    move = (s != 0.0) if always else (np.abs(s) > _H_TOL)
    move &= np.diff(ptr) > 0
    fill = np.where(move, np.where(up, frac, -frac), 0.0)
    f = fill[row]
    values = np.where(f >= 0, y + f * (b - y), y + f * (y - a))
    values = np.minimum(np.maximum(values, a), b)
    off_mass = y_off + fill * np.where(fill >= 0, upper_off - y_off, y_off - lower_off)
    empty = np.diff(ptr) == 0
    scale = np.where(empty, min(math.exp(m.epsilon / 2.0), np.finfo(float).max), scale)
    off_mass[empty] = 1.0
    return SparseProjection(values=values, scale=scale, fill=fill, off_mass=off_mass)


def mollifier_divergences_sparse(
    mollifier: SparseMollifier,
    indptr: ArrayLike,
    indices: ArrayLike,
    data: ArrayLike,
    *,
    projection: str,
) -> tuple[FloatArray, FloatArray]:
    """``TV(p, Q)`` and ``KL(p || Q)`` of each sparse user against its projection ``Q`` onto
    the relative mollifier (``projection``: ``"tv"`` or ``"kl"``).

    Off the support ``p_j = 0``: those items add ``Q_j / 2`` to TV (their total is
    :attr:`SparseProjection.off_mass`) and nothing to KL, so

        TV = (sum_{j in supp p} |p_j - Q_j| + off_mass) / 2,
        KL = sum_{j in supp p} p_j log(p_j / Q_j),

    in O(k log k) per user. Equal to ``tv_distance(P, relative_mollifier_tv(P, q, ...))`` (or
    ``_kl``) and ``kl_divergence(...)`` on the dense rows within rounding (tested to 1e-12).
    ``KL`` is ``inf`` for a user holding an item of prior mass 0; an empty row gives 0 and 0.

    Raises
    ------
    TypeError, ValueError
        As :func:`relative_mollifier_tv_sparse`, and for ``projection`` not ``"tv"`` or
        ``"kl"``.
    """
    project = {"tv": _project_tv, "kl": _project_kl}.get(projection)
    if project is None:
        raise ValueError(f"projection must be 'tv' or 'kl', got {projection!r}")
    ptr, _, row, p, _ = _sparse_rows(mollifier, indptr, indices, data)
    users = ptr.size - 1
    result = project(mollifier, ptr, indices, row, p)
    tv = 0.5 * (_row_sum(row, np.abs(p - result.values), users) + result.off_mass)
    kl = _row_sum(row, rel_entr_terms(p, result.values), users)
    empty = np.diff(ptr) == 0
    tv[empty] = 0.0
    kl[empty] = 0.0
    return tv, kl


# --------------------------------------------------------------------------------------------
# TV projection
# --------------------------------------------------------------------------------------------


def _project_tv(m, ptr, indices, row, p) -> SparseProjection:
    idx = np.asarray(indices, dtype=np.int64)
    a, b = m.lower[idx], m.upper[idx]
    y = np.minimum(np.maximum(p, a), b)
    return _onto_one(m, ptr, row, a, b, y, np.ones(ptr.size - 1), always=True)


def relative_mollifier_tv_sparse(
    mollifier: SparseMollifier, indptr: ArrayLike, indices: ArrayLike, data: ArrayLike
) -> SparseProjection:
    """:func:`ldpsample.relative_mollifier_tv` of sparse users: ``clip(p, a, b)`` moved onto
    sum 1 in proportion to the slack, with every item off the support at ``a_j`` before the
    move and at ``a_j + f (b_j - a_j)`` (or ``a_j``) after it.

    Parameters
    ----------
    mollifier
        :func:`sparse_mollifier` of the users' prior and ε.
    indptr, indices, data
        The users' histograms in CSR form (as :func:`ldpsample.minimax_divergences_sparse`).

    Returns
    -------
    SparseProjection
        Equal to the dense projection within rounding (tested to 1e-12).

    Raises
    ------
    TypeError, ValueError
        For a ``mollifier`` that is not a :class:`SparseMollifier`, malformed CSR arrays,
        items outside the prior, negative or non-finite counts, a row listing an item twice
        or a non-empty row whose counts sum to 0.
    """
    ptr, idx, row, p, _ = _sparse_rows(mollifier, indptr, indices, data)
    return _project_tv(mollifier, ptr, idx, row, p)


# --------------------------------------------------------------------------------------------
# KL projection
# --------------------------------------------------------------------------------------------


def _padded_blocks(
    ptr: NDArray[np.int64], rows: NDArray[np.intp]
) -> Iterator[tuple[NDArray[np.intp], NDArray[np.int64], NDArray[np.bool_]]]:
    """``(users, positions, valid)`` blocks of ``rows``: rows of one width class ``W = 2^b >=
    k``, their entries' positions ``(users, W)`` (0 where padded, ``valid`` False)."""
    lengths = ptr[rows + 1] - ptr[rows]
    width = np.frexp(np.maximum(lengths - 1, 0).astype(np.float64))[1]
    order = np.argsort(width, kind="stable")
    rows, width = rows[order], width[order]
    edges = np.flatnonzero(np.diff(width)) + 1
    for group, w in zip(np.split(rows, edges), np.split(width, edges), strict=True):
        if not group.size:
            continue
        W = 1 << int(w[0])
        col = np.arange(W)
        for first in range(0, group.size, max(1, _BLOCK_ENTRIES // W)):
            users = group[first : first + max(1, _BLOCK_ENTRIES // W)]
            valid = col < (ptr[users + 1] - ptr[users])[:, None]
            yield users, np.where(valid, ptr[users][:, None] + col, 0), valid


def _kl_normalisers(
    m: SparseMollifier,
    ptr: NDArray[np.int64],
    regular: NDArray[np.intp],
    p: FloatArray,
    a: FloatArray,
    b: FloatArray,
    lam: FloatArray,
) -> None:
    """``lam[regular]``: the root of ``h(λ) = A + sum_{supp} (clip(λ p_j, a_j, b_j) - a_j) = 1``
    (``A`` the sum of all lower bounds), exactly: ``h`` is piecewise linear with breakpoints
    ``a_j / p_j`` (slope ``+p_j``, level ``-a_j``) and ``b_j / p_j`` (slope ``-p_j``, level
    ``+b_j``); sorted per row, running sums give ``h`` at each breakpoint, the first reaching 1
    closes the root's piece, solved in closed form and clamped to it."""
    for users, pos, valid in _padded_blocks(ptr, regular):
        rows = users.size
        pp = np.where(valid, p[pos], 0.0)
        aa = np.where(valid, a[pos], 0.0)
        bb = np.where(valid, b[pos], 0.0)
        act = (pp > 0) & (bb > 0)
        lo = np.divide(aa, pp, out=np.full(pp.shape, np.inf), where=act)
        hi = np.divide(bb, pp, out=np.full(pp.shape, np.inf), where=act)
        point = np.concatenate((lo, hi), axis=1)
        level = np.concatenate((np.where(act, -aa, 0.0), np.where(act, bb, 0.0)), axis=1)
        slope = np.concatenate((np.where(act, pp, 0.0), np.where(act, -pp, 0.0)), axis=1)
        order = np.argsort(point, axis=1, kind="stable")
        point = np.take_along_axis(point, order, axis=1)
        level = m.lower_total + np.cumsum(np.take_along_axis(level, order, axis=1), axis=1)
        slope = np.cumsum(np.take_along_axis(slope, order, axis=1), axis=1)
        finite = np.isfinite(point)
        h = np.where(finite, level + slope * np.where(finite, point, 0.0), -np.inf)
        reach = h >= 1.0
        found = reach.any(axis=1)
        last = np.maximum(finite.sum(axis=1) - 1, 0)
        at = np.where(found, np.argmax(reach, axis=1), last)
        before = np.maximum(at - 1, 0)
        r = np.arange(rows)
        left, right = point[r, before], point[r, at]
        s = slope[r, before]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            root = (1.0 - level[r, before]) / s
        ok = found & (at > 0) & (s > 0) & np.isfinite(root)
        lam[users] = np.where(ok, np.minimum(np.maximum(root, left), right), right)


def _project_kl(m, ptr, indices, row, p) -> SparseProjection:
    idx = np.asarray(indices, dtype=np.int64)
    users = ptr.size - 1
    a, b = m.lower[idx], m.upper[idx]
    scale = np.ones(users)
    if m.lower_total >= 1.0:  # ε ~ 0: M = {a} up to rounding, as the dense projection
        return _onto_one(m, ptr, row, a, b, a.copy(), scale, always=False)
    act = (p > 0) & (b > 0)
    non_empty = np.diff(ptr) > 0
    h_max = m.lower_total + _row_sum(row, np.where(act, b - a, 0.0), users)
    degenerate = ~(h_max >= 1.0) & non_empty
    regular = np.flatnonzero(~degenerate & non_empty)
    lam = np.ones(users)
    _kl_normalisers(m, ptr, regular, p, a, b, lam)
    # One Newton step with direct sums (no running sum's cancellation): exact on the piece.
    with np.errstate(over="ignore", invalid="ignore"):
        v = lam[row] * p
    y = np.minimum(np.maximum(v, a), b)
    lower_off = np.maximum(m.lower_total - _row_sum(row, a, users), 0.0)
    h = lower_off + _row_sum(row, y, users)
    inside = _row_sum(row, np.where((y == v) & act, p, 0.0), users)
    step = np.divide(1.0 - h, inside, out=np.zeros(users), where=inside > 0)
    polish = np.abs(h - 1.0) > _H_TOL
    lam = np.where(polish & (lam + step > 0), lam + step, lam)
    with np.errstate(over="ignore", invalid="ignore"):
        y = np.minimum(np.maximum(lam[row] * p, a), b)
    if degenerate.any():
        # Every p_j > 0 item at b_j; the rest R spread as t a_j, t = R / (a-mass of the rest).
        rest = 1.0 - _row_sum(row, np.where(act, b, 0.0), users)
        free = m.lower_total - _row_sum(row, np.where(act, a, 0.0), users)
        t = np.divide(rest, free, out=np.zeros(users), where=free > 0)
        scale = np.where(degenerate, t, 1.0)
        deg = degenerate[row]
        y_deg = np.where(act, b, np.minimum(np.maximum(scale[row] * a, a), b))
        y = np.where(deg, y_deg, y)
    return _onto_one(m, ptr, row, a, b, y, scale, always=False)


def relative_mollifier_kl_sparse(
    mollifier: SparseMollifier, indptr: ArrayLike, indices: ArrayLike, data: ArrayLike
) -> SparseProjection:
    """:func:`ldpsample.relative_mollifier_kl` of sparse users: ``clip(λ p, a, b)`` with ``λ``
    normalising each row, every item off the support at ``a_j`` (``t a_j`` clipped, in the
    degenerate case where no ``λ`` exists).

    ``h(λ) = sum_j clip(λ p_j, a_j, b_j)`` is the sum of all lower bounds plus the support's
    ``clip(λ p_j, a_j, b_j) - a_j``: its ``2k`` breakpoints are sorted per user and the root is
    solved on its piece (O(k log k)), then polished by one Newton step on direct sums.

    Parameters, returns and raises as :func:`relative_mollifier_tv_sparse`.
    """
    ptr, idx, row, p, _ = _sparse_rows(mollifier, indptr, indices, data)
    return _project_kl(mollifier, ptr, idx, row, p)
