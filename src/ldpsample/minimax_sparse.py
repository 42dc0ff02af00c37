"""The minimax-optimal mechanism for sparse users: O(k log n) per user with k items, not O(n).

A user who touched ``k`` of ``n`` items has a histogram with ``k`` non-zero counts. The closed
form of Algorithm 1 (Zamanlooy, Diaz and Asoodeh, AISTATS 2025; ``docs/minimax.md``) gives, in
the kernel's sorted order (``q`` ascending),

    (pK)_j = q_j A_j + q_j c_j T_j + K_jj p_j,   A_j = sum_{i<j} p_i c_i,   T_j = sum_{i>j} p_i,

so ``pK`` is known on the user's support from the user's own ``k`` entries, and between two
consecutive support ranks it is ``a q_j + t q_j c_j`` with constants ``a`` and ``t``: its mass
over such a gap is a difference of the kernel's global prefix sums of ``q`` and ``q c``. That is
enough for the total variation and KL divergence (their terms vanish off the support) and for
an inverse-CDF draw (choose one of ``2k + 1`` pieces, then bisect inside a gap). The
derivation, the numerical care and the complexity are in ``docs/minimax-sparse.md``.

Users come as CSR arrays (``indptr``, ``indices``, ``data``; ``scipy.sparse.csr_array`` holds
the same three): row ``u`` has the caller item indices ``indices[indptr[u]:indptr[u+1]]`` and
their non-negative counts, normalised inside. An empty row is a user with no data, taken as
``p := q``: its release distribution is ``qK = q`` and its divergences are 0.

Every computation runs as whole-array numpy passes over blocks of users (rows grouped by
length, padded to the next power of two); a user's results depend only on its own row, never on
the other users of the call, the block it fell in or its padding.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ldpsample._types import FloatArray
from ldpsample._validation import check_distributions
from ldpsample.divergences import rel_entr_terms
from ldpsample.minimax import MinimaxKernel

__all__ = [
    "inverse_cdf_sorted",
    "minimax_divergences_sparse",
    "sample_minimax_sparse",
]

#: Padded entries (rows x width) per block of users: the block's working arrays (a few dozen
#: of this size) stay within a few tens of MiB whatever the number of users.
_BLOCK_ENTRIES = 1 << 17


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _check_kernel(kernel: object) -> MinimaxKernel:
    if not isinstance(kernel, MinimaxKernel):
        raise TypeError(
            "kernel must be a MinimaxKernel (ldpsample.minimax_coefficients), got "
            f"{kernel!r:.200} of type {type(kernel).__name__}"
        )
    return kernel


def _integer_vector(x: ArrayLike, name: str) -> NDArray[np.int64]:
    arr = np.asarray(x)
    if arr.size == 0 and np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.int64)  # ``[]`` is a float array to numpy
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must be a 1-D array of integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    return arr.astype(np.int64, copy=False)


def _check_csr(
    kernel: MinimaxKernel, indptr: ArrayLike, indices: ArrayLike, data: ArrayLike
) -> tuple[NDArray[np.int64], NDArray[np.int64], FloatArray]:
    """Checked CSR arrays: ``indptr`` starts at 0, never decreases and ends at the number of
    entries; ``indices`` are items of the kernel; ``data`` are finite non-negative counts.
    Repeated items within a row and rows whose counts sum to 0 are found (and named) while the
    rows are sorted, see :func:`_blocks`."""
    return check_csr(kernel.n, indptr, indices, data, of="the kernel")


def check_csr(
    n: int, indptr: ArrayLike, indices: ArrayLike, data: ArrayLike, *, of: str
) -> tuple[NDArray[np.int64], NDArray[np.int64], FloatArray]:
    """Library-internal: :func:`_check_csr` for ``n`` items (``of`` names them in errors); the
    sparse mollifiers and randomized response share it."""
    ptr = _integer_vector(indptr, "indptr")
    idx = _integer_vector(indices, "indices")
    values = np.asarray(data)
    if values.dtype == np.bool_ or not (
        np.issubdtype(values.dtype, np.integer) or np.issubdtype(values.dtype, np.floating)
    ):
        raise TypeError(f"data must be a 1-D array of real counts, got dtype {values.dtype}")
    if values.ndim != 1:
        raise ValueError(f"data must be a 1-D array, got shape {values.shape}")
    values = values.astype(np.float64, copy=False)
    if ptr.size == 0 or ptr[0] != 0:
        first = ptr[0].item() if ptr.size else None
        raise ValueError(f"indptr must start with 0 (one more entry than users), got {first!r}")
    steps = np.diff(ptr)
    if steps.size and steps.min() < 0:
        row = int(np.argmax(steps < 0))
        raise ValueError(
            f"indptr must not decrease, got indptr[{row}] = {ptr[row].item()!r} > "
            f"indptr[{row + 1}] = {ptr[row + 1].item()!r}"
        )
    if not ptr[-1] == idx.size == values.size:
        raise ValueError(
            f"indptr[-1] = {ptr[-1].item()!r}, len(indices) = {idx.size} and len(data) = "
            f"{values.size} must be equal"
        )
    if idx.size:
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            at = int(np.argmax(bad))
            raise ValueError(
                f"indices must be items in [0, {n}) of {of}, got "
                f"{idx[at].item()!r} at position {at}"
            )
        bad = ~(np.isfinite(values) & (values >= 0))
        if bad.any():
            at = int(np.argmax(bad))
            raise ValueError(
                f"data must be finite non-negative counts, got {values[at].item()!r} at "
                f"position {at}"
            )
    return ptr, idx, values


def _check_uniforms(uniforms: ArrayLike, users: int) -> FloatArray:
    arr = np.asarray(uniforms)
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
    ):
        raise TypeError(f"uniforms must be an array of floats in [0, 1), got dtype {arr.dtype}")
    if arr.shape != (users,):
        raise ValueError(f"uniforms must have shape ({users},), one per user, got {arr.shape}")
    arr = arr.astype(np.float64, copy=False)
    bad = ~((arr >= 0.0) & (arr < 1.0))  # NaN fails both comparisons
    if bad.any():
        at = int(np.argmax(bad))
        raise ValueError(f"uniforms must lie in [0, 1), got {arr[at].item()!r} at index {at}")
    return arr


# --------------------------------------------------------------------------------------------
# Blocks of users: rows sorted by rank, padded to a power of two
# --------------------------------------------------------------------------------------------


class _Block:
    """Users of one block, their support in sorted order and the closed form on it.

    ``ranks`` and ``p`` are ``(rows, W)``: each row holds the user's sorted ranks (padded with
    ``n``) and normalised masses (padded with 0); ``W`` is a power of two at least the row's
    length, chosen from the row's length only. Every running sum accumulates along a row, in
    order, from 0 (``np.cumsum``): padding zeros come after the real entries forward and
    before them backward, where adding 0 changes no bit, so nothing depends on ``W`` or on the
    other rows.
    """

    def __init__(self, kernel: MinimaxKernel, users: NDArray[np.int64], ranks, counts) -> None:
        n = kernel.n
        self.users = users
        self.ranks = ranks
        self.valid = ranks < n
        rows, W = ranks.shape
        total = np.cumsum(counts, axis=1)[:, -1]
        if not (total > 0).all():
            user = users[int(np.argmax(~(total > 0)))].item()
            raise ValueError(
                f"row {user} has counts summing to 0; an empty row (no entries) stands for a "
                "user with no data"
            )
        p = counts / total[:, None]
        at = np.minimum(ranks, n - 1)  # padding reads the last rank; its mass is 0
        q = kernel.q_sorted[at]
        c = kernel.c[at]
        # A[:, m] = sum_{l<m} p_l c_l and S[:, m] = sum_{l>=m} p_l over the row's sorted
        # support, m = 0..W (a forward and a backward running sum; never total - prefix).
        A = np.zeros((rows, W + 1))
        np.cumsum(p * c, axis=1, out=A[:, 1:])
        S = np.zeros((rows, W + 1))
        np.cumsum(p[:, ::-1], axis=1, out=S[:, W - 1 :: -1])
        self.p = p
        self.A = A
        self.S = S
        # (pK)_j on the support: q_j A_j + q_j c_j T_j + K_jj p_j, with T_j = S[:, m + 1].
        released = q * A[:, :W] + q * c * S[:, 1:] + kernel.diagonal_sorted[at] * p
        self.released = np.where(self.valid, released, 0.0)


def _blocks(
    kernel: MinimaxKernel,
    ptr: NDArray[np.int64],
    idx: NDArray[np.int64],
    data: FloatArray,
) -> Iterator[_Block]:
    """The non-empty rows in blocks of one width class (``W = 2^b >= k``), at most
    :data:`_BLOCK_ENTRIES` padded entries each (at least one row), rows sorted by rank.

    One Python iteration per block (about ``2 nnz / _BLOCK_ENTRIES + log2(max k)``), none per
    user or item: each block is gathered, sorted along its rows and checked with whole-array
    passes.
    """
    n = kernel.n
    rank = kernel._prefix_sums[0]
    lengths = np.diff(ptr)
    # Width class b = ceil(log2 k) (the bit length of k - 1, exact below 2^53); frexp's
    # exponent of k - 1 is that bit length.
    width_class = np.frexp(np.maximum(lengths - 1, 0).astype(np.float64))[1]
    non_empty = np.flatnonzero(lengths > 0)
    by_class = non_empty[np.argsort(width_class[non_empty], kind="stable")]
    classes = width_class[by_class]
    edges = np.flatnonzero(np.diff(classes)) + 1
    for group in np.split(by_class, edges):
        if not group.size:
            continue
        W = 1 << int(width_class[group[0]])
        per_block = max(1, _BLOCK_ENTRIES // W)
        for first in range(0, group.size, per_block):
            users = group[first : first + per_block]
            k = lengths[users]
            rows = users.size
            row_of = np.repeat(np.arange(rows), k)
            offsets = np.zeros(rows, dtype=np.int64)
            np.cumsum(k[:-1], out=offsets[1:])
            col = np.arange(row_of.size) - offsets[row_of]
            source = ptr[users][row_of] + col
            ranks = np.full((rows, W), n, dtype=np.int64)
            ranks[row_of, col] = rank[idx[source]]
            counts = np.zeros((rows, W))
            counts[row_of, col] = data[source]
            order = np.argsort(ranks, axis=1)
            ranks = np.take_along_axis(ranks, order, axis=1)
            counts = np.take_along_axis(counts, order, axis=1)
            repeated = (ranks[:, 1:] == ranks[:, :-1]) & (ranks[:, 1:] < n)
            if repeated.any():
                r, m = np.unravel_index(int(np.argmax(repeated)), repeated.shape)
                item = kernel.order[ranks[r, m]].item()
                raise ValueError(
                    f"row {users[r].item()} lists item {item} more than once; sum repeated "
                    "entries first (scipy.sparse: sum_duplicates())"
                )
            yield _Block(kernel, users, ranks, counts)


# --------------------------------------------------------------------------------------------
# Divergences
# --------------------------------------------------------------------------------------------


def _row_sums(x: FloatArray) -> FloatArray:
    """Sums along rows, in order from the first entry (the same bits for any padding)."""
    return np.cumsum(x, axis=1)[:, -1]


def minimax_divergences_sparse(
    kernel: MinimaxKernel, indptr: ArrayLike, indices: ArrayLike, data: ArrayLike
) -> tuple[FloatArray, FloatArray]:
    """``TV(p, pK)`` and ``KL(p || pK)`` of each sparse user, O(k log k) for k items.

    With the user's support sorted by the kernel's rank, the closed form of Algorithm 1
    (``docs/minimax.md``) gives ``(pK)_j = q_j A_j + q_j c_j T_j + K_jj p_j`` on the support from
    the user's own entries (``A`` a forward running sum of ``p c``, ``T`` a backward running
    sum of ``p``). Off the support ``p_j = 0``, so the positive part of ``p - pK`` and the terms
    ``p_j log(p_j / (pK)_j)`` vanish there:

        TV = sum_{j in supp p} (p_j - (pK)_j)_+,     KL = sum_{j in supp p} p_j log(p_j / (pK)_j).

    Derivation and numerical care: ``docs/minimax-sparse.md``. Equal to
    ``tv_distance(P, apply_minimax(P, kernel))`` and ``kl_divergence(...)`` on the dense rows
    within rounding (the tests check 1e-12).

    Parameters
    ----------
    kernel
        The kernel of the users' public prior and ε (:func:`ldpsample.minimax_coefficients`).
    indptr, indices, data
        The users' histograms in CSR form: row ``u`` holds the items
        ``indices[indptr[u]:indptr[u + 1]]`` (the kernel's caller order, each at most once) with
        non-negative counts ``data[...]`` (not all 0), normalised inside. An empty row is a user
        with no data, ``p := q``: both divergences are 0.

    Returns
    -------
    (tv, kl) : tuple of numpy.ndarray
        Shape ``(users,)`` each; ``kl`` is ``inf`` for a user holding an item of prior mass 0.

    Raises
    ------
    TypeError, ValueError
        For a ``kernel`` that is not a :class:`ldpsample.MinimaxKernel`, arrays of the wrong
        type or shape, an ``indptr`` that does not start at 0, decreases or does not end at the
        number of entries, items outside the kernel, negative or non-finite counts, a row
        listing an item twice or a non-empty row whose counts sum to 0.
    """
    kernel = _check_kernel(kernel)
    ptr, idx, values = _check_csr(kernel, indptr, indices, data)
    users = ptr.size - 1
    tv = np.zeros(users)
    kl = np.zeros(users)
    for block in _blocks(kernel, ptr, idx, values):
        gap = np.maximum(block.p - block.released, 0.0)
        tv[block.users] = _row_sums(gap)
        kl[block.users] = _row_sums(rel_entr_terms(block.p, block.released))
    return tv, kl


# --------------------------------------------------------------------------------------------
# Sampling
# --------------------------------------------------------------------------------------------


def _search_gaps(
    kernel: MinimaxKernel,
    start: NDArray[np.int64],
    end: NDArray[np.int64],
    a: FloatArray,
    t: FloatArray,
    before: FloatArray,
    target: FloatArray,
) -> NDArray[np.int64]:
    """For each draw, the smallest rank ``j`` in ``[start, end)`` with

        before + (a (Q[j + 1] - Q[start]) + t (QC[j + 1] - QC[start])) > target,

    by a bisection run on all draws at once (``ceil(log2 n)`` passes). The left side is
    non-decreasing in ``j`` (rounding is monotone) and at ``j = end - 1`` it is, bit for bit, the
    cumulative mass that selected the gap, which exceeds ``target``: the answer exists, and it
    is never an item of mass 0.
    """
    _, Q, QC = kernel._prefix_sums
    lo = start.copy()
    hi = end - 1
    q0 = Q[start]
    qc0 = QC[start]
    while True:
        open_ = np.flatnonzero(lo < hi)
        if not open_.size:
            return lo
        mid = (lo[open_] + hi[open_]) // 2
        mass = a[open_] * (Q[mid + 1] - q0[open_]) + t[open_] * (QC[mid + 1] - qc0[open_])
        above = before[open_] + mass > target[open_]
        hi[open_] = np.where(above, mid, hi[open_])
        lo[open_] = np.where(above, lo[open_], mid + 1)


def _below_total(uniforms: FloatArray, total: FloatArray) -> FloatArray:
    """``min(u, the float just below total)``: a draw beyond the (rounded) total mass takes the
    last item of positive mass, as :func:`ldpsample.sample_categorical` does, while every other
    draw is unchanged (``cdf <= u'`` then counts exactly the entries below the total)."""
    return np.minimum(uniforms, np.nextafter(total, -np.inf))


def sample_minimax_sparse(
    kernel: MinimaxKernel,
    indptr: ArrayLike,
    indices: ArrayLike,
    data: ArrayLike,
    *,
    uniforms: ArrayLike,
) -> NDArray[np.intp]:
    """One ε-LDP sample of ``pK`` per sparse user, by inverse CDF in the kernel's sorted order.

    The CDF of ``pK`` is taken over the items in the kernel's sorted order (ascending prior,
    stable; :attr:`MinimaxKernel.order`): the released item is the first whose cumulative mass
    exceeds the user's uniform ``u``, i.e. the number of cumulative sums ``<= u``, as
    :func:`inverse_cdf_sorted` does on the dense ``apply_minimax(P, kernel)``; a ``u`` beyond the
    rounded total takes the last item of positive mass. Items of mass 0 are never drawn.

    In sorted order the user's ``k`` support ranks cut the items into ``2k + 1`` pieces: the
    support items, where ``(pK)_j`` comes from the closed form of Algorithm 1
    (``docs/minimax.md``), and the gaps between them, where ``(pK)_j = a q_j + t q_j c_j`` with
    constants ``a = sum_{support < j} p_i c_i`` and ``t = sum_{support > j} p_i``, so a gap's mass
    is ``a dQ + t dQC`` from the kernel's prefix sums of ``q`` and ``q c`` (computed once per
    kernel). A running sum over the pieces picks one; inside a gap a bisection finds the item.
    O(k log k + log n) per user; ``docs/minimax-sparse.md`` has the derivation. An empty row
    (``p := q``) draws from ``qK = q``.

    Parameters
    ----------
    kernel
        The kernel of the users' public prior and ε (:func:`ldpsample.minimax_coefficients`).
    indptr, indices, data
        The users' histograms in CSR form, as in :func:`minimax_divergences_sparse`.
    uniforms
        One float in ``[0, 1)`` per user, supplied by the caller (a secret source for a real
        release, derived uniforms for a reproducible one): the draws are a deterministic
        function of them.

    Returns
    -------
    numpy.ndarray
        Shape ``(users,)``, dtype ``intp``: each user's released item in the caller's order.

    Raises
    ------
    TypeError, ValueError
        As :func:`minimax_divergences_sparse`, and for ``uniforms`` not of shape ``(users,)`` or
        not in ``[0, 1)``.
    """
    kernel = _check_kernel(kernel)
    ptr, idx, values = _check_csr(kernel, indptr, indices, data)
    users = ptr.size - 1
    u = _check_uniforms(uniforms, users)
    n = kernel.n
    _, Q, QC = kernel._prefix_sums
    drawn = np.empty(users, dtype=np.int64)
    empty = np.flatnonzero(ptr[1:] == ptr[:-1])
    if empty.size:  # p := q: one gap over all items with a = 1, t = 0, i.e. the CDF of q
        ones, zeros = np.ones(empty.size), np.zeros(empty.size)
        start = np.zeros(empty.size, dtype=np.int64)
        end = np.full(empty.size, n, dtype=np.int64)
        total = np.full(empty.size, 1.0 * (Q[n] - Q[0]) + 0.0 * (QC[n] - QC[0]))
        target = _below_total(u[empty], total)
        drawn[empty] = _search_gaps(kernel, start, end, ones, zeros, zeros, target)
    for block in _blocks(kernel, ptr, idx, values):
        ranks = block.ranks
        rows, W = ranks.shape
        # Gap m (m = 0..W) runs over the ranks strictly between support ranks m - 1 and m
        # (-1 and n at the ends; padding ranks are n, so padded gaps are empty).
        start = np.empty((rows, W + 1), dtype=np.int64)
        start[:, 0] = 0
        np.minimum(ranks + 1, n, out=start[:, 1:])
        end = np.empty((rows, W + 1), dtype=np.int64)
        end[:, :W] = ranks
        end[:, W] = n
        a, t = block.A, block.S
        pieces = np.empty((rows, 2 * W + 1))
        pieces[:, 0::2] = a * (Q[end] - Q[start]) + t * (QC[end] - QC[start])
        pieces[:, 1::2] = block.released
        cdf = np.cumsum(pieces, axis=1)
        target = _below_total(u[block.users], cdf[:, -1])
        piece = np.count_nonzero(cdf <= target[:, None], axis=1)
        rank = np.empty(rows, dtype=np.int64)
        point = np.flatnonzero(piece % 2 == 1)
        rank[point] = ranks[point, piece[point] // 2]
        gap = np.flatnonzero(piece % 2 == 0)
        m = piece[gap] // 2
        before = np.where(piece[gap] > 0, cdf[gap, np.maximum(piece[gap] - 1, 0)], 0.0)
        rank[gap] = _search_gaps(
            kernel, start[gap, m], end[gap, m], a[gap, m], t[gap, m], before, target[gap]
        )
        drawn[block.users] = rank
    return kernel.order[drawn]


def inverse_cdf_sorted(
    probs: ArrayLike, kernel: MinimaxKernel, *, uniforms: ArrayLike
) -> NDArray[np.intp]:
    """Dense inverse-CDF draws in the kernel's sorted order: the reference for
    :func:`sample_minimax_sparse`.

    For release distributions ``probs`` (e.g. ``apply_minimax(P, kernel)``, caller's item
    order), row ``u``'s item is the number of cumulative sums of ``probs[u, kernel.order]``
    that are ``<= uniforms[u]`` (the items in ascending prior, stable), mapped back to the
    caller's order; a uniform beyond the rounded total takes the last item of positive mass,
    as in :func:`ldpsample.sample_categorical`. With the same uniforms,
    :func:`sample_minimax_sparse` returns the same items but where a uniform lies within
    rounding (about 1e-12) of a cumulative sum.

    Parameters
    ----------
    probs
        Distributions, shape ``(users, n)``, over the kernel's items in the caller's order.
    kernel
        The :class:`ldpsample.MinimaxKernel` whose order the CDF follows.
    uniforms
        One float in ``[0, 1)`` per row.

    Returns
    -------
    numpy.ndarray
        Shape ``(users,)``, dtype ``intp``: item indices in the caller's order.

    Raises
    ------
    TypeError, ValueError
        For a ``kernel`` that is not a :class:`ldpsample.MinimaxKernel`, ``probs`` that are not
        ``(users, n)`` distributions (:func:`ldpsample.check_distributions`) or bad
        ``uniforms``.
    """
    kernel = _check_kernel(kernel)
    P = check_distributions(probs, name="probs", n=kernel.n)
    if P.ndim != 2:
        raise ValueError(f"probs must have shape (users, n), got shape {P.shape}")
    u = _check_uniforms(uniforms, P.shape[0])
    cdf = np.cumsum(P[:, kernel.order], axis=1)
    target = _below_total(u, cdf[:, -1])
    return kernel.order[np.count_nonzero(cdf <= target[:, None], axis=1)]


def csr_masses(
    ptr: NDArray[np.int64], idx: NDArray[np.int64], values: FloatArray, n: int
) -> tuple[NDArray[np.intp], FloatArray, NDArray[np.int64]]:
    """Library-internal: ``(row, p, lengths)`` of checked CSR arrays (:func:`check_csr`): each
    entry's row, its mass ``p`` (the count over its row's total, summed in entry order by one
    ``bincount``, so a row's masses depend on its own entries only) and each row's length.

    Raises ``ValueError`` for a row listing an item twice or a non-empty row whose counts sum to 0
    (empty rows are the caller's to accept or refuse). O(nnz) when each row's items are increasing
    (as ``scipy.sparse`` and :func:`ldpsample.events.counting.data_priors.csr_rows` give them), one
    sort of the entries otherwise.
    """
    lengths = np.diff(ptr)
    users = lengths.size
    row = np.repeat(np.arange(users), lengths)
    if idx.size > 1:
        same_row = row[1:] == row[:-1]
        if not (idx[1:] > idx[:-1])[same_row].all():
            keys = np.sort(row.astype(np.int64) * n + idx)
            repeated = keys[1:] == keys[:-1]
            if repeated.any():
                key = keys[int(np.argmax(repeated))].item()
                raise ValueError(
                    f"row {key // n} lists item {key % n} more than once; sum repeated entries "
                    "first (scipy.sparse: sum_duplicates())"
                )
    total = np.bincount(row, weights=values, minlength=users)
    zero = (total <= 0) & (lengths > 0)
    if zero.any():
        user = int(np.argmax(zero))
        raise ValueError(
            f"row {user} has counts summing to 0; an empty row (no entries) stands for a user "
            "with no data"
        )
    return row, values / total[row], lengths
