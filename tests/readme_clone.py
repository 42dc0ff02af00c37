"""The README's first set-up block, run literally on a fresh copy of the tracked files beside the
project (so ../shared resolves), started in the background when the test session starts.

The block is mostly a pip install (about three minutes, much of it waiting on the package
index), so ``conftest.pytest_configure`` starts it before the other tests run and
``test_readme.py`` waits for it; the copy is removed when the session ends. Under xdist the
controller starts it once and the workers find it through ``LDPSAMPLE_README_CLONE``; a
session that does not select test_readme.py's workflow tests does not start it.

``.ci/run`` starts it before its own install instead (``python3 tests/readme_clone.py start``,
standard library only), on the core that pip leaves idle, exports ``LDPSAMPLE_README_CLONE``,
and removes it when it exits (``python3 tests/readme_clone.py remove <clone>``); a session that
finds the variable set waits for that block and leaves its removal to whoever started it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
ENV_VAR = "LDPSAMPLE_README_CLONE"
TIMEOUT = 1500


def setup_blocks() -> list[str]:
    """The bash code blocks of the README's "Set up" section, in order."""
    section = README.read_text().split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)]


def _copy_tracked_files(clone: Path) -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, clone / name)


def start() -> tuple[Path, subprocess.Popen[bytes]]:
    """Copy the tracked files and start the first block in the copy; its output goes to
    ``<clone>.log`` and its exit code to ``<clone>.rc`` when it ends."""
    clone = ROOT.parent / f".ldpsample-readme-test-{uuid.uuid4().hex[:8]}"
    _copy_tracked_files(clone)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    # The block runs Snakemake locally. Its SLURM plugin still asks ``scontrol show config`` at
    # start, which waits 9 s where the SLURM client is installed and no controller is up yet (the
    # session starts the cluster in the background; docs/cluster.md): an empty config answers at
    # once, as on a machine without SLURM.
    env.setdefault("SLURM_CONF", os.devnull)
    script = (
        f"( {setup_blocks()[0]} ) > {clone}.log 2>&1; "
        f"echo $? > {clone}.rc.part; mv {clone}.rc.part {clone}.rc"
    )
    quiet = subprocess.DEVNULL  # the block writes to its log; a caller's pipe is not held open
    proc = subprocess.Popen(
        ["bash", "-c", script],
        cwd=clone,
        env=env,
        stdin=quiet,
        stdout=quiet,
        stderr=quiet,
        start_new_session=True,
    )
    Path(f"{clone}.pid").write_text(str(proc.pid))
    return clone, proc


def started_outside() -> bool:
    """Whether ``LDPSAMPLE_README_CLONE`` names a copy that someone started before this
    session (``.ci/run``)."""
    clone = os.environ.get(ENV_VAR)
    return bool(clone) and Path(clone).is_dir()


def wait(clone: Path) -> None:
    """Wait for the first block in ``clone`` to end; raise with its output's tail if it failed."""
    rc_file = Path(f"{clone}.rc")
    deadline = time.monotonic() + TIMEOUT
    while not rc_file.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the README's first block did not end in {TIMEOUT} s ({clone})")
        time.sleep(1)
    code = int(rc_file.read_text().strip())
    if code != 0:
        log = Path(f"{clone}.log").read_text(errors="replace")
        raise AssertionError(f"the README's first block exited with {code}:\n{log[-8000:]}")


def copy_run(clone: Path, dest: Path) -> Path:
    """Wait for the first block in ``clone`` to end, then copy the folder (results, logs and
    Snakemake's records; not its virtual environment, nor a report or lock that a test may be
    writing there at the time) to ``dest``, with the files' times: the run, in a folder that was
    moved (test_workflow.py's default run)."""
    wait(clone)
    ignore = shutil.ignore_patterns(".venv", "report.html", "locks")
    shutil.copytree(clone, dest, symlinks=True, ignore=ignore)
    return dest


def remove(clone: Path, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Stop the block if it still runs (``proc``, or the process group that ``<clone>.pid``
    names while ``<clone>.rc`` is missing) and remove the copy and its files."""
    if proc is not None and proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
    elif proc is None and not Path(f"{clone}.rc").exists():
        pid_file = Path(f"{clone}.pid")
        if pid_file.exists():
            _stop_group(int(pid_file.read_text()))
    shutil.rmtree(clone, ignore_errors=True)
    for suffix in (".log", ".rc", ".rc.part", ".pid"):
        Path(f"{clone}{suffix}").unlink(missing_ok=True)


def _stop_group(pgid: int, timeout: float = 60) -> None:
    """SIGTERM the process group ``pgid`` and wait until none of it is left."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)


def main(argv: list[str]) -> int:
    """``start``: start the block, print the copy's path; ``remove <clone>``: stop and remove it."""
    if argv == ["start"]:
        print(start()[0])
        return 0
    if len(argv) == 2 and argv[0] == "remove":
        remove(Path(argv[1]))
        return 0
    print("usage: readme_clone.py start | remove <clone>", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
