"""The README's test command as CI runs it:

* ``test-command``: ``CI=true bash .ci/run`` (a new venv, ``pip install -e '.[test]'``,
  ``pytest -m ''``: every test) on a fresh clone of the committed HEAD in a folder beside the
  project (so ``../shared`` resolves); the note has pytest's own time and the test count.
  Target < 5 min. Then plain ``pytest`` (the fast tests, docs/testing.md) in the same clone and
  venv: target < 1 min. Each note has the load average at the start (the machine is shared).
  Not run with ``--quick`` (it has no small size: ``run_all.NOT_QUICK``).

Imports the standard library and :mod:`runner` only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from runner.measure import Measure, Row, timed_run
from runner.registry import in_own_processes, register

#: The project's root (this file is ``benchmarks/rows/test_command.py``).
ROOT = Path(__file__).resolve().parents[2]


@register("test-command", in_own_processes)
def row_test_command(quick: bool) -> Row:
    row = Row("test-command", "README's test command on a fresh clone (`CI=true bash .ci/run`)")
    folder = ROOT.parent / f".run_all_clone_{os.getpid()}"
    try:
        subprocess.run(
            ["git", "clone", "--quiet", str(ROOT), str(folder)],
            check=True,
            capture_output=True,
        )
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        load = _load()
        seconds, peak, output = timed_run(["bash", ".ci/run"], folder, {**env, "CI": "true"})
        row.measures.append(
            Measure(
                "venv, pip install -e '.[test]', pytest -m '' (every test, -n auto)",
                seconds,
                f"pytest: {_summary(output)}; largest process {peak:,.0f} MiB; load {load}",
                limit=300,
            )
        )
        load = _load()
        python = str(folder / ".venv" / "bin" / "python")
        seconds, peak, output = timed_run([python, "-m", "pytest"], folder, env)
        row.measures.append(
            Measure(
                "plain pytest: the fast tests (-n auto)",
                seconds,
                f"pytest: {_summary(output)}; load {load}",
                limit=60,
            )
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return row


def _summary(output: str) -> str:
    """pytest's last summary line, whole (failures and errors come before "passed")."""
    lines = re.findall(r"=+ ((?:\d+ \w+, )*\d+ \w+.*? in [\d.]+s[^=]*?) =+", output)
    return lines[-1].strip() if lines else "?"


def _load() -> str:
    """The 1-minute load average, e.g. ``1.23 on 2 cores``."""
    return f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
