"""Benchmark: minimax kernel in closed form vs the paper's recursion, and batched release.

Prints two markdown tables:

1. building the dense ``(n, n)`` kernel with :func:`ldpsample.minimax.minimax_kernel` (closed
   form, O(n^2)) vs Algorithm 1's recursion (:mod:`ldpsample.reference`, O(n^3)); the
   recursion is run only up to ``--max-recursion-n`` and reported as skipped above it;
2. :func:`ldpsample.minimax.apply_minimax` on ``--users`` x ``--items`` (sorted and unsorted
   prior, precomputed coefficients, input validation included), with the dense BLAS product
   ``P @ K`` for reference.

Times are the best of ``--repeats`` runs (fewer for recursions that take over 5 s).

Usage: ``python benchmarks/bench_minimax.py [--users 1000000] [--items 100]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from ldpsample.minimax import apply_minimax, minimax_coefficients, minimax_kernel
from ldpsample.reference import recursion_kernel

EPSILON = 1.0


def best_time(fn: Callable[[], object], repeats: int) -> float:
    """Best wall-clock time of ``repeats`` calls (stop early once a call takes over 5 s)."""
    return best_times(fn, repeats)[0]


def best_times(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Best wall-clock and best process CPU time of ``repeats`` calls.

    CPU time is less sensitive to other processes competing for the cores (it exceeds wall
    time for multi-threaded BLAS).
    """
    walls, cpus = [], []
    for _ in range(repeats):
        start, cpu_start = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu_start)
        if walls[-1] > 5.0:
            break
    return min(walls), min(cpus)


def dense_table(sizes: list[int], max_recursion_n: int, repeats: int) -> list[str]:
    rng = np.random.default_rng(0)
    rows = [
        "| n | closed form (s) | recursion, Algorithm 1 (s) | speed-up | max abs diff |",
        "|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        q = rng.dirichlet(np.ones(n))  # unsorted: includes the sort and un-permute
        closed = best_time(lambda q=q: minimax_kernel(q, epsilon=EPSILON), repeats)
        if n <= max_recursion_n:
            recursion = best_time(lambda q=q: recursion_kernel(q, EPSILON), repeats)
            diff = np.abs(minimax_kernel(q, epsilon=EPSILON) - recursion_kernel(q, EPSILON)).max()
            rows.append(
                f"| {n} | {closed:.4f} | {recursion:.3f} | {recursion / closed:,.0f}x "
                f"| {diff:.1e} |"
            )
        else:
            rows.append(f"| {n} | {closed:.4f} | skipped (O(n^3), n > {max_recursion_n}) | – | – |")
    return rows


def apply_table(users: int, items: int, repeats: int) -> list[str]:
    rng = np.random.default_rng(1)
    P = rng.random((users, items))
    P /= P.sum(axis=1, keepdims=True)
    q = rng.dirichlet(np.ones(items))
    rows = [
        f"| {users:,} users x {items} items | wall (s) | CPU (s) |",
        "|---|---:|---:|",
    ]

    def row(label: str, fn: Callable[[], object]) -> None:
        wall, cpu = best_times(fn, repeats)
        rows.append(f"| {label} | {wall:.3f} | {cpu:.3f} |")

    for label, prior in (("sorted q", np.sort(q)), ("unsorted q", q)):
        kernel = minimax_coefficients(prior, epsilon=EPSILON)
        row(
            f"apply_minimax, {label}, precomputed coefficients",
            lambda k=kernel: apply_minimax(P, k),
        )
    row(
        "apply_minimax, unsorted q, coefficients computed in the call",
        lambda: apply_minimax(P, q, epsilon=EPSILON),
    )
    K = minimax_kernel(q, epsilon=EPSILON)
    row("reference: dense BLAS product P @ K (no validation)", lambda: P @ K)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000, 2000, 10000])
    parser.add_argument("--max-recursion-n", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"## Dense minimax kernel, epsilon = {EPSILON}\n")
    print("\n".join(dense_table(args.sizes, args.max_recursion_n, args.repeats)))
    print(f"\n## Batched release, epsilon = {EPSILON}\n")
    print("\n".join(apply_table(args.users, args.items, args.repeats)))


if __name__ == "__main__":
    main()
