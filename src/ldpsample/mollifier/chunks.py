"""Row chunking shared by the closed-form projections of :mod:`ldpsample.mollifier`.

Holds the chunk size :data:`_CHUNK_ELEMENTS` (entries per block of rows), the rows per block
(``_chunk_rows``) and the block-by-block application of a projection (``_by_row_chunks``).
:func:`~ldpsample.mollifier.kl.relative_mollifier_kl` and
:func:`~ldpsample.mollifier.tv.relative_mollifier_tv` both read the size from here, so one
setting (and one ``monkeypatch`` in the tests) governs both.

Uses numpy only; no sibling module.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ldpsample._types import FloatArray

#: Entries (users x items) processed at once by the closed-form projections: keeps the working
#: arrays (four of ``rows x n`` floats for the KL normaliser) near the CPU's L2/L3 cache while
#: the per-chunk Python overhead of its Newton steps stays small (docs/performance.md).
_CHUNK_ELEMENTS = 131072


def _chunk_rows(n: int) -> int:
    return max(1, _CHUNK_ELEMENTS // max(n, 1))


def _by_row_chunks(P2: FloatArray, project: Callable[[FloatArray], FloatArray]) -> FloatArray:
    """``project`` applied to blocks of rows of ``P2`` (about ``_CHUNK_ELEMENTS`` entries each),
    stacked back into one array of ``P2``'s shape."""
    out = np.empty_like(P2)
    rows = _chunk_rows(P2.shape[1])
    for start in range(0, P2.shape[0], rows):
        stop = start + rows
        out[start:stop] = project(P2[start:stop])
    return out
