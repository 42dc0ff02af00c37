"""Lint and format: snakemake --lint, snakefmt, ruff check and ruff format. Marked ``workflow``
(it starts Snakemake), so plain ``pytest`` leaves it to ``pytest -m ''`` or ``-m workflow``."""

from __future__ import annotations

import subprocess
import sys

import pytest
import snakemake_fork
from _workflow import ROOT


@pytest.mark.workflow
def test_lint_and_format_are_clean():
    lint = snakemake_fork.run(["--lint"], cwd=ROOT)
    assert lint.returncode == 0 and "Lints for" not in lint.stdout + lint.stderr, lint.stdout
    fmt = subprocess.run(
        [sys.executable, "-m", "snakefmt", "--check", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
    ruff = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert ruff.returncode == 0, ruff.stdout
    ruff_fmt = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert ruff_fmt.returncode == 0, ruff_fmt.stdout
