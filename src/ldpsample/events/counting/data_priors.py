"""A subcategory's data-derived prior ``q`` from its users' histograms, user by user: the same
numbers whether the users come at once (one metrics job) or bucket by bucket in sorted order
(the map/reduce steps of :mod:`ldpsample.events.bucketed.steps`).

* ``pooled``: the users' counts summed per item, normalised (``counts.sum(axis=0)``);
* ``user_mean``: the mean of the users' normalised histograms, ``P.mean(axis=0)``, normalised
  (the published Avazu code). numpy reduces axis 0 of a C-ordered array row by row, each
  column's running sum adding the next user's entry (tests/test_events_scale.py checks it against
  a loop), so :class:`UserMeanFold` adds the users in the same order, chunk after chunk, and
  gets the same bits: a dense chunk (at most :data:`DENSE_ITEMS` items) with the running sum
  as its first row (``np.add.reduce(..., axis=0)``), a sparse one (more items) by
  ``np.bincount`` over its entries in (user, item) order, the running sum first (bincount adds
  its weights in input order, and adding a user's 0 leaves a sum unchanged);
* ``uniform``: ``1 / n``.

``q / q.sum()`` ends each, as the metrics' ``_prior`` does.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "DENSE_ITEMS",
    "UserMeanFold",
    "csr_rows",
    "dense_counts",
    "normalised",
    "pooled_masses",
]

#: Subcategories with at most this many items are evaluated on dense user x item matrices
#: (the metrics' ``P``); larger ones sparsely (docs/minimax-sparse.md).
DENSE_ITEMS = 4096


def normalised(q: NDArray[np.float64]) -> NDArray[np.float64]:
    """``q / q.sum()``."""
    return q / q.sum()


def dense_counts(
    indptr: NDArray[np.int64], indices: NDArray[np.int64], data: NDArray[np.float64], n: int
) -> NDArray[np.float64]:
    """The ``(users, n)`` dense counts of CSR rows (one ``np.bincount`` over the flat cells,
    as the metrics build their matrix)."""
    users = indptr.shape[0] - 1
    rows = np.repeat(np.arange(users, dtype=np.intp), np.diff(indptr))
    return np.bincount(rows * n + indices, weights=data, minlength=users * n).reshape(users, n)


def csr_rows(
    user_index: NDArray[np.intp],
    item_index: NDArray[np.intp],
    counts: NDArray[np.float64],
    users: int,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """CSR arrays ``(indptr, indices, data)`` of cells ``(user_index, item_index, counts)``
    (one cell per (user, item)), rows in user order and items ascending within a row."""
    # Rows already in (user, item) order (a sorted histogram table) skip the sort: one pass.
    step = np.diff(user_index)
    in_order = bool(np.all((step > 0) | ((step == 0) & (np.diff(item_index) > 0))))
    if not in_order:
        order = np.lexsort((item_index, user_index))
        user_index, item_index, counts = user_index[order], item_index[order], counts[order]
    indptr = np.zeros(users + 1, dtype=np.int64)
    np.cumsum(np.bincount(user_index, minlength=users), out=indptr[1:])
    return indptr, item_index.astype(np.int64), np.asarray(counts, dtype=np.float64)


def pooled_masses(
    indices: NDArray[np.int64], data: NDArray[np.float64], n: int
) -> NDArray[np.float64]:
    """The users' counts summed per item (``counts.sum(axis=0)``; exact for integer counts,
    in user order otherwise)."""
    return np.bincount(indices, weights=data, minlength=n)


class UserMeanFold:
    """``P.mean(axis=0)`` of users added chunk by chunk in order (see the module docstring).

    Parameters
    ----------
    n
        The subcategory's number of items.
    """

    def __init__(self, n: int) -> None:
        self.n = int(n)
        self.total = np.zeros(self.n)
        self.users = 0

    def add(
        self, indptr: NDArray[np.int64], indices: NDArray[np.int64], data: NDArray[np.float64]
    ) -> None:
        """Add the next users (CSR rows of their counts, each row non-empty)."""
        users = indptr.shape[0] - 1
        if users == 0:
            return
        if self.n <= DENSE_ITEMS:
            counts = dense_counts(indptr, indices, data, self.n)
            P = counts / counts.sum(axis=1, keepdims=True)
            self.total = np.add.reduce(np.concatenate([self.total[None, :], P]), axis=0)
        else:
            lengths = np.diff(indptr)
            sums = np.add.reduceat(data, indptr[:-1]) if data.size else np.zeros(users)
            values = data / np.repeat(sums, lengths)
            self.total = np.bincount(
                np.concatenate([np.arange(self.n), indices]),
                weights=np.concatenate([self.total, values]),
                minlength=self.n,
            )
        self.users += users

    def q(self) -> NDArray[np.float64]:
        """The normalised mean (``P.mean(axis=0)``, then ``q / q.sum()``)."""
        if self.users == 0:
            raise ValueError("no users were added")
        return normalised(self.total / self.users)
