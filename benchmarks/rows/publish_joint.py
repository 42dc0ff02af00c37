"""A joint release (:mod:`ldpsample.publish`, ``release_mode: joint``):

* ``publish-joint-20x1e4``: :func:`ldpsample.publish.release_items` of a joint spec of 20
  subcategories × 10^4 items (each subcategory a Zipf(1.1) prior over its items, public shares
  proportional to 1..20), ε = 1, one sample, for 10^6 users, each with 1-8 items of one
  subcategory (seeded), drawn with secret uniforms (:class:`ldpsample.publish.SecureUniforms`,
  as a publication does): the joint kernel built and audited in O(n) on the 2·10^5-item joint
  domain and every user's draw by the sparse inverse CDF, no n × n matrix; target < 30 s.

Imports numpy, :mod:`runner` at the top; ``ldpsample`` and ``polars`` inside each function, so
that a row's processes load only what it uses (see :mod:`rows`).
"""

from __future__ import annotations

import time

import numpy as np
from runner.measure import Measure, Row, best_time
from runner.registry import register


def _sizes(quick: bool) -> tuple[int, int, int]:
    """Users, subcategories, items per subcategory."""
    return (100_000, 20, 1_000) if quick else (1_000_000, 20, 10_000)


def _inputs(quick: bool):
    """The joint spec and the users' histograms (``user, attribute, subcategory, item,
    count``)."""
    import polars as pl

    from ldpsample.publish import ReleaseSpec

    users, subs, n = _sizes(quick)
    rng = np.random.default_rng(0)
    q = 1.0 / np.arange(1, n + 1) ** 1.1
    q /= q.sum()
    order = np.argsort(q, kind="stable")
    names = [f"s{s:02d}" for s in range(subs)]
    items = np.array([f"i{k:05d}" for k in range(n)])
    domain = pl.DataFrame(
        {
            "attribute": "grp",
            "subcategory": np.repeat(names, n),
            "position": np.tile(np.arange(n), subs),
            "item": np.tile(items[order], subs),
            "q": np.tile(q[order], subs),
        }
    )
    weights = np.arange(1, subs + 1, dtype=float)
    shares = {"grp": dict(zip(names, weights / weights.sum(), strict=True))}
    spec = ReleaseSpec(
        name="bench",
        attributes=("grp",),
        domain=domain,
        epsilons=(1.0,),
        release_mode="joint",
        shares=shares,
    )
    per_user = rng.integers(1, 9, size=users)
    user = np.repeat(np.arange(users), per_user)
    sub = rng.integers(0, subs, size=users)[user]
    item = rng.choice(n, size=user.size, p=q)
    hist = (
        pl.DataFrame(
            {
                "user": pl.Series(user).cast(pl.String),
                "attribute": "grp",
                "subcategory": pl.Series(np.array(names)[sub]),
                "item": pl.Series(items[item]),
                "count": rng.integers(1, 5, size=user.size).astype(float),
            }
        )
        .group_by("user", "attribute", "subcategory", "item")
        .agg(pl.col("count").sum())
    )
    return spec, hist


def _release(spec, hist) -> object:
    from ldpsample.publish import SecureUniforms, release_items

    return release_items(spec, hist, uniforms=SecureUniforms())


def _subject(quick: bool) -> object:
    return _release(*_inputs(quick))


@register("publish-joint-20x1e4", _subject)
def row_publish_joint(quick: bool) -> Row:
    users, subs, n = _sizes(quick)
    start = time.perf_counter()
    spec, hist = _inputs(quick)
    generated = time.perf_counter() - start
    cpu = time.process_time()
    result = _release(spec, hist)
    cpu = time.process_time() - cpu
    released = result.released
    row = Row(
        "publish-joint-20x1e4",
        f"a joint release (release_items, release_mode: joint): {users:,} users, {subs} "
        f"subcategories × {n:,} items (joint domain {subs * n:,}), Zipf(1.1) per subcategory, "
        "shares ∝ 1..20, ε 1, secret uniforms; target < 30 s",
    )
    row.measures = [
        Measure(
            "release_items, joint (O(n) kernel and audit, sparse inverse CDF)",
            best_time(lambda: _release(spec, hist), 3),
            f"best of 3; one call's CPU time {cpu:.1f} s; {released.height:,} released rows, "
            f"{hist.height:,} histogram rows; realised ε "
            f"{result.report['realized_epsilon'].max():.6f}",
            limit=30,
        ),
        Measure("building the spec and histograms (input, not timed above)", generated),
    ]
    return row
