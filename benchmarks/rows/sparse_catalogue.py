"""The sparse-catalogue row and its input:

* ``sparse-1e6x1e5``: a sparse catalogue (10^6 users, 10^5 items, 1-50 items per user, Zipf
  popularity, 4 subcategories with pooled priors): per subcategory and ε in {1, 4} the kernel,
  its O(n) audit, one draw per user (:func:`sample_minimax_sparse`) and every user's TV and KL
  (:func:`minimax_divergences_sparse`), target < 60 s and < 4 GiB; beside it the dense path on
  500 users, extrapolated.

:func:`sparse_users`, :func:`sparse_sizes` and :data:`SPARSE_EPSILONS` are the same catalogue
for :mod:`rows.events_sparse`.

Imports numpy and :mod:`runner` at the top; ``ldpsample`` inside each function, so that a
row's processes load only what it uses (see :mod:`rows`).
"""

from __future__ import annotations

import itertools
import time

import numpy as np
from runner.measure import Measure, Row, best_time
from runner.registry import register


def sparse_sizes(quick: bool) -> tuple[int, int]:
    """(users, items) of the sparse catalogue."""
    return (100_000, 10_000) if quick else (1_000_000, 100_000)


#: Shares of the users in each subcategory of the sparse-catalogue row.
_SPARSE_SUBCATEGORIES = (0.4, 0.3, 0.2, 0.1)
#: The ε of each subcategory's kernel (and of ``events-sparse-1e6x1e5``'s evaluation).
SPARSE_EPSILONS = (1.0, 4.0)


def sparse_users(quick: bool):
    """The sparse-catalogue row's users, subcategory after subcategory, in CSR form: each
    draws 1 to 50 items (uniform) from a Zipf(1.1) popularity over shuffled item ids, repeated
    draws summed into counts (so at most 50 distinct items). Built in chunks of users so that
    the input's own peak stays small. Returns ``(indptr, indices, counts, bounds)`` with the
    subcategories' first users in ``bounds``."""
    users, n = sparse_sizes(quick)
    rng = np.random.default_rng(2026)
    popularity = 1.0 / np.arange(1, n + 1) ** 1.1
    cumulative = np.cumsum(popularity[rng.permutation(n)])
    cumulative /= cumulative[-1]
    lengths, indices, counts = [], [], []
    chunk = 100_000
    for first in range(0, users, chunk):
        size = min(chunk, users - first)
        k = rng.integers(1, 51, size)
        items = np.minimum(np.searchsorted(cumulative, rng.random(int(k.sum()))), n - 1)
        keys, repeats = np.unique(np.repeat(np.arange(size), k) * n + items, return_counts=True)
        lengths.append(np.bincount(keys // n, minlength=size))
        indices.append(keys % n)
        counts.append(repeats.astype(np.float64))
    indptr = np.zeros(users + 1, dtype=np.int64)
    np.cumsum(np.concatenate(lengths), out=indptr[1:])
    shares = np.cumsum((0.0, *_SPARSE_SUBCATEGORIES))
    bounds = np.round(shares * users).astype(int)
    return indptr, np.concatenate(indices), np.concatenate(counts), bounds


def _sparse_subcategories(quick: bool, data=None):
    """Each subcategory's CSR slice and pooled prior (its users' counts per item)."""
    indptr, indices, counts, bounds = data or sparse_users(quick)
    n = sparse_sizes(quick)[1]
    for first, last in itertools.pairwise(bounds):
        lo, hi = indptr[first], indptr[last]
        csr = (indptr[first : last + 1] - lo, indices[lo:hi], counts[lo:hi])
        prior = np.bincount(csr[1], weights=csr[2], minlength=n)
        yield csr, prior / prior.sum()


def _sparse_release(quick: bool, data=None) -> list[dict]:
    """What a release of the sparse catalogue computes, per subcategory and ε: the kernel,
    its O(n) audit, one draw per user and every user's TV and KL (their maxima reported)."""
    from ldpsample.audit import minimax_realized_epsilon
    from ldpsample.minimax import minimax_coefficients
    from ldpsample.minimax_sparse import minimax_divergences_sparse, sample_minimax_sparse

    results = []
    rng = np.random.default_rng(7)
    for number, (csr, prior) in enumerate(_sparse_subcategories(quick, data)):
        for epsilon in SPARSE_EPSILONS:
            kernel = minimax_coefficients(prior, epsilon=epsilon)
            realized = minimax_realized_epsilon(kernel)
            if not realized <= epsilon * (1 + 1e-9):
                raise RuntimeError(f"audit failed: realised {realized!r} > {epsilon!r}")
            users = csr[0].size - 1
            drawn = sample_minimax_sparse(kernel, *csr, uniforms=rng.random(users))
            tv, kl = minimax_divergences_sparse(kernel, *csr)
            results.append(
                {
                    "subcategory": number,
                    "epsilon": epsilon,
                    "users": users,
                    "realized": realized,
                    "tv": float(tv.max()),
                    "kl": float(kl.max()),
                    "draws": int(drawn.size),
                }
            )
    return results


def _sparse_subject(quick: bool) -> object:
    return _sparse_release(quick)


@register("sparse-1e6x1e5", _sparse_subject)
def row_sparse(quick: bool) -> Row:
    from ldpsample.divergences import kl_divergence, tv_distance
    from ldpsample.minimax import apply_minimax, minimax_coefficients
    from ldpsample.minimax_sparse import (
        inverse_cdf_sorted,
        minimax_divergences_sparse,
        sample_minimax_sparse,
    )

    users, n = sparse_sizes(quick)
    start = time.perf_counter()
    data = sparse_users(quick)
    generated = time.perf_counter() - start
    nnz = data[1].size
    results = _sparse_release(quick, data)
    worst = "worst case over users (subcategory, ε: TV, KL; realised ε): " + "; ".join(
        f"s{r['subcategory']} ({r['users']:,} users), {r['epsilon']:g}: {r['tv']:.4f}, "
        f"{r['kl']:.3f}; {r['realized']:.15g}"
        for r in results
    )
    row = Row(
        "sparse-1e6x1e5",
        f"sparse catalogue: {users:,} users, {n:,} items, 1-50 items per user ({nnz:,} "
        f"non-zeros, Zipf(1.1) popularity), {len(_SPARSE_SUBCATEGORIES)} subcategories "
        "(pooled priors), ε = 1 and 4",
    )
    subject = "release + audit + TV and KL per subcategory and ε"
    row.measures.append(
        Measure(subject, best_time(lambda: _sparse_release(quick, data), 3), worst, limit=60)
    )
    # The parts, on the largest subcategory at ε = 1, and the dense path on a few of its users.
    csr, prior = next(_sparse_subcategories(quick, data))
    kernel = minimax_coefficients(prior, epsilon=1.0)
    count = csr[0].size - 1
    u = np.random.default_rng(8).random(count)
    label = f"sample_minimax_sparse, subcategory 0 ({count:,} users), ε = 1"
    row.measures.append(
        Measure(label, best_time(lambda: sample_minimax_sparse(kernel, *csr, uniforms=u), 3))
    )
    row.measures.append(
        Measure(
            f"minimax_divergences_sparse, subcategory 0 ({count:,} users), ε = 1",
            best_time(lambda: minimax_divergences_sparse(kernel, *csr), 3),
        )
    )
    few = 500
    dense = np.zeros((few, n))
    rows = np.repeat(np.arange(few), np.diff(csr[0][: few + 1]))
    dense[rows, csr[1][: csr[0][few]]] = csr[2][: csr[0][few]]
    dense /= dense.sum(axis=1, keepdims=True)

    def dense_path() -> None:
        released = apply_minimax(dense, kernel)
        inverse_cdf_sorted(released, kernel, uniforms=u[:few])
        tv_distance(dense, released)
        kl_divergence(dense, released)

    sparse_few = tuple(x[: csr[0][few]] for x in csr[1:])
    head = (csr[0][: few + 1], *sparse_few)
    same_draws = np.array_equal(
        sample_minimax_sparse(kernel, *head, uniforms=u[:few]),
        inverse_cdf_sorted(apply_minimax(dense, kernel), kernel, uniforms=u[:few]),
    )
    tv_sparse = minimax_divergences_sparse(kernel, *head)[0]
    tv_gap = float(np.abs(tv_sparse - tv_distance(dense, apply_minimax(dense, kernel))).max())
    row.measures.append(
        Measure(
            "dense path (apply_minimax, inverse CDF, TV, KL) on subcategory 0",
            best_time(dense_path, 3) * count / few,
            f"{few} users timed, extrapolated to {count:,}; on them the sparse draws are the "
            f"same: {'yes' if same_draws else 'NO'}, largest TV difference {tv_gap:.1e}",
            ratio_of=label,
        )
    )
    row.measures.append(
        Measure("generating the input (not part of the target)", generated, f"{nnz:,} non-zeros")
    )
    return row
