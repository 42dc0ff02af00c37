"""Every overlay in config/examples/ is valid and plans the jobs its comment promises (a dry run
of the command written in its header, on a fresh workflow copy)."""

from __future__ import annotations

import re

import pytest
from _workflow import (
    ROOT,
    SHARED_DATA,
    copy_workflow,
    need_shared_data,
    planned_jobs,
    requires_shared_data,
)

EXAMPLES = sorted((ROOT / "config" / "examples").glob("*.yaml"))
EXPECTED = {
    "movielens.yaml": {"movielens_data": 1, "movielens_metrics": 1},
    "arxiv-variant.yaml": {"movielens_data": 1, "movielens_metrics": 1},
    "sweep.yaml": {"synthetic_part": 6, "synthetic_figure": 1},
    "mirror.yaml": {"download_dataset": 2, "movielens_data": 1},
    "publish-movielens.yaml": {"movielens_data": 1, "events_spec": 1, "events_publish": 1},
}


def test_every_example_is_listed_here():
    assert sorted(p.name for p in EXAMPLES) == sorted(EXPECTED)


@pytest.mark.workflow
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_plans_its_jobs(tmp_path, example):
    text = example.read_text()
    command = re.search(r"^#\s+snakemake (.*)$", text, re.M)
    assert command, f"{example.name}: no command in its header"
    args = command.group(1).split()
    needs_data = "data_dir=../shared/data" in args
    if needs_data:
        need_shared_data("ml-1m")
    args = [f"data_dir={SHARED_DATA}" if a == "data_dir=../shared/data" else a for a in args]
    workdir = copy_workflow(tmp_path / "clone")
    jobs = planned_jobs(workdir, *args)
    for rule, count in EXPECTED[example.name].items():
        assert jobs.get(rule) == count, (rule, jobs)


@pytest.mark.workflow
@requires_shared_data("ml-1m")
def test_paper_config_runs_both_movielens_variants(tmp_path):
    workdir = copy_workflow(tmp_path / "clone")
    args = ["--configfile", "config/paper.yaml", "--config", f"data_dir={SHARED_DATA}"]
    jobs = planned_jobs(workdir, *args)
    assert jobs["movielens_data"] == 1 and jobs["movielens_aggregate"] == 2
    assert jobs["reproduction"] == 1
