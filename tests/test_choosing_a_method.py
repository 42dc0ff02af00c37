"""The statements of docs/choosing-a-method.md and of summary.csv's ``keeps_prior`` and ``reason``,
checked on the kernels themselves: the minimax sampler and both relative mollifiers keep the
public prior (qK = q), randomized response does not unless q is uniform; the minimax sampler's
worst case over every p is Theorem 1's value, and randomized response's is never above it (the
uniform prior has the largest smallest entry). Worst cases over every p are taken at the point
masses, where TV(p, pK), convex in p, has its maximum on the simplex."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpsample import (
    minimax_kernel,
    randomized_response,
    relative_mollifier_kl,
    relative_mollifier_tv,
    tv_distance,
)
from ldpsample.events.outputs.tables import KEEPS_PRIOR, _ranked, _reason
from ldpsample.minimax import minimax_risk

priors = st.lists(st.floats(0.01, 1.0), min_size=2, max_size=7).map(
    lambda w: np.asarray(w) / np.sum(w)
)
epsilons = st.floats(0.1, 8.0)


def keeps(kernel_output: np.ndarray, q: np.ndarray) -> bool:
    return bool(np.abs(kernel_output - q).max() <= 1e-12)


@settings(max_examples=60, deadline=None)
@given(q=priors, epsilon=epsilons)
def test_keeps_prior_is_what_each_method_does_to_q(q, epsilon):
    uniform = bool(np.ptp(q) <= 1e-12)
    n = q.size
    done = {
        "minimax": q @ minimax_kernel(q, epsilon=epsilon),
        "mollifier_tv": relative_mollifier_tv(q, q, epsilon=epsilon),
        "mollifier_kl": relative_mollifier_kl(q, q, epsilon=epsilon),
        "randomized_response": q @ randomized_response(n, epsilon=epsilon),
    }
    for method, output in done.items():
        if method == "randomized_response" and uniform:
            assert keeps(output, q)  # where it is the minimax sampler
        else:
            assert keeps(output, q) == KEEPS_PRIOR[method], (method, output, q)


@settings(max_examples=60, deadline=None)
@given(q=priors, epsilon=epsilons)
def test_randomized_response_never_has_the_larger_worst_case_over_every_p(q, epsilon):
    n = q.size
    points = np.eye(n)  # the worst p of a kernel for TV is a point mass
    minimax = tv_distance(points, points @ minimax_kernel(q, epsilon=epsilon)).max()
    rr = tv_distance(points, points @ randomized_response(n, epsilon=epsilon)).max()
    assert minimax == pytest.approx(minimax_risk(q, epsilon=epsilon, divergence="tv"), abs=1e-12)
    assert rr <= minimax + 1e-12
    uniform = np.full(n, 1 / n)
    assert rr == pytest.approx(minimax_risk(uniform, epsilon=epsilon, divergence="tv"), abs=1e-12)


def test_a_prior_with_a_rare_item_weakens_the_minimax_worst_case_only():
    """The issue's case in miniature: randomized response has the lower worst case, the minimax
    sampler the lower divergence for a user whose data is the prior."""
    q = np.array([0.01, 0.33, 0.33, 0.33])
    eps = 4.0
    K, R = minimax_kernel(q, epsilon=eps), randomized_response(4, epsilon=eps)
    points = np.eye(4)
    assert tv_distance(points, points @ R).max() < tv_distance(points, points @ K).max()
    assert tv_distance(q, q @ K) <= 1e-12 < tv_distance(q, q @ R)


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.floats(0, 1), min_size=1, max_size=5, unique=True))
def test_the_best_has_a_positive_margin_and_the_others_lose_by_theirs(values):
    methods = ["minimax", "mollifier_tv", "mollifier_kl", "randomized_response", "x"][: len(values)]
    ranked = _ranked(pl.DataFrame({"method": methods, "value": values}), "worst_case")
    array = np.asarray(values)
    for row, value in zip(ranked.iter_rows(named=True), array, strict=True):
        assert row["best_worst_case"] == (value - array.min() <= 1e-12)  # ties are all best
        if array.size == 1:
            assert row["worst_case_margin"] is None
            continue
        others = np.delete(array, methods.index(row["method"])).min()
        assert row["worst_case_margin"] == others - value
        assert (row["worst_case_margin"] > 0) == (value < others)


def test_the_reason_says_the_verdict_and_the_prior():
    row = {
        "method": "randomized_response",
        "best_worst_case": True,
        "worst_case_margin": 0.32,
        "best_median": False,
        "median_margin": -0.05,
    }
    assert _reason(row) == (
        "lowest worst case (by 0.32); median 0.05 above the lowest; does not keep the public "
        "prior (qK ≠ q unless q is uniform): its worst case over every possible p is never "
        "above the minimax sampler's, but a user whose data is close to q is not kept close to it"
    )
    row = {**row, "method": "minimax", "best_worst_case": False, "worst_case_margin": -0.32}
    assert _reason(row).startswith("worst case 0.32 above the lowest; median 0.05 above")
    assert "keeps the public prior (qK = q) and is minimax-optimal" in _reason(row)
