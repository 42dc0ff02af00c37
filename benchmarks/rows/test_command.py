"""The README's test command as CI runs it:

* ``test-command``: ``CI=true bash .ci/run`` (a new venv, ``pip install -e '.[test]'``,
  pytest) on a fresh clone of the committed HEAD in a folder beside the project (so
  ``../shared`` resolves); the note has pytest's own time and the test count. Target < 5 min.
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
        seconds, peak, output = timed_run(["bash", ".ci/run"], folder, {**env, "CI": "true"})
        # pytest's last summary line, whole: failures and errors come before "passed"
        pytest_line = re.findall(r"=+ ((?:\d+ \w+, )*\d+ \w+.*? in [\d.]+s[^=]*?) =+", output)
        row.measures.append(
            Measure(
                "venv, pip install -e '.[test]', pytest (-n auto)",
                seconds,
                f"pytest: {pytest_line[-1].strip() if pytest_line else '?'}; largest process "
                f"{peak:,.0f} MiB",
                limit=300,
            )
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return row
