"""Estimation from a publication (ldpsample.estimate): the estimators against independent
references (multi-freq-ldpy's GRR aggregators at uniform q, a cvxpy maximum-likelihood solve, a
cvxpy simplex projection, dense numpy), Monte Carlo over simulated publications (unbiasedness,
interval coverage, the χ² test's level and power), the reader's checks of a publish/ folder,
the table of a real publication made by the library client, the evaluation's truth, the
accuracy plan and the ``ldpsample estimate`` command in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import cvxpy as cp
import numpy as np
import polars as pl
import pytest
from _publication import ITEMS, make_publication
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from ldpsample import minimax_kernel
from ldpsample.estimate import (
    PublicationError,
    accuracy_plan,
    analytic_standard_errors,
    chi_square_test,
    em_estimate,
    estimate_publication,
    estimator_errors,
    inversion,
    log_likelihood,
    norm_sub,
    population_truth,
    read_publication,
    structured_kernel,
    summarise_errors,
)
from ldpsample.publish.spec import file_sha256

Q10 = np.array([0.22, 0.18, 0.14, 0.11, 0.09, 0.08, 0.07, 0.05, 0.04, 0.02])


def grr_reports(k, epsilon, users, seed):
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet(np.ones(k) * 2)
    K = minimax_kernel(np.full(k, 1 / k), epsilon=epsilon)
    return rng.choice(k, size=users, p=truth @ K)


# ---- independent references -----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("k", "epsilon", "seed"), [(5, 2.0, 0), (12, 1.0, 1), (30, 4.0, 2)])
def test_uniform_prior_matches_multi_freq_ldpy_grr_aggregators(k, epsilon, seed):
    """For uniform q the minimax kernel is randomized response (GRR): inversion and EM equal
    GRR_Aggregator_MI (clip and renormalise) and GRR_Aggregator_IBU on the same reports."""
    from multi_freq_ldpy.pure_frequency_oracles import GRR as grr  # the test extra's reference

    reports = grr_reports(k, epsilon, 4000, seed)
    counts = np.bincount(reports, minlength=k)
    kernel = structured_kernel(np.full(k, 1 / k), epsilon=epsilon)
    p_hat = inversion(kernel, counts=counts)
    p_grr = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    q_grr = (1 - p_grr) / (k - 1)
    assert np.abs(p_hat - (counts / counts.sum() - q_grr) / (p_grr - q_grr)).max() < 1e-12
    clipped = np.clip(p_hat, 0, None)
    mi = grr.GRR_Aggregator_MI(list(reports), k, epsilon)
    assert np.abs(clipped / clipped.sum() - mi).max() < 1e-10
    ibu = grr.GRR_Aggregator_IBU(list(reports), k, epsilon, nb_iter=200_000, tol=1e-15)
    assert np.abs(em_estimate(kernel, counts=counts, tol=1e-14) - ibu).max() < 1e-10
    # plain EM is their IBU step by step (both start at the uniform q)
    steps = grr.GRR_Aggregator_IBU(list(reports), k, epsilon, nb_iter=25, tol=1e-300)
    plain = em_estimate(kernel, counts=counts, tol=0, max_iter=25, accelerate=False)
    assert np.abs(plain - steps).max() < 1e-12


@pytest.mark.slow
@pytest.mark.parametrize(("epsilon", "seed"), [(0.5, 0), (1.0, 1), (3.0, 2)])
def test_em_reaches_the_cvxpy_maximum_likelihood_for_a_non_uniform_prior(epsilon, seed):
    rng = np.random.default_rng(seed)
    q = Q10
    K = minimax_kernel(q, epsilon=epsilon)
    truth = np.array([0.3, 0.3, 0.2, 0.2, 0, 0, 0, 0, 0, 0])  # the MLE sits on the boundary
    counts = rng.multinomial(1500, truth @ K).astype(float)
    h = counts / counts.sum()
    p = cp.Variable(q.shape[0], nonneg=True)
    problem = cp.Problem(cp.Maximize(h @ cp.log(p @ K)), [cp.sum(p) == 1])
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert problem.status == cp.OPTIMAL
    assert abs(p.value.sum() - 1) < 1e-8 and p.value.min() > -1e-8
    kernel = structured_kernel(q, epsilon=epsilon)
    em = em_estimate(kernel, counts=counts, tol=1e-12)
    reference = float(h @ np.log(np.clip(p.value, 0, None) @ K))
    ours = float(log_likelihood(kernel, counts=h, p=em))
    assert abs(ours - reference) < 1e-8
    assert ours >= reference - 1e-12  # EM is certified within tol of the maximum
    # SQUAREM's estimate is a fixed point of the plain EM map p <- p ⊙ K (ĥ / p K), certified
    # (max_i (K (ĥ / p K))_i <= 1 + tol on the support; plain EM from q crawls at small ε, and
    # its steps are test_uniform_prior_matches_multi_freq_ldpy_grr_aggregators' IBU comparison)
    ratio = kernel.apply_columns(h / kernel.apply(em))
    assert ratio.max() <= 1 + 1e-12 and np.abs(em * ratio - em).max() < 1e-12
    plain = em_estimate(kernel, counts=counts, tol=1e-12, accelerate=False, max_iter=1, start=em)
    assert abs(float(log_likelihood(kernel, counts=h, p=plain)) - ours) < 1e-12


def test_norm_sub_is_the_euclidean_projection_onto_the_simplex():
    rng = np.random.default_rng(4)
    for _ in range(5):
        x = rng.normal(0.1, 0.3, size=9)
        y = cp.Variable(9, nonneg=True)
        cp.Problem(cp.Minimize(cp.sum_squares(y - x)), [cp.sum(y) == 1]).solve(solver=cp.CLARABEL)
        assert np.abs(norm_sub(x) - y.value).max() < 1e-7


@given(st.lists(st.floats(-2, 2), min_size=1, max_size=30))
def test_norm_sub_lands_on_the_simplex_and_keeps_points_of_it(values):
    x = np.array(values)
    out = norm_sub(x)
    assert out.min() >= 0 and out.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.allclose(norm_sub(out), out, atol=1e-12)
    # the shift is the same for every kept item (sub a constant, clip at 0)
    kept = out > 0
    assert np.ptp(x[kept] - out[kept]) < 1e-9


def dense_inversion(q, *, epsilon, counts):
    """Dense numpy's inversion ``K^{-T} h`` of released ``counts`` (a row or rows) and its
    standard errors ``sqrt(diag(K^{-T} (diag(h) - h h^T) K^{-1}) / N)``."""
    K = minimax_kernel(q, epsilon=epsilon)
    inverse = np.linalg.inv(K)
    counts = np.asarray(counts, dtype=float)
    h = counts / counts.sum(axis=-1, keepdims=True)
    estimate = np.linalg.solve(K.T, h.T).T
    variance = np.array(
        [
            np.diag(inverse.T @ (np.diag(row) - np.outer(row, row)) @ inverse)
            for row in np.atleast_2d(h)
        ]
    ).reshape(h.shape)
    return estimate, np.sqrt(variance / counts.sum(axis=-1, keepdims=True))


def test_inversion_and_standard_errors_match_dense_numpy():
    rng = np.random.default_rng(5)
    counts = rng.multinomial(800, Q10 @ minimax_kernel(Q10, epsilon=1.5)).astype(float)
    kernel = structured_kernel(Q10, epsilon=1.5)
    p_hat = inversion(kernel, counts=counts)
    expected, expected_se = dense_inversion(Q10, epsilon=1.5, counts=counts)
    assert np.allclose(p_hat, expected, atol=1e-12)
    se = analytic_standard_errors(kernel, counts=counts, estimate=p_hat)
    assert np.allclose(se, expected_se, rtol=1e-9)


# ---- Monte Carlo over simulated publications ---------------------------------------------------


def simulated_counts(kernel, groups, publications, seed):
    """Released counts of ``publications`` publications: each group ``(users, p)`` of fixed users
    draws one item each from ``p K`` (independent draws: a multinomial per group)."""
    rng = np.random.default_rng(seed)
    total = np.zeros((publications, kernel.n))
    for users, p in groups:
        total += rng.multinomial(users, kernel.apply(p), size=publications)
    return total


def test_monte_carlo_inversion_is_unbiased_and_its_intervals_cover_95_percent():
    kernel = structured_kernel(Q10, epsilon=1.0)
    a = np.array([0.5, 0.3, 0.1, 0.1, 0, 0, 0, 0, 0, 0])
    b = np.array([0, 0, 0, 0.1, 0.2, 0.2, 0.2, 0.1, 0.1, 0.1])
    groups = [(900, a), (600, b), (1500, Q10)]  # half the users without data release from q
    p_bar = sum(u * p for u, p in groups) / sum(u for u, _ in groups)
    counts = simulated_counts(kernel, groups, 4000, seed=6)
    p_hat = inversion(kernel, counts=counts)
    se = analytic_standard_errors(kernel, counts=counts, estimate=p_hat)
    error = p_hat - p_bar
    mean_se = error.std(axis=0, ddof=1) / np.sqrt(error.shape[0])
    assert (np.abs(error.mean(axis=0)) < 3 * mean_se).all()
    coverage = (np.abs(error) <= stats.norm.ppf(0.975) * se).mean()
    assert 0.94 <= coverage <= 0.96, coverage
    # a biased estimator fails the same check: reporting q is off by p̄ - q
    biased = np.broadcast_to(Q10, error.shape) - p_bar
    assert (np.abs(biased.mean(axis=0)) >= 3 * mean_se).any()


def test_monte_carlo_chi_square_test_holds_its_level_at_the_prior_and_rejects_away_from_it():
    kernel = structured_kernel(Q10, epsilon=1.0)
    a = np.array([0.3, 0.1, 0.2, 0.05, 0.1, 0.05, 0.1, 0.05, 0.03, 0.02])
    b = 2 * Q10 - a  # half the users at a, half at b: p̄ = q
    assert b.min() >= 0
    at_prior = simulated_counts(kernel, [(500, a), (500, b), (1000, Q10)], 4000, seed=7)
    expected = at_prior.sum(axis=1, keepdims=True) * Q10
    p_values = stats.chi2.sf(((at_prior - expected) ** 2 / expected).sum(axis=1), Q10.size - 1)
    rate = (p_values < 0.05).mean()
    assert 0.035 <= rate <= 0.055, rate
    assert chi_square_test(counts=at_prior[0], q=Q10).p_value == pytest.approx(p_values[0])
    rare = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0.5, 0.5])  # the users prefer the rarest items
    strong = structured_kernel(Q10, epsilon=4.0)
    away = simulated_counts(strong, [(300, rare), (1700, Q10)], 500, seed=8)
    expected = away.sum(axis=1, keepdims=True) * Q10
    power = (stats.chi2.sf(((away - expected) ** 2 / expected).sum(axis=1), 9) < 0.05).mean()
    assert power > 0.9


# ---- a publication made by the library client -------------------------------------------------


@pytest.fixture(scope="module")
def publication(tmp_path_factory):
    return make_publication(tmp_path_factory.mktemp("estimate"), users=600, samples=2)


def test_read_publication_returns_every_released_row_with_its_epsilon(publication):
    folder, _, roster = publication
    read = read_publication(folder)
    assert read.draws.height == 2 * 2 * 2 * len(roster)  # ε × countries × samples × users
    for eps in (1, 4):
        on_disk = pl.read_parquet(folder / f"released/eps~{eps}.parquet")
        mine = read.draws.filter(pl.col("epsilon") == eps).drop("epsilon")
        assert mine.sort(mine.columns).equals(on_disk.select(mine.columns).sort(mine.columns))


def test_table_of_a_publication_cross_checks_dense_numpy_and_its_bootstrap(publication):
    folder, _, roster = publication
    read = read_publication(folder)
    estimates = estimate_publication(read, bootstrap=300, seed=1)
    table = estimates.table
    assert table.columns == [
        "attribute", "subcategory", "epsilon", "item", "quantity", "method", "interval",
        "estimate", "se", "lower", "upper",
    ]  # fmt: skip
    assert set(table["quantity"]) == {"item"}
    for (country, eps), draws in read.draws.group_by("subcategory", "epsilon"):
        items, q = read.spec.prior_of("country", country)
        K = minimax_kernel(q, epsilon=eps)
        counts = np.array([(draws["item"] == item).sum() for item in items])
        expected = np.linalg.solve(K.T, counts / counts.sum())
        rows = table.filter(
            (pl.col("subcategory") == country)
            & (pl.col("epsilon") == eps)
            & (pl.col("method") == "inversion")
        )
        analytic = rows.filter(pl.col("interval") == "analytic")
        got = dict(zip(analytic["item"], analytic["estimate"], strict=True))
        assert np.allclose([got[i] for i in items], expected, atol=1e-12)
        boot = rows.filter(pl.col("interval") == "bootstrap")
        ratio = boot["se"].to_numpy() / analytic["se"].to_numpy()
        # two samples per user are dependent: the user bootstrap sees it, the analytic se
        # (independent draws) is a little narrower
        assert 0.8 < np.median(ratio) < 1.6
        em = table.filter(
            (pl.col("subcategory") == country)
            & (pl.col("epsilon") == eps)
            & (pl.col("method") == "em")
            & (pl.col("interval") == "bootstrap")
        )
        assert em["estimate"].sum() == pytest.approx(1.0) and em["estimate"].min() >= 0
        assert (em["lower"] <= em["estimate"] + 1e-12).all()
    tests = estimates.tests
    assert tests.height == 4 and (tests["users"] == len(roster)).all()
    assert (tests["draws"] == 2 * len(roster)).all()


def test_evaluation_truth_is_the_mean_of_the_releasing_users_distributions(publication):
    folder, histograms, _ = publication
    read = read_publication(folder)
    truth = population_truth(read, histograms)
    for country in ("de", "fr"):
        items, q = read.spec.prior_of("country", country)
        users = set(read.draws.filter(pl.col("subcategory") == country)["user"])
        total = np.zeros(len(items))
        for user in sorted(users):
            rows = histograms.filter((pl.col("user") == user) & (pl.col("subcategory") == country))
            if rows.height == 0:
                total += q
                continue
            counts = np.array([rows.filter(pl.col("item") == i)["count"].sum() for i in items])
            total += counts / counts.sum()
        mine = truth.filter((pl.col("subcategory") == country) & (pl.col("epsilon") == 1.0))
        got = dict(zip(mine["item"], mine["truth"], strict=True))
        assert np.allclose([got[i] for i in items], total / len(users), atol=1e-12)
    errors = estimator_errors(read, estimate_publication(read), histograms)
    assert set(errors["method"]) == {"inversion", "norm_sub", "em", "prior"}
    high = errors.filter(pl.col("epsilon") == 4.0)
    assert (high.filter(pl.col("method") == "em")["tv_error"] < 0.1).all()
    prior = errors.filter(pl.col("method") == "prior")["tv_error"]
    assert (prior > 0.05).all()  # the users are far from the prior: reporting q misses
    summary = summarise_errors(errors)
    assert summary.height == 2 * 4 and (summary["subcategories"] == 2).all()
    em4 = summary.filter((pl.col("epsilon") == 4.0) & (pl.col("method") == "em"))
    expected = high.filter(pl.col("method") == "em")["tv_error"]
    assert em4["mean_tv_error"][0] == pytest.approx(expected.mean())
    assert em4["max_tv_error"][0] == pytest.approx(expected.max())


def rewrite_released(folder, name, frame):
    """Write ``released/<name>`` and record its new sha256 in the index, as a consistent (if
    wrong) publication would."""
    path = folder / "released" / name
    frame.write_parquet(path)
    index_path = folder / "release.json"
    index = json.loads(index_path.read_text())
    index["files"][f"released/{name}"]["sha256"] = file_sha256(path)
    index_path.write_text(json.dumps(index))


def epsilon_column_copy(folder, tmp_path, value=None):
    copy = tmp_path / "copy"
    import shutil

    shutil.copytree(folder, copy)
    frame = pl.read_parquet(copy / "released/eps~4.parquet")
    rewrite_released(
        copy,
        "eps~4.parquet",
        frame.with_columns(pl.lit(4.0 if value is None else value).alias("epsilon")),
    )
    return copy


def test_reader_takes_epsilon_from_the_column_and_checks_it(publication, tmp_path):
    folder, _, _ = publication
    copy = epsilon_column_copy(folder, tmp_path)
    assert read_publication(copy).draws.equals(read_publication(folder).draws)
    wrong = epsilon_column_copy(folder, tmp_path / "wrong", value=2.0)
    with pytest.raises(PublicationError, match=r"eps~4.parquet: its ε sources disagree"):
        read_publication(wrong)


def test_reader_refuses_a_damaged_publication_naming_the_file(publication, tmp_path):
    import shutil

    folder, _, _ = publication
    cases = {}
    for case in ("sha", "spec", "spec_file", "index", "rows", "item", "missing"):
        copy = tmp_path / case
        shutil.copytree(folder, copy)
        cases[case] = copy
    released = pl.read_parquet(folder / "released/eps~1.parquet")
    # a released file changed after the index was written
    released.head(5).write_parquet(cases["sha"] / "released/eps~1.parquet")
    with pytest.raises(PublicationError, match=r"eps~1.parquet: sha256 differs"):
        read_publication(cases["sha"])
    # an index of another spec
    index_path = cases["spec"] / "release.json"
    data = json.loads(index_path.read_text())
    data["spec"]["sha256"] = "f" * 64
    index_path.write_text(json.dumps(data))
    with pytest.raises(PublicationError, match=r"release.json: spec sha256"):
        read_publication(cases["spec"])
    # a spec file that is not the one published
    domain = cases["spec_file"] / "spec/domain.csv"
    domain.write_text(domain.read_text() + "\n")
    with pytest.raises(PublicationError, match=r"domain.csv"):
        read_publication(cases["spec_file"])
    # no index at all: nothing is read unchecked
    (cases["index"] / "release.json").unlink()
    with pytest.raises(PublicationError, match=r"release.json: not found"):
        read_publication(cases["index"])
    rewrite_released(cases["rows"], "eps~1.parquet", released.head(5))
    with pytest.raises(PublicationError, match=r"eps~1.parquet: 5 rows, release.json says"):
        read_publication(cases["rows"])
    rewrite_released(
        cases["item"], "eps~1.parquet", released.with_columns(pl.lit("zz").alias("item"))
    )
    with pytest.raises(PublicationError, match=r"not items of q > 0"):
        read_publication(cases["item"])
    (cases["missing"] / "released/eps~4.parquet").unlink()
    with pytest.raises(PublicationError, match=r"eps~4.parquet: listed in release.json but"):
        read_publication(cases["missing"])
    with pytest.raises(PublicationError, match=r"nowhere/spec: not found"):
        read_publication(tmp_path / "nowhere")


# ---- the accuracy plan ------------------------------------------------------------------------


def test_plan_predicts_the_standard_error_at_the_prior(tmp_path):
    folder, _, _ = make_publication(tmp_path, users=50)
    spec = read_publication(folder).spec
    plan = accuracy_plan(spec, users=2000)
    rows = plan.items.filter((pl.col("subcategory") == "de") & (pl.col("epsilon") == 1.0))
    items, q = spec.prior_of("country", "de")
    kernel = structured_kernel(q, epsilon=1.0)
    counts = simulated_counts(kernel, [(2000, q)], 4000, seed=9)
    observed = inversion(kernel, counts=counts).std(axis=0, ddof=1)
    predicted = dict(zip(rows["item"], rows["predicted_se"], strict=True))
    assert np.allclose([predicted[i] for i in items], observed, rtol=0.06)
    cells = plan.cells
    assert cells.height == 4 and (cells["draws"] == 2000).all()
    K = minimax_kernel(q, epsilon=1.0)
    de = cells.filter((pl.col("subcategory") == "de") & (pl.col("epsilon") == 1.0))
    assert de["condition_number"][0] == pytest.approx(np.linalg.cond(K, 1), rel=1e-9)
    assert plan.warnings == () and cells["inversion_can_beat_prior"].all()
    assert json.loads(json.dumps(plan.to_json()))["cells"][0]["items"] == len(ITEMS)


def test_plan_warns_where_inversion_cannot_beat_the_prior():
    """100 Zipf items at ε = 1 with 2,999 users (the ML-1M roster): predicted TV error above 1."""
    from ldpsample.publish import build_spec

    items = [f"m{k:03d}" for k in range(100)]
    spec = build_spec(name="z", key="events.z", attributes=[], prior="uniform", items=items,
                      epsilons=[1.0, 8.0])  # fmt: skip
    q = 1.0 / np.arange(1, 101)
    spec = type(spec)(**{**spec.__dict__, "domain": spec.domain.with_columns(
        pl.Series("q", q / q.sum()))})  # fmt: skip
    plan = accuracy_plan(spec, users=2999)
    low = plan.cells.filter(pl.col("epsilon") == 1.0)
    assert low["predicted_tv_error"][0] > 1 and not low["inversion_can_beat_prior"][0]
    assert plan.cells.filter(pl.col("epsilon") == 8.0)["inversion_can_beat_prior"][0]
    (warning,) = plan.warnings
    assert warning.startswith("all='all', epsilon=1.0: the inversion's predicted TV error")
    with pytest.raises(ValueError, match=r"users\[\('all', 'all'\)\] must be an integer"):
        accuracy_plan(spec, users=0)


# ---- the command ------------------------------------------------------------------------------


@pytest.mark.slow
def test_estimate_command_writes_the_table_tests_and_figure(publication, tmp_path):
    folder, _, roster = publication
    out = tmp_path / "estimates.csv"
    result = subprocess.run(
        [sys.executable, "-m", "ldpsample", "estimate", str(folder), "--out", str(out),
         "--tests", str(tmp_path / "tests.csv"), "--figure", str(tmp_path / "fig.png"),
         "--bootstrap", "20", "--seed", "3"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    table = pl.read_csv(out)
    library = estimate_publication(read_publication(folder), bootstrap=20, seed=3).table
    assert table.height == library.height
    assert np.allclose(table["estimate"].to_numpy(), library["estimate"].to_numpy())
    assert (tmp_path / "fig.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pl.read_csv(tmp_path / "tests.csv").height == 4
    assert f"{2 * len(roster)} draws from {len(roster)} users" in result.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "ldpsample", "estimate", str(tmp_path / "none"), "--out",
         str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.startswith(f"ldpsample estimate: error: {tmp_path / 'none' / 'spec'}")
    assert len(bad.stderr.strip().splitlines()) == 1
    nowhere = subprocess.run(
        [sys.executable, "-m", "ldpsample", "estimate", str(folder), "--out",
         str(tmp_path / "no" / "t.csv")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert nowhere.returncode == 2
    assert nowhere.stderr.startswith(f"ldpsample estimate: error: --out {tmp_path / 'no'}")


@pytest.mark.parametrize("epsilon", [40.0, 700.0])
def test_at_the_largest_epsilons_the_estimators_equal_dense_numpy(epsilon):
    """The inversion and its analytic standard errors at ε = 40 and the schema's 700 equal dense
    numpy's K^{-T} h and sqrt((h (K^{-1})^2 - p̂^2) / N) (K is then well conditioned); at 700 the
    kernel is the identity to double precision, so they are the frequencies h and the multinomial
    sqrt(h (1 - h) / N). The banded solve's differences cancelled there (inf and NaN). A
    publication cannot reach such ε (its sampling floor, docs/publishing.md), but the library's
    estimators take any counts."""
    q = np.geomspace(1e-9, 1.0, 12)
    q /= q.sum()  # masses down to 1e-9 of the largest
    kernel = structured_kernel(q, epsilon=epsilon)
    counts = np.random.default_rng(9).multinomial(5000, np.full(12, 1 / 12), size=3)
    h = counts / counts.sum(axis=1, keepdims=True)
    estimate = inversion(kernel, counts=counts)
    se = analytic_standard_errors(kernel, counts=counts, estimate=estimate)
    expected, expected_se = dense_inversion(q, epsilon=epsilon, counts=counts)
    assert np.allclose(estimate, expected, rtol=0, atol=1e-12)
    assert np.allclose(se, expected_se, rtol=1e-9, atol=0)
    if epsilon == 700.0:
        # to the precision of the kernel's coefficients (log c ≈ -700 to an ulp: 1e-13 of c)
        assert np.allclose(estimate, h, rtol=1e-12, atol=0)
        assert np.allclose(se, np.sqrt(h * (1 - h) / 5000), rtol=1e-12, atol=0)


@pytest.mark.slow
def test_a_publication_at_epsilon_16_is_estimated_through_the_series_as_dense_numpy(tmp_path):
    """At ε = 16 (publishable: the prior's masses are above the sampling floor) the kernels are
    in the series' regime; the table's inversion and analytic standard errors equal dense
    numpy's K^{-T} h and sqrt((h (K^{-1})^2 - p̂^2) / N), and ``ldpsample estimate`` writes the
    same table."""
    folder, _, _ = make_publication(tmp_path, users=300, epsilons=(16.0,))
    read = read_publication(folder)
    table = estimate_publication(read).table
    for (country,), draws in read.draws.group_by("subcategory"):
        items, q = read.spec.prior_of("country", country)
        assert structured_kernel(q, epsilon=16.0)._series_columns is not None
        counts = np.array([(draws["item"] == item).sum() for item in items], dtype=float)
        expected, expected_se = dense_inversion(q, epsilon=16.0, counts=counts)
        rows = table.filter(
            (pl.col("subcategory") == country)
            & (pl.col("method") == "inversion")
            & (pl.col("interval") == "analytic")
        )
        got = dict(zip(rows["item"], zip(rows["estimate"], rows["se"], strict=True), strict=True))
        assert np.allclose([got[i][0] for i in items], expected, rtol=0, atol=1e-12)
        assert np.allclose([got[i][1] for i in items], expected_se, rtol=1e-9, atol=0)
    out = tmp_path / "estimates.csv"
    subprocess.run(
        [sys.executable, "-m", "ldpsample", "estimate", str(folder), "--out", str(out)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    written = pl.read_csv(out)
    assert written.select("item", "method", "interval").equals(
        table.select("item", "method", "interval")
    )
    # rows without a standard error (Norm-Sub and EM without a bootstrap) hold NaN in both
    assert np.allclose(
        written["se"].to_numpy(), table["se"].to_numpy(), rtol=1e-12, atol=0, equal_nan=True
    )


def test_items_of_zero_prior_are_left_out_and_their_mass_counts_as_q(tmp_path):
    """An item in the domain without public mass (q = 0) is never released: the table leaves
    it out, and a user's mass on it reaches the released items as q."""
    extra = [("u0000", "country", "de", "zz", 3.0), ("u0002", "country", "de", "zz", 1.0)]
    folder, histograms, _ = make_publication(
        tmp_path, users=200, items=[*ITEMS, "zz"], extra_rows=extra
    )
    read = read_publication(folder)
    items, q = read.spec.prior_of("country", "de")
    assert "zz" in items.to_list() and q[items.to_list().index("zz")] == 0
    table = estimate_publication(read).table
    assert "zz" not in table["item"].to_list()
    truth = population_truth(read, histograms).filter(
        (pl.col("subcategory") == "de") & (pl.col("epsilon") == 1.0)
    )
    assert truth.height == len(ITEMS) and truth["truth"].sum() == pytest.approx(1.0)
    positive = q > 0
    q_plus = dict(zip(items.filter(pl.Series(positive)), q[positive] / q[positive].sum(),
                      strict=True))  # fmt: skip
    users = sorted(set(read.draws.filter(pl.col("subcategory") == "de")["user"]))
    total = {item: 0.0 for item in q_plus}
    for user in users:
        rows = histograms.filter((pl.col("user") == user) & (pl.col("subcategory") == "de"))
        mass = dict(zip(rows["item"], rows["count"] / rows["count"].sum(), strict=True))
        zero = mass.pop("zz", 0.0) if rows.height else 1.0
        for item, share in q_plus.items():
            total[item] += mass.get(item, 0.0) + zero * share
    got = dict(zip(truth["item"], truth["truth"], strict=True))
    assert all(got[i] == pytest.approx(total[i] / len(users), abs=1e-12) for i in total)
