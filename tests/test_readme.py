"""The README is tested as written: its first set-up block runs literally on a fresh copy of the
repository beside ../shared (a new user's first command: install `.[workflow]`, run the default
job), the report is built from that very install, and `.ci/run` runs the second block verbatim.
Every output the README lists for the main job is checked to exist."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import readme_clone as readme_clone_block
from _workflow import ROOT
from readme_clone import setup_blocks

README = (ROOT / "README.md").read_text()


def test_readme_has_exactly_two_setup_commands():
    blocks = setup_blocks()
    assert len(blocks) == 2, blocks
    assert all("\n" not in block for block in blocks)
    assert "'.[workflow]'" in blocks[0] and "snakemake --cores 2" in blocks[0]
    assert "'.[test]'" in blocks[1] and blocks[1].endswith("pytest -m ''")  # every test


def test_ci_runs_the_second_block_verbatim():
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert setup_blocks()[1] in lines


@pytest.fixture(scope="module")
def readme_clone():
    """A fresh copy of the tracked files beside the project (../shared resolves), in which the
    README's first block ran literally (tests/readme_clone.py: the session starts it in the
    background, this waits for it; started here when the session did not)."""
    started = os.environ.get(readme_clone_block.ENV_VAR)
    if started:
        readme_clone_block.wait(Path(started))
        yield Path(started)
        return
    clone, proc = readme_clone_block.start()
    try:
        readme_clone_block.wait(clone)
        yield clone
    finally:
        readme_clone_block.remove(clone, proc)


def _table_outputs(text: str, heading: str) -> list[str]:
    """The results/ paths in the first column of the table under ``heading``: the first name of
    a cell is a path, a later name without a folder lies beside it (``values.parquet``,
    ``figure.png``)."""
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    paths = []
    for cell in re.findall(r"^\| (`[^|]+)\|", section, re.M):
        names = re.findall(r"`([^`]+)`", cell)
        folder = names[0].rsplit("/", 1)[0]
        for name in names:
            path = name if "/" in name else f"{folder}/{name}"
            if path.startswith("results/") and "<" not in path:
                paths.append(path)
    return paths


def _main_job_outputs() -> list[str]:
    """The results/ paths of the README's "What the main job produces" table and of the main
    job's table in docs/outputs.md."""
    docs = (ROOT / "docs" / "outputs.md").read_text()
    return sorted(
        {
            *_table_outputs(README, "## What the main job produces"),
            *_table_outputs(docs, "## The main job"),
        }
    )


@pytest.mark.workflow
@pytest.mark.install
def test_first_block_runs_the_main_job(readme_clone):
    outputs = _main_job_outputs()
    assert len(outputs) >= 9, outputs
    for path in outputs:
        assert (readme_clone / path).stat().st_size > 0, path


@pytest.mark.workflow
@pytest.mark.install
def test_the_readmes_figure_is_the_main_jobs(readme_clone):
    """The README's headline figure (docs/img/synthetic-figure.png) is what the main job draws:
    the same size and, pixel by pixel, the same image (font rendering may differ by a shade)."""
    import matplotlib.image

    (figure,) = re.findall(r"!\[[^\]]*\]\((docs/img/[^)]+)\)", README)
    shown = matplotlib.image.imread(ROOT / figure)
    drawn = matplotlib.image.imread(readme_clone / "results" / "synthetic" / "figure.png")
    assert shown.shape == drawn.shape
    assert float(abs(shown - drawn).mean()) < 0.01


@pytest.mark.workflow
@pytest.mark.install
def test_report_builds_from_the_readme_install(readme_clone):
    """`snakemake --report` from an install of exactly `.[workflow]` (no test extras)."""
    proc = subprocess.run(
        [str(readme_clone / ".venv" / "bin" / "snakemake"), "--report", "report.html"],
        cwd=readme_clone,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    html = (readme_clone / "report.html").read_text(errors="replace")
    figures_and_tables = sorted(
        str(path.relative_to(readme_clone))
        for path in (readme_clone / "results").rglob("*")
        if path.suffix in (".png", ".csv") and "parts" not in path.parts
    )
    assert figures_and_tables
    for name in figures_and_tables:
        assert name.rsplit("/", 1)[-1] in html, name


@pytest.mark.workflow
@pytest.mark.install
def test_the_readme_venvs_commands_name_its_folder(readme_clone):
    """Why docs/running.md says a moved project's `.venv/bin/snakemake` stops working: pip
    writes the venv's absolute path into each command's first line, which a move leaves pointing
    at the old folder (test_workflow.py runs `.venv/bin/python -m snakemake` from a moved
    project)."""
    for command in ("snakemake", "pip"):
        first = (readme_clone / ".venv" / "bin" / command).read_text().splitlines()[0]
        assert first.startswith(f"#!{readme_clone / '.venv' / 'bin' / 'python'}"), first
