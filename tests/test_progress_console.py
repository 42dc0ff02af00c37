"""Progress and faults on the console of a pipeline script (pipeline/scripting.py,
pipeline/progress.py): a script run as Snakemake runs it (a subprocess whose stderr is the
console) writes everything to its log and progress lines, warnings, errors and its traceback to
the console too; a phase's heartbeat reports the rows done and the rate."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

from ldpsample.pipeline.progress import Phase, phase

SCRIPT = textwrap.dedent(
    """
    import logging, sys, time
    from types import SimpleNamespace
    from ldpsample.pipeline.progress import phase, progress
    from ldpsample.pipeline.scripting import start

    smk = SimpleNamespace(
        log=[sys.argv[1]], rule="demo", wildcards={"name": "x"}, params={"eps": 1},
        input=[], output=[], threads=1,
    )
    log = start(smk)
    with phase(log, "scanning the table", every=0.05) as done:
        for _ in range(5):
            done.add(1000)
            time.sleep(0.04)
    for _ in progress(range(3), desc="subcategories", enabled=True):
        pass
    logging.getLogger("ldpsample.events.reading.scan").warning("t.csv: skipped 2 rows")
    raise ValueError("t.csv, line 3: missing field in 'u2,m2'")
    """
)


def test_a_scripts_console_shows_progress_warnings_and_its_error(tmp_path):
    log_file = tmp_path / "job.log"
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(log_file)], capture_output=True, text=True
    )
    assert proc.returncode != 0
    console, log = proc.stderr, log_file.read_text()
    for text in (
        "scanning the table ...",
        "scanning the table: still running",
        "scanning the table: done in",
        "5,000 rows (",
        "subcategories: 100%",
        "t.csv: skipped 2 rows",
        "ValueError: t.csv, line 3: missing field in 'u2,m2'",
    ):
        assert text in console, (text, console)
        assert text in log, (text, log)
    # the parameters and inputs stay in the log only
    assert "params {'eps': 1}" in log and "params" not in console


def test_a_phase_counts_rows_and_reports_the_rate(caplog):
    with caplog.at_level(logging.INFO), phase(logging.getLogger("t"), "work", every=60) as done:
        done.add(1500)
        done.add(500)
    assert done.done == 2000
    assert caplog.records[-1].getMessage().startswith("work: done in ")
    assert " 2,000 rows (" in caplog.records[-1].getMessage()
    assert Phase("rows").rate(1.0) == ""  # nothing counted: no rate
    counted = Phase("files")
    counted.add(10)
    assert counted.rate(2.0) == ", 10 files (5 files/s)"
