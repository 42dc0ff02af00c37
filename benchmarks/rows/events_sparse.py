"""The evaluation of a sparse catalogue as a metrics job does it:

* ``events-sparse-1e6x1e5``: ``sparse-1e6x1e5``'s users (:mod:`rows.sparse_catalogue`) as
  events histograms through :func:`ldpsample.events.evaluate_attribute` (the sparse path: no
  users x items matrix), target < 60 s.

Imports numpy, :mod:`runner` and :mod:`rows.sparse_catalogue` at the top; ``ldpsample`` and
``polars`` inside each function, so that a row's processes load only what it uses (see
:mod:`rows`).
"""

from __future__ import annotations

import time

import numpy as np
from runner.measure import Measure, Row, best_time
from runner.registry import register

from rows.sparse_catalogue import SPARSE_EPSILONS, sparse_sizes, sparse_users


def _sparse_evaluation_input(quick: bool):
    """The sparse-catalogue row's users (``sparse_users``) as events histograms: one
    attribute, 4 subcategories, text ids."""
    import polars as pl

    indptr, indices, counts, bounds = sparse_users(quick)
    users = indptr.size - 1
    user_index = np.repeat(np.arange(users), np.diff(indptr))
    subcategory = np.searchsorted(bounds, user_index, side="right") - 1
    return pl.DataFrame(
        {
            "attribute": "a",
            "subcategory": pl.Series(subcategory).cast(pl.String),
            "user": pl.Series(user_index).cast(pl.String).str.zfill(7),
            "item": pl.Series(indices).cast(pl.String).str.zfill(6),
            "count": counts,
        }
    )


def _sparse_evaluation(hist) -> object:
    from ldpsample.events import evaluate_attribute

    return evaluate_attribute(
        hist,
        None,
        name="sparse",
        attribute="a",
        prior="pooled",
        epsilons=list(SPARSE_EPSILONS),
        methods=["minimax"],
        threads=2,
    )


def _sparse_evaluation_subject(quick: bool) -> object:
    return _sparse_evaluation(_sparse_evaluation_input(quick))


@register("events-sparse-1e6x1e5", _sparse_evaluation_subject)
def row_events_sparse(quick: bool) -> Row:
    users, n = sparse_sizes(quick)
    start = time.perf_counter()
    hist = _sparse_evaluation_input(quick)
    generated = time.perf_counter() - start
    result = _sparse_evaluation(hist)
    tv, kl = result.per_user["tv_minimax"].max(), result.per_user["kl_minimax"].max()
    row = Row(
        "events-sparse-1e6x1e5",
        f"the evaluation of a sparse catalogue (evaluate_attribute, as a metrics job): {users:,} "
        f"users, {n:,} items, {hist.height:,} histogram rows (sparse-1e6x1e5's users), 4 "
        "subcategories, pooled prior, minimax TV and KL per user, ε 1 and 4, 2 threads",
    )
    row.measures = [
        Measure(
            "evaluate_attribute (sparse: no users x items matrix)",
            best_time(lambda: _sparse_evaluation(hist), 3),
            f"best of 3; {result.audit.height} kernels audited; largest TV {tv:.4f}, KL {kl:.3f}",
            limit=60,
        ),
        Measure("building the histograms (input, not timed above)", generated),
    ]
    return row
