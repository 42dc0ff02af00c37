"""The AISTATS paper's cost claim: the closed form against solving the linear program.

The AISTATS paper (000_904d48b38ce41b65.txt, end of §3) says: "It is important to note that our
algorithm achieves a time complexity of $O(n^3)$. This is a significant improvement over the
naive linear programming approach for solving (4) in the case of TV-distance. The naive method
has a complexity of $O\\left(n^5\\log\\left(\\frac{n}{\\delta}\\right)\\right)$ (Cohen et al.,
2021)". A complexity is not a number a run prints, and wall-clock times depend on the machine, so
:func:`closed_form_vs_lp` checks what is deterministic: at each size ``n`` the LP over all
``n x n`` kernels (:func:`~ldpsample.reproduction.kernel_lp.minimax_kernel_lp`,
``reduce=False``) is solved and

* its optimum equals the closed form's smallest diagonal entry (the two compute the same thing);
* its size (unknowns, constraint rows) and HiGHS's iteration count are recorded: at least
  ``n^2`` unknowns (the kernel's entries; ``(n + 1)^2`` with the column bounds and ``t``), which
  is what puts the Cohen et al. bound, ``O(N^ω log(N/δ))`` for ``N`` unknowns, at about ``n^5``
  for ``ω`` near 2.5; the exponents of the unknowns and of the iterations in ``n``, fitted on a
  log-log scale, are shown beside them, unchecked (lower-order terms pull a fit at small ``n``
  below 2);
* the closed form (:func:`~ldpsample.minimax.minimax_coefficients`) holds ``n`` coefficients.

The wall-clock times of both, and their ratio, are the benchmark row ``kernel-lp``
(``benchmarks/rows/kernel_lp.py``, ``benchmarks/results.md``), never this table.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ldpsample.minimax import minimax_coefficients
from ldpsample.reproduction.kernel_lp import minimax_kernel_lp
from ldpsample.reproduction.outcome import Outcome

__all__ = ["closed_form_vs_lp", "size_exponent"]

DOC = "docs/reproduction.md#the-closed-form-against-the-lp"


def size_exponent(sizes: list[int], counts: list[int]) -> float:
    """The slope of ``log(counts)`` against ``log(sizes)`` (least squares)."""
    return float(np.polyfit(np.log(sizes), np.log(counts), 1)[0])


def closed_form_vs_lp(
    results: Path,
    ctx: Mapping[str, object],
    *,
    sizes: list[int],
    epsilon: float,
) -> Outcome:
    """At each of ``sizes``, a Dirichlet(1) prior seeded from the run's ``seed``: the full LP's
    optimum against the closed form's smallest diagonal entry (within 1e-9), its size and
    iterations; within the tolerance when every optimum matches and the LP has at least ``n^2``
    unknowns at every size (the fitted exponents are shown, not checked)."""
    seed = int(ctx.get("seed") or 0)
    shown, unknowns, iterations, gaps = [], [], [], []
    for n in sizes:
        q = np.random.default_rng([seed, 33, n]).dirichlet(np.ones(n))
        lp = minimax_kernel_lp(q, epsilon=epsilon, reduce=False)
        kernel = minimax_coefficients(q, epsilon=epsilon)
        closed = float(np.min(kernel.diagonal))
        gaps.append(abs(lp.min_diagonal - closed))
        unknowns.append(lp.unknowns)
        iterations.append(max(lp.iterations, 1))
        shown.append(
            f"n={n}: {lp.unknowns:,} unknowns, {lp.constraints:,} rows, "
            f"{lp.iterations:,} HiGHS iterations"
        )
    fitted = size_exponent(list(sizes), unknowns)
    worst = max(gaps)
    problems = []
    if worst > 1e-9:
        problems.append(f"the LP's optimum is {worst:.2g} from the closed form's")
    short = [f"n={n}: {u}" for n, u in zip(sizes, unknowns, strict=True) if u < n * n]
    if short:
        problems.append(f"the LP has fewer than n^2 unknowns ({', '.join(short)})")
    return Outcome(
        f"LP over n×n kernels (ε = {epsilon:g}): {'; '.join(shown)}; unknowns ∝ "
        f"n^{fitted:.2f}, iterations ∝ n^{size_exponent(list(sizes), iterations):.2f}; "
        f"|LP optimum − closed form| ≤ {worst:.1e}; the closed form holds n coefficients "
        "(wall-clock: benchmarks/results.md, row kernel-lp)",
        not problems,
        "; ".join(problems) + f" ({DOC})",
    )
