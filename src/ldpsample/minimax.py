"""Minimax-optimal ε-LDP sampling with a public prior (Zamanlooy, Diaz and Asoodeh, AISTATS 2025).

A user holds a private distribution ``p`` over ``n`` items and a public prior ``q``; the mechanism
is a Markov kernel ``K`` (``K[i, j] = P(output j | input i)``) and the released distribution is
``p @ K``. Algorithm 1 of the paper builds the kernel that minimises the worst-case
f-divergence ``sup_p D_f(p || pK)`` over all ε-LDP kernels with ``qK = q``, for every f at once
(Theorem 1). Algorithm 1 is a recursion on ``n`` (O(n^3) as written); this module uses its
closed form, derived in ``docs/minimax.md``. With ``q`` sorted ascending, tail sums
``R_k = sum_{l >= k} q_l`` and

    S_0 = 1,  S_k = S_{k-1} ((e^ε - 1) q_k + R_{k+1}) / ((e^ε - 1) q_k + R_k),
    c_k = S_{k-1} / ((e^ε - 1) q_k + R_k),

the kernel is ``K[i, j] = q_j c_{min(i, j)}`` for ``i != j`` and ``K[i, i] = e^ε q_i c_i``.
Equivalently ``c_1 = 1 / ((e^ε - 1) q_1 + 1)`` and
``c_{k+1} / c_k = ((e^ε - 1) q_k + R_{k+1}) / ((e^ε - 1) q_{k+1} + R_{k+1}) <= 1``, so ``c`` is
non-increasing, ``c_{min(i, j)} = max(c_i, c_j)`` and tied prior masses get equal ``c``: the
kernel does not depend on how ties are ordered.

Items with ``q_j = 0`` have an all-zero column (they are never released) and their row equals
``q``; any such item makes the worst-case total variation ``Γ_TV = 1``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ldpsample._threads import check_threads, run_split, worker_count
from ldpsample._types import FloatArray
from ldpsample._validation import (
    check_distribution,
    check_distributions,
    check_epsilon,
)
from ldpsample.divergences import DivergenceLike, point_mass_divergence

__all__ = [
    "MinimaxKernel",
    "apply_minimax",
    "binary_kernel",
    "minimax_coefficients",
    "minimax_kernel",
    "minimax_risk",
]


#: Rows of ``P`` handled per block by :func:`apply_minimax` is about this many entries / n: the
#: block's working arrays then stay in L2 cache.
_BLOCK_ENTRIES = 65_536
#: Blocks of :func:`apply_minimax` hold a multiple of this many rows (a short last block is padded
#: with zero rows): BLAS kernels treat rows in tiles of 4, 8 or 16 and round a row differently
#: in a partial tile, so full tiles make every row's result independent of how many users share
#: the call (a 1-D ``p`` gives the same bits as the same row in a batch).
_ROW_MULTIPLE = 16
#: Chunks of :func:`apply_minimax`'s layout are at most this wide (``W``, about ``sqrt(n)``
#: below); see :class:`_ChunkPlan`. Each chunk costs ``2 (W + 2)`` flops per entry in its matrix
#: product; narrower chunks mean more, smaller products (docs/performance.md).
_SCAN_MAX_WIDTH = 16
#: :func:`apply_minimax` splits the row blocks over threads from this many entries of ``P`` on.
_APPLY_THREADED_ENTRIES = 1 << 20
#: Entries per row block when :meth:`MinimaxKernel.dense` fills ``K``.
_DENSE_BLOCK_ENTRIES = 65_536
#: Kernels with at least this many entries are filled by several threads (numpy's ufuncs release
#: the GIL); below it the thread start-up costs more than it saves.
_DENSE_THREADED_ENTRIES = 1 << 20


def _log_expm1(epsilon: float) -> float:
    """``log(e^ε - 1)`` without overflow; ``-inf`` at ε = 0."""
    if epsilon == 0.0:
        return -math.inf
    return epsilon + math.log(-math.expm1(-epsilon))


@dataclass(frozen=True, eq=False)
class MinimaxKernel:
    """Coefficients of the minimax-optimal kernel for one ``(q, ε)``; build with
    :func:`minimax_coefficients`.

    Everything is stored in ascending-``q`` order; ``order`` maps back to the caller's order
    (sorted position ``k`` is caller item ``order[k]``). Arrays are read-only.

    Attributes
    ----------
    epsilon
        The privacy parameter ε.
    order
        Stable ``argsort`` of the caller's ``q``.
    q_sorted
        The prior, normalised to sum to 1, in ascending order.
    c
        The closed-form coefficients ``c_k`` (non-increasing).
    diagonal_sorted
        ``K[k, k] = e^ε q_k c_k`` in sorted order, computed in log space so that it stays finite
        for any finite ε.
    """

    epsilon: float
    order: NDArray[np.intp]
    q_sorted: FloatArray
    c: FloatArray
    diagonal_sorted: FloatArray

    @property
    def n(self) -> int:
        """Number of items."""
        return int(self.q_sorted.shape[0])

    @property
    def is_sorted(self) -> bool:
        """True when the caller's ``q`` was already in ascending order (no permutation needed)."""
        return bool(np.array_equal(self.order, np.arange(self.n)))

    def _to_caller(self, x: FloatArray) -> FloatArray:
        out = np.empty_like(x)
        out[self.order] = x
        return out

    @property
    def q(self) -> FloatArray:
        """The (normalised) prior in the caller's order."""
        return self._to_caller(self.q_sorted)

    @property
    def diagonal(self) -> FloatArray:
        """``diag(K)`` in the caller's order; ``1 - diagonal.min()`` is ``Γ_TV`` (Theorem 1)."""
        return self._to_caller(self.diagonal_sorted)

    def dense(self, *, threads: int | None = None) -> FloatArray:
        """The ``(n, n)`` kernel in the caller's order (see :func:`minimax_kernel`).

        Parameters
        ----------
        threads
            Most threads used to fill large kernels (``n * n >= 2**20``); None (default) uses up
            to ``min(os.cpu_count(), 8)``, 1 fills in this thread with no thread pool. The result
            does not depend on it.

        Returns
        -------
        numpy.ndarray
            Row-stochastic ``(n, n)`` matrix.
        """
        threads = check_threads(threads)
        n = self.n
        c = self._to_caller(self.c)
        q = self._to_caller(self.q_sorted)
        K = np.empty((n, n))
        # K[i, j] = q_j max(c_i, c_j): max(c_i, c_j) = c_{min(i, j)} in sorted order because c is
        # non-increasing, so no permutation of K is needed. Row blocks keep the temporary in
        # cache and write K once; large kernels split the rows over the machine's cores.
        rows = max(1, _DENSE_BLOCK_ENTRIES // n)

        def fill(first: int, last: int) -> None:
            scratch = np.empty((min(rows, last - first), n))
            for start in range(first, last, rows):
                stop = min(start + rows, last)
                block = scratch[: stop - start]
                np.maximum(c[start:stop, None], c, out=block)
                np.multiply(block, q, out=K[start:stop])

        run_split(fill, n, worker_count(threads, n, large=n * n >= _DENSE_THREADED_ENTRIES))
        np.fill_diagonal(K, self._to_caller(self.diagonal_sorted))
        return K

    @cached_property
    def _prefix_sums(self) -> tuple[NDArray[np.intp], FloatArray, FloatArray]:
        """``(rank, Q, QC)`` for :mod:`ldpsample.minimax_sparse`, built on first use and kept:
        each caller item's sorted rank (the inverse of ``order``) and the exclusive prefix sums
        ``Q[j] = sum_{i<j} q_i`` and ``QC[j] = sum_{i<j} q_i c_i`` in sorted order (length
        ``n + 1``, running sums of non-negative terms)."""
        n = self.n
        rank = np.empty(n, dtype=np.intp)
        rank[self.order] = np.arange(n)
        Q = np.zeros(n + 1)
        np.cumsum(self.q_sorted, out=Q[1:])
        QC = np.zeros(n + 1)
        np.cumsum(self.q_sorted * self.c, out=QC[1:])
        for a in (rank, Q, QC):
            a.flags.writeable = False
        return rank, Q, QC

    @cached_property
    def _chunk_plan(self) -> _ChunkPlan:
        """The blocks :func:`apply_minimax` multiplies by, built on first use and kept: a kernel
        applied to many batches (or one row at a time) builds them once."""
        return _chunk_plan(self)

    def apply(self, P: ArrayLike, *, threads: int | None = None) -> FloatArray:
        """``P @ K`` without forming ``K``; see :func:`apply_minimax` (same ``threads``)."""
        return apply_minimax(P, self, threads=threads)


def _log_coefficients(q_sorted: FloatArray, epsilon: float) -> FloatArray:
    """``log c_k`` for an ascending prior summing to 1, stable for any n and finite ε.

    Uses ``log c_1 = -log((e^ε - 1) q_1 + 1)`` and the ratios
    ``c_{k+1} / c_k = ((e^ε - 1) q_k + R_{k+1}) / ((e^ε - 1) q_{k+1} + R_{k+1})``, each term a
    ``logaddexp`` of finite-or-``-inf`` logs, accumulated with ``cumsum``. Tied masses give
    identical terms, so their coefficients are exactly equal.
    """
    log_w = _log_expm1(epsilon)
    with np.errstate(divide="ignore"):
        log_q = np.log(q_sorted)
        # Tail sums R_k (k = 1..n) accumulated from the largest mass: relative error ~ n ulp.
        log_tail = np.log(np.cumsum(q_sorted[::-1])[::-1])
    log_wq = log_w + log_q  # -inf where q = 0 or ε = 0
    first = -np.logaddexp(log_wq[0], 0.0)
    ratios = np.logaddexp(log_wq[:-1], log_tail[1:]) - np.logaddexp(log_wq[1:], log_tail[1:])
    log_c = np.empty_like(q_sorted)
    log_c[0] = first
    np.cumsum(ratios, out=log_c[1:])
    log_c[1:] += first
    # Every ratio is <= 1 in exact arithmetic; clip the rounding so c is exactly non-increasing.
    return np.minimum.accumulate(log_c)


def minimax_coefficients(q: ArrayLike, *, epsilon: float) -> MinimaxKernel:
    """Precompute the minimax-optimal kernel of Algorithm 1 for a prior ``q`` in O(n log n).

    Compute this once per ``(q, ε)`` and pass it to :func:`apply_minimax` (or
    :func:`ldpsample.sampling.release_minimax`) for any number of user batches.

    Parameters
    ----------
    q
        Public prior, shape ``(n,)``, any order, ties and zeros allowed; it must sum to 1 within
        :data:`ldpsample.SUM_TOLERANCE` and is renormalised exactly.
    epsilon
        Privacy parameter ε >= 0 (finite).

    Returns
    -------
    MinimaxKernel

    Raises
    ------
    TypeError, ValueError
        For an invalid ``q`` or ``epsilon`` (see :func:`ldpsample.check_distribution` and
        :func:`ldpsample.check_epsilon`).
    """
    eps = check_epsilon(epsilon)
    q_arr = check_distribution(q, name="q")
    order = np.argsort(q_arr, kind="stable")
    q_sorted = q_arr[order]
    q_sorted = q_sorted / q_sorted.sum()
    log_c = _log_coefficients(q_sorted, eps)
    with np.errstate(divide="ignore"):
        diagonal = np.exp(eps + np.log(q_sorted) + log_c)
    arrays = (order, q_sorted, np.exp(log_c), diagonal)
    for a in arrays:
        a.flags.writeable = False
    return MinimaxKernel(eps, *arrays)


def minimax_kernel(q: ArrayLike, *, epsilon: float, threads: int | None = None) -> FloatArray:
    """The minimax-optimal ε-LDP kernel with public prior ``q`` (Algorithm 1, closed form).

    ``K[i, j] = q_j c_{min(i, j)}`` for ``i != j`` and ``K[i, i] = e^ε q_i c_i`` with ``q`` sorted
    ascending and ``c`` as in the module docstring. The result is in the caller's order: ``q``
    is sorted once (stable) to get ``c``, and since ``c`` is non-increasing,
    ``c_{min(i, j)} = max(c_i, c_j)`` lets ``K`` be filled directly in the caller's order, with
    no permutation of the matrix. ``K`` is ε-LDP, preserves the prior (``qK = q``), and
    attains the minimax risk of Theorem 1 for every f-divergence simultaneously. Uniform ``q``
    gives randomized response (Corollary 2); ``n = 2`` gives Proposition 1.

    Items with ``q_j = 0`` get an all-zero column (never released) and the row ``q``.
    O(n^2) time and memory (the output); use :func:`apply_minimax` to avoid forming ``K``.

    Parameters
    ----------
    q
        Public prior, shape ``(n,)``.
    epsilon
        Privacy parameter ε >= 0.
    threads
        Most threads used to fill large kernels; see :meth:`MinimaxKernel.dense`.

    Returns
    -------
    numpy.ndarray
        Row-stochastic ``(n, n)`` matrix.
    """
    return minimax_coefficients(q, epsilon=epsilon).dense(threads=threads)


def _resolve_kernel(q: ArrayLike | MinimaxKernel, epsilon: float | None) -> MinimaxKernel:
    if isinstance(q, MinimaxKernel):
        if epsilon is not None and check_epsilon(epsilon) != q.epsilon:
            raise ValueError(
                f"epsilon={epsilon!r} does not match the precomputed kernel's "
                f"epsilon={q.epsilon!r}; omit epsilon when passing a MinimaxKernel"
            )
        return q
    return minimax_coefficients(q, epsilon=check_epsilon(epsilon))


@dataclass(frozen=True, eq=False)
class _ChunkPlan:
    """The chunked form of ``K`` that :func:`apply_minimax` multiplies by, for one kernel.

    Sorted ranks are cut into ``L`` chunks of ``W`` consecutive ranks (rank ``k = l W + w``;
    the ``L W - n < W`` padding ranks at the end have all-zero weights). In sorted order

        (pK)_j = sum_{i in chunk(j)} p_i K_ij + q_j A_l + q_j c_j T_l,

    with the exclusive running sums across chunks ``A_l = sum_{l' < l} sum_{i in l'} p_i c_i``
    and ``T_l = sum_{l' > l} sum_{i in l'} p_i``, because ``K_ij = q_j c_i`` for ``i < j`` and
    ``q_j c_j`` for ``i > j``. A row of users' data is laid out as ``(L, W + 2)``: chunk ``l``'s
    ``W`` masses followed by ``A_l`` and ``T_l``, so that one small matrix product per chunk,
    ``[p_chunk, A_l, T_l] @ blocks[l]``, gives the chunk's output. Every weight is
    non-negative and every running sum accumulates in its own direction (the suffix sums are
    reverse running sums, never ``total - prefix``), so nothing cancels.
    """

    W: int
    L: int
    gather: NDArray[np.intp]  # slot of the (L, W + 2) layout -> caller item (0 where unused)
    scatter: NDArray[np.intp]  # caller item -> position of its rank in the (L, W) output
    totals: FloatArray  # (L, W, 2): per chunk, columns c and 1 (0 on padding)
    blocks: FloatArray  # (L, W + 2, W): the chunk's diagonal block of K, then rows q and q c


def _chunk_plan(kernel: MinimaxKernel) -> _ChunkPlan:
    n = kernel.n
    W = max(1, min(_SCAN_MAX_WIDTH, round(math.sqrt(n))))
    L = -(-n // W)
    W = -(-n // L)  # L W - n < W: padding only in the last chunk
    N = L * W
    pad = N - n

    def padded(x: FloatArray) -> FloatArray:
        return np.concatenate([x, np.zeros(pad)]).reshape(L, W)

    c, q = padded(kernel.c), padded(kernel.q_sorted)
    qc = padded(kernel.q_sorted * kernel.c)
    diagonal = padded(kernel.diagonal_sorted)
    # Within a chunk K[i, j] = q_j c_{min(i, j)} = q_j max(c_i, c_j) off the diagonal.
    blocks = np.empty((L, W + 2, W))
    np.maximum(c[:, :, None], c[:, None, :], out=blocks[:, :W])
    blocks[:, :W] *= q[:, None, :]
    w = np.arange(W)
    blocks[:, w, w] = diagonal
    blocks[:, W] = q
    blocks[:, W + 1] = qc
    valid = padded(np.ones(n))
    blocks[:, :W] *= valid[:, :, None]  # padding ranks contribute nothing
    totals = np.stack([c, valid], axis=2)
    slots = (np.arange(N) // W) * (W + 2) + np.arange(N) % W  # rank -> slot of the input layout
    gather = np.zeros(L * (W + 2), dtype=np.intp)
    gather[slots[:n]] = kernel.order
    scatter = np.empty(n, dtype=np.intp)
    scatter[kernel.order] = np.arange(n)
    return _ChunkPlan(W, L, gather, scatter, totals, blocks)


class _BlockWork:
    """Working arrays of :func:`_apply_block` for blocks of ``rows`` users, and the views of them
    that its steps read and write (built once per block size: per-block view construction costs
    as much as a step at this size)."""

    def __init__(self, plan: _ChunkPlan, rows: int) -> None:
        W, L = plan.W, plan.L
        self.rows = rows
        x = np.empty((rows, L, W + 2))
        self.x_flat = x.reshape(rows, L * (W + 2))
        self.x_chunks = x.transpose(1, 0, 2)  # (L, rows, W + 2): one matrix per chunk
        self.p_chunks = self.x_chunks[:, :, :W]
        totals = np.empty((rows, L, 2))
        self.totals_chunks = totals.transpose(1, 0, 2)
        self.chunk_pc = totals[:, :-1, 0]  # chunk totals of p c, all but the last chunk
        self.chunk_p_reversed = totals[:, ::-1, 1][:, :-1]  # of p, last chunk first
        self.forward = x[:, :, W]  # A_l
        self.backward = x[:, ::-1, W + 1]  # T_l, last chunk first
        y = np.empty((rows, L, W))
        self.y_flat = y.reshape(rows, L * W)
        self.y_chunks = y.transpose(1, 0, 2)


def _apply_block(block: FloatArray, out: FloatArray, plan: _ChunkPlan, work: _BlockWork) -> None:
    """``out = block @ K`` for one block of at most ``work.rows`` users: one gather, two batched
    matrix products over the chunks and one scatter (see :class:`_ChunkPlan`). The products
    always run on all ``work.rows`` rows (zero rows after a short block).

    The gather puts the users' masses in sorted order into the ``(L, W + 2)`` layout; a first
    product gives every chunk's totals of ``p c`` and ``p``; their exclusive running sums
    across chunks (forward for ``A``, backward for ``T``) fill the last two columns; a second
    product gives the output in sorted order, which the scatter puts back in caller order.
    ``mode="wrap"`` because ``np.take`` buffers its output in the default mode (the indices are
    in range).
    """
    w = work
    used = block.shape[0]  # <= w.rows: a short last block leaves zero rows after it
    np.take(block, plan.gather, axis=1, out=w.x_flat[:used], mode="wrap")
    if used < w.rows:
        w.x_flat[used:] = 0.0
    np.matmul(w.p_chunks, plan.totals, out=w.totals_chunks)
    w.forward[:, 0] = 0.0
    np.cumsum(w.chunk_pc, axis=1, out=w.forward[:, 1:])
    w.backward[:, 0] = 0.0
    np.cumsum(w.chunk_p_reversed, axis=1, out=w.backward[:, 1:])
    np.matmul(w.x_chunks, plan.blocks, out=w.y_chunks)
    np.take(w.y_flat[:used], plan.scatter, axis=1, out=out, mode="wrap")


def apply_minimax(
    P: ArrayLike,
    q: ArrayLike | MinimaxKernel,
    *,
    epsilon: float | None = None,
    threads: int | None = None,
    check_input: bool = True,
) -> FloatArray:
    """Release distributions ``P @ K`` of the minimax-optimal kernel, without forming ``K``.

    In sorted order, ``(pK)_j = q_j [sum_{i<j} p_i c_i + c_j (sum_{i>j} p_i + e^ε p_j)]``
    (Algorithm 1 in closed form, ``docs/minimax.md``). The sorted items are cut into ``L``
    chunks of ``W ~ sqrt(n) <= 16`` consecutive ranks; within a chunk the kernel's own
    ``W x W`` diagonal block is applied as a small matrix product, and everything before and
    after the chunk enters through two running sums across chunks (of ``p c`` forward, of ``p``
    backward: reverse running sums, so nothing cancels). For a block of users that is one
    gather into sorted order, two batched matrix products (BLAS) with a short ``cumsum`` between
    them, and one scatter back (:func:`_apply_block`, :class:`_ChunkPlan`); there is no Python
    loop over items. O(users * n * W) flops but memory-bound: a few passes over ``P``. Exact up
    to rounding (every term is non-negative), and linear in each row of ``P`` (rows need only
    sum to 1 within the usual tolerance). A row's result does not depend on the other rows in
    the call, on the block size or on ``threads``. Large inputs (``users * n >= 2**20``) split
    the blocks over up to ``threads`` threads (numpy and BLAS release the GIL), as
    :meth:`MinimaxKernel.dense` does.

    Parameters
    ----------
    P
        Private distributions, shape ``(users, n)`` or ``(n,)``, in the caller's item order.
    q
        Public prior of shape ``(n,)``, or a :class:`MinimaxKernel` from
        :func:`minimax_coefficients` (compute once per ``(q, ε)``, apply to many batches).
    epsilon
        Privacy parameter ε >= 0; required with an array ``q``; optional with a
        :class:`MinimaxKernel` (it must then equal the kernel's ε).
    threads
        Most threads used for large inputs: None (default) uses up to
        ``min(os.cpu_count(), 8)``; pass the allocation's core count on a cluster node (e.g. a
        Snakemake rule's ``threads``); 1 runs in this thread with no thread pool. The result does
        not depend on it (the blocks are independent).
    check_input
        Validate ``P`` (finite, non-negative, rows summing to 1). ``False`` skips that pass for
        distributions the caller has built or checked itself (:mod:`ldpsample.events` checks
        each subcategory's once for all ε and methods); the result is the same.

    Returns
    -------
    numpy.ndarray
        Same shape as ``P``: each row is the output distribution of the mechanism.

    Raises
    ------
    TypeError, ValueError
        Invalid ``P``, ``q``, ``epsilon`` or ``threads``; ``P`` with a number of items different
        from ``q``.
    """
    threads = check_threads(threads)
    kernel = _resolve_kernel(q, epsilon)
    n = kernel.n
    P_arr = check_distributions(P, name="P", n=n, check_values=check_input)
    squeeze = P_arr.ndim == 1
    P2 = P_arr[None, :] if squeeze else P_arr
    P2 = np.ascontiguousarray(P2)
    users = P2.shape[0]
    out = np.empty((users, n))
    if users:
        plan = kernel._chunk_plan
        per_block = max(1, _BLOCK_ENTRIES // (plan.L * plan.W * _ROW_MULTIPLE))
        rows = _ROW_MULTIPLE * min(per_block, -(-users // _ROW_MULTIPLE))
        starts = range(0, users, rows)

        def run(first: int, last: int) -> None:
            # A short last block still fills whole tiles: its rows are followed by zero rows.
            work = _BlockWork(plan, rows)
            for start in starts[first:last]:
                stop = min(start + rows, users)
                _apply_block(P2[start:stop], out[start:stop], plan, work)

        large = users * n >= _APPLY_THREADED_ENTRIES
        run_split(run, len(starts), worker_count(threads, len(starts), large=large))
    return out[0] if squeeze else out


def _check_probability(alpha: object, name: str) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        kind = type(alpha).__name__
        raise TypeError(f"{name} must be a real number, got {alpha!r} of type {kind}")
    value = float(alpha)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {alpha!r}")
    return value


def binary_kernel(alpha: float, *, epsilon: float) -> FloatArray:
    """Minimax-optimal kernel for two items with prior ``q = (alpha, 1 - alpha)`` (Proposition 1).

    For ``alpha <= 1/2`` this is the paper's matrix

        1 / (e^ε α + 1 - α) [[e^ε α, 1 - α], [α, (e^ε - 1) α + 1 - α]],

    which is also the base case ``n = 2`` of Algorithm 1. Proposition 1 assumes ``α`` is the
    smaller mass; for ``alpha > 1/2`` the roles of the items swap (the matrix above would not be
    ε-LDP then), i.e. the result is always ``minimax_kernel([alpha, 1 - alpha])``.

    Raises
    ------
    TypeError
        If ``alpha`` is not a real number.
    ValueError
        If ``alpha`` is outside ``[0, 1]`` or ``epsilon`` is invalid.
    """
    a = _check_probability(alpha, "alpha")
    return minimax_kernel(np.array([a, 1.0 - a]), epsilon=epsilon)


def minimax_risk(q: ArrayLike, *, epsilon: float, divergence: DivergenceLike = "tv") -> float:
    """The minimax risk ``Γ_f = min_K sup_p D_f(p || pK)`` of Theorem 1.

    With ``q_min = min_j q_j``, ``d = e^ε q_min + 1 - q_min`` and ``K_min = e^ε q_min / d``,

        Γ_f = (1 - q_min) / d * f(0) + e^ε q_min / d * f(d / (e^ε q_min))
            = K_min f(1 / K_min) + (1 - K_min) f(0),

    the worst case of Lemma 1 at the item with the smallest prior mass; for total variation
    ``Γ_TV = (1 - q_min) / d``. At ``q_min = 0`` the limit ``f(0) + f'(inf)`` is returned
    (``Γ_TV = 1``; ``inf`` for KL and χ²).

    Note: this is a worst case over ``p``. Example 1 of the paper (``q = (0.01, 0.99)``, ε = 2)
    quotes 0.03 (and 0.1 for the uniform prior) as "Γ_TV": those are ``TV(p, pK)`` for the one
    ``p = (0.05, 0.95)`` (0.0376 and 0.107), while Theorem 1 gives ``Γ_TV = 0.9305`` for that
    ``q`` (see ``docs/minimax.md``).

    Parameters
    ----------
    q
        Public prior, shape ``(n,)``.
    epsilon
        Privacy parameter ε >= 0.
    divergence
        Name of a built-in f-divergence (``"tv"``, ``"kl"``, ``"chi2"``, ``"hellinger"``) or a
        :class:`ldpsample.Divergence`.

    Returns
    -------
    float
    """
    eps = check_epsilon(epsilon)
    q_arr = check_distribution(q, name="q")
    q_min = float(q_arr.min()) / float(q_arr.sum())
    # K_min = e^ε q_min / (e^ε q_min + 1 - q_min), written with e^-ε so that it never overflows.
    t = math.exp(-eps)
    k_min = q_min / (q_min + t * (1.0 - q_min)) if q_min > 0 else 0.0
    return float(point_mass_divergence(k_min, divergence))
