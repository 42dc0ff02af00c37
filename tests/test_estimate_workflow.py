"""docs/analysing.md's worked example as the analyst walks it: Snakemake releases a table
(events.<name>.release: true, in a temporary copy of the project), the publish/ folder alone is
copied into a fresh folder, and the page's ``ldpsample estimate`` command and Python block run
there as printed; and the estimate rules' tables checked against the library and the truth.

One Snakemake run in one copy of the project serves both tests: a release with secret
randomness (publish/) of 60 users, its estimate/ files made by the rules."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import zipfile

import numpy as np
import polars as pl
import pytest
from _workflow import ROOT, copy_workflow, snakemake
from test_publish_workflow import entry, events_table, public_table
from test_publish_workflow import run as run_release

from ldpsample.estimate import estimate_publication, read_publication
from ldpsample.estimate.table import ESTIMATE_SCHEMA, TEST_SCHEMA

pytestmark = pytest.mark.workflow

PAGE = ROOT / "docs" / "analysing.md"


def page_blocks(language):
    section = PAGE.read_text(encoding="utf-8").split("## Worked example", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)\n```", section, flags=re.S)


#: The users of the released table.
USERS = 60
#: The estimate/ files of the release (the rules' outputs the second test reads).
ESTIMATE_FILES = [
    f"results/events/pub/estimate/{name}"
    for name in ("estimates.csv", "tests.csv", "figure.png", "errors.csv")
]


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """The project after one run releasing ``pub`` (secret randomness: publish/) with its
    estimate/ files; read it, never change it."""
    wd = copy_workflow(tmp_path_factory.mktemp("estimate") / "wf")
    (wd / "data").mkdir()
    events_table(users=USERS).write_parquet(wd / "data/events.parquet")
    public_table().write_parquet(wd / "data/public.parquet")
    run_release(wd, "pub", {"pub": entry(release_seed=None)}, *ESTIMATE_FILES)
    return wd


def test_the_worked_example_runs_from_a_copy_of_publish_alone(released, tmp_path):
    wd = released
    analyst = tmp_path / "analyst"
    analyst.mkdir()
    shutil.copytree(wd / "results/events/pub/publish", analyst / "publish")
    (command,) = page_blocks("bash")
    words = shlex.split(command)
    assert words[:2] == ["ldpsample", "estimate"]
    script = os.path.join(os.path.dirname(sys.executable), "ldpsample")
    result = subprocess.run([script, *words[1:]], cwd=analyst, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in analyst.iterdir()) == [
        "estimates.csv", "estimates.png", "publish", "tests.csv",
    ]  # fmt: skip
    table = pl.read_csv(analyst / "estimates.csv")
    released = pl.read_parquet(analyst / "publish/released/eps~1.parquet")
    subcategories = released.select("attribute", "subcategory").unique().height
    assert set(table["method"]) == {"inversion", "norm_sub", "em"}
    assert set(table["interval"]) == {"analytic", "bootstrap"}
    em = table.filter(pl.col("method") == "em").group_by("attribute", "subcategory", "epsilon")
    sums = em.agg(pl.col("estimate").sum())["estimate"].to_numpy()  # bootstrap rows only
    assert np.allclose(sums, 1.0) and sums.size == 2 * subcategories
    tests = pl.read_csv(analyst / "tests.csv")
    assert tests.height == 2 * subcategories and (tests["users"] == USERS).all()
    assert result.stdout.count("chi2 test of population = prior") == tests.height
    (example,) = page_blocks("python")
    cwd = os.getcwd()
    os.chdir(analyst)
    try:
        exec(compile(example, str(PAGE), "exec"), {})
    finally:
        os.chdir(cwd)


def test_the_estimate_rule_reads_the_publication_alone_and_scores_each_estimator(
    released, tmp_path
):
    """events_estimate's tables equal what the library computes from a copy of the published
    folder alone; events_estimate_errors' errors equal TV distances to the truth computed here
    from the raw events table (hidden membership: a user without data in a subcategory counts
    as the prior q); the estimate figure is in the report of those files."""
    wd = released
    events = events_table(users=USERS)  # the table data/events.parquet holds
    base = wd / "results/events/pub"
    out = base / "estimate"
    assert sorted(p.name for p in out.iterdir()) == [
        "errors.csv", "estimates.csv", "figure.png", "tests.csv",
    ]  # fmt: skip
    assert (out / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert stat.S_IMODE((out / "errors.csv").stat().st_mode) == 0o600  # from private data
    zipped = tmp_path / "report.zip"
    snakemake(wd, *ESTIMATE_FILES, "--configfile", "config/pub.yaml", "--report", str(zipped))
    with zipfile.ZipFile(zipped) as report:
        assert any(n.endswith("/figure.png") for n in report.namelist()), report.namelist()
    alone = tmp_path / "alone"
    shutil.copytree(base / "publish", alone)
    want = estimate_publication(read_publication(alone))
    table = pl.read_csv(out / "estimates.csv", schema=ESTIMATE_SCHEMA)
    assert table.drop("estimate", "se", "lower", "upper").equals(
        want.table.drop("estimate", "se", "lower", "upper")
    )
    for column in ("estimate", "se", "lower", "upper"):
        np.testing.assert_allclose(table[column], want.table[column], rtol=1e-12, atol=1e-15)
    tests = pl.read_csv(out / "tests.csv", schema=TEST_SCHEMA)
    assert tests.height == 5 * 2 and (tests["users"] == USERS).all()
    np.testing.assert_allclose(tests["p_value"], want.tests["p_value"], rtol=1e-12)
    # the truth from the raw table: the mean over all the users of p_u (q without data)
    domain = pl.read_csv(alone / "spec/domain.csv", schema_overrides={"subcategory": pl.String})
    errors = pl.read_csv(out / "errors.csv", schema_overrides={"subcategory": pl.String})
    assert set(errors["method"]) == {"inversion", "norm_sub", "em", "prior"}
    assert errors.height == 5 * 2 * 4
    users = events["user_id"].unique().sort()
    for attribute, subcategory in domain.select("attribute", "subcategory").unique().iter_rows():
        cell = domain.filter(pl.col("subcategory") == subcategory).sort("item")
        items, q = cell["item"].to_list(), cell["q"].to_numpy()
        truth = np.zeros(len(items))
        for user in users:
            mine = events.filter(
                (pl.col("user_id") == user) & (pl.col(attribute).cast(pl.String) == subcategory)
            )
            if mine.height == 0:
                truth += q
                continue
            mass = mine.group_by("item_id").agg(pl.col("n").sum())
            counts = dict(mass.iter_rows())
            p = np.array([counts.get(item, 0.0) for item in items])
            truth += p / p.sum()
        truth /= users.len()
        for eps in (1.0, 4.0):
            rows = errors.filter(
                (pl.col("subcategory") == subcategory) & (pl.col("epsilon") == eps)
            )
            got = dict(rows.select("method", "tv_error").iter_rows())
            assert got["prior"] == pytest.approx(0.5 * np.abs(q - truth).sum(), abs=1e-12)
            for method in ("inversion", "norm_sub", "em"):
                estimate = (
                    table.filter(
                        (pl.col("subcategory") == subcategory)
                        & (pl.col("epsilon") == eps)
                        & (pl.col("method") == method)
                    )
                    .sort("item")["estimate"]
                    .to_numpy()
                )
                want_tv = 0.5 * np.abs(estimate - truth).sum()
                assert got[method] == pytest.approx(want_tv, abs=1e-12)
