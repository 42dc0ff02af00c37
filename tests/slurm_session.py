"""The local SLURM cluster kept up for the whole test session, started in the background.

Why: snakemake-executor-plugin-slurm 2.8.0 runs ``scontrol show config`` when it is imported,
and Snakemake imports every installed executor plugin at every start, dry runs included. With
the SLURM client installed but no controller running, that call waits 9 s before it fails, so
each of the suite's ~100 Snakemake runs started 9 s late (``snakemake -n``: 10.3 s with the
controller down, 1.4 s with it up). With the controller up, the probe answers at once.

How: ``conftest.pytest_configure`` (the xdist controller, or the only process) calls
:func:`start`, which runs ``../shared/tools/local-slurm.sh start`` in its own session, output to
``start.log`` and exit code to ``start.rc`` in a temporary folder, and exports the ``.rc`` path
as ``LDPSAMPLE_SLURM_SESSION`` (xdist workers inherit it). ``test_slurm.py``'s ``slurm_cluster``
fixture :func:`wait`s for it instead of starting a cluster of its own, and
``conftest.pytest_unconfigure`` calls :func:`stop`, which stops the cluster only if this session
started it.

When: when the session selects test_slurm.py's ``slurm`` tests (``conftest.selects_slurm_tests``:
the ``-m`` expression and the paths; ``pytest -m ''`` and ``-m slurm`` do, plain ``pytest`` does
not), the tool exists and we are root (:func:`cannot_start`). Not only when ``scontrol`` is on
PATH: local-slurm.sh installs the SLURM packages itself, exactly as test_slurm.py's fixture has it
do, so a session that runs the slurm tests needs the start either way; starting it at once
overlaps it with the other tests. A session without the SLURM tests starts nothing and sets
``SLURM_CONF`` to an empty file instead, so that the probe fails at once. The session end waits
for the start to finish before stopping the cluster.

Whether a cluster is already up is decided in the background too, because asking ``sinfo``
takes the same 9 s when no controller answers. If one is up (``sinfo`` shows a node
idle/mix/alloc), the session neither starts nor stops anything; otherwise it writes the
``started`` marker and runs the start, and :func:`stop` stops what the marker says it started.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCAL_SLURM = ROOT.parent / "shared" / "tools" / "local-slurm.sh"
ENV_VAR = "LDPSAMPLE_SLURM_SESSION"
TIMEOUT = 900  # seconds for local-slurm.sh start or stop (package install included)
UP_STATES = ("idle", "mix", "alloc")  # sinfo node states of a cluster that is up


@dataclass(frozen=True)
class Outcome:
    """How the session's background start ended."""

    code: int  # the exit code (0 also when a cluster was already up)
    started: bool  # whether this session ran local-slurm.sh start (and so owns the cluster)
    log: str  # the output of the check and of local-slurm.sh start


def cannot_start() -> str | None:
    """Why this machine cannot start the local cluster (None if it can)."""
    if not LOCAL_SLURM.is_file():
        return f"{LOCAL_SLURM} (which starts a local SLURM cluster) is absent"
    if os.geteuid() != 0:
        return f"{LOCAL_SLURM} must run as root to start a SLURM cluster"
    return None


def local_slurm(command: str) -> subprocess.CompletedProcess[str]:
    """Run ``local-slurm.sh <command>`` (start, stop or status) and wait for it."""
    return subprocess.run(
        ["bash", str(LOCAL_SLURM), command], capture_output=True, text=True, timeout=TIMEOUT
    )


def _started_marker(rc_file: Path) -> Path:
    return rc_file.with_suffix(".started")


def start() -> tuple[Path, subprocess.Popen[bytes]]:
    """Start the cluster in the background unless one is up; returns the ``.rc`` file (written
    when the start ends, with its exit code) and the process."""
    rc_file = Path(tempfile.mkdtemp(prefix="ldpsample-slurm-session-")) / "start.rc"
    states = "|".join(UP_STATES)
    tool, rc, started = (
        shlex.quote(str(p)) for p in (LOCAL_SLURM, rc_file, _started_marker(rc_file))
    )
    log = shlex.quote(str(rc_file.with_suffix(".log")))
    script = (
        "( if command -v sinfo >/dev/null && timeout 30 sinfo --noheader --format=%t "
        f"2>/dev/null | grep -qxE '{states}'; then "
        "echo 'a SLURM cluster is already up: the session neither starts nor stops it'; "
        f"else touch {started} && bash {tool} start; fi ) > {log} 2>&1; "
        f"echo $? > {rc}.part; mv {rc}.part {rc}"
    )
    proc = subprocess.Popen(
        ["bash", "-c", script], stdin=subprocess.DEVNULL, start_new_session=True
    )
    return rc_file, proc


def from_env() -> Path | None:
    """The ``.rc`` file of the session's start (None if the session started nothing)."""
    value = os.environ.get(ENV_VAR)
    return Path(value) if value else None


def wait(rc_file: Path, timeout: float = TIMEOUT) -> Outcome:
    """Wait for the session's background start to end (TimeoutError after ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while not rc_file.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{LOCAL_SLURM} start did not end in {timeout} s ({rc_file})")
        time.sleep(1)
    log = rc_file.with_suffix(".log").read_text(errors="replace")
    code = int(rc_file.read_text().strip())
    return Outcome(code, _started_marker(rc_file).exists(), log)


def stop(rc_file: Path, proc: subprocess.Popen[bytes]) -> subprocess.CompletedProcess[str] | None:
    """At the session's end: let the start finish (killing it only after ``TIMEOUT`` s), stop the
    cluster if this session started it, and remove the start's files. Returns the stop's result
    (None when a cluster was already up and was left running)."""
    try:
        proc.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
    try:
        if not _started_marker(rc_file).exists():
            return None
        stopped = local_slurm("stop")
        if stopped.returncode != 0:
            print(f"{LOCAL_SLURM} stop failed:\n{stopped.stderr[-3000:]}", file=sys.stderr)
        return stopped
    finally:
        shutil.rmtree(rc_file.parent, ignore_errors=True)
