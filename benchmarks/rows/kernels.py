"""Rows of the minimax kernel (:mod:`ldpsample.minimax`, :mod:`ldpsample.audit`):

* ``apply-4000``: :func:`apply_minimax`, 5000 users x n = 4000 (unsorted prior, coefficients
  precomputed) vs the dense BLAS product ``P @ K`` (``K`` built beforehand with
  :func:`minimax_kernel`) and one ``np.cumsum`` pass over ``P``;
* ``dense-2000``: dense kernel n = 2000, closed form vs the paper's recursion
  (:mod:`ldpsample.reference`, shared with the tests);
* ``dense-10000``: dense kernel n = 10,000, closed form;
* ``apply-1e6x100``: :func:`apply_minimax`, 10^6 users x n = 100;
* ``audit-1e6``: :func:`minimax_realized_epsilon`, the O(n) audit of a 10^6-item kernel
  (target < 1 s), and at n = 10,000 beside the dense ``realized_epsilon(K)``.

With ``--baseline``, ``apply-4000`` and ``apply-1e6x100`` add the revision's ``minimax.py``.

Imports numpy, :mod:`runner` and :mod:`rows.inputs` at the top; ``ldpsample`` inside each
function, so that a row's processes load only what it uses (see :mod:`rows`).
"""

from __future__ import annotations

import numpy as np
from runner.baseline import baseline, baseline_revision
from runner.measure import Measure, Row, best_time, one_thread
from runner.registry import register

from rows.inputs import EPSILON, random_prior, random_users


def _apply_4000_sizes(quick: bool) -> tuple[int, int]:
    return (500, 1000) if quick else (5000, 4000)


def _apply_1e6_sizes(quick: bool) -> tuple[int, int]:
    return (100_000, 100) if quick else (1_000_000, 100)


def _dense_2000_n(quick: bool) -> int:
    return 500 if quick else 2000


def _dense_10000_n(quick: bool) -> int:
    return 2000 if quick else 10_000


def _apply(users: int, n: int, *, seeds: tuple[int, int]) -> object:
    """An apply row's subject: :func:`apply_minimax` of ``users`` seeded users with the
    precomputed coefficients of a seeded prior over ``n`` items (``seeds``: prior, users)."""
    from ldpsample.minimax import apply_minimax, minimax_coefficients

    kernel = minimax_coefficients(random_prior(n, seeds[0]), epsilon=EPSILON)
    return apply_minimax(random_users(users, n, seeds[1]), kernel)


def _dense(n: int, *, seed: int) -> object:
    """A dense row's subject: :func:`minimax_kernel` of a seeded prior over ``n`` items."""
    from ldpsample.minimax import minimax_kernel

    return minimax_kernel(random_prior(n, seed), epsilon=EPSILON)


def _apply_4000_subject(quick: bool) -> object:
    return _apply(*_apply_4000_sizes(quick), seeds=(1, 2))


def _apply_1e6_subject(quick: bool) -> object:
    return _apply(*_apply_1e6_sizes(quick), seeds=(7, 8))


def _dense_2000_subject(quick: bool) -> object:
    return _dense(_dense_2000_n(quick), seed=5)


def _dense_10000_subject(quick: bool) -> object:
    return _dense(_dense_10000_n(quick), seed=6)


def _audit_n(quick: bool) -> int:
    return 100_000 if quick else 1_000_000


def _audit_subject(quick: bool) -> object:
    from ldpsample.audit import minimax_realized_epsilon
    from ldpsample.minimax import minimax_coefficients

    kernel = minimax_coefficients(random_prior(_audit_n(quick), 9), epsilon=EPSILON)
    return minimax_realized_epsilon(kernel)


@register("apply-4000", _apply_4000_subject)
def row_apply_4000(quick: bool) -> Row:
    from ldpsample.minimax import apply_minimax, minimax_coefficients, minimax_kernel

    users, n = _apply_4000_sizes(quick)
    q = random_prior(n, 1)
    P = random_users(users, n, 2)
    kernel = minimax_coefficients(q, epsilon=EPSILON)
    K = minimax_kernel(q, epsilon=EPSILON)
    diff = float(np.abs(apply_minimax(P[:200], kernel) - P[:200] @ K).max())
    row = Row("apply-4000", f"apply_minimax, {users:,} users x n = {n:,} (unsorted q)")
    row.measures = [
        Measure(
            "apply_minimax (coefficients precomputed)",
            best_time(lambda: apply_minimax(P, kernel)),
            f"max abs diff vs P @ K: {diff:.1e}",
        ),
        Measure(
            "dense P @ K (K built beforehand)",
            best_time(lambda: P @ K),
            ratio_of="apply_minimax (coefficients precomputed)",
            target=5.0,
        ),
        Measure(
            "one np.cumsum pass over P",
            best_time(lambda: np.cumsum(P, axis=1)),
            ratio_of="apply_minimax (coefficients precomputed)",
            slowdown=True,
            target=4.0,
        ),
    ]
    row.measures.append(one_thread(row, lambda: apply_minimax(P, kernel, threads=1)))
    old = baseline("minimax")
    if old is not None:
        row.measures.append(
            Measure(
                f"before: apply_minimax at {baseline_revision()}",
                best_time(
                    lambda: old.apply_minimax(P, old.minimax_coefficients(q, epsilon=EPSILON))
                ),
                ratio_of="apply_minimax (coefficients precomputed)",
            )
        )
    return row


@register("dense-2000", _dense_2000_subject)
def row_dense_2000(quick: bool) -> Row:
    from ldpsample.minimax import minimax_kernel
    from ldpsample.reference import recursion_kernel

    n = _dense_2000_n(quick)
    q = random_prior(n, 5)
    diff = float(np.abs(minimax_kernel(q, epsilon=EPSILON) - recursion_kernel(q, EPSILON)).max())
    row = Row("dense-2000", f"dense minimax kernel, n = {n:,}")
    row.measures = [
        Measure(
            "minimax_kernel (closed form)",
            best_time(lambda: minimax_kernel(q, epsilon=EPSILON)),
            f"max abs diff vs recursion: {diff:.1e}",
        ),
        Measure(
            "paper's recursion, Algorithm 1 (O(n^3))",
            best_time(lambda: recursion_kernel(q, EPSILON), 3),
            "best of 3",
            ratio_of="minimax_kernel (closed form)",
        ),
    ]
    return row


@register("dense-10000", _dense_10000_subject)
def row_dense_10000(quick: bool) -> Row:
    from ldpsample.minimax import minimax_kernel

    n = _dense_10000_n(quick)
    q = random_prior(n, 6)
    row = Row("dense-10000", f"dense minimax kernel, n = {n:,}")
    row.measures = [
        Measure(
            "minimax_kernel (closed form)", best_time(lambda: minimax_kernel(q, epsilon=EPSILON))
        )
    ]
    return row


@register("apply-1e6x100", _apply_1e6_subject)
def row_apply_1e6(quick: bool) -> Row:
    from ldpsample.minimax import apply_minimax, minimax_coefficients

    users, n = _apply_1e6_sizes(quick)
    q = random_prior(n, 7)
    P = random_users(users, n, 8)
    kernel = minimax_coefficients(q, epsilon=EPSILON)
    row = Row("apply-1e6x100", f"apply_minimax, {users:,} users x n = {n}")
    row.measures = [
        Measure(
            "apply_minimax (coefficients precomputed)", best_time(lambda: apply_minimax(P, kernel))
        ),
        Measure(
            "apply_minimax (q given, coefficients in the call)",
            best_time(lambda: apply_minimax(P, q, epsilon=EPSILON)),
        ),
        Measure(
            "one np.cumsum pass over P",
            best_time(lambda: np.cumsum(P, axis=1)),
            ratio_of="apply_minimax (coefficients precomputed)",
            slowdown=True,
        ),
    ]
    old = baseline("minimax")
    if old is not None:
        old_kernel = old.minimax_coefficients(q, epsilon=EPSILON)
        row.measures.append(
            Measure(
                f"before: apply_minimax at {baseline_revision()}",
                best_time(lambda: old.apply_minimax(P, old_kernel)),
                ratio_of="apply_minimax (coefficients precomputed)",
            )
        )
    return row


@register("audit-1e6", _audit_subject)
def row_audit(quick: bool) -> Row:
    from ldpsample.audit import minimax_realized_epsilon, realized_epsilon
    from ldpsample.minimax import minimax_coefficients

    n = _audit_n(quick)
    kernel = minimax_coefficients(random_prior(n, 9), epsilon=EPSILON)
    realized = minimax_realized_epsilon(kernel)
    small = 2_000 if quick else 10_000
    small_kernel = minimax_coefficients(random_prior(small, 10), epsilon=EPSILON)
    K = small_kernel.dense()
    same = minimax_realized_epsilon(small_kernel) == realized_epsilon(K)
    mib = K.nbytes / 2**20
    row = Row("audit-1e6", f"realised ε of the minimax kernel, n = {n:,} (O(n), no matrix)")
    row.measures = [
        Measure(
            "minimax_realized_epsilon (kernel's arrays)",
            best_time(lambda: minimax_realized_epsilon(kernel)),
            f"realised ε = {realized!r} for ε = {EPSILON:g}",
            limit=1,
        ),
        Measure(
            "minimax_coefficients (building the kernel, for scale)",
            best_time(lambda: minimax_coefficients(random_prior(n, 9), epsilon=EPSILON)),
        ),
        Measure(
            f"minimax_realized_epsilon, n = {small:,}",
            best_time(lambda: minimax_realized_epsilon(small_kernel)),
            f"equal to the dense audit: {'yes' if same else 'NO'}",
        ),
        Measure(
            f"dense realized_epsilon(K), n = {small:,} (K built beforehand, {mib:,.0f} MiB)",
            best_time(lambda: realized_epsilon(K)),
            ratio_of=f"minimax_realized_epsilon, n = {small:,}",
        ),
    ]
    return row
