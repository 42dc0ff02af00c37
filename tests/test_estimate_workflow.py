"""docs/analysing.md's worked example as the analyst walks it: Snakemake releases a table
(events.<name>.release: true, in a temporary copy of the project), the publish/ folder alone is
copied into a fresh folder, and the page's ``ldpsample estimate`` command and Python block run
there as printed."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from _workflow import ROOT, copy_workflow
from test_publish_workflow import entry, events_table, public_table
from test_publish_workflow import run as run_release

pytestmark = pytest.mark.workflow

PAGE = ROOT / "docs" / "analysing.md"


def page_blocks(language):
    section = PAGE.read_text(encoding="utf-8").split("## Worked example", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)\n```", section, flags=re.S)


def test_the_worked_example_runs_from_a_copy_of_publish_alone(tmp_path):
    wd = copy_workflow(tmp_path / "wf")
    (wd / "data").mkdir()
    events_table(users=60).write_parquet(wd / "data/events.parquet")
    public_table().write_parquet(wd / "data/public.parquet")
    run_release(wd, "pub", {"pub": entry()})
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
    assert tests.height == 2 * subcategories and (tests["users"] == 60).all()
    assert result.stdout.count("chi2 test of population = prior") == tests.height
    (example,) = page_blocks("python")
    cwd = os.getcwd()
    os.chdir(analyst)
    try:
        exec(compile(example, str(PAGE), "exec"), {})
    finally:
        os.chdir(cwd)
