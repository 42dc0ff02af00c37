"""The first line of a failed job's error, read from its log (the workflow's onerror handler
prints it; tests/test_data_faults.py and tests/test_download_workflow.py see it on the console
of real failed runs). Here the parsing of logs as the scripts write them."""

from __future__ import annotations

import logging
import subprocess
import sys

from ldpsample.pipeline.job_errors import failed_job_causes, first_error_line

SCRIPT = """
import logging, sys
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
logging.getLogger("rule").info("params {'a': 1}")
try:
    int("x")
except ValueError as exc:
    raise RuntimeError("data/u.data, line 7: bad rating\\nsecond line of the message") from exc
"""


def test_the_last_tracebacks_exception_line_is_the_cause(tmp_path):
    """A script's log as Python writes it: a chained traceback; the cause is the first line of
    the final exception, not the one it was raised from."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True)
    assert proc.returncode == 1
    assert first_error_line(proc.stderr) == "RuntimeError: data/u.data, line 7: bad rating"


def test_without_a_traceback_the_last_error_record_is_the_cause(tmp_path):
    log = tmp_path / "job.log"
    handler = logging.FileHandler(log)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("ldpsample.test_job_errors")
    logger.addHandler(handler)
    try:
        logger.error("first problem")
        logger.error("privacy audit FAILED for events.t")
        logger.warning("not an error")
    finally:
        logger.removeHandler(handler)
        handler.close()
    assert first_error_line(log.read_text()) == "privacy audit FAILED for events.t"
    assert first_error_line("2026-01-01 10:00:00,000 INFO rule: done\n") is None


def test_each_failed_job_gets_one_line(tmp_path):
    ok = tmp_path / "ok.log"
    ok.write_text("2026-01-01 10:00:00,000 INFO rule: started\n")
    bad = tmp_path / "bad.log"
    bad.write_text("Traceback (most recent call last):\n  File 'x'\nValueError: u.data, line 3\n")
    assert failed_job_causes(
        [("b_rule", [str(bad)]), ("a_rule", [str(ok)]), ("c_rule", [str(tmp_path / "no.log")])]
    ) == [
        f"b_rule ({bad}): ValueError: u.data, line 3",
        f"a_rule ({ok}): no error message in the log; its last line: "
        "'2026-01-01 10:00:00,000 INFO rule: started'",
        f"c_rule ({tmp_path / 'no.log'}): no error message in the log; its last line: "
        f"'cannot read {tmp_path / 'no.log'}: No such file or directory'",
    ]
