"""Rows of the relative mollifier (:mod:`ldpsample.mollifier`):

* ``kl-brentq``: :func:`relative_mollifier_kl`, 10^5 users x n = 100, vs the published per-user
  ``brentq`` on ``[0, 1000]`` (``bench_mollifier.brentq_kl``) timed on a subset and
  extrapolated linearly;
* ``mollifier-1e5x100``: KL and TV closed forms, 10^5 users x n = 100, and cvxpy with one
  problem per user (extrapolated, as in ``bench_mollifier.py``).

With ``--baseline``, both add the revision's mollifier (``mollifier.py``, or the package
``mollifier/``).

Imports numpy, :mod:`runner` and :mod:`rows.inputs` at the top; ``ldpsample``, ``cvxpy`` and
``bench_mollifier`` inside each function, so that a row's processes load only what it uses
(``kl-brentq``'s memory probe must not load cvxpy; see :mod:`rows`).
"""

from __future__ import annotations

import time

import numpy as np
from runner.baseline import baseline, baseline_revision
from runner.measure import Measure, Row, best_time, one_thread
from runner.registry import register

from rows.inputs import EPSILON, random_prior, random_users


def _mollifier_sizes(quick: bool) -> tuple[int, int]:
    return (10_000, 100) if quick else (100_000, 100)


def _kl_subject(quick: bool) -> object:
    from ldpsample.mollifier import relative_mollifier_kl

    users, n = _mollifier_sizes(quick)
    return relative_mollifier_kl(
        random_users(users, n, 4, alpha=0.5), random_prior(n, 3), epsilon=EPSILON
    )


@register("kl-brentq", _kl_subject)
def row_kl_brentq(quick: bool) -> Row:
    from bench_mollifier import brentq_kl, kl_value

    from ldpsample.mollifier import relative_mollifier_kl

    users, n = _mollifier_sizes(quick)
    q = random_prior(n, 3)
    P = random_users(users, n, 4, alpha=0.5)
    subset = 2_000 if quick else 20_000
    fast = relative_mollifier_kl(P, q, epsilon=EPSILON)
    few = P[:subset]
    reference, failures = brentq_kl(few, q, EPSILON, bracket=1e3)
    ok = ~np.isnan(reference).any(axis=1)
    diff = float(np.abs(reference[ok] - fast[:subset][ok]).max())
    dvalue = float(
        np.abs(kl_value(few[ok], reference[ok]) - kl_value(few[ok], fast[:subset][ok])).max()
    )
    per_user = best_time(lambda: brentq_kl(few, q, EPSILON, bracket=1e3), 3) / subset
    row = Row("kl-brentq", f"relative_mollifier_kl, {users:,} users x n = {n} (P ~ Dirichlet(0.5))")
    row.measures = [
        Measure(
            "relative_mollifier_kl (closed form, validation included)",
            best_time(lambda: relative_mollifier_kl(P, q, epsilon=EPSILON)),
            f"max abs diff of Q vs brentq: {diff:.1e}; of KL value: {dvalue:.1e}",
        ),
        Measure(
            "published brentq per user on [0, 1000]",
            per_user * users,
            f"best of 3 on {subset:,} users, extrapolated; {failures} raised",
            ratio_of="relative_mollifier_kl (closed form, validation included)",
            target=20.0,
        ),
    ]
    row.measures.append(
        one_thread(row, lambda: relative_mollifier_kl(P, q, epsilon=EPSILON, threads=1))
    )
    old = baseline("mollifier")
    if old is not None:
        diff_old = float(np.abs(old.relative_mollifier_kl(P, q, epsilon=EPSILON) - fast).max())
        row.measures.append(
            Measure(
                f"before: relative_mollifier_kl at {baseline_revision()}",
                best_time(lambda: old.relative_mollifier_kl(P, q, epsilon=EPSILON)),
                f"max abs diff vs now: {diff_old:.1e}",
                ratio_of="relative_mollifier_kl (closed form, validation included)",
            )
        )
    return row


@register("mollifier-1e5x100", _kl_subject)
def row_mollifier(quick: bool) -> Row:
    import cvxpy  # noqa: F401  (imported before timing: its import takes ~1 s)

    from ldpsample.mollifier import (
        mollifier_projection,
        relative_mollifier_kl,
        relative_mollifier_tv,
    )

    users, n = _mollifier_sizes(quick)
    q = random_prior(n, 3)
    P = random_users(users, n, 4, alpha=0.5)
    few = P[: 5 if quick else 20]
    row = Row("mollifier-1e5x100", f"relative mollifier, {users:,} users x n = {n}")
    for name, fn, divergence in (
        ("KL", relative_mollifier_kl, "kl"),
        ("TV", relative_mollifier_tv, "tv"),
    ):
        label = f"{name} closed form `{fn.__name__}`"
        row.measures.append(Measure(label, best_time(lambda fn=fn: fn(P, q, epsilon=EPSILON))))
        start = time.perf_counter()
        for p in few:
            mollifier_projection(p[None], q, epsilon=EPSILON, divergence=divergence)
        per_user = (time.perf_counter() - start) / len(few)
        row.measures.append(
            Measure(
                f"{name} cvxpy, one problem per user",
                per_user * users,
                f"{len(few)} users timed once, extrapolated",
                ratio_of=label,
            )
        )
        old = baseline("mollifier")
        if old is not None:
            old_fn = getattr(old, fn.__name__)
            row.measures.append(
                Measure(
                    f"before: {name} `{fn.__name__}` at {baseline_revision()}",
                    best_time(lambda f=old_fn: f(P, q, epsilon=EPSILON)),
                    ratio_of=label,
                )
            )
    return row
