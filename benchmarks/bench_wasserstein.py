"""Benchmark of the Wasserstein projection mechanism; prints markdown tables.

Points are uniform in the unit square (Euclidean cost, inputs = outputs, n = m), inputs are
Dirichlet(0.5) distributions and the base measure is the optimal uniform one. Per size:

* exact WPM with POT's network simplex and with scipy's HiGHS (per input),
* entropic WPM (Dykstra-corrected alternation, linear domain) for two η, on the whole batch:
  time, mean iterations, and the mean gap W(P, Q_η) - W(P, Q*) of its output,
* optimal_base_measure by mirror descent (2000 iterations) and by the exact epigraph LP.

Times are the best of ``--repeats`` runs. Run:
``.venv/bin/python benchmarks/bench_wasserstein.py [--sizes 100 200 400] [--batch 32]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ldpsample.wasserstein import (
    optimal_base_measure,
    optimal_uniform_base_measure,
    transport_cost,
    wasserstein_projection,
)

REPEATS = 2


def _timed(fn, *args, **kwargs):
    """Result and best wall time of ``REPEATS`` calls (the machine may be shared)."""
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return out, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 400])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--highs-batch", type=int, default=4)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--lp-max-size", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2, help="best of this many timings")
    args = parser.parse_args()
    global REPEATS
    REPEATS = args.repeats
    eps = args.epsilon

    # Warm-up: import POT and HiGHS and touch the code paths once, outside the timings.
    C0 = np.random.default_rng(0).random((5, 5))
    mu0 = np.full(5, 0.15)
    for solver in ("pot", "highs"):
        wasserstein_projection(np.full(5, 0.2), C0, mu0, epsilon=1.0, solver=solver)

    rows = []
    base_rows = []
    for n in args.sizes:
        rng = np.random.default_rng(n)
        x = rng.random((n, 2))
        C = np.linalg.norm(x[:, None] - x[None], axis=2)
        P = rng.dirichlet(np.full(n, 0.5), size=args.batch)
        mu = optimal_uniform_base_measure(C, epsilon=eps).mu

        pot, t_pot = _timed(wasserstein_projection, P, C, mu, epsilon=eps, solver="pot")
        _, t_highs = _timed(
            wasserstein_projection, P[: args.highs_batch], C, mu, epsilon=eps, solver="highs"
        )
        rows.append((n, "exact, POT network simplex", 1000 * t_pot / args.batch, "", ""))
        rows.append((n, "exact, HiGHS LP", 1000 * t_highs / args.highs_batch, "", ""))
        for eta in (0.02, 0.005):
            res, t_sk = _timed(
                wasserstein_projection,
                P,
                C,
                mu,
                epsilon=eps,
                method="sinkhorn",
                eta=eta,
                max_iter=20_000,
                tol=1e-6,
            )
            gap = transport_cost(P, res.Q, C) - pot.cost
            rows.append(
                (
                    n,
                    f"sinkhorn η={eta} ({res.solver})",
                    1000 * t_sk / args.batch,
                    f"{res.iterations.mean():.0f}",
                    f"{gap.mean():.2e}",
                )
            )

        md, t_md = _timed(optimal_base_measure, C, epsilon=eps, max_iter=2000)
        uni = optimal_uniform_base_measure(C, epsilon=eps)
        if n <= args.lp_max_size:
            lp, t_lp = _timed(optimal_base_measure, C, epsilon=eps, method="lp")
            lp_val, lp_t = f"{lp.value:.5f}", f"{t_lp:.2f}"
        else:
            lp_val, lp_t = "–", "–"
        base_rows.append((n, f"{uni.value:.5f}", f"{md.value:.5f}", f"{t_md:.2f}", lp_val, lp_t))

    print(f"WPM on a batch of {args.batch} Dirichlet(0.5) inputs, ε = {eps}, n = m")
    print("(HiGHS timed on the first", args.highs_batch, "inputs; gap = W(P,Q_η) - W(P,Q*))\n")
    print("| n = m | method | ms / input | mean iterations | mean gap |")
    print("|---:|---|---:|---:|---:|")
    for n, name, ms, it, gap in rows:
        print(f"| {n} | {name} | {ms:.1f} | {it} | {gap} |")
    print(
        "\noptimal_base_measure (worst-case cost φ; mirror descent 2000 iterations vs exact LP)\n"
    )
    print("| n = m | φ best uniform | φ mirror | mirror s | φ LP | LP s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in base_rows:
        print("| " + " | ".join(str(v) for v in r) + " |")


if __name__ == "__main__":
    main()
