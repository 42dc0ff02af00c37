"""Estimation from a publication (:mod:`ldpsample.estimate`):

* ``estimate-1e6x1e5``: :func:`ldpsample.estimate.estimate_publication` of 10^6 released draws
  (one per user) on a 10^5-item domain (Zipf prior with exponent 1.1, ε = 4, the population's
  distribution the prior tilted by seeded log-normal noise): inversion with analytic standard
  errors, Norm-Sub, EM and the χ² test, no bootstrap; target < 10 s and < 2 GiB (the peak
  column).

Imports numpy, :mod:`runner` at the top; ``ldpsample`` and ``polars`` inside each function, so
that a row's processes load only what it uses (see :mod:`rows`).
"""

from __future__ import annotations

import time

import numpy as np
from runner.measure import Measure, Row, best_time
from runner.registry import register


def _sizes(quick: bool) -> tuple[int, int]:
    return (100_000, 10_000) if quick else (1_000_000, 100_000)


def _publication(quick: bool):
    """A :class:`ldpsample.estimate.Publication` in memory: the spec's domain and the draws."""
    import polars as pl

    from ldpsample.estimate import Publication, structured_kernel
    from ldpsample.publish import ReleaseSpec

    draws, n = _sizes(quick)
    rng = np.random.default_rng(0)
    q = 1.0 / np.arange(1, n + 1) ** 1.1
    q /= q.sum()
    p = q * np.exp(rng.normal(0.0, 1.0, n))
    p /= p.sum()
    released = structured_kernel(q, epsilon=4.0).apply(p)
    index = rng.choice(n, size=draws, p=released / released.sum())
    items = pl.Series("item", [f"i{k:06d}" for k in range(n)])
    order = np.argsort(q, kind="stable")
    domain = pl.DataFrame(
        {
            "attribute": "all",
            "subcategory": "all",
            "position": np.arange(n),
            "item": items.gather(order),
            "q": q[order],
        }
    )
    spec = ReleaseSpec(name="bench", attributes=("all",), domain=domain, epsilons=(4.0,))
    frame = pl.DataFrame(
        {
            "epsilon": 4.0,
            "attribute": "all",
            "subcategory": "all",
            "user": pl.Series(np.arange(draws)).cast(pl.String),
            "sample": 0,
            "item": items.gather(index),
        }
    )
    return Publication(folder=None, spec=spec, draws=frame)


def _estimate(publication) -> object:
    from ldpsample.estimate import estimate_publication

    return estimate_publication(publication)


def _subject(quick: bool) -> object:
    return _estimate(_publication(quick))


@register("estimate-1e6x1e5", _subject)
def row_estimate(quick: bool) -> Row:
    draws, n = _sizes(quick)
    start = time.perf_counter()
    publication = _publication(quick)
    generated = time.perf_counter() - start
    cpu = time.process_time()
    result = _estimate(publication)
    cpu = time.process_time() - cpu
    test = result.tests.row(0, named=True)
    row = Row(
        "estimate-1e6x1e5",
        f"estimates of a publication (estimate_publication): {draws:,} released draws on a "
        f"{n:,}-item domain, Zipf(1.1) prior, ε 4: inversion with analytic standard errors, "
        "Norm-Sub, EM (SQUAREM, log-likelihood within 1e-6 per draw), χ² test; targets < 10 s "
        "and < 2 GiB",
    )
    row.measures = [
        Measure(
            "estimate_publication (O(n) solves, no n x n matrix)",
            best_time(lambda: _estimate(publication), 3),
            f"best of 3; one call's CPU time {cpu:.1f} s (wall above it on a loaded machine); "
            f"{result.table.height:,} rows; χ² p = {test['p_value']:.2g}",
            limit=10,
        ),
        Measure("building the publication (input, not timed above)", generated),
    ]
    return row
