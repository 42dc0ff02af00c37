"""The cause of a failed job, read from its log, for the console.

When a job fails, Snakemake prints its rule, files and log path, not why it failed: the
message is in the job's log (a script's traceback, since :func:`ldpsample.pipeline.scripting.start`
sends its stderr there). The workflow's ``onerror`` handler (``workflow/rules/common.smk``)
prints, per failed job, the first line of the error its log ends with
(:func:`first_error_line`), so a bad data file, a failed download or a failed privacy audit
is named on the console. Standard library only: the workflow loads this module by path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["failed_job_causes", "first_error_line"]

_TRACEBACK = "Traceback (most recent call last):"
#: A record of ``logging`` at level ERROR in the format of ``scripting.start``.
_ERROR_RECORD = re.compile(r"^\S+ \S+ ERROR \S+: (?P<message>.*)$")


def first_error_line(text: str) -> str | None:
    """The first line of the error a job's log text ends with, or None if it shows none.

    That is the exception line (``ValueError: <first line of the message>``) of the last
    Python traceback; without a traceback, the message of the last ``ERROR`` record.
    """
    lines = text.splitlines()
    start = max((i for i, line in enumerate(lines) if line.strip() == _TRACEBACK), default=None)
    if start is not None:
        for line in lines[start + 1 :]:
            if line.strip() and not line[0].isspace():
                return line.strip()
    for line in reversed(lines):
        match = _ERROR_RECORD.match(line)
        if match:
            return match.group("message").strip()
    return None


def failed_job_causes(jobs: Iterable[tuple[str, Sequence[str | os.PathLike[str]]]]) -> list[str]:
    """One line per failed job, ``<rule> (<log>): <first error line>``.

    Parameters
    ----------
    jobs
        ``(rule name, log files)`` of each failed job; the first log holding an error is
        quoted (a job without one is said to have none, with its log's last line).
    """
    out = []
    for rule, logs in jobs:
        cause, shown = None, ", ".join(map(str, logs)) or "no log"
        last = ""
        for log in logs:
            try:
                text = Path(log).read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                last = f"cannot read {log}: {exc.strerror}"
                continue
            last = next((line for line in reversed(text.splitlines()) if line.strip()), last)
            cause = first_error_line(text)
            if cause is not None:
                shown = str(log)
                break
        if cause is None:
            cause = f"no error message in the log; its last line: {last.strip()[:300]!r}"
        out.append(f"{rule} ({shown}): {cause}")
    return out
