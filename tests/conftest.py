"""Shared pytest configuration.

Hypothesis runs deterministically (``derandomize=True``: the same examples on every run and
machine, so a failure is always reproducible) with a modest number of examples so that the unit
tests stay fast. ``HYPOTHESIS_PROFILE=thorough`` explores ten times more examples, still
deterministically; ``HYPOTHESIS_PROFILE=random`` explores new examples each run.
"""

from __future__ import annotations

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


def _selects_readme_block(config: pytest.Config) -> bool:
    """Whether the session runs test_readme.py's workflow tests (they need the README's first
    block: worth starting early only then)."""
    if config.option.collectonly or "not workflow" in (config.option.markexpr or ""):
        return False
    target = (Path(__file__).parent / "test_readme.py").resolve()
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::", 1)[0]).resolve()
        if path == target or path in target.parents:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    """Start the README's first block in the background (tests/readme_clone.py) once per
    session, in the controller (xdist workers inherit LDPSAMPLE_README_CLONE)."""
    if hasattr(config, "workerinput") or not _selects_readme_block(config):
        return
    clone, proc = readme_clone.start()
    os.environ[readme_clone.ENV_VAR] = str(clone)
    config.stash[_README_BLOCK] = (clone, proc)


def pytest_unconfigure(config: pytest.Config) -> None:
    started = config.stash.get(_README_BLOCK, None)
    if started is not None:
        os.environ.pop(readme_clone.ENV_VAR, None)
        readme_clone.remove(*started)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Workers for ``-n auto`` (pyproject's addopts): one per core plus one, because many tests
    spend their time waiting on a subprocess (Snakemake, SLURM, pip). On the 2-core machine, quiet:
    the suite took 5:24 with 2 workers, 4:29 with 3 and 4:54 with 4."""
    return (os.cpu_count() or 1) + 1
