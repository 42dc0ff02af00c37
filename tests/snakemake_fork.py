"""Snakemake runs for the tests, each a fork of one interpreter that has imported Snakemake.

A run is ``snakemake.cli.main(args)``, what ``python -m snakemake`` runs, in a process of its
own with the run's working folder, environment and arguments, stdin from /dev/null and stdout
and stderr to files. The process is forked from a server (this file run as a script, one per
pytest process) that imported Snakemake and the third-party modules it loads once, so a run
skips the interpreter's start and those imports, most of the CPU of a short run.

The server imports nothing of the project: each run reads the Snakefile, the rules and the
library from disk, and its script jobs are forked from zygotes that import nothing of it either
(tests/job_fork.py: the run's ``sys.executable`` is their client), so a test that edits any of
them sees its edit. Only modules outside the project are shared, loaded once in the
server's environment and folder; the one state among them that a run reads, Snakemake's
run directory, is set to the run's folder. What an interpreter reads when it starts cannot be
set after the fork, so a run whose ``PYTHON*`` or locale variables differ from the server's
runs as ``python -m snakemake``. Each run is a process group with its jobs: a timeout kills
them all, as does an interrupted wait, which also replaces the server.
``LDPSAMPLE_TEST_SNAKEMAKE=subprocess`` runs every Snakemake as ``python -m snakemake`` instead
(docs/testing.md).

The protocol: the client writes one JSON request per line on the server's stdin (``args``,
``cwd``, ``env``, ``stdout``, ``stderr``: file paths, ``stderr`` null for "with stdout"); the
server answers on its stdout with ``{"pid": ...}`` once the run's process exists and
``{"returncode": ...}`` when it has ended (the negative signal number if a signal ended it).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

import job_fork

#: What the server imports before its first fork: Snakemake's command line and the modules a
#: run of this workflow loads from outside the project (a dry run and a real run of the default
#: config), so that no run spends its CPU importing them. A name that fails to import is
#: skipped (a run then imports it itself, as a subprocess would).
PRELOAD = (
    "snakemake.cli",
    "snakemake.api",
    "snakemake.dag",
    "snakemake.scheduling.job_scheduler",
    "snakemake.jobs",
    "snakemake.persistence",
    "snakemake.report",
    "snakemake.script",
    "snakemake.shell",
    "snakemake.workflow",
    "snakemake.profiles",
    "snakemake.assets",
    "snakemake.report.html_reporter",
    "snakemake_executor_plugin_slurm",
    "snakemake_executor_plugin_slurm_jobstep",
    "pandas",
    "yaml",
    "jsonschema",
    "fastjsonschema",
    "docutils.core",
    "nbformat",
    "jinja2",
    "pygments",
    "requests",
    "smart_open",
    "yte",
    "dpath",
    "PIL.Image",
    "argparse_dataclass",
    "difflib",
    "graphlib",
    "packaging.version",
    "platformdirs",
)

#: The environment variable that picks how the tests run Snakemake.
MODE_VARIABLE = "LDPSAMPLE_TEST_SNAKEMAKE"
#: The environment the server starts in: this process's when the tests are collected, before
#: any test changes it (a run gets the environment of its call).
_SERVER_ENV = dict(os.environ)


# --- the server (this file run as a script) -------------------------------------------------


def _serve() -> None:
    """Import ``PRELOAD``, then fork one run per request line until stdin closes."""
    import importlib

    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything an import prints goes to stderr, not into the replies
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    project = sorted(name for name in sys.modules if name.split(".")[0] == "ldpsample")
    if project:
        raise RuntimeError(f"the fork server must not import the project, but has {project}")
    job_fork.freeze_heap()
    main = sys.modules["snakemake.cli"].main
    entry = str(Path(sys.modules["snakemake"].__file__).with_name("__main__.py"))
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            replies.close()
            _run(main, entry, request)  # never returns
        with contextlib.suppress(OSError):  # the child's own call may have come first
            os.setpgid(pid, pid)
        replies.write(json.dumps({"pid": pid}) + "\n")
        _, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}) + "\n")


def _run(main, entry: str, request: dict) -> None:
    """In the forked process: set up the run's streams, folder and environment, run Snakemake's
    command line, and exit with its status without returning to the server's loop."""
    code = 1
    try:
        # The run and its jobs in a process group of their own, which the client kills whole.
        os.setpgid(0, 0)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        out = os.open(request["stdout"], flags, 0o644)
        os.dup2(out, 1)
        os.dup2(os.open(request["stderr"], flags, 0o644) if request["stderr"] else out, 2)
        os.chdir(request["cwd"])
        # The one import-time state of Snakemake that a run reads: the Workflow class records
        # the folder it was imported in as the run directory (``python -m snakemake`` imports
        # it in the run's folder; test_snakemake_fork.py compares the consoles).
        sys.modules["snakemake.workflow"].Workflow._rundir = str(Path.cwd().absolute())
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [entry, *request["args"]]
        sys.path[0] = request["cwd"]  # ``python -m`` puts the current folder first
        if request.get("python"):
            sys.executable = request["python"]  # script jobs fork from a zygote (job_fork.py)
        try:
            main(request["args"])
            code = 0
        except SystemExit as exit_:
            code = job_fork.exit_code(exit_)
    except BaseException:
        traceback.print_exc()
    finally:
        job_fork.end_as_interpreter(code)


# --- the client (imported by the tests) ----------------------------------------------------


class _Server:
    """One server process and the lock that keeps its runs one at a time."""

    def __init__(self) -> None:
        env = {**_SERVER_ENV, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-u", __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            bufsize=1,
        )
        self.replies = self.proc.stdout.fileno()
        self.pending = b""
        self.lock = threading.Lock()
        self.jobs = _zygotes()
        atexit.register(self.stop)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def _reply(self, timeout: float | None) -> dict | None:
        """The server's next reply, or None if none came within ``timeout`` seconds. Read
        from the pipe's descriptor into ``self.pending``: a buffered reader could take both
        replies of a short run at once and leave the second to a wait that never ends."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.pending:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self.replies], [], [], wait)[0]:
                return None
            chunk = os.read(self.replies, 1 << 16)
            if not chunk:
                raise RuntimeError(f"the Snakemake fork server ended ({self.proc.wait()})")
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return json.loads(line)

    def run(
        self, args: list[str], cwd: Path, env: dict[str, str], timeout: float, merge: bool
    ) -> subprocess.CompletedProcess:
        with self.lock, tempfile.TemporaryDirectory(prefix="snakemake-run-") as streams:
            out, err = Path(streams, "stdout"), Path(streams, "stderr")
            request = {
                "args": list(args),
                "cwd": str(Path(cwd).resolve()),
                "env": {**env, job_fork.SOCKETS_VARIABLE: self.jobs.folder},
                "stdout": str(out),
                "stderr": None if merge else str(err),
                "python": self.jobs.client,
            }
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            pid = None
            try:
                pid = self._reply(None)["pid"]
                done = self._reply(timeout)
                if done is None:
                    _kill_group(pid)
                    self._reply(None)
            except BaseException:
                # Interrupted (a signal, or the server ended) with the run's reply unread: end
                # the run, its jobs and this server, which the next call replaces.
                if pid is not None:
                    _kill_group(pid)
                self.proc.kill()
                self.proc.wait()
                raise
            stdout = out.read_text(errors="replace")
            stderr = None if merge else err.read_text(errors="replace")
            if done is None:
                raise subprocess.TimeoutExpired(["snakemake", *args], timeout, stdout, stderr)
            return subprocess.CompletedProcess(
                ["snakemake", *args], done["returncode"], stdout, stderr
            )


class _Zygotes:
    """The job zygotes the runs of this process use (tests/job_fork.py): one per thread count
    in ``job_fork.THREADS``, each started in the server's environment with the thread variables
    set, listening in a temporary folder that also holds the client a run uses as its Python.
    Started by the test session's first process (:func:`start_session_zygotes`), whose xdist
    workers find them through ``job_fork.SOCKETS_VARIABLE``, or else by the first run of this
    process. A zygote ends when its stdin closes, at its starter's exit."""

    def __init__(self, folder: str | None = None) -> None:
        self.procs: list[subprocess.Popen] = []
        if folder is not None:  # another process's zygotes: use, do not own
            self.folder, self.client = folder, str(Path(folder, "python"))
            return
        self.folder = tempfile.mkdtemp(prefix="ldpsample-jobs-")
        self.client = job_fork.client_path(self.folder, sys.executable)
        self.procs = [
            subprocess.Popen(
                [sys.executable, job_fork.__file__, str(Path(self.folder, f"threads-{n}.sock"))],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                env={**_SERVER_ENV, **dict.fromkeys(job_fork.THREAD_VARIABLES, n)},
            )
            for n in job_fork.THREADS
        ]
        atexit.register(self.stop)

    def stop(self) -> None:
        if not self.procs:
            return
        for proc in self.procs:
            proc.stdin.close()
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


_ZYGOTES: _Zygotes | None = None


def _zygotes() -> _Zygotes:
    """The job zygotes of this process's runs: the session's, or its own started on first use."""
    global _ZYGOTES
    if _ZYGOTES is None:
        shared = os.environ.get(job_fork.SOCKETS_VARIABLE)
        usable = bool(shared) and Path(shared, "python").is_file()
        _ZYGOTES = _Zygotes(shared if usable else None)
    return _ZYGOTES


def start_session_zygotes() -> _Zygotes:
    """Start the job zygotes in the test session's first process and export their folder, so
    that its xdist workers (which inherit the environment) share them instead of each starting
    its own; they stop when this process exits (``stop``)."""
    zygotes = _zygotes()
    os.environ[job_fork.SOCKETS_VARIABLE] = zygotes.folder
    return zygotes


def _kill_group(pid: int) -> None:
    """Kill a run's process group: the forked Snakemake and every job it started."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def _starts_alike(env: dict[str, str]) -> bool:
    """Whether an interpreter started with ``env`` would start as the server did: the same
    ``PYTHON*`` variables (``sys.path``, the hash seed, the streams' encoding) and locale. A run
    whose environment differs there runs as ``python -m snakemake``."""
    return job_fork.starts_alike(
        env,
        _SERVER_ENV,
        prefixes=("PYTHON", "LC_"),
        names=("LANG",),
        ignored=("PYTHONUNBUFFERED",),
    )


_SERVER: _Server | None = None


def run(
    args: list[str] | tuple[str, ...],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: float = 1200,
    merge_stderr: bool = False,
) -> subprocess.CompletedProcess:
    """Run Snakemake's command line with ``args`` in ``cwd`` (environment ``env``, default this
    process's, with ``PYTHONUNBUFFERED=1``); return the CompletedProcess with text stdout and
    stderr (stderr None and folded into stdout with ``merge_stderr``, in the order written).
    Raises ``subprocess.TimeoutExpired`` after ``timeout`` seconds, the run and its jobs
    killed."""
    global _SERVER
    env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    if os.environ.get(MODE_VARIABLE, "fork") == "subprocess" or not _starts_alike(env):
        return subprocess.run(
            [sys.executable, "-m", "snakemake", *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
            text=True,
            timeout=timeout,
        )
    if _SERVER is None or _SERVER.proc.poll() is not None:
        _SERVER = _Server()
    return _SERVER.run(list(args), Path(cwd), env, timeout, merge_stderr)


if __name__ == "__main__":
    _serve()
