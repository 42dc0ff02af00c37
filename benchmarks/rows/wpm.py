"""The Wasserstein projection mechanism's row (:mod:`ldpsample.wasserstein`):

* ``wpm-exact``: exact WPM (POT's network simplex) per input, n = m = 100 and 400.

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
