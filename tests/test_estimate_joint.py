"""Estimating a joint release (release_mode: joint) from its publish/ folder alone: the
subcategory shares (the marginal of the joint estimate) and each subcategory's conditional
distribution, their delta-method standard errors cross-checked against the dense covariance
``K^{-T}(diag π - ππ^T)K^{-1}/N``, unbiased shares and 95 % intervals that cover over 1,000
simulated publications, the truth of the evaluation side against a direct numpy computation,
and ``ldpsample estimate`` on a joint publication in a subprocess."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from _publication import make_publication

from ldpsample import minimax_kernel
from ldpsample.estimate import (
    estimate_publication,
    estimator_errors,
    population_truth,
    read_publication,
    structured_kernel,
)
from ldpsample.estimate.modes import compare_release_modes
from ldpsample.estimate.table import joint_quantities, joint_standard_errors

Q = np.array([0.05, 0.1, 0.15, 0.2, 0.1, 0.25, 0.15])  # a joint prior π(s) q_s(i)
GROUPS = np.array([0, 0, 0, 1, 1, 2, 2])


def test_a_column_solve_is_a_row_solve_of_q_times_the_vector_over_q():
    """K = M diag(q) with M symmetric, so K^{-1} a = solve(q ⊙ a) / q (the shares' functional)."""
    kernel = structured_kernel(Q, epsilon=1.3)
    a = (GROUPS == 1).astype(float)
    assert np.allclose(kernel.solve(Q * a) / Q, kernel.inverse_dense() @ a, atol=1e-12)


def test_the_delta_method_standard_errors_equal_the_dense_covariance_of_the_inversion():
    rng = np.random.default_rng(2)
    counts = rng.integers(50, 400, size=Q.size).astype(float)
    kernel = structured_kernel(Q, epsilon=2.0)
    shares, se_s, conditional, se_c = joint_standard_errors(
        kernel, counts=counts, groups=GROUPS, subcategories=3
    )
    n = counts.sum()
    h = counts / n
    inverse = np.linalg.inv(minimax_kernel(Q, epsilon=2.0))
    p = h @ inverse
    cov = inverse.T @ (np.diag(h) - np.outer(h, h)) @ inverse / n
    indicator = np.stack([(s == GROUPS).astype(float) for s in range(3)])
    assert np.allclose(shares, indicator @ p, atol=1e-12)
    assert np.allclose(se_s, np.sqrt(np.diag(indicator @ cov @ indicator.T)), rtol=1e-9)
    for s in range(3):
        members = np.flatnonzero(s == GROUPS)
        m = p[members].sum()
        # gradient of p_i / m over p: e_i / m - p_i / m^2 on the members of s
        grad = np.zeros((members.size, Q.size))
        grad[np.arange(members.size), members] = 1 / m
        grad[:, members] -= p[members, None] / m**2
        dense = np.sqrt(np.diag(grad @ cov @ grad.T))
        assert np.allclose(conditional[members], p[members] / m, atol=1e-12)
        assert np.allclose(se_c[members], dense, rtol=1e-8)


def test_shares_are_unbiased_and_the_intervals_cover_over_1000_simulated_publications():
    """Released counts of N draws follow π = p̄ K: the inversion's shares are unbiased (mean
    error within 3 SE) and the 95 % intervals of shares and conditionals cover 93-97 %."""
    rng = np.random.default_rng(7)
    p_bar = np.array([0.02, 0.2, 0.08, 0.3, 0.05, 0.15, 0.2])
    eps, draws, runs = 2.0, 20_000, 1000
    K = minimax_kernel(Q, epsilon=eps)
    kernel = structured_kernel(Q, epsilon=eps)
    true_shares, true_conditional = joint_quantities(p_bar, GROUPS, 3)
    counts = rng.multinomial(draws, p_bar @ K, size=runs).astype(float)
    shares = np.empty((runs, 3))
    cover_s = np.empty((runs, 3), bool)
    cover_c = np.empty((runs, Q.size), bool)
    for r in range(runs):
        s, se_s, c, se_c = joint_standard_errors(
            kernel, counts=counts[r], groups=GROUPS, subcategories=3
        )
        shares[r] = s
        cover_s[r] = np.abs(s - true_shares) <= 1.959964 * se_s
        cover_c[r] = np.abs(c - true_conditional) <= 1.959964 * se_c
    error = shares.mean(axis=0) - true_shares
    assert (np.abs(error) < 3 * shares.std(axis=0, ddof=1) / np.sqrt(runs)).all()
    assert ((cover_s.mean(axis=0) >= 0.93) & (cover_s.mean(axis=0) <= 0.97)).all()
    assert ((cover_c.mean(axis=0) >= 0.93) & (cover_c.mean(axis=0) <= 0.97)).all()


@pytest.fixture(scope="module")
def joint(tmp_path_factory):
    return make_publication(
        tmp_path_factory.mktemp("joint"), users=1500, samples=2, release_mode="joint"
    )


def test_the_table_of_a_joint_publication_holds_shares_and_conditionals(joint):
    folder, _, roster = joint
    read = read_publication(folder)
    estimates = estimate_publication(read, bootstrap=40, seed=2)
    table = estimates.table
    assert set(table["quantity"]) == {"share", "conditional"}
    shares = table.filter(pl.col("quantity") == "share")
    assert shares["item"].null_count() == shares.height
    for (method, interval, _eps), rows in shares.group_by("method", "interval", "epsilon"):
        assert rows.height == 2, (method, interval)
        if method != "em" or interval != "none":
            assert rows["estimate"].sum() == pytest.approx(1.0, abs=1e-9)
    conditional = table.filter(pl.col("quantity") == "conditional")
    sums = conditional.group_by("subcategory", "epsilon", "method", "interval").agg(
        pl.col("estimate").sum()
    )
    assert np.allclose(sums["estimate"].to_numpy(), 1.0, atol=1e-9)
    # the inversion from publish/ alone, against a dense solve on the joint domain
    domain = read.spec.joint_domain()
    K = minimax_kernel(domain["q"].to_numpy(), epsilon=4.0)
    draws = read.draws.filter(pl.col("epsilon") == 4.0)
    counts = np.array(
        [
            draws.filter((pl.col("subcategory") == s) & (pl.col("item") == i)).height
            for s, i in domain.select("subcategory", "item").iter_rows()
        ],
        float,
    )
    p = np.linalg.solve(K.T, counts / counts.sum())
    inv = table.filter(
        (pl.col("epsilon") == 4.0)
        & (pl.col("method") == "inversion")
        & (pl.col("interval") == "analytic")
    )
    for sub in ("de", "fr"):
        members = (domain["subcategory"] == sub).to_numpy()
        got = inv.filter((pl.col("subcategory") == sub) & (pl.col("quantity") == "share"))
        assert got["estimate"][0] == pytest.approx(p[members].sum(), abs=1e-12)
        cond = inv.filter((pl.col("subcategory") == sub) & (pl.col("quantity") == "conditional"))
        want = dict(zip(domain.filter(members)["item"], p[members] / p[members].sum(), strict=True))
        assert np.allclose(cond["estimate"].to_numpy(), [want[i] for i in cond["item"]], atol=1e-12)
    tests = estimates.tests
    assert tests["subcategory"].to_list() == ["(joint)", "(joint)"]
    assert (tests["users"] == len(roster)).all() and (tests["draws"] == 2 * len(roster)).all()


def test_the_evaluation_truth_of_a_joint_release_is_the_mean_joint_distribution(joint):
    folder, histograms, roster = joint
    read = read_publication(folder)
    domain = read.spec.joint_domain()
    keys = list(domain.select("subcategory", "item").iter_rows())
    q = domain["q"].to_numpy()
    total = np.zeros(len(keys))
    for user in roster:
        rows = histograms.filter(pl.col("user") == user)
        counts = np.array(
            [
                rows.filter((pl.col("subcategory") == s) & (pl.col("item") == i))["count"].sum()
                for s, i in keys
            ],
            float,
        )
        total += counts / counts.sum() if counts.sum() else q
    mean = total / len(roster)
    truth = population_truth(read, histograms).filter(pl.col("epsilon") == 1.0)
    subs = np.array([s for s, _ in keys])
    for sub in ("de", "fr"):
        share = truth.filter((pl.col("subcategory") == sub) & (pl.col("quantity") == "share"))
        assert share["truth"][0] == pytest.approx(mean[subs == sub].sum(), abs=1e-12)
        cond = truth.filter((pl.col("subcategory") == sub) & (pl.col("quantity") == "conditional"))
        want = dict((i, v) for (s, i), v in zip(keys, mean / 1, strict=True) if s == sub)
        assert np.allclose(
            cond["truth"].to_numpy(),
            [want[i] / mean[subs == sub].sum() for i in cond["item"]],
            atol=1e-12,
        )
    errors = estimator_errors(read, estimate_publication(read), histograms)
    assert set(errors["quantity"]) == {"share", "conditional"}
    share_rows = errors.filter(pl.col("quantity") == "share")
    assert set(share_rows["subcategory"]) == {"(joint)"}
    prior = share_rows.filter((pl.col("method") == "prior") & (pl.col("epsilon") == 1.0))
    pi = read.spec.shares["country"]
    got = truth.filter(pl.col("quantity") == "share").sort("subcategory")
    expected = 0.5 * sum(abs(pi[s] - t) for s, t in got.select("subcategory", "truth").iter_rows())
    assert prior["tv_error"][0] == pytest.approx(expected, abs=1e-12)
    high = errors.filter((pl.col("epsilon") == 4.0) & (pl.col("method") == "em"))
    assert (high["tv_error"] < 0.1).all()


def test_the_estimate_command_reads_a_joint_publication(joint, tmp_path):
    folder, _, roster = joint
    out = tmp_path / "table.csv"
    result = subprocess.run(
        [sys.executable, "-m", "ldpsample", "estimate", str(folder), "--out", str(out),
         "--tests", str(tmp_path / "tests.csv"), "--figure", str(tmp_path / "fig.png")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    table = pl.read_csv(out, schema_overrides={"item": pl.String})
    library = estimate_publication(read_publication(folder)).table
    assert table.height == library.height
    assert table["quantity"].to_list() == library["quantity"].to_list()
    assert np.allclose(table["estimate"].to_numpy(), library["estimate"].to_numpy(), atol=1e-12)
    assert (tmp_path / "fig.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"{2 * len(roster)} draws from {len(roster)} users" in result.stdout


def test_the_mode_comparison_spends_equal_budgets_and_scores_users_against_dense_pK(joint):
    """compare_release_modes: per budget B the per-subcategory mode at ε = B / 2 (two
    countries), the joint mode at ε = B; every user's TV(p, pK) equals the dense computation
    on its subcategory's or the joint domain, and here (a population far from q, a tenth without
    data) the joint conditionals beat the per-subcategory estimates for the analyst."""
    folder, histograms, roster = joint
    spec = read_publication(folder).spec
    table = compare_release_modes(spec, histograms, budgets=[4.0], users=roster, repeats=2)
    assert table.select("mode", "epsilon").rows() == [("per_subcategory", 2.0), ("joint", 4.0)]
    per_sub, joint_row = table.row(0, named=True), table.row(1, named=True)
    domain = spec.joint_domain()
    keys = list(domain.select("subcategory", "item").iter_rows())
    K = minimax_kernel(domain["q"].to_numpy(), epsilon=4.0)
    kernels = {
        sub: minimax_kernel(spec.prior_of("country", sub)[1], epsilon=2.0) for sub in ("de", "fr")
    }
    joint_tv, sub_tv = [], []
    for _user, rows in histograms.group_by("user"):
        p = np.array(
            [
                rows.filter((pl.col("subcategory") == s) & (pl.col("item") == i))["count"].sum()
                for s, i in keys
            ],
            float,
        )
        p /= p.sum()
        joint_tv.append(0.5 * np.abs(p @ K - p).sum())
        for sub in ("de", "fr"):
            members = np.array([s == sub for s, _ in keys])
            if p[members].sum():
                items = spec.prior_of("country", sub)[0].to_list()
                order = [keys.index((sub, i)) for i in items]
                ps = p[order] / p[order].sum()
                sub_tv.append(0.5 * np.abs(ps @ kernels[sub] - ps).sum())
    assert joint_row["users"] == len(joint_tv) and per_sub["users"] == len(sub_tv)
    assert joint_row["user_tv_worst"] == pytest.approx(max(joint_tv), abs=1e-12)
    assert joint_row["user_tv_median"] == pytest.approx(np.median(joint_tv), abs=1e-12)
    assert per_sub["user_tv_worst"] == pytest.approx(max(sub_tv), abs=1e-12)
    assert per_sub["user_tv_median"] == pytest.approx(np.median(sub_tv), abs=1e-12)
    assert joint_row["analyst_tv_em"] < per_sub["analyst_tv_em"]
    assert np.isnan(per_sub["share_tv_em"]) and 0 <= joint_row["share_tv_em"] < 0.1


def test_the_joint_example_of_analysing_md_runs_on_a_copy_of_publish(joint, tmp_path, monkeypatch):
    """docs/analysing.md's block under "A joint release", executed as printed."""
    folder, _, _ = joint
    text = (Path(__file__).resolve().parents[1] / "docs/analysing.md").read_text()
    section = text.split("## A joint release", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)\n```", section, flags=re.S)
    shutil.copytree(folder, tmp_path / "publish")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, "docs/analysing.md", "exec"), namespace)
    totals = namespace["shares"].group_by("epsilon").agg(pl.col("estimate").sum())
    assert np.allclose(totals["estimate"].to_numpy(), 1.0) and totals.height == 2
    assert set(namespace["within"]["subcategory"]) == {"de", "fr"}
