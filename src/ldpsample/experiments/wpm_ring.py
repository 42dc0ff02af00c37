"""Synthetic ring experiment of the Wasserstein projection mechanism (WPM).

``n`` points equally spaced on a ring of circumference 1 serve as both inputs and outputs; the
cost is the ring (arc) distance to the power ``r``. Inputs are Dirichlet(α) distributions. By
symmetry the uniform base measure is optimal on a ring (φ is convex and invariant under
rotations, so averaging an optimal μ over rotations keeps it optimal), and its best scale is found
by :func:`ldpsample.wasserstein.optimal_uniform_base_measure`.

* :func:`ring_example` -- one input with its WPM and KPM outputs (data for a figure);
* :func:`ring_convergence` -- the exact transport cost ``W_r^r(P, Q_t)`` of the entropic iterate
  ``Q_t`` against the iteration ``t`` for several η, with the exact LP value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl
from numpy.typing import NDArray

from ldpsample._validation import check_epsilon, check_integer, check_rng
from ldpsample.wasserstein import (
    kl_projection_mechanism,
    optimal_uniform_base_measure,
    sinkhorn_iterates,
    transport_cost,
    wasserstein_projection,
)

__all__ = [
    "CONVERGENCE_SCHEMA",
    "EXAMPLE_SCHEMA",
    "record_iterations",
    "ring_convergence",
    "ring_cost",
    "ring_example",
]

#: Columns of :func:`ring_example` (one row per ring point).
EXAMPLE_SCHEMA: dict[str, pl.DataType] = {
    "point": pl.Int64(),
    "angle": pl.Float64(),
    "input": pl.Float64(),
    "wpm": pl.Float64(),
    "kpm": pl.Float64(),
    "lower": pl.Float64(),
    "upper": pl.Float64(),
    "epsilon": pl.Float64(),
    "w_wpm": pl.Float64(),
    "w_kpm": pl.Float64(),
}

#: Columns of :func:`ring_convergence` (one row per η, recorded iteration and input).
CONVERGENCE_SCHEMA: dict[str, pl.DataType] = {
    "eta": pl.Float64(),
    "iteration": pl.Int64(),
    "input": pl.Int64(),
    "cost": pl.Float64(),
    "exact_cost": pl.Float64(),
    "gap": pl.Float64(),
    "marginal_error": pl.Float64(),
}


def ring_cost(n: int, *, r: float = 1.0) -> NDArray[np.float64]:
    """Cost ``d(k, l)^r`` between ``n`` equally spaced points on a ring of circumference 1.

    ``d(k, l) = min(|k - l|, n - |k - l|) / n`` (arc length), so ``0 <= d <= 1/2``.
    """
    n = check_integer(n, name="n", minimum=2)
    if not (isinstance(r, int | float) and r > 0 and math.isfinite(r)):
        raise ValueError(f"r must be a finite real number > 0, got {r!r}")
    k = np.arange(n)
    steps = np.abs(k[:, None] - k[None, :])
    return (np.minimum(steps, n - steps) / n) ** float(r)


def ring_example(
    *, n: int, epsilon: float, alpha: float, rng: np.random.Generator, r: float = 1.0
) -> pl.DataFrame:
    """One Dirichlet(α) input on the ring with its WPM (exact) and KPM outputs.

    Both mechanisms use the same base measure, the optimal uniform one for the WPM.

    Returns
    -------
    polars.DataFrame
        :data:`EXAMPLE_SCHEMA`: per point its index and angle (radians), the input ``P``, the
        outputs ``wpm`` and ``kpm``, the polytope bounds ``lower = μ`` and
        ``upper = min(e^ε μ, 1)``, and (constant columns) ``epsilon`` and the costs
        ``w_wpm = W_r^r(P, Q_wpm)``, ``w_kpm = W_r^r(P, Q_kpm)``.
    """
    eps = check_epsilon(epsilon)
    gen = check_rng(rng)
    if not (alpha > 0 and math.isfinite(alpha)):
        raise ValueError(f"alpha must be a finite real number > 0, got {alpha!r}")
    C = ring_cost(n, r=r)
    mu = optimal_uniform_base_measure(C, epsilon=eps).mu
    P = gen.dirichlet(np.full(n, float(alpha)))
    P /= P.sum()
    wpm = wasserstein_projection(P, C, mu, epsilon=eps)
    kpm = kl_projection_mechanism(P, mu, epsilon=eps)
    return pl.DataFrame(
        {
            "point": np.arange(n),
            "angle": 2.0 * np.pi * np.arange(n) / n,
            "input": P,
            "wpm": wpm.Q,
            "kpm": kpm,
            "lower": mu,
            "upper": np.minimum(math.exp(min(eps, 700.0)) * mu, 1.0),
            "epsilon": np.full(n, eps),
            "w_wpm": np.full(n, float(wpm.cost)),
            "w_kpm": np.full(n, float(transport_cost(P, kpm, C))),
        },
        schema=EXAMPLE_SCHEMA,
    )


def record_iterations(max_iter: int, points: int = 40) -> NDArray[np.int64]:
    """Roughly geometric iteration numbers ``1 .. max_iter`` at which to record the cost."""
    grid = np.unique(np.round(np.geomspace(1, max_iter, points)).astype(np.int64))
    return grid


def ring_convergence(
    *,
    n: int,
    epsilon: float,
    etas: Sequence[float],
    inputs: int,
    alpha: float,
    max_iter: int,
    rng: np.random.Generator,
    r: float = 1.0,
    record: Sequence[int] | None = None,
    variant: str = "dykstra",
) -> pl.DataFrame:
    """Convergence of the entropic WPM on the ring: ``W_r^r(P, Q_t)`` against ``t`` and η.

    ``inputs`` Dirichlet(α) inputs share the optimal uniform base measure. For every η the
    alternating projections run ``max_iter`` iterations (no early stop); at the iterations in
    ``record`` (default :func:`record_iterations`) the iterate ``Q_t`` -- a member of
    ``M_ε(μ)``, so already an ε-LDP output -- is evaluated by an exact transport solve.

    Returns
    -------
    polars.DataFrame
        :data:`CONVERGENCE_SCHEMA`: ``cost = W_r^r(P, Q_t)``, ``exact_cost`` the LP optimum
        ``min_{Q in M} W_r^r(P, Q)``, ``gap = cost - exact_cost >= 0`` and
        ``marginal_error = ||π_t 1 - P||_1``; sorted by η, iteration, input.
    """
    eps = check_epsilon(epsilon)
    gen = check_rng(rng)
    count = check_integer(inputs, name="inputs", minimum=1)
    iters = check_integer(max_iter, name="max_iter", minimum=1)
    if len(etas) == 0:
        raise ValueError("etas must list at least one regularisation parameter")
    C = ring_cost(n, r=r)
    mu = optimal_uniform_base_measure(C, epsilon=eps).mu
    P = gen.dirichlet(np.full(n, float(alpha)), size=count)
    P /= P.sum(axis=1, keepdims=True)
    exact = wasserstein_projection(P, C, mu, epsilon=eps).cost
    keep = set(record_iterations(iters) if record is None else (int(t) for t in record))
    frames = []
    for eta in etas:
        for t, Q, err in sinkhorn_iterates(
            P, C, mu, epsilon=eps, eta=float(eta), max_iter=iters, variant=variant
        ):
            if t not in keep:
                continue
            cost = transport_cost(P, Q, C)
            frames.append(
                pl.DataFrame(
                    {
                        "eta": np.full(count, float(eta)),
                        "iteration": np.full(count, t),
                        "input": np.arange(count),
                        "cost": cost,
                        "exact_cost": exact,
                        "gap": cost - exact,
                        "marginal_error": err,
                    },
                    schema=CONVERGENCE_SCHEMA,
                )
            )
    return pl.concat(frames).sort("eta", "iteration", "input")
