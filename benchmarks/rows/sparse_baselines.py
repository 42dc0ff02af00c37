"""The sparse-baselines row:

* ``sparse-baselines-1e6x1e5``: the relative mollifiers (TV and KL projections) and randomized
  response on ``sparse-1e6x1e5``'s catalogue (:mod:`rows.sparse_catalogue`), each user's TV
  and KL against its output in O(k log k) (:func:`ldpsample.mollifier.mollifier_divergences_sparse`,
  :func:`ldpsample.baselines.randomized_response_divergences_sparse`) on its largest
  subcategory at ε = 1, beside the dense path (``relative_mollifier_tv`` / ``_kl``,
  ``linear_minimax``, ``tv_distance``, ``kl_divergence``) on 500 of its users, extrapolated:
  the speed-up as a ratio and the largest difference on those users (target 1e-12).

Imports numpy and :mod:`runner` at the top; ``ldpsample`` inside each function, so that a
row's processes load only what it uses (see :mod:`rows`).
"""

from __future__ import annotations

import numpy as np
from runner.measure import Measure, Row, best_time
from runner.registry import register

from rows.sparse_catalogue import _sparse_subcategories, sparse_sizes, sparse_users

#: Users of the dense path (timed, then extrapolated to the subcategory).
_DENSE_USERS = 500


def _methods(prior: np.ndarray, n: int, epsilon: float) -> dict:
    """Per method: (sparse divergences of CSR rows, dense divergences of rows P)."""
    from ldpsample.baselines import linear_minimax, randomized_response_divergences_sparse
    from ldpsample.divergences import kl_divergence, tv_distance
    from ldpsample.mollifier import (
        mollifier_divergences_sparse,
        relative_mollifier_kl,
        relative_mollifier_tv,
        sparse_mollifier,
    )

    mollifier = sparse_mollifier(prior, epsilon=epsilon)

    def dense(project):
        def run(P):
            Q = project(P)
            return tv_distance(P, Q), kl_divergence(P, Q)

        return run

    return {
        "mollifier_tv": (
            lambda *csr: mollifier_divergences_sparse(mollifier, *csr, projection="tv"),
            dense(lambda P: relative_mollifier_tv(P, prior, epsilon=epsilon)),
        ),
        "mollifier_kl": (
            lambda *csr: mollifier_divergences_sparse(mollifier, *csr, projection="kl"),
            dense(lambda P: relative_mollifier_kl(P, prior, epsilon=epsilon, threads=1)),
        ),
        "randomized_response": (
            lambda *csr: randomized_response_divergences_sparse(*csr, n=n, epsilon=epsilon),
            dense(lambda P: linear_minimax(P, epsilon=epsilon)),
        ),
    }


def _subject(quick: bool) -> object:
    csr, prior = next(_sparse_subcategories(quick))
    n = sparse_sizes(quick)[1]
    return [sparse(*csr) for sparse, _ in _methods(prior, n, 1.0).values()]


@register("sparse-baselines-1e6x1e5", _subject)
def row_sparse_baselines(quick: bool) -> Row:
    users, n = sparse_sizes(quick)
    csr, prior = next(_sparse_subcategories(quick, sparse_users(quick)))
    count = csr[0].size - 1
    few = _DENSE_USERS
    head = (csr[0][: few + 1], *(x[: csr[0][few]] for x in csr[1:]))
    P = np.zeros((few, n))
    P[np.repeat(np.arange(few), np.diff(head[0])), head[1]] = head[2]
    P /= P.sum(axis=1, keepdims=True)
    row = Row(
        "sparse-baselines-1e6x1e5",
        f"the baselines on the sparse catalogue (sparse-1e6x1e5's users: {users:,} users, "
        f"{n:,} items): TV and KL of each user against the TV and KL mollifiers and randomized "
        f"response, subcategory 0 ({count:,} users, pooled prior), ε = 1; the dense path on "
        f"{few} users, extrapolated",
    )
    for method, (sparse, dense) in _methods(prior, n, 1.0).items():
        label = f"{method}, sparse (O(k log k) per user), {count:,} users"
        row.measures.append(Measure(label, best_time(lambda s=sparse: s(*csr), 3)))
        tv, kl = sparse(*head)
        tv_dense, kl_dense = dense(P)
        gap = max(float(np.abs(tv - tv_dense).max()), float(np.abs(kl - kl_dense).max()))
        row.measures.append(
            Measure(
                f"{method}, dense path on {few} users, extrapolated to {count:,}",
                best_time(lambda d=dense: d(P), 3) * count / few,
                f"on those users the largest TV or KL difference is {gap:.1e} (target 1e-12: "
                f"{'yes' if gap <= 1e-12 else 'NO'})",
                ratio_of=label,
            )
        )
    return row
