"""The AISTATS cost row (closed form against the LP): the LP's optimum equals the closed form's
at every size and its unknowns grow as n^2; a wrong optimum or a wrong exponent fails. No
timings here: they are the benchmark row ``kernel-lp``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ldpsample.minimax as minimax
from ldpsample.reproduction import cost_checks
from ldpsample.reproduction.kernel_lp import minimax_kernel_lp

ARGS = {"sizes": [4, 8, 16], "epsilon": 1.0}


def test_lp_size_is_counted() -> None:
    """The full program over n×n kernels: (n + 1)^2 unknowns (K, m, t), 2 n^2 + n inequality
    and 2 n equality rows."""
    q = np.random.default_rng(1).dirichlet(np.ones(7))
    lp = minimax_kernel_lp(q, epsilon=1.0, reduce=False)
    assert lp.unknowns == 8 * 8
    assert lp.constraints == 2 * 49 + 7 + 2 * 7
    assert lp.iterations > 0


def test_size_exponent_is_exact_on_powers() -> None:
    assert cost_checks.size_exponent([10, 20, 40], [100, 400, 1600]) == pytest.approx(2.0)
    assert cost_checks.size_exponent([10, 20, 40], [1000, 8000, 64000]) == pytest.approx(3.0)


def test_closed_form_vs_lp_passes_on_the_library() -> None:
    outcome = cost_checks.closed_form_vs_lp(Path("."), {"seed": 3}, **ARGS)
    assert outcome.ok, outcome.reason
    assert "n=16: 289 unknowns" in outcome.run_value


def test_closed_form_vs_lp_fails_on_a_wrong_closed_form(monkeypatch) -> None:
    real = minimax.minimax_coefficients

    class Shifted:
        def __init__(self, kernel):
            self.diagonal = kernel.diagonal * 0.99

    monkeypatch.setattr(
        cost_checks, "minimax_coefficients", lambda q, *, epsilon: Shifted(real(q, epsilon=epsilon))
    )
    outcome = cost_checks.closed_form_vs_lp(Path("."), {"seed": 3}, **ARGS)
    assert not outcome.ok and "from the closed form's" in outcome.reason


def test_closed_form_vs_lp_fails_on_a_reduced_program(monkeypatch) -> None:
    """An LP over block-constant kernels (here: one unknown per item) is not the naive LP."""
    import dataclasses

    import ldpsample.reproduction.kernel_lp as kernel_lp

    real = kernel_lp.minimax_kernel_lp

    def reduced(q, *, epsilon, reduce):
        return dataclasses.replace(real(q, epsilon=epsilon, reduce=reduce), unknowns=len(q))

    monkeypatch.setattr(cost_checks, "minimax_kernel_lp", reduced)
    outcome = cost_checks.closed_form_vs_lp(Path("."), {"seed": 3}, **ARGS)
    assert not outcome.ok and "fewer than n^2 unknowns (n=4: 4" in outcome.reason
