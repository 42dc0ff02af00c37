"""The Wasserstein projection mechanism's rows (:mod:`ldpsample.wasserstein`), on points
uniform in the unit square (Euclidean cost, inputs = outputs, n = m), Dirichlet(0.5) inputs and
the optimal uniform base measure:

* ``wpm-exact``: exact WPM (POT's network simplex) per input, n = m = 100 and 400;
* ``wpm-solvers``: per input at n = m = 100, 200 and 400: the exact WPM with POT's network
  simplex (a batch of 32) and with scipy's HiGHS (the first 4), the entropic WPM
  (Dykstra-corrected alternation) for η = 0.02 and 0.005 on the batch, with its mean iterations
  and mean gap W(P, Q_η) - W(P, Q*) to the exact output;
* ``wpm-base-measure``: :func:`optimal_base_measure` by mirror descent (2000 iterations) and by
  the exact epigraph LP (n = m <= 200), with the worst-case cost φ of each and of the best
  uniform base measure.

Imports numpy, :mod:`runner` and :mod:`rows.inputs` at the top; ``ldpsample`` inside each
function, so that a row's processes load only what it uses (see :mod:`rows`).
"""

from __future__ import annotations

import numpy as np
from runner.measure import Measure, Row, best_time
from runner.registry import register

from rows.inputs import EPSILON


def _wpm_sizes(quick: bool) -> list[tuple[int, int]]:
    return [(100, 4), (400, 2)] if quick else [(100, 32), (400, 8)]  # (n = m, inputs)


def _solver_sizes(quick: bool) -> tuple[tuple[int, ...], int, int]:
    """(sizes n = m, batch, HiGHS batch)."""
    return ((50, 100), 4, 2) if quick else ((100, 200, 400), 32, 4)


#: Largest n = m that ``wpm-base-measure`` solves the exact LP at.
LP_MAX_SIZE = 200


def _wpm_inputs(n: int, inputs: int):
    from ldpsample.wasserstein import optimal_uniform_base_measure

    rng = np.random.default_rng(n)
    x = rng.random((n, 2))
    C = np.linalg.norm(x[:, None] - x[None], axis=2)
    P = rng.dirichlet(np.full(n, 0.5), size=inputs)
    mu = optimal_uniform_base_measure(C, epsilon=EPSILON).mu
    return P, C, mu


def _wpm_subject(quick: bool) -> object:
    from ldpsample.wasserstein import wasserstein_projection

    n, inputs = _wpm_sizes(quick)[-1]
    P, C, mu = _wpm_inputs(n, inputs)
    return wasserstein_projection(P, C, mu, epsilon=EPSILON, solver="pot")


@register("wpm-exact", _wpm_subject)
def row_wpm(quick: bool) -> Row:
    from ldpsample.wasserstein import wasserstein_projection

    row = Row("wpm-exact", "exact WPM (POT network simplex), per input, Dirichlet(0.5) inputs")
    for n, inputs in _wpm_sizes(quick):
        P, C, mu = _wpm_inputs(n, inputs)
        wasserstein_projection(P[:1], C, mu, epsilon=EPSILON, solver="pot")  # warm-up
        seconds = best_time(
            lambda P=P, C=C, mu=mu: wasserstein_projection(P, C, mu, epsilon=EPSILON, solver="pot"),
            2,
        )
        row.measures.append(
            Measure(f"n = m = {n}, per input", seconds / inputs, f"batch of {inputs}, best of 2")
        )
    return row


def _solvers_subject(quick: bool) -> object:
    from ldpsample.wasserstein import wasserstein_projection

    sizes, batch, _ = _solver_sizes(quick)
    P, C, mu = _wpm_inputs(sizes[-1], batch)
    return wasserstein_projection(P, C, mu, epsilon=EPSILON, solver="pot")


@register("wpm-solvers", _solvers_subject)
def row_wpm_solvers(quick: bool) -> Row:
    from ldpsample.wasserstein import transport_cost, wasserstein_projection

    sizes, batch, highs_batch = _solver_sizes(quick)
    row = Row("wpm-solvers", f"WPM per input, exact and entropic, batches of {batch}, best of 2")
    for n in sizes:
        P, C, mu = _wpm_inputs(n, batch)
        for solver in ("pot", "highs"):  # warm-up: imports and first calls, outside the timings
            wasserstein_projection(P[:1], C, mu, epsilon=EPSILON, solver=solver)
        exact = wasserstein_projection(P, C, mu, epsilon=EPSILON, solver="pot")
        pot = f"n = m = {n}, exact, POT network simplex"
        seconds = best_time(
            lambda P=P, C=C, mu=mu: wasserstein_projection(P, C, mu, epsilon=EPSILON, solver="pot"),
            2,
        )
        row.measures.append(Measure(pot, seconds / batch))
        few = P[:highs_batch]
        seconds = best_time(
            lambda few=few, C=C, mu=mu: wasserstein_projection(
                few, C, mu, epsilon=EPSILON, solver="highs"
            ),
            2,
        )
        row.measures.append(
            Measure(
                f"n = m = {n}, exact, HiGHS LP",
                seconds / highs_batch,
                f"the first {highs_batch} inputs",
                ratio_of=pot,
            )
        )
        for eta in (0.02, 0.005):
            options = dict(epsilon=EPSILON, method="sinkhorn", eta=eta, max_iter=20_000, tol=1e-6)
            result = wasserstein_projection(P, C, mu, **options)
            gap = transport_cost(P, result.Q, C) - exact.cost
            seconds = best_time(
                lambda P=P, C=C, mu=mu, options=options: wasserstein_projection(
                    P, C, mu, **options
                ),
                2,
            )
            row.measures.append(
                Measure(
                    f"n = m = {n}, entropic η = {eta} ({result.solver})",
                    seconds / batch,
                    f"mean iterations {result.iterations.mean():.0f}; mean gap {gap.mean():.2e}",
                    ratio_of=pot,
                )
            )
    return row


def _base_subject(quick: bool) -> object:
    from ldpsample.wasserstein import optimal_base_measure

    sizes, _, _ = _solver_sizes(quick)
    _, C, _ = _wpm_inputs(sizes[0], 1)
    return optimal_base_measure(C, epsilon=EPSILON, max_iter=2000)


@register("wpm-base-measure", _base_subject)
def row_wpm_base_measure(quick: bool) -> Row:
    from ldpsample.wasserstein import optimal_base_measure, optimal_uniform_base_measure

    sizes, _, _ = _solver_sizes(quick)
    row = Row("wpm-base-measure", "optimal_base_measure: worst-case cost φ and time, best of 2")
    for n in sizes:
        _, C, _ = _wpm_inputs(n, 1)
        uniform = optimal_uniform_base_measure(C, epsilon=EPSILON).value
        mirror = optimal_base_measure(C, epsilon=EPSILON, max_iter=2000)
        label = f"n = m = {n}, mirror descent, 2000 iterations"
        row.measures.append(
            Measure(
                label,
                best_time(lambda C=C: optimal_base_measure(C, epsilon=EPSILON, max_iter=2000), 2),
                f"φ mirror {mirror.value:.5f}; φ best uniform {uniform:.5f}",
            )
        )
        if n <= LP_MAX_SIZE:
            lp = optimal_base_measure(C, epsilon=EPSILON, method="lp")
            row.measures.append(
                Measure(
                    f"n = m = {n}, exact epigraph LP",
                    best_time(lambda C=C: optimal_base_measure(C, epsilon=EPSILON, method="lp"), 2),
                    f"φ LP {lp.value:.5f}",
                    ratio_of=label,
                )
            )
    return row
