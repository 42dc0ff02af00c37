"""Shared pytest configuration.

Hypothesis runs deterministically (``derandomize=True``: the same examples on every run and
machine, so a failure is always reproducible) with a modest number of examples so that the unit
tests stay fast. ``HYPOTHESIS_PROFILE=thorough`` explores ten times more examples, still
deterministically; ``HYPOTHESIS_PROFILE=random`` explores new examples each run.
"""

from __future__ import annotations

import compileall
import os

from hypothesis import HealthCheck, settings

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}

settings.register_profile("deterministic", derandomize=True, max_examples=60, **_COMMON)
settings.register_profile("thorough", derandomize=True, max_examples=600, **_COMMON)
settings.register_profile("random", derandomize=False, max_examples=200, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import readme_clone  # noqa: E402
import slurm_session  # noqa: E402
import snakemake_fork  # noqa: E402
from _pytest.mark.expression import Expression  # noqa: E402
from _workflow import need_shared_data  # noqa: E402
from http_server import LocalHTTPServer  # noqa: E402


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data copies (``../shared/data``); a test using it skips, saying what is
    missing, when the folder is absent. Tests that need particular files use
    ``_workflow.requires_shared_data(*parts)`` or ``need_shared_data(*parts)``."""
    return need_shared_data()


@pytest.fixture
def http_server():
    """A real HTTP server on 127.0.0.1 (tests/http_server.py), stopped after the test."""
    server = LocalHTTPServer().start()
    try:
        yield server
    finally:
        server.stop()


_README_BLOCK = pytest.StashKey[tuple[Path, object]]()
_SLURM_SESSION = pytest.StashKey[tuple[Path, object]]()
_JOB_ZYGOTES = pytest.StashKey[object]()
# Options with which pytest runs no tests (it still calls pytest_configure/unconfigure).
_NO_TESTS = ("collectonly", "help", "version", "showfixtures", "show_fixtures_per_test", "markers")
TESTS = Path(__file__).resolve().parent


def selects(markexpr: str, marks: set[str]) -> bool:
    """Whether the ``-m`` expression ``markexpr`` (pyproject's addopts: the fast tests only;
    ``-m ''``: every test) selects a test that carries exactly ``marks``."""
    if not markexpr:
        return True
    return Expression.compile(markexpr).evaluate(lambda name, **_: name in marks)


def _selects_file(config: pytest.Config, name: str) -> bool:
    """Whether the session's arguments (or testpaths) include tests/``name``."""
    target = TESTS / name
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::", 1)[0]).resolve()
        if path == target or path in target.parents:
            return True
    return False


def _runs_tests(config: pytest.Config) -> bool:
    return not any(getattr(config.option, name, False) for name in _NO_TESTS)


def selects_slurm_tests(config: pytest.Config) -> bool:
    """Whether the session runs test_slurm.py's cluster tests (marked ``slurm``)."""
    markexpr = config.option.markexpr or ""
    return (
        _runs_tests(config)
        and selects(markexpr, {"slurm"})
        and _selects_file(config, "test_slurm.py")
    )


def _shares_job_zygotes(config: pytest.Config) -> bool:
    """Whether the session's first process starts the job zygotes that every xdist worker's
    Snakemake runs share (tests/snakemake_fork.py): when it runs workflow tests under xdist and
    the runs are forked."""
    markexpr = config.option.markexpr or ""
    return (
        _runs_tests(config)
        and selects(markexpr, {"workflow"})
        and bool(getattr(config.option, "numprocesses", None))
        and os.environ.get(snakemake_fork.MODE_VARIABLE, "fork") != "subprocess"
    )


def _selects_readme_block(config: pytest.Config) -> bool:
    """Whether the session runs test_readme.py's install tests (they need the README's first
    block: worth starting early only then)."""
    markexpr = config.option.markexpr or ""
    return (
        _runs_tests(config)
        and selects(markexpr, {"workflow", "install"})
        and _selects_file(config, "test_readme.py")
    )


def compile_library() -> None:
    """Byte-compile the library's sources (src/) once per session. With PYTHONDONTWRITEBYTECODE
    set (as on the CI machines) Python never caches what it compiles, so each of the suite's
    Snakemake job processes compiled the ldpsample modules it imports again (about 0.08 s of CPU
    each); compileall writes the cache whatever that variable says, imports then read it, and
    _workflow.copy_workflow copies it with the sources."""
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "src", quiet=1)


def pytest_configure(config: pytest.Config) -> None:
    """In the controller (xdist workers inherit the environment variables set here), once per
    session: byte-compile the library (compile_library); when the SLURM tests are selected,
    start the local SLURM cluster in the background (tests/slurm_session.py), and otherwise
    point ``SLURM_CONF`` at an empty file (docs/cluster.md: the SLURM plugin's probe then fails at
    once instead of waiting 9 s for a controller at every Snakemake start); and start the
    README's first block (tests/readme_clone.py) when test_readme.py's install tests run and no
    one started it before the session (``.ci/run`` does); start the job zygotes that the
    workers' Snakemake runs share (``_shares_job_zygotes``); and give the workers' numpy one BLAS
    thread unless the environment sets a count."""
    if hasattr(config, "workerinput"):
        return
    if _runs_tests(config):
        compile_library()
    if selects_slurm_tests(config) and slurm_session.cannot_start() is None:
        rc_file, proc = slurm_session.start()
        os.environ[slurm_session.ENV_VAR] = str(rc_file)
        config.stash[_SLURM_SESSION] = (rc_file, proc)
    elif not selects_slurm_tests(config):
        os.environ.setdefault("SLURM_CONF", os.devnull)
    if _shares_job_zygotes(config):
        config.stash[_JOB_ZYGOTES] = snakemake_fork.start_session_zygotes()
    if _selects_readme_block(config) and not readme_clone.started_outside():
        clone, proc = readme_clone.start()
        os.environ[readme_clone.ENV_VAR] = str(clone)
        config.stash[_README_BLOCK] = (clone, proc)
    # The workers outnumber the cores (pytest_xdist_auto_num_workers): OpenBLAS's threads in
    # each worker's numpy would spin beside the other workers and the jobs. Set after the
    # README block started (its environment is the user's); Snakemake sets it per job itself.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the README's copy, stop the shared job zygotes, and stop the SLURM cluster if
    this session started it."""
    zygotes = config.stash.get(_JOB_ZYGOTES, None)
    if zygotes is not None:
        zygotes.stop()
    started = config.stash.get(_README_BLOCK, None)
    try:
        if started is not None:
            os.environ.pop(readme_clone.ENV_VAR, None)
            readme_clone.remove(*started)
    finally:
        slurm = config.stash.get(_SLURM_SESSION, None)
        if slurm is not None:
            os.environ.pop(slurm_session.ENV_VAR, None)
            slurm_session.stop(*slurm)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The SLURM tests first, then the other long tests (marked ``workflow``, ``install``,
    ``data`` or ``slow``: seconds to a minute each), the fast tests (milliseconds) last, each
    group in file order. With ``--dist loadscope --no-loadscope-reorder`` (pyproject's addopts)
    the workers take the long modules while every worker is busy and end on the short ones.
    xdist's default order, most tests first, started the few-test long modules (the equivalence
    runs, SLURM, WPM) last, and one worker ran them while the others had finished; in file order
    test_slurm.py (about 90 s, mostly waiting on the cluster's status checks) still started two
    minutes in and ended 35 s after the rest, while first it waits beside the other workers."""
    items.sort(key=_start_group)  # stable: file order within a group


#: Markers of the tests that take seconds to minutes (pyproject's markers), started after SLURM's.
LONG_MARKERS = ("workflow", "install", "data", "slow")


def _start_group(item: pytest.Item) -> int:
    if item.get_closest_marker("slurm"):
        return 0
    return 1 if any(item.get_closest_marker(name) for name in LONG_MARKERS) else 2


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Workers for ``-n auto`` (pyproject's addopts): one per core plus one, because many tests
    spend their time waiting on a subprocess (Snakemake, SLURM, pip). On the 2-core machine, quiet:
    the suite took 5:24 with 2 workers, 4:29 with 3 and 4:54 with 4."""
    return (os.cpu_count() or 1) + 1
