"""Progress of long loops and scans: tqdm bars (off unless asked for) and phases that log their
start, a heartbeat with the rows done and the rate, and their end.

Bars go to ``sys.stderr``, and a phase's lines are log records marked as progress
(:data:`PROGRESS`): :func:`ldpsample.pipeline.scripting.start` sends both to the rule's log and
to the console Snakemake shows, so a long job is never silent there. Library calls stay silent
by default (a notebook sees the phases after ``logging.basicConfig(level=logging.INFO)``).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

__all__ = ["HEARTBEAT_SECONDS", "PROGRESS", "Phase", "is_progress", "phase", "progress"]

#: Seconds between two "still running" lines of a long :func:`phase`.
HEARTBEAT_SECONDS = 10.0
#: The ``extra`` of a phase's log records: a handler that shows progress only selects them by
#: :func:`is_progress`.
PROGRESS = {"ldpsample_progress": True}


def is_progress(record: logging.LogRecord) -> bool:
    """Whether a log record is a phase's progress line (:data:`PROGRESS`)."""
    return bool(getattr(record, "ldpsample_progress", False))


def progress(
    iterable: Iterable[T], *, desc: str, total: int | None = None, enabled: bool = False
) -> Iterable[T] | Iterator[T]:
    """``iterable`` wrapped in a tqdm bar on stderr when ``enabled``, else unchanged.

    The bar redraws at most every 2 s, so logs stay short on long runs.
    """
    if not enabled:
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, total=total, file=sys.stderr, mininterval=2.0, ascii=True)


class Phase:
    """What a running :func:`phase` has done: :meth:`add` counts rows (or other units), which
    its heartbeat reports with the rate since the start."""

    def __init__(self, unit: str) -> None:
        self.unit = unit
        self.done = 0
        self._lock = threading.Lock()

    def add(self, count: int) -> None:
        """Count ``count`` more units done."""
        with self._lock:
            self.done += int(count)

    def rate(self, seconds: float) -> str:
        """``, 3,000,000 rows (150,000 rows/s)`` once something is counted, else ``""``."""
        with self._lock:
            done = self.done
        if not done:
            return ""
        per_second = done / seconds if seconds > 0 else 0.0
        return f", {done:,} {self.unit} ({per_second:,.0f} {self.unit}/s)"


@contextlib.contextmanager
def phase(
    logger: logging.Logger, what: str, *, every: float = HEARTBEAT_SECONDS, unit: str = "rows"
) -> Iterator[Phase]:
    """Log ``what`` when it starts, every ``every`` seconds while it runs ("still running,
    20 s", with the rows done and the rate once the body counts them through the yielded
    :class:`Phase`'s ``add``) and when it ends with its elapsed time, so that a long scan (a
    polars ``collect`` releases the GIL while it runs) is never silent. INFO records marked
    :data:`PROGRESS` (a script's console shows them)."""
    start = time.perf_counter()
    done = Phase(unit)
    logger.info("%s ...", what, extra=PROGRESS)
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every):
            elapsed = time.perf_counter() - start
            logger.info(
                "%s: still running, %.0f s%s", what, elapsed, done.rate(elapsed), extra=PROGRESS
            )

    thread = threading.Thread(target=beat, name="ldpsample-phase", daemon=True)
    thread.start()
    try:
        yield done
    finally:
        stop.set()
        thread.join()
        elapsed = time.perf_counter() - start
        logger.info("%s: done in %.1f s%s", what, elapsed, done.rate(elapsed), extra=PROGRESS)
