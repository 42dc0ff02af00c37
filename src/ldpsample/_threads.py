"""Thread counts for the library's numpy kernels (one rule instead of one per module).

numpy releases the GIL inside its loops, so :func:`ldpsample.apply_minimax`,
:meth:`ldpsample.MinimaxKernel.dense` and :func:`ldpsample.relative_mollifier_kl` split large
inputs into independent blocks over a few threads. Callers that hold a fixed allocation (a
Snakemake rule's ``threads:``, a SLURM job's CPUs) pass ``threads=`` down so that the library never
uses more cores than it was given; ``None`` keeps the default of up to :data:`DEFAULT_MAX_THREADS`
threads, capped by ``os.cpu_count()``.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["DEFAULT_MAX_THREADS", "check_threads", "run_split", "thread_count", "worker_count"]

#: Threads used with ``threads=None`` (further capped by ``os.cpu_count()``).
DEFAULT_MAX_THREADS = 8


def check_threads(threads: object) -> int | None:
    """Validate a ``threads`` argument: None or an integer >= 1.

    Raises
    ------
    TypeError
        If ``threads`` is neither None nor an integer (bools are rejected).
    ValueError
        If ``threads < 1``.
    """
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral):
        raise TypeError(f"threads must be a positive integer or None, got {threads!r}")
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads!r}")
    return int(threads)


def thread_count(threads: object) -> int:
    """The threads a caller given ``threads`` may use: ``threads`` itself (checked by
    :func:`check_threads`), or with None ``min(os.cpu_count(), DEFAULT_MAX_THREADS)``; the
    library's only rule for a default thread count."""
    return check_threads(threads) or min(os.cpu_count() or 1, DEFAULT_MAX_THREADS)


def worker_count(threads: int | None, tasks: int, *, large: bool) -> int:
    """Threads for ``tasks`` independent blocks: 1 unless the input is ``large``; at most
    ``threads`` (or ``min(os.cpu_count(), DEFAULT_MAX_THREADS)`` when None) and ``tasks``."""
    if not large or tasks <= 1:
        return 1
    return max(1, min(thread_count(threads), tasks))


def run_split(run: Callable[[int, int], None], tasks: int, workers: int) -> None:
    """Call ``run(first, last)`` on ``workers`` contiguous ranges covering ``range(tasks)``.

    ``workers == 1`` calls ``run(0, tasks)`` in this thread, with no pool. The split does not
    change any result: the blocks are independent.
    """
    if workers <= 1:
        run(0, tasks)
        return
    bounds = np.linspace(0, tasks, workers + 1).astype(int)
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(run, bounds[:-1].tolist(), bounds[1:].tolist()))
