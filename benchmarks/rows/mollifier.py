"""Rows of the relative mollifier (:mod:`ldpsample.mollifier`):

* ``kl-brentq``: :func:`relative_mollifier_kl`, 10^5 users x n = 100, vs the published per-user
  ``brentq`` on ``[0, 1000]`` (:func:`brentq_kl`) timed on a subset and extrapolated linearly;
* ``mollifier-1e5x100``: KL and TV closed forms, 10^5 users x n = 100, beside
  :func:`mollifier_projection` (cvxpy) in stacked batches of 32 users (on 256 users) and with
  one problem per user (on 20 users), both extrapolated linearly; for KL the published
  ``brentq`` per user on ``[0, 10^4]`` (``perform_projection_husain``, on the 20 users), for
  TV the closed-form value alone (:func:`mollifier_tv_value`). Each note gives the largest
  difference of the divergence ``D(p || p_hat)`` from the closed form's on the users timed.

With ``--baseline``, both add the revision's mollifier (the module ``mollifier.py`` or the
package ``mollifier/``, whichever the revision has).

Imports numpy, :mod:`runner` and :mod:`rows.inputs` at the top; ``ldpsample``, ``scipy`` and
``cvxpy`` inside each function, so that a row's processes load only what it uses
(``kl-brentq``'s memory probe must not load cvxpy; see :mod:`rows`).
"""

from __future__ import annotations

import time

import numpy as np
from runner.baseline import baseline, baseline_revision
from runner.measure import Measure, Row, best_time, one_thread
from runner.registry import register

from rows.inputs import EPSILON, random_prior, random_users


def kl_value(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Each row's KL divergence ``D(P || Q)`` (0 log 0 = 0)."""
    mask = P > 0
    return np.where(mask, P * np.log(np.where(mask, P, 1.0) / np.where(mask, Q, 1.0)), 0).sum(-1)


def brentq_kl(
    P: np.ndarray, q: np.ndarray, epsilon: float, bracket: float = 1e4
) -> tuple[np.ndarray, int]:
    """The published code's KL projection, one ``brentq`` root per user on ``[0, bracket]``
    (``1e4`` in ``perform_projection_husain``, ``1e3`` in ``perform_projection``); the rows
    where it raises stay NaN and are counted."""
    from scipy.optimize import brentq

    from ldpsample.mollifier import mollifier_bounds

    lower, upper = mollifier_bounds(q, epsilon=epsilon)
    out = np.full_like(P, np.nan)
    failures = 0
    for i, p in enumerate(P):
        try:
            x = brentq(
                lambda x, p=p: np.minimum(np.maximum(lower, x * p), upper).sum() - 1, 0, bracket
            )
        except ValueError:
            failures += 1
            continue
        out[i] = np.minimum(np.maximum(lower, x * p), upper)
    return out, failures


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

    from ldpsample.divergences import tv_distance
    from ldpsample.mollifier import (
        mollifier_projection,
        mollifier_tv_value,
        relative_mollifier_kl,
        relative_mollifier_tv,
    )

    users, n = _mollifier_sizes(quick)
    q = random_prior(n, 3)
    P = random_users(users, n, 4, alpha=0.5)
    few = P[: 5 if quick else 20]
    stacked = P[: 64 if quick else 256]
    row = Row("mollifier-1e5x100", f"relative mollifier, {users:,} users x n = {n}")
    for name, fn, divergence in (
        ("KL", relative_mollifier_kl, "kl"),
        ("TV", relative_mollifier_tv, "tv"),
    ):
        value = kl_value if divergence == "kl" else tv_distance
        fast = fn(P, q, epsilon=EPSILON)

        def differs(Q: np.ndarray, users: np.ndarray, fast=fast, value=value) -> str:
            ok = ~np.isnan(Q).any(axis=1)
            gap = np.abs(value(users[ok], Q[ok]) - value(users[ok], fast[: len(users)][ok]))
            return f"max abs divergence diff vs closed form: {float(gap.max()):.1e}"

        label = f"{name} closed form `{fn.__name__}`"
        row.measures.append(Measure(label, best_time(lambda fn=fn: fn(P, q, epsilon=EPSILON))))
        start = time.perf_counter()
        Q = mollifier_projection(stacked, q, epsilon=EPSILON, divergence=divergence, batch_size=32)
        seconds = time.perf_counter() - start
        row.measures.append(
            Measure(
                f"{name} cvxpy, stacked batches of 32 users",
                seconds * users / len(stacked),
                f"{len(stacked)} users timed once, extrapolated; {differs(Q, stacked)}",
                ratio_of=label,
            )
        )
        start = time.perf_counter()
        Q = np.vstack(
            [mollifier_projection(p[None], q, epsilon=EPSILON, divergence=divergence) for p in few]
        )
        per_user = (time.perf_counter() - start) / len(few)
        row.measures.append(
            Measure(
                f"{name} cvxpy, one problem per user",
                per_user * users,
                f"{len(few)} users timed once, extrapolated; {differs(Q, few)}",
                ratio_of=label,
            )
        )
        if divergence == "kl":
            start = time.perf_counter()
            Q, failures = brentq_kl(few, q, EPSILON, bracket=1e4)
            seconds = time.perf_counter() - start
            row.measures.append(
                Measure(
                    "KL published brentq per user on [0, 10^4]",
                    seconds * users / len(few),
                    f"{len(few)} users timed once, extrapolated; {failures} raised; "
                    f"{differs(Q, few)}",
                    ratio_of=label,
                )
            )
        else:
            row.measures.append(
                Measure(
                    "TV closed-form value only `mollifier_tv_value`",
                    best_time(lambda: mollifier_tv_value(P, q, epsilon=EPSILON)),
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
