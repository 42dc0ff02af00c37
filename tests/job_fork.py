"""Snakemake's script jobs in the tests, each a fork of one interpreter that has imported the
third-party modules the jobs load (numpy, scipy, pandas, matplotlib, seaborn, Snakemake's
containers for the script preamble).

A script job is ``<python> <workdir>/.snakemake/scripts/tmpXXXX.<rule>.py``, where ``<python>``
is the running Snakemake's ``sys.executable``. In a run forked by tests/snakemake_fork.py that
is :func:`client_path`: a small client that sends the script's path, the job's folder,
environment and process group, and its stdin, stdout and stderr (the descriptors themselves),
to a *zygote* over a Unix socket. The zygote forks a waiter, which forks the job; the job joins
the client's process group (so a run's timeout kills it with the run), takes the descriptors,
folder, environment, ``sys.argv`` and ``sys.path[0]`` an interpreter started on the script
would have, and runs the script as ``__main__``, ending as such an interpreter ends (threads
joined, ``atexit`` handlers run, the exit status or the traceback of an uncaught exception).
The waiter sends the client the job's pid, then its exit status; the client forwards the
signals it gets to the job and exits with that status (or dies of the same signal).

Anything else run with ``<python>`` (``python -m snakemake`` of a ``run:`` job or of SLURM, a
test's ``python -c``) is the real interpreter, ``exec``-ed by the client. So is a script job
whose environment an interpreter would start differently than the zygote did: each zygote
starts with the server's environment plus one value of the thread variables that Snakemake
sets per job and OpenBLAS reads when numpy is imported (``OPENBLAS_NUM_THREADS`` and its
siblings, one zygote per value in ``THREADS``), and a job whose ``PYTHON*``, locale,
matplotlib or thread variables differ from its zygote's runs in a fresh interpreter.

The zygotes import nothing of the project (they refuse to start if they did) and not polars,
which sizes its thread pool from ``POLARS_MAX_THREADS`` when it is imported: each job imports
those from disk, so an edit of the library or a script reaches the next job. What a job shares
with its zygote is loaded third-party code and the interpreter's start: the hash seed, and the
legacy global numpy generator, which the job reseeds from the system as a fresh import would.
``LDPSAMPLE_TEST_SNAKEMAKE=subprocess`` runs every job (and run) in a fresh interpreter
(docs/testing.md).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import struct
import sys

#: The third-party modules a zygote imports before its first fork (a name that fails to
#: import is skipped): what the workflow's scripts load from outside the project, but polars.
PRELOAD = (
    "snakemake.iocontainers",
    "snakemake.script",
    "numpy",
    "scipy.special",
    "scipy.stats",
    "scipy.optimize",
    "scipy.sparse",
    "scipy.sparse.csgraph",
    "scipy.linalg",
    "scipy.spatial",
    "pandas",
    "pyarrow",
    "pyarrow.parquet",
    "matplotlib",
    "matplotlib.pyplot",
    "seaborn",
    "PIL.Image",
    "yaml",
    "requests",
    "tqdm",
    "pooch",
    "ot",
    "concurrent.futures",
    "logging.handlers",
    "sqlite3",
    "tarfile",
    "zipfile",
    "gzip",
    "bz2",
    "lzma",
    "uuid",
    "secrets",
    "decimal",
    "statistics",
    "zoneinfo",
    "csv",
    "tomllib",
    "timeit",
)
#: Modules a zygote must not have imported: the project, and polars (see the module's text).
FORBIDDEN = ("ldpsample", "polars")
#: The variables Snakemake sets to a job's thread count (snakemake.shell) and numpy's OpenBLAS
#: reads at import; a zygote starts with each of them set to one value of ``THREADS``.
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "GOTO_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
#: The thread counts a zygote is started for: the tests run Snakemake with 1 or 2 cores.
THREADS = ("1", "2")
#: The environment variable that tells a client where the zygotes' sockets are.
SOCKETS_VARIABLE = "LDPSAMPLE_TEST_JOB_ZYGOTES"
_HEADER = struct.Struct("!I")


def starts_alike(
    env: dict[str, str],
    start_env: dict[str, str],
    *,
    prefixes: tuple[str, ...],
    names: tuple[str, ...] = (),
    ignored: tuple[str, ...] = (),
) -> bool:
    """Whether an interpreter started with ``env`` would start as one started with
    ``start_env`` did: the same value (or absence) of every variable named by ``prefixes`` or
    ``names``, but the ``ignored`` ones, in either environment."""
    keys = {k for k in (*env, *start_env) if k.startswith(prefixes) or k in names}
    return all(env.get(k) == start_env.get(k) for k in keys - set(ignored))


def _start_alike(env: dict[str, str], zygote_env: dict[str, str]) -> bool:
    """Whether a job started with ``env`` would import what the zygote imported alike: the
    same ``PYTHON*`` variables (but ``PYTHONUNBUFFERED``, which the job's streams follow, and
    ``PYTHONPATH``, see :func:`_shadows`), locale, matplotlib variables, ``HOME`` and thread
    variables."""
    return starts_alike(
        env,
        zygote_env,
        prefixes=("PYTHON", "LC_", "MPL", "XDG_"),
        names=("LANG", "HOME", *THREAD_VARIABLES),
        ignored=("PYTHONUNBUFFERED", "PYTHONPATH"),
    )


def _python_path(env: dict[str, str], cwd: str) -> list[str]:
    """The folders of ``PYTHONPATH`` in ``env``, absolute from ``cwd``, as an interpreter puts
    them on ``sys.path`` after the script's folder."""
    return [
        os.path.normpath(os.path.join(cwd, part))
        for part in env.get("PYTHONPATH", "").split(os.pathsep)
        if part
    ]


def _shadows(folders: list[str]) -> bool:
    """Whether a module or package in ``folders`` has the name of one the zygote imported
    (then a fresh interpreter would import that one instead)."""
    loaded = {name.split(".")[0] for name in sys.modules}
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            stem = name.split(".")[0] if name.endswith((".py", ".so", ".pyc")) else name
            if stem in loaded:
                return True
    return False


# --- the client: what a forked run's Snakemake calls as its Python --------------------------


def _script_job(argv: list[str]) -> bool:
    """Whether ``argv`` (without the interpreter) is one Snakemake script job."""
    return (
        len(argv) == 1
        and argv[0].endswith(".py")
        and os.sep + os.path.join(".snakemake", "scripts") + os.sep in argv[0]
    )


def _read_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the zygote closed the connection")
        data += chunk
    return data


def _send_message(conn: socket.socket, payload: bytes, fds: list[int] | None = None) -> None:
    header = _HEADER.pack(len(payload))
    if fds:
        socket.send_fds(conn, [header], fds)
    else:
        conn.sendall(header)
    conn.sendall(payload)


def _read_message(conn: socket.socket, max_fds: int = 0) -> tuple[bytes, list[int]]:
    if max_fds:
        header, fds, _, _ = socket.recv_fds(conn, _HEADER.size, max_fds)
        if len(header) < _HEADER.size:
            header += _read_exactly(conn, _HEADER.size - len(header))
    else:
        header, fds = _read_exactly(conn, _HEADER.size), []
    return _read_exactly(conn, _HEADER.unpack(header)[0]), fds


def client_main(real_python: str) -> None:
    """The client (see the module's text); ``real_python`` is the interpreter it stands for."""
    import json

    argv = sys.argv[1:]
    folder = os.environ.get(SOCKETS_VARIABLE)
    threads = os.environ.get("OPENBLAS_NUM_THREADS")
    path = os.path.join(folder, f"threads-{threads}.sock") if folder and threads else None
    if path is None or not _script_job(argv):
        os.execv(real_python, [real_python, *argv])
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:  # no zygote for this thread count, or not listening yet
        os.execv(real_python, [real_python, *argv])
    request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "pgid": os.getpgid(0)}
    _send_message(conn, json.dumps(request).encode(), [0, 1, 2])
    reply = json.loads(_read_message(conn)[0])
    if "exec" in reply:
        conn.close()
        os.execv(real_python, [real_python, *argv])
    job = reply["pid"]

    def forward(signum, _frame):
        with contextlib.suppress(ProcessLookupError):
            os.kill(job, signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, forward)
    try:
        code = json.loads(_read_message(conn)[0])["returncode"]
    except ConnectionError:
        print("job_fork: the zygote's waiter ended without the job's status", file=sys.stderr)
        code = 1
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


def client_path(folder: str, real_python: str) -> str:
    """Write the client as an executable ``<folder>/python`` for ``real_python``; return its
    path. It starts isolated and without site (``-IS``): it needs the standard library only."""
    path = os.path.join(folder, "python")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(path, "w", encoding="utf-8") as out:
        out.write(
            f"#!{real_python} -IS\n"
            f"import sys\nsys.path.insert(0, {here!r})\n"
            f"import job_fork\njob_fork.client_main({real_python!r})\n"
        )
    os.chmod(path, 0o755)
    return path


# --- the zygote (this file run as a script) -------------------------------------------------


def freeze_heap() -> None:
    """Move every object the process holds so far out of the garbage collector's reach
    (``gc.freeze``, as Python's documentation advises before ``fork()`` without ``exec()``): a
    forked child's collections then traverse only its own objects, instead of every object of
    the preloaded modules, which also copied each page they touched."""
    import gc

    gc.collect()
    gc.freeze()


def _zygote(path: str) -> None:
    """Import ``PRELOAD``, then serve script jobs on the Unix socket ``path``."""
    import importlib

    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    loaded = sorted(n for n in sys.modules if n.split(".")[0] in FORBIDDEN)
    if loaded:
        raise RuntimeError(f"a job zygote must not import {', '.join(loaded[:5])}")
    freeze_heap()
    import select

    start_env = dict(os.environ)
    # The zygote's own PYTHONPATH folders: a job's path drops them for its own. If one holds a
    # module the zygote imported, no job starts alike (a fresh one would not have it).
    own = _python_path(start_env, os.getcwd())
    own = None if _shadows(own) else own
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".part")
    listener.listen(64)
    os.rename(path + ".part", path)  # clients find the socket only once it listens
    while True:
        ready = select.select([listener, sys.stdin], [], [])[0]
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1 << 10):
            os.unlink(path)  # stdin closed: the pytest process that started it has ended
            return
        if listener not in ready:
            continue
        conn, _ = listener.accept()
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            listener.close()
            _wait_for_job(conn, start_env, own)  # never returns
        conn.close()
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass


def _wait_for_job(conn: socket.socket, start_env: dict[str, str], own: list[str] | None) -> None:
    """In the waiter: read the request, fork the job (or tell the client to ``exec`` when it
    would not start alike), report its pid and exit status. ``own``: the zygote's PYTHONPATH
    folders, None when they hold a module it imported."""
    import json

    code = 1
    try:
        payload, fds = _read_message(conn, max_fds=3)
        request = json.loads(payload)
        extra = _python_path(request["env"], request["cwd"])
        alike = own is not None and _start_alike(request["env"], start_env)
        if len(fds) != 3 or not alike or _shadows(extra):
            _send_message(conn, json.dumps({"exec": True}).encode())
            os._exit(0)
        job = os.fork()
        if job == 0:
            conn.close()
            _run_job(request, fds, extra, own)  # never returns
        for fd in fds:
            os.close(fd)
        _send_message(conn, json.dumps({"pid": job}).encode())
        _, status = os.waitpid(job, 0)
        _send_message(conn, json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())
        code = 0
    finally:
        os._exit(code)


def _run_job(request: dict, fds: list[int], extra: list[str], own: list[str]) -> None:
    """In the job: become what ``python <script>`` would be, run the script, exit as it would."""
    import runpy
    import traceback

    code = 1
    try:
        try:
            os.setpgid(0, request["pgid"])  # the client's group: killed with it
        except OSError:
            os.setpgid(0, 0)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
        stdin = io.BufferedReader(io.FileIO(0, "r", closefd=False))
        sys.stdin = io.TextIOWrapper(stdin, encoding=sys.stdin.encoding)
        sys.stdout = _stream(1, unbuffered, line=os.isatty(1), encoding=sys.stdout.encoding)
        sys.stderr = _stream(2, unbuffered, line=True, encoding=sys.stderr.encoding)
        script = request["argv"][0]
        sys.argv = list(request["argv"])
        # An interpreter's path: the script's folder, PYTHONPATH's, then the site's (the
        # zygote's own without its PYTHONPATH folders), each folder once.
        site = [path for path in sys.path[1:] if path not in own]
        sys.path[:] = list(dict.fromkeys([os.path.dirname(os.path.abspath(script)), *extra, *site]))
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            numpy.random.seed()  # a fresh interpreter's legacy generator is seeded anew
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as exit_:
            code = exit_code(exit_)
        except BaseException as error:
            # The traceback as an interpreter prints it: from the script's frame on (without
            # this module's and runpy's), or none for a script that did not compile.
            trace = error.__traceback__
            while trace is not None and trace.tb_frame.f_code.co_filename != script:
                trace = trace.tb_next
            sys.excepthook(type(error), error.with_traceback(trace), trace)
    except BaseException:
        traceback.print_exc()
    finally:
        end_as_interpreter(code)


def end_as_interpreter(code: int) -> None:
    """End a forked process as an interpreter ends: join its threads, run its ``atexit``
    handlers, flush its streams, then exit with ``code`` (without returning to the caller's
    loop or running the parent's cleanup)."""
    import atexit
    import threading

    try:
        threading._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def exit_code(exit_: SystemExit) -> int:
    """The status an interpreter ends with on an uncaught ``exit_``: its code, 0 for None; any
    other object is printed to stderr and gives 1."""
    if exit_.code is None or isinstance(exit_.code, int):
        return exit_.code or 0
    print(exit_.code, file=sys.stderr)
    return 1


def _stream(fd: int, unbuffered: bool, *, line: bool, encoding: str) -> io.TextIOWrapper:
    """A text stream on ``fd`` buffered as an interpreter's standard stream would be."""
    errors = "backslashreplace" if fd == 2 else "strict"
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(
        raw if unbuffered else io.BufferedWriter(raw),
        encoding=encoding,
        errors=errors,
        line_buffering=line,
        write_through=unbuffered,
    )


if __name__ == "__main__":
    _zygote(sys.argv[1])
