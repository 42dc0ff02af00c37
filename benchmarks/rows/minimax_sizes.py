"""Rows of the minimax kernel (:mod:`ldpsample.minimax`) across sizes and ways of calling it:

* ``dense-sizes``: the dense kernel in closed form (:func:`minimax_kernel`, O(n^2)) beside the
  paper's recursion (Algorithm 1, :mod:`ldpsample.reference`, O(n^3)) at n = 100, 300 and 1000
  (``dense-2000`` and ``dense-10000`` are the larger sizes), with their largest difference;
* ``apply-methods-1e6x100``: :func:`apply_minimax` on 10^6 users x n = 100 with a sorted and an
  unsorted prior (coefficients precomputed), with the coefficients computed in the call, and
  the dense BLAS product ``P @ K`` for reference; each with its process CPU time in the note
  (less sensitive to other processes than the wall time; above it where BLAS runs threads).

Imports numpy, :mod:`runner` and :mod:`rows.inputs` at the top; ``ldpsample`` inside each
function, so that a row's processes load only what it uses (see :mod:`rows`).
"""

from __future__ import annotations

import numpy as np
from runner.measure import Measure, Row, best_time, best_times
from runner.registry import register

from rows.inputs import EPSILON, random_prior, random_users


def _dense_sizes(quick: bool) -> tuple[int, ...]:
    return (100, 300) if quick else (100, 300, 1000)


def _apply_sizes(quick: bool) -> tuple[int, int]:
    return (100_000, 100) if quick else (1_000_000, 100)


def _dense_subject(quick: bool) -> object:
    from ldpsample.minimax import minimax_kernel

    n = _dense_sizes(quick)[-1]
    return minimax_kernel(random_prior(n, 11), epsilon=EPSILON)


@register("dense-sizes", _dense_subject)
def row_dense_sizes(quick: bool) -> Row:
    from ldpsample.minimax import minimax_kernel
    from ldpsample.reference import recursion_kernel

    sizes = _dense_sizes(quick)
    row = Row("dense-sizes", f"dense minimax kernel, n = {', '.join(map(str, sizes))}")
    for n in sizes:
        q = random_prior(n, 11)
        diff = float(
            np.abs(minimax_kernel(q, epsilon=EPSILON) - recursion_kernel(q, EPSILON)).max()
        )
        closed = f"minimax_kernel (closed form), n = {n}"
        row.measures.append(
            Measure(closed, best_time(lambda q=q: minimax_kernel(q, epsilon=EPSILON)))
        )
        row.measures.append(
            Measure(
                f"paper's recursion, Algorithm 1, n = {n}",
                best_time(lambda q=q: recursion_kernel(q, EPSILON)),
                f"max abs diff vs closed form: {diff:.1e}",
                ratio_of=closed,
            )
        )
    return row


def _apply_inputs(quick: bool) -> tuple[np.ndarray, np.ndarray]:
    """The seeded prior ``q`` and users ``P`` of ``apply-methods-1e6x100``."""
    users, n = _apply_sizes(quick)
    return random_prior(n, 12), random_users(users, n, 13)


def _apply_subject(quick: bool) -> object:
    from ldpsample.minimax import apply_minimax, minimax_coefficients

    q, P = _apply_inputs(quick)
    return apply_minimax(P, minimax_coefficients(q, epsilon=EPSILON))


@register("apply-methods-1e6x100", _apply_subject)
def row_apply_methods(quick: bool) -> Row:
    from ldpsample.minimax import apply_minimax, minimax_coefficients, minimax_kernel

    q, P = _apply_inputs(quick)
    users, n = P.shape
    unsorted, in_order = (minimax_coefficients(x, epsilon=EPSILON) for x in (q, np.sort(q)))
    K = minimax_kernel(q, epsilon=EPSILON)
    subject = "apply_minimax, unsorted q, coefficients precomputed"
    calls = (
        (subject, lambda: apply_minimax(P, unsorted), None),
        (
            "apply_minimax, sorted q, coefficients precomputed",
            lambda: apply_minimax(P, in_order),
            subject,
        ),
        (
            "apply_minimax, unsorted q, coefficients in the call",
            lambda: apply_minimax(P, q, epsilon=EPSILON),
            subject,
        ),
        ("dense P @ K (K built beforehand, no validation)", lambda: P @ K, subject),
    )
    row = Row("apply-methods-1e6x100", f"apply_minimax, {users:,} users x n = {n}, ways to call it")
    for label, call, ratio_of in calls:
        wall, cpu = best_times(call)
        row.measures.append(Measure(label, wall, f"CPU {cpu:,.3f} s", ratio_of=ratio_of))
    return row
