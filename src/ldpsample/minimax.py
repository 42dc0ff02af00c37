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

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ldpsample._threads import check_threads, run_split, worker_count
from ldpsample._types import FloatArray
from ldpsample._validation import check_distribution, check_distributions, check_epsilon
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
#: Chunks per row in :func:`apply_minimax`'s layout are at most this wide (``W``); see
#: :class:`_ScanPlan`. Wider chunks mean fewer, larger slice additions and a shorter ``cumsum``
#: over the chunk totals.
_SCAN_MAX_WIDTH = 16
#: Up to this many items, :func:`apply_minimax` keeps the users innermost (:func:`_apply_block_t`).
_USERS_INNER_MAX_N = 512
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
class _ScanPlan:
    """Where each item goes in the chunked layout of :func:`apply_minimax`, for one kernel.

    Sorted rank ``k = l W + w`` (chunk ``l`` of ``W`` consecutive ranks, offset ``w``) is stored
    at position ``w L + l`` of a row of ``N = W L >= n`` slots, i.e. a row is a ``(W, L)`` array
    whose column ``l`` is chunk ``l``. Prefix sums within every chunk are then ``W - 1`` vector
    additions of whole ``(rows, L)`` slices, with no Python loop over items. The ``N - n < W``
    padding slots are the largest ranks of the last chunk (``l = L - 1``, ``w >= pad_from``).
    """

    W: int
    L: int
    users_inner: bool  # layout (W, L, users) instead of (users, W, L); see _apply_block_t
    gather: NDArray[np.intp]  # slot -> caller item (0 for padding slots, zeroed after the take)
    scatter: NDArray[np.intp]  # caller item -> slot
    pad_from: int
    c: FloatArray  # (W, L) in the layout, 0 on padding; likewise q, q c and the diagonal
    q: FloatArray
    qc: FloatArray
    diagonal: FloatArray


def _scan_plan(kernel: MinimaxKernel) -> _ScanPlan:
    n = kernel.n
    users_inner = n <= _USERS_INNER_MAX_N
    if users_inner:  # W and L loops of whole user vectors: W ~ L ~ sqrt(n)
        W = max(1, round(math.sqrt(n)))
    else:
        W = max(1, min(_SCAN_MAX_WIDTH, round(math.sqrt(n) / 3)))
    L = -(-n // W)
    W = -(-n // L)  # W L - n < W: padding only in the last chunk
    ranks = np.arange(W * L)
    slot_of_rank = (ranks % W) * L + ranks // W
    gather = np.zeros(W * L, dtype=np.intp)
    gather[slot_of_rank[:n]] = kernel.order
    scatter = np.empty(n, dtype=np.intp)
    scatter[kernel.order] = slot_of_rank[:n]

    def spread(x: FloatArray) -> FloatArray:
        out = np.zeros(W * L)
        out[slot_of_rank[:n]] = x
        return out.reshape(W, L)

    return _ScanPlan(
        W,
        L,
        users_inner,
        gather,
        scatter,
        n - (L - 1) * W,
        spread(kernel.c),
        spread(kernel.q_sorted),
        spread(kernel.q_sorted * kernel.c),
        spread(kernel.diagonal_sorted),
    )


def _apply_block(block: FloatArray, out: FloatArray, plan: _ScanPlan, work: FloatArray) -> None:
    """``out = block @ K`` for one block of users (rows), in a handful of whole-block passes.

    In sorted order ``(pK)_j = q_j A_j + q_j c_j T_j + K_jj p_j`` with the exclusive prefix sums
    ``A_j = sum_{i<j} p_i c_i`` and the exclusive suffix sums ``T_j = sum_{i>j} p_i``. Both are
    running sums of non-negative terms in their own direction (the suffix sums are reverse
    cumulative sums, never ``total - prefix``), so nothing cancels. In the layout of
    :class:`_ScanPlan`: chunk totals (one reduction each), their exclusive running sums across
    chunks (a short ``cumsum`` over ``L``), then ``W - 1`` slice additions within the chunks
    seeded with those offsets; one gather before and one scatter after.
    """
    W, L = plan.W, plan.L
    rows = block.shape[0]
    size = rows * W * L
    x, pc, A, T = (work[i * size : (i + 1) * size].reshape(rows, W, L) for i in range(4))
    offsets = work[4 * size : 4 * size + rows * L].reshape(rows, L)
    np.take(block, plan.gather, axis=1, out=x.reshape(rows, W * L))
    if plan.pad_from < W:
        x[:, plan.pad_from :, L - 1] = 0.0
    np.multiply(x, plan.c, out=pc)
    add = np.add
    # A: seeded with the sum of p c over all earlier chunks, then forward within each chunk.
    np.sum(pc, axis=1, out=offsets)
    np.cumsum(offsets[:, :-1], axis=1, out=offsets[:, 1:])
    offsets[:, 0] = 0.0
    A[:, 0] = offsets
    for w in range(1, W):
        add(A[:, w - 1], pc[:, w - 1], out=A[:, w])
    # T: seeded with the sum of p over all later chunks, then backward within each chunk.
    np.sum(x, axis=1, out=offsets)
    backward = offsets[:, ::-1]
    np.cumsum(backward[:, :-1], axis=1, out=backward[:, 1:])
    backward[:, 0] = 0.0
    T[:, W - 1] = offsets
    for w in range(W - 2, -1, -1):
        add(T[:, w + 1], x[:, w + 1], out=T[:, w])
    A *= plan.q
    T *= plan.qc
    A += T
    x *= plan.diagonal
    A += x
    np.take(A.reshape(rows, W * L), plan.scatter, axis=1, out=out)


def _apply_block_t(block: FloatArray, out: FloatArray, plan: _ScanPlan, work: FloatArray) -> None:
    """:func:`_apply_block` with the users innermost, layout ``(W, L, users)``, for small ``n``.

    Every step is then an operation on contiguous vectors of whole blocks of users: ``W - 1``
    slice additions within the chunks and ``L - 1`` additions of chunk totals across them
    (``W ~ L ~ sqrt(n)``), plus one transposing gather and one transposing scatter. For small
    ``n`` this beats the ``(users, W, L)`` layout, whose slices are only ``L`` items long.
    """
    W, L = plan.W, plan.L
    users = block.shape[0]
    size = W * L * users
    x, pc, A, T = (work[i * size : (i + 1) * size].reshape(W, L, users) for i in range(4))
    totals = work[4 * size : 4 * size + 2 * L * users].reshape(2, L, users)
    np.take(block.T, plan.gather, axis=0, out=x.reshape(W * L, users))
    if plan.pad_from < W:
        x[plan.pad_from :, L - 1] = 0.0
    np.multiply(x, plan.c[:, :, None], out=pc)
    add = np.add
    np.sum(pc, axis=0, out=totals[0])
    np.sum(x, axis=0, out=totals[1])
    # A: seeded with the sum of p c over all earlier chunks, then forward within each chunk.
    A[0, 0] = 0.0
    for chunk in range(1, L):
        add(A[0, chunk - 1], totals[0, chunk - 1], out=A[0, chunk])
    for w in range(1, W):
        add(A[w - 1], pc[w - 1], out=A[w])
    # T: seeded with the sum of p over all later chunks, then backward within each chunk.
    T[W - 1, L - 1] = 0.0
    for chunk in range(L - 2, -1, -1):
        add(T[W - 1, chunk + 1], totals[1, chunk + 1], out=T[W - 1, chunk])
    for w in range(W - 2, -1, -1):
        add(T[w + 1], x[w + 1], out=T[w])
    A *= plan.q[:, :, None]
    T *= plan.qc[:, :, None]
    A += T
    x *= plan.diagonal[:, :, None]
    A += x
    scattered = pc.reshape(-1)[: out.size].reshape(out.shape[1], users)
    np.take(A.reshape(W * L, users), plan.scatter, axis=0, out=scattered)
    out[...] = scattered.T


def apply_minimax(
    P: ArrayLike,
    q: ArrayLike | MinimaxKernel,
    *,
    epsilon: float | None = None,
    threads: int | None = None,
) -> FloatArray:
    """Release distributions ``P @ K`` of the minimax-optimal kernel, without forming ``K``.

    In sorted order, ``(pK)_j = q_j [sum_{i<j} p_i c_i + c_j (sum_{i>j} p_i + e^ε p_j)]``
    (Algorithm 1 in closed form, ``docs/minimax.md``). The prefix sums of ``p c`` and the suffix
    sums of ``p`` (reverse running sums, so nothing cancels) are computed for a block of users at
    a time in a handful of whole-block passes: one gather into sorted order, chunk totals, a
    short ``cumsum`` across chunks, ``W - 1 <= 15`` slice additions within the chunks, one
    combination and one scatter back (:func:`_apply_block`); there is no Python loop over items.
    O(users * n) time, exact up to rounding, and linear in each row of ``P`` (rows need only sum
    to 1 within the usual tolerance). Large inputs (``users * n >= 2**20``) split the blocks
    over up to ``threads`` threads (numpy releases the GIL), as :meth:`MinimaxKernel.dense` does.

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
    P_arr = check_distributions(P, name="P", n=n)
    squeeze = P_arr.ndim == 1
    P2 = P_arr[None, :] if squeeze else P_arr
    P2 = np.ascontiguousarray(P2)
    users = P2.shape[0]
    out = np.empty((users, n))
    if users:
        plan = _scan_plan(kernel)
        slots = plan.W * plan.L
        rows = max(1, min(users, _BLOCK_ENTRIES // slots))
        starts = range(0, users, rows)

        apply_block = _apply_block_t if plan.users_inner else _apply_block

        def run(first: int, last: int) -> None:
            work = np.empty(4 * rows * slots + 2 * rows * plan.L)
            for start in starts[first:last]:
                stop = min(start + rows, users)
                apply_block(P2[start:stop], out[start:stop], plan, work)

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
