"""Progress bars for long loops, off unless asked for (the pipeline's scripts ask).

Bars go to ``sys.stderr``, which :func:`ldpsample.pipeline.scripting.start` points at the rule's
log, so a long job's log shows how far it is. Library calls stay silent by default.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

__all__ = ["progress"]


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
