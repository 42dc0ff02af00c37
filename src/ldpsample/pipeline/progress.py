"""Progress bars for long loops, off unless asked for (the pipeline's scripts ask).

Uses: tqdm and the standard library; no other ldpsample module.

Bars go to ``sys.stderr``, which :func:`ldpsample.pipeline.scripting.start` points at the rule's
log, so a long job's log shows how far it is. Library calls stay silent by default.
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

__all__ = ["phase", "progress"]

#: Seconds between two "still running" lines of a long :func:`phase`.
HEARTBEAT_SECONDS = 10.0


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


@contextlib.contextmanager
def phase(logger: logging.Logger, what: str, *, every: float = HEARTBEAT_SECONDS) -> Iterator[None]:
    """Log ``what`` when it starts, every ``every`` seconds while it runs ("still running,
    20 s") and when it ends with its elapsed time, so that a long scan (a polars ``collect``
    releases the GIL while it runs) is never silent in a job's log. INFO level: a notebook sees
    it after ``logging.basicConfig(level=logging.INFO)``."""
    start = time.perf_counter()
    logger.info("%s ...", what)
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every):
            logger.info("%s: still running, %.0f s", what, time.perf_counter() - start)

    thread = threading.Thread(target=beat, name="ldpsample-phase", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        logger.info("%s: done in %.1f s", what, time.perf_counter() - start)
