"""Every overlay in config/examples/ is valid and plans the jobs its comment promises (a dry run
of the command written in its header, on a workflow copy: one for the module, since a dry run
leaves no results)."""

from __future__ import annotations

import re

import pytest
from _workflow import (
    ROOT,
    SHARED_DATA,
    copy_workflow,
    need_shared_data,
    planned_jobs,
    shared_data_skip_reason,
)

EXAMPLES = sorted((ROOT / "config" / "examples").glob("*.yaml"))
EXPECTED = {
    "movielens.yaml": {"movielens_data": 1, "movielens_metrics": 1},
    "arxiv-variant.yaml": {"movielens_data": 1, "movielens_metrics": 1},
    "sweep.yaml": {"synthetic_part": 6, "synthetic_figure": 1},
    "mirror.yaml": {"download_dataset": 2, "movielens_data": 1},
    "publish-movielens.yaml": {"movielens_data": 1, "events_spec": 1, "events_publish": 1},
}
PAPER = ["--configfile", "config/paper.yaml", "--config", f"data_dir={SHARED_DATA}"]


def example_args(example) -> list[str]:
    """The arguments of the command in the example's header (data_dir pointing at the shared
    data copies)."""
    command = re.search(r"^#\s+snakemake (.*)$", example.read_text(), re.M)
    assert command, f"{example.name}: no command in its header"
    args = command.group(1).split()
    return [f"data_dir={SHARED_DATA}" if a == "data_dir=../shared/data" else a for a in args]


def needs_data(example) -> bool:
    return f"data_dir={SHARED_DATA}" in example_args(example)


@pytest.fixture(scope="module")
def plans(tmp_path_factory) -> dict[str, dict[str, int]]:
    """The jobs each dry run plans, by example file name (and "paper"), on one workflow copy;
    the examples that need ../shared/data only where it is."""
    clone = copy_workflow(tmp_path_factory.mktemp("examples") / "clone")
    has_data = shared_data_skip_reason("ml-1m") is None
    commands = {e.name: example_args(e) for e in EXAMPLES if has_data or not needs_data(e)}
    if has_data:
        commands["paper"] = PAPER
    return {name: planned_jobs(clone, *args) for name, args in commands.items()}


def test_every_example_is_listed_here():
    assert sorted(p.name for p in EXAMPLES) == sorted(EXPECTED)


@pytest.mark.workflow
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_plans_its_jobs(plans, example):
    if needs_data(example):
        need_shared_data("ml-1m")
    jobs = plans[example.name]
    for rule, count in EXPECTED[example.name].items():
        assert jobs.get(rule) == count, (rule, jobs)


@pytest.mark.workflow
def test_paper_config_runs_both_movielens_variants(plans):
    need_shared_data("ml-1m")
    jobs = plans["paper"]
    assert jobs["movielens_data"] == 1 and jobs["movielens_aggregate"] == 2
    assert jobs["reproduction"] == 1
