"""The reproduction table's theory checks: the LP of Theorem 1 against the closed form
on random priors, and each lemma/theorem check on a results folder built by the library, where
it passes, and on deliberately wrong inputs, where it must fail."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpsample.audit import worst_case_divergence
from ldpsample.divergences import f_divergence, point_mass_divergence
from ldpsample.experiments.synthetic import synthetic_values
from ldpsample.experiments.theory import example_1, risk_curves
from ldpsample.minimax import apply_minimax, minimax_kernel, minimax_risk
from ldpsample.reproduction import theory_checks
from ldpsample.reproduction.kernel_lp import max_diagonal_lp, minimax_kernel_lp

THEORY = {"n": 10, "q_mins": [0.001, 0.02], "epsilons": [0.5, 2.0, 6.0]}
EXAMPLE = {"q": [0.01, 0.99], "p": [0.05, 0.95], "epsilon": 2.0}
GROUPS = {"a": [0.2, 0.3, 0.5], "b": [0.1, 0.1, 0.8]}
USERS = {"a": [[1.0, 0.0, 0.0], [0.2, 0.3, 0.5], [0.0, 0.5, 0.5]], "b": [[0.0, 1.0, 0.0]]}
ML_EPSILONS = [1.0, 3.0]
VARIANT = "prior~ml-100k_weight~count"
ITEMS = ["x", "y", "z"]


# --------------------------------------------------------------------------------------------
# the linear program of Theorem 1
# --------------------------------------------------------------------------------------------


@st.composite
def priors(draw, max_n: int = 6) -> np.ndarray:
    """Random priors with ties (masses from a few levels) and zeros now and then."""
    n = draw(st.integers(2, max_n))
    levels = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 5.0, 13.0]), min_size=n, max_size=n))
    q = np.asarray(levels)
    if q.sum() == 0:
        q[0] = 1.0
    return q / q.sum()


@given(q=priors(), eps=st.floats(0.0, 8.0))
def test_lp_optimum_is_theorem_1s_risk(q, eps):
    """The optimum over all ε-LDP kernels with qK = q is Γ_f(q, ε) for TV and KL, and the
    block-constant program (symmetry reduction) has the full program's optimum."""
    reduced = minimax_kernel_lp(q, epsilon=eps)
    full = minimax_kernel_lp(q, epsilon=eps, reduce=False)
    assert reduced.min_diagonal == pytest.approx(full.min_diagonal, abs=1e-9)
    assert reduced.gamma_tv == pytest.approx(minimax_risk(q, epsilon=eps), abs=1e-8)
    kl = minimax_risk(q, epsilon=eps, divergence="kl")
    assert reduced.gamma_kl == pytest.approx(kl, rel=1e-7) or math.isinf(kl) == math.isinf(
        reduced.gamma_kl
    )
    for solved in (reduced, full):
        K = solved.kernel
        assert solved.violation <= 1e-9
        assert np.all(K.max(axis=0) <= math.exp(eps) * K.min(axis=0) + 1e-9)  # ε-LDP
        np.testing.assert_allclose(q @ K, q, atol=1e-9)
        assert worst_case_divergence(np.clip(K, 0, 1), "tv") == pytest.approx(
            solved.gamma_tv, abs=1e-9
        )


def test_lp_reduces_a_theory_prior_to_two_classes():
    q = np.full(100, 0.999 / 99)
    q[0] = 0.001
    solved = minimax_kernel_lp(q, epsilon=1.0)
    assert solved.classes == 2 and solved.kernel.shape == (100, 100)
    assert solved.gamma_tv == pytest.approx(minimax_risk(q, epsilon=1.0), abs=1e-12)


# --------------------------------------------------------------------------------------------
# a results folder built by the library
# --------------------------------------------------------------------------------------------


def _write_movielens(root: Path, *, prior_for_users: dict[str, list[float]] | None = None) -> None:
    """A MovieLens variant folder: histograms, priors, per-user TV of the minimax sampler
    (computed with ``prior_for_users`` when given: a deliberately wrong prior) and max_tv."""
    folder = root / "movielens" / VARIANT
    (folder / "work").mkdir(parents=True, exist_ok=True)
    hist, per_user, prior_rows = [], [], []
    uid = 0
    for group, q in GROUPS.items():
        prior_rows += [
            {"attribute": "age_group", "subcategory": group, "item": i, "q": m}
            for i, m in zip(ITEMS, q, strict=True)
        ]
        kernel_prior = np.asarray((prior_for_users or GROUPS)[group])
        for p in USERS[group]:
            uid += 1
            hist += [
                {
                    "attribute": "age_group",
                    "subcategory": group,
                    "user": str(uid),
                    "item": i,
                    "count": 10.0 * c,
                }
                for i, c in zip(ITEMS, p, strict=True)
                if c > 0
            ]
            for eps in ML_EPSILONS:
                pa = np.asarray(p)
                tv = 0.5 * float(np.abs(pa - apply_minimax(pa, kernel_prior, epsilon=eps)).sum())
                per_user.append({"epsilon": eps, "group": group, "user_id": uid, "minimax": tv})
    pl.DataFrame(hist).write_parquet(folder / "work" / "histograms.parquet")
    pl.DataFrame(prior_rows).write_parquet(folder / "work" / "priors.parquet")
    pl.DataFrame(per_user).write_parquet(folder / "per_user.parquet")
    pl.DataFrame(
        [
            {"epsilon": e, "group": g, "method": "minimax", "max_tv": 0.0, "n_users": 1}
            for e in ML_EPSILONS
            for g in GROUPS
        ]
    ).write_csv(folder / "max_tv.csv")


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, dict]:
    root = tmp_path / "results"
    (root / "theory").mkdir(parents=True)
    (root / "synthetic").mkdir()
    risk_curves(
        epsilons=THEORY["epsilons"],
        q_mins=THEORY["q_mins"],
        n=THEORY["n"],
        divergences=["tv", "kl"],
    ).write_csv(root / "theory" / "risk.csv")
    example_1(**EXAMPLE).write_csv(root / "theory" / "example_1.csv")
    synthetic_values(n=6, epsilon=2.0, runs=3, grid_size=7, seed=11).write_parquet(
        root / "synthetic" / "values.parquet"
    )
    _write_movielens(root)
    ctx = {
        "theory_n": THEORY["n"],
        "example_1": EXAMPLE,
        "seed": 11,
        "movielens_priors": {VARIANT: "table"},
        "enabled": {"theory": True, "synthetic": True, "movielens_any": True},
    }
    return root, ctx


def test_every_theory_check_passes_on_the_librarys_outputs(run):
    root, ctx = run
    for check in (
        theory_checks.theorem1_lp,
        theory_checks.lemma1_worst_case,
        theory_checks.corollary2_randomized_response,
        theory_checks.proposition1_binary,
        theory_checks.tv_bound,
    ):
        outcome = check(root, ctx)
        assert outcome.ok, (check.__name__, outcome)
    assert "MovieLens 2 public priors" in theory_checks.theorem1_lp(root, ctx).run_value
    bound = theory_checks.tv_bound(root, ctx).run_value
    assert "Example 1" in bound and "synthetic" in bound and f"MovieLens {VARIANT}" in bound


def _rewrite_risk(root: Path, change) -> None:
    path = root / "theory" / "risk.csv"
    change(pl.read_csv(path)).write_csv(path)


def test_theorem1_fails_on_a_risk_for_twice_epsilon(run):
    root, ctx = run
    doubled = risk_curves(
        epsilons=[2 * e for e in THEORY["epsilons"]],
        q_mins=THEORY["q_mins"],
        n=THEORY["n"],
        divergences=["tv", "kl"],
    )["risk"]
    _rewrite_risk(root, lambda df: df.with_columns(risk=doubled))
    assert not theory_checks.theorem1_lp(root, ctx).ok


def test_theorem1_fails_on_a_prior_with_a_wrong_entry(run):
    """risk.csv's values computed for q_min = 0.002 but labelled 0.001: the LP, solved for
    the prior the table names, disagrees."""
    root, ctx = run
    wrong = risk_curves(
        epsilons=THEORY["epsilons"], q_mins=[0.002, 0.02], n=THEORY["n"], divergences=["tv", "kl"]
    )["risk"]
    _rewrite_risk(root, lambda df: df.with_columns(risk=wrong))
    outcome = theory_checks.theorem1_lp(root, ctx)
    assert not outcome.ok and "LP optimum" in outcome.run_value


def test_theorem1_fails_when_the_lp_is_replaced_by_a_weaker_optimum(run):
    """A 'solver' that returns the randomized-response kernel's risk (feasible, not optimal)."""
    root, ctx = run

    def rr_only(q, *, epsilon):
        solved = minimax_kernel_lp(q, epsilon=epsilon)
        n = len(q)
        diagonal = 1 / (1 + (n - 1) * math.exp(-epsilon))
        return type(solved)(min(diagonal, 1.0), solved.kernel, solved.classes, 0.0)

    assert not theory_checks.theorem1_lp(root, ctx, lp=rr_only).ok


def test_lemma1_fails_on_a_wrong_worst_case_formula(run):
    root, ctx = run

    def at_largest_diagonal(K, divergence):  # the best vertex instead of the worst
        return float(point_mass_divergence(np.diagonal(K).max(), divergence))

    def at_uniform(K, divergence):  # the uniform p instead of a vertex
        n = K.shape[0]
        return float(f_divergence(np.full(n, 1 / n), np.full(n, 1 / n) @ K, divergence))

    for wrong in (at_largest_diagonal, at_uniform):
        assert not theory_checks.lemma1_worst_case(root, ctx, worst_case=wrong).ok


def test_corollary2_fails_on_a_kernel_for_twice_epsilon(run):
    root, ctx = run

    def twice(q, *, epsilon):
        return minimax_kernel(q, epsilon=2 * epsilon)

    assert not theory_checks.corollary2_randomized_response(root, ctx, kernel=twice).ok
    assert not theory_checks.proposition1_binary(root, ctx, kernel=twice).ok


def test_corollary2_fails_on_a_wrong_uniform_risk(run):
    root, ctx = run
    _rewrite_risk(
        root,
        lambda df: df.with_columns(
            risk=pl.when(pl.col("prior") == "uniform")
            .then(pl.col("risk") * 1.001)
            .otherwise(pl.col("risk"))
        ),
    )
    assert not theory_checks.corollary2_randomized_response(root, ctx).ok


def test_proposition1_fails_on_a_wrong_example_value(run):
    root, ctx = run
    path = root / "theory" / "example_1.csv"
    pl.read_csv(path).with_columns(pl.col("tv_of_p") + 1e-6).write_csv(path)
    assert not theory_checks.proposition1_binary(root, ctx).ok


def test_tv_bound_fails_when_the_kernel_does_not_preserve_the_prior(run):
    """Users released through a kernel built for a prior with a wrong entry: the user whose p
    equals its group's q has TV(p, q) = 0 but TV(p, pK) > 0."""
    root, ctx = run
    wrong = {"a": [0.5, 0.3, 0.2], "b": GROUPS["b"]}
    _write_movielens(root, prior_for_users=wrong)
    outcome = theory_checks.tv_bound(root, ctx)
    assert not outcome.ok and "inf" in outcome.run_value


def test_example1_rows_say_what_is_compared(run):
    root, ctx = run
    tv = theory_checks.example1_tv(root, ctx)
    # The paper's digits are truncated: 0.0376 -> 0.03, 0.1073 -> 0.1.
    assert tv.ok, tv
    assert tv.run_value == "TV(p, pK) = 0.0376 (public q) / 0.1073 (uniform)"
    gamma = theory_checks.example1_gamma(root, ctx)
    assert not gamma.ok and gamma.reason.startswith("erratum")
    # A value that only rounds to the printed digits (0.034 would round to 0.03, 0.041 truncates
    # to 0.04) is not reproduced; the first is.
    path = root / "theory" / "example_1.csv"
    pl.read_csv(path).with_columns(tv_of_p=pl.Series([0.034, 0.1073])).write_csv(path)
    assert theory_checks.example1_tv(root, ctx).ok
    pl.read_csv(path).with_columns(tv_of_p=pl.Series([0.041, 0.1073])).write_csv(path)
    wrong = theory_checks.example1_tv(root, ctx)
    assert not wrong.ok and "does not truncate to the printed 0.03" in wrong.reason


# --------------------------------------------------------------------------------------------
# the same statements on random instances
# --------------------------------------------------------------------------------------------


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 8),
    divergence=st.sampled_from(["tv", "kl", "chi2", "hellinger"]),
)
def test_lemma1_on_random_kernels(seed, n, divergence):
    """Any row-stochastic K (not only the minimax one): no p beats the vertex formula, and the
    formula is D_f(δ_i || K_i) at the worst row."""
    rng = np.random.default_rng(seed)
    K = rng.dirichlet(np.ones(n), size=n) * 0.9 + 0.1 / n
    claimed = worst_case_divergence(K, divergence)
    assert claimed == pytest.approx(float(np.max(f_divergence(np.eye(n), K, divergence))))
    P = rng.dirichlet(np.full(n, 0.3), size=200)
    assert float(np.max(f_divergence(P, P @ K, divergence))) <= claimed + 1e-12


@given(q=priors(max_n=8), eps=st.floats(0.0, 10.0), seed=st.integers(0, 2**32 - 1))
def test_tv_bound_on_random_instances(q, eps, seed):
    P = np.random.default_rng(seed).dirichlet(np.ones(q.size), size=50)
    tv = f_divergence(P, apply_minimax(P, q, epsilon=eps), "tv")
    assert np.all(tv <= 2 * f_divergence(P, q, "tv") + 1e-12)


@given(alpha=st.floats(0.0, 0.5), eps=st.floats(0.0, 12.0))
def test_proposition1_matrix_on_random_instances(alpha, eps):
    q = np.array([alpha, 1 - alpha])
    np.testing.assert_allclose(
        minimax_kernel(q, epsilon=eps), theory_checks._proposition1(alpha, eps), atol=1e-12
    )


@given(n=st.integers(1, 40), eps=st.floats(0.0, 12.0))
def test_corollary2_on_random_instances(n, eps):
    np.testing.assert_allclose(
        minimax_kernel(np.full(n, 1 / n), epsilon=eps),
        theory_checks._randomized_response(n, eps),
        atol=1e-12,
    )


# --------------------------------------------------------------------------------------------
# Lemma 3 and Theorem 2 / Propositions 3-4
# --------------------------------------------------------------------------------------------


def test_lemma3_and_theorem2_pass_on_the_librarys_kernels(run):
    root, ctx = run
    lemma3 = theory_checks.lemma3_diagonal(root, ctx)
    assert lemma3.ok, lemma3
    theorem2 = theory_checks.theorem2_kernel(root, ctx)
    assert theorem2.ok, theorem2


def test_lemma3_fails_for_a_kernel_above_the_bound(run):
    """A kernel for 2ε has a larger diagonal than the bound at ε allows."""
    root, ctx = run
    outcome = theory_checks.lemma3_diagonal(
        root, ctx, kernel=lambda q, *, epsilon: minimax_kernel(q, epsilon=2 * epsilon)
    )
    assert not outcome.ok
    assert "Lemma 3" in outcome.reason


def test_theorem2_fails_for_a_kernel_that_breaks_the_order_or_the_prior(run):
    root, ctx = run

    def permuted(q, *, epsilon):
        K = minimax_kernel(q, epsilon=epsilon)
        return K[::-1][:, ::-1]  # the same numbers, items reversed: q moves

    assert not theory_checks.theorem2_kernel(root, ctx, kernel=permuted).ok
    doubled = theory_checks.theorem2_kernel(
        root, ctx, kernel=lambda q, *, epsilon: minimax_kernel(q, epsilon=2 * epsilon)
    )
    assert not doubled.ok and "ε-LDP" in doubled.reason


@given(
    q=st.lists(st.floats(0.02, 1.0), min_size=2, max_size=6),
    eps=st.floats(0.1, 6.0),
)
@settings(max_examples=25, deadline=None)
def test_lemma3_lp_maximum_is_the_bound(q, eps):
    """On random priors the LP's largest K_ii is at most Lemma 3's bound for every item, and
    equal to it at the smallest mass."""
    qa = np.asarray(q) / np.sum(q)
    bound = math.exp(eps) * qa / (math.exp(eps) * qa + 1 - qa)
    for i in range(qa.size):
        assert max_diagonal_lp(qa, epsilon=eps, item=i) <= bound[i] + 1e-9
    i = int(np.argmin(qa))
    assert max_diagonal_lp(qa, epsilon=eps, item=i) == pytest.approx(bound[i], abs=1e-8)
