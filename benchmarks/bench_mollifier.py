"""Benchmark: relative-mollifier projections in closed form vs cvxpy (stacked and per user).

Prints a markdown table for ``--users`` users over ``--items`` items (Dirichlet(``--alpha``)
user histograms, Dirichlet(1) public prior, one ``--epsilon``):

* :func:`ldpsample.mollifier.relative_mollifier_kl` and :func:`relative_mollifier_tv` on all
  users (best of ``--repeats``, input validation included);
* :func:`ldpsample.mollifier.mollifier_projection` (stacked batches of ``--batch-size`` users,
  one compiled problem per batch) on the first ``--cvxpy-users`` users, extrapolated linearly;
* the same cvxpy projection compiled once *per user* (``batch_size=1``), as a per-user solver
  loop would do, on the first ``--per-user`` users, extrapolated;
* for KL, the published code's approach (``scipy.optimize.brentq`` per user on
  ``[0, 1e4]``) on the ``--per-user`` users, extrapolated; it raises on degenerate rows, which
  are counted.

"max |Δ value|" compares each method's divergence ``D(p || p_hat)`` with the closed form's on
the users it ran on; "speedup" is the method's (extrapolated) time over the closed form's.

Usage: ``python benchmarks/bench_mollifier.py [--users 100000] [--items 100]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq

from ldpsample.divergences import tv_distance
from ldpsample.mollifier import (
    mollifier_bounds,
    mollifier_projection,
    mollifier_tv_value,
    relative_mollifier_kl,
    relative_mollifier_tv,
)


def best_time(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def kl_value(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    mask = P > 0
    return np.where(mask, P * np.log(np.where(mask, P, 1.0) / np.where(mask, Q, 1.0)), 0).sum(-1)


def brentq_kl(
    P: np.ndarray, q: np.ndarray, epsilon: float, bracket: float = 1e4
) -> tuple[np.ndarray, int]:
    """The published code's KL projection, one brentq root per user on ``[0, bracket]``
    (``1e4`` in ``perform_projection_husain``, ``1e3`` in ``perform_projection``); failures
    stay NaN."""
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--alpha", type=float, default=0.5, help="Dirichlet concentration of P")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--cvxpy-users", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--per-user", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    q = rng.dirichlet(np.ones(args.items))
    P = rng.dirichlet(np.full(args.items, args.alpha), size=args.users)
    eps = args.epsilon
    sub = P[: args.cvxpy_users]
    few = P[: args.per_user]
    scale_sub = args.users / sub.shape[0]
    scale_few = args.users / few.shape[0]

    import cvxpy  # imported before timing: its import takes ~1 s

    rows: list[tuple[str, str, int, float, float, float | None, str]] = []

    for name, fast_fn, divergence in (
        ("KL", relative_mollifier_kl, "kl"),
        ("TV", relative_mollifier_tv, "tv"),
    ):

        def value(P_: np.ndarray, Q_: np.ndarray, divergence: str = divergence) -> np.ndarray:
            return kl_value(P_, Q_) if divergence == "kl" else tv_distance(P_, Q_)

        fast_time = best_time(lambda f=fast_fn: f(P, q, epsilon=eps), args.repeats)
        fast = fast_fn(P, q, epsilon=eps)
        rows.append(
            (name, f"closed form `{fast_fn.__name__}`", args.users, fast_time, fast_time, 0.0, "1")
        )

        def add(
            label: str,
            users: int,
            seconds: float,
            scale: float,
            delta: float | None,
            fast_time: float = fast_time,
            name: str = name,
        ) -> None:
            total = seconds * scale
            rows.append((name, label, users, seconds, total, delta, f"{total / fast_time:,.0f}"))

        t, Qs = timed(
            lambda d=divergence: mollifier_projection(
                sub, q, epsilon=eps, divergence=d, batch_size=args.batch_size
            )
        )
        delta = float(np.max(np.abs(value(sub, Qs) - value(sub, fast[: len(sub)]))))
        add(f"cvxpy, stacked batches of {args.batch_size}", len(sub), t, scale_sub, delta)

        def per_user(d: str = divergence) -> np.ndarray:
            return np.vstack(
                [mollifier_projection(p[None], q, epsilon=eps, divergence=d) for p in few]
            )

        t, Qp = timed(per_user)
        delta = float(np.max(np.abs(value(few, Qp) - value(few, fast[: len(few)]))))
        add("cvxpy, one problem per user", len(few), t, scale_few, delta)

        if divergence == "kl":
            t, (Qb, failures) = timed(lambda: brentq_kl(few, q, eps))
            ok = ~np.isnan(Qb).any(axis=1)
            delta = float(
                np.max(np.abs(value(few[ok], Qb[ok]) - value(few[ok], fast[: len(few)][ok])))
            )
            add(f"brentq per user (published; {failures} raised)", len(few), t, scale_few, delta)
        else:
            value_time = best_time(lambda: mollifier_tv_value(P, q, epsilon=eps), args.repeats)
            rows.append(
                (
                    name,
                    "closed-form value only `mollifier_tv_value`",
                    args.users,
                    value_time,
                    value_time,
                    None,
                    "-",
                )
            )

    print(
        f"## Relative mollifier projection: {args.users:,} users x {args.items} items, "
        f"epsilon = {eps}, P ~ Dirichlet({args.alpha})\n"
    )
    print(
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, numpy {np.__version__}, cvxpy {cvxpy.__version__}\n"
    )
    print(
        "| divergence | method | users timed | seconds | seconds for all users | "
        "max abs value diff vs closed form | closed form speedup |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for div, label, users, seconds, total, delta, speed in rows:
        d = "-" if delta is None else f"{delta:.1e}"
        extrapolated = f"{total:,.2f}" if users == args.users else f"{total:,.0f} (extrapolated)"
        print(f"| {div} | {label} | {users:,} | {seconds:,.3f} | {extrapolated} | {d} | {speed} |")


if __name__ == "__main__":
    main()
