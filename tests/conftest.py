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
