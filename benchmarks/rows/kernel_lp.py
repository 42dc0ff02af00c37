"""The AISTATS paper's cost claim (§3: Algorithm 1 in O(n^3), "a significant improvement over the
naive linear programming approach"), timed:

* ``kernel-lp``: at n = 10, 20, 40 (Dirichlet(1) priors), the closed form
  (:func:`ldpsample.minimax.minimax_kernel`, the dense kernel), the paper's recursion
  (:mod:`ldpsample.reference`, Algorithm 1) and the linear program over all n x n kernels
  (:func:`ldpsample.reproduction.kernel_lp.minimax_kernel_lp`, ``reduce=False``, HiGHS); each
  LP's ratio is against the closed form at the same n, and the row's note gives the exponents of
  the times in n fitted on a log-log scale (timings: they live here, never in a test or in the
  reproduction table).

Imports numpy, :mod:`runner` and :mod:`rows.inputs` at the top; ``ldpsample`` inside each
function, so that a row's processes load only what it uses (see :mod:`rows`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from runner.measure import Measure, Row, best_time
from runner.registry import register

from rows.inputs import EPSILON, random_prior


def _sizes(quick: bool) -> list[int]:
    return [5, 10, 20] if quick else [10, 20, 40]


def _subject(quick: bool) -> object:
    from ldpsample.reproduction.kernel_lp import minimax_kernel_lp

    n = _sizes(quick)[-1]
    return minimax_kernel_lp(random_prior(n, 33), epsilon=EPSILON, reduce=False)


def _slope(sizes: list[int], seconds: list[float]) -> float:
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


@register("kernel-lp", _subject)
def row_kernel_lp(quick: bool) -> Row:
    from ldpsample.minimax import minimax_kernel
    from ldpsample.reference import recursion_kernel
    from ldpsample.reproduction.kernel_lp import minimax_kernel_lp

    sizes = _sizes(quick)
    row = Row("kernel-lp", f"minimax kernel: closed form vs the LP over n x n kernels, n = {sizes}")
    times: dict[str, list[float]] = {"closed": [], "recursion": [], "lp": []}
    for n in sizes:
        q = random_prior(n, 33)
        lp = minimax_kernel_lp(q, epsilon=EPSILON, reduce=False)
        gap = abs(lp.min_diagonal - float(np.diagonal(minimax_kernel(q, epsilon=EPSILON)).min()))
        closed = f"minimax_kernel (closed form), n = {n}"
        times["closed"].append(best_time(lambda q=q: minimax_kernel(q, epsilon=EPSILON)))
        times["recursion"].append(best_time(lambda q=q: recursion_kernel(q, EPSILON), 3))
        times["lp"].append(
            best_time(lambda q=q: minimax_kernel_lp(q, epsilon=EPSILON, reduce=False), 3)
        )
        row.measures += [
            Measure(closed, times["closed"][-1]),
            Measure(
                f"paper's recursion, Algorithm 1, n = {n}",
                times["recursion"][-1],
                "best of 3",
                ratio_of=closed,
            ),
            Measure(
                f"LP over n x n kernels (HiGHS), n = {n}",
                times["lp"][-1],
                f"{lp.unknowns:,} unknowns, {lp.constraints:,} rows, {lp.iterations:,} "
                f"iterations; t* off the closed form by {gap:.1e}; best of 3",
                ratio_of=closed,
            ),
        ]
    fitted = ", ".join(f"{name} n^{_slope(sizes, sec):.2f}" for name, sec in times.items())
    last = row.measures[-1]
    row.measures[-1] = dataclasses.replace(last, note=f"{last.note}; time fitted in n: {fitted}")
    return row
