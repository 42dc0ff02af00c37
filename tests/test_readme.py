"""The README is tested as written: its first set-up block runs literally on a fresh copy of the
repository beside ../shared (a new user's first command: install `.[workflow]`, run the default
job), the report is built from that very install, and `.ci/run` runs the second block verbatim.
Every output the README lists for the main job is checked to exist."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid

import pytest
from _workflow import ROOT

README = (ROOT / "README.md").read_text()


def setup_blocks() -> list[str]:
    """The bash code blocks of the README's "Set up" section, in order."""
    section = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)]


def test_readme_has_exactly_two_setup_commands():
    blocks = setup_blocks()
    assert len(blocks) == 2, blocks
    assert all("\n" not in block for block in blocks)
    assert "'.[workflow]'" in blocks[0] and "snakemake --cores 2" in blocks[0]
    assert "'.[test]'" in blocks[1] and "pytest" in blocks[1]


def test_ci_runs_the_second_block_verbatim():
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert setup_blocks()[1] in lines


@pytest.fixture(scope="module")
def readme_clone():
    """A fresh copy of the tracked files beside the project (../shared resolves), in which the
    README's first block ran literally; removed afterwards."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    clone = ROOT.parent / f".ldpsample-readme-test-{uuid.uuid4().hex[:8]}"
    try:
        for name in filter(None, tracked):
            if (ROOT / name).is_file():
                (clone / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, clone / name)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        proc = subprocess.run(
            ["bash", "-c", setup_blocks()[0]],
            cwd=clone,
            capture_output=True,
            text=True,
            env=env,
            timeout=1500,
        )
        assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-5000:]
        yield clone
    finally:
        shutil.rmtree(clone, ignore_errors=True)


def _main_job_outputs() -> list[str]:
    """The results/ paths of the README's "What the main job produces" table."""
    section = README.split("## What the main job produces", 1)[1].split("\n## ", 1)[0]
    paths = []
    for cell in re.findall(r"^\| `([^`]+)`", section, re.M):
        if cell.startswith("results/") and "<" not in cell:
            paths.append(cell)
    return paths


@pytest.mark.workflow
def test_first_block_runs_the_main_job(readme_clone):
    outputs = _main_job_outputs()
    assert len(outputs) >= 5
    for path in outputs:
        assert (readme_clone / path).stat().st_size > 0, path


@pytest.mark.workflow
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
