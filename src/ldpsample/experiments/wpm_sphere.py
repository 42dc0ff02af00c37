"""WPM on the sphere: the closed form of Appendix H against the discrete WPM on fine grids.

* :func:`sphere_scales` -- the optimal base measure's scale ``c``, the cap radius and the
  minimax cost per dimension ``d`` and ε (:func:`ldpsample.wasserstein.sphere.sphere_wpm`);
* :func:`sphere_grid` -- ``n`` nearly uniform points on S¹ (equally spaced) or S² (Fibonacci);
* :func:`sphere_lp_convergence` -- per grid, the exact base-measure LP
  (:func:`ldpsample.wasserstein.optimal_base_measure`, ``method="lp"``) on the grid with the
  Euclidean cost, its worst-case cost and total mass against the closed form's ``R*^r`` and
  ``c``, and the exact projection (:func:`ldpsample.wasserstein.wasserstein_projection`) of a
  point input onto ``M_ε(c σ_n)`` (the closed form's scale on the grid) and its cost.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl

from ldpsample._types import FloatArray
from ldpsample._validation import check_epsilon, check_integer
from ldpsample.wasserstein import optimal_base_measure, wasserstein_projection
from ldpsample.wasserstein.sphere import sphere_wpm

__all__ = [
    "CONVERGENCE_SCHEMA",
    "SCALES_SCHEMA",
    "sphere_grid",
    "sphere_lp_convergence",
    "sphere_scales",
]

SCALES_SCHEMA = {
    "d": pl.Int64,
    "epsilon": pl.Float64,
    "r": pl.Float64,
    "scale": pl.Float64,
    "radius": pl.Float64,
    "cap_mass": pl.Float64,
    "cost": pl.Float64,
}

CONVERGENCE_SCHEMA = {
    "d": pl.Int64,
    "n": pl.Int64,
    "epsilon": pl.Float64,
    "r": pl.Float64,
    "closed_cost": pl.Float64,
    "lp_cost": pl.Float64,
    "cost_error": pl.Float64,
    "closed_scale": pl.Float64,
    "lp_scale": pl.Float64,
    "scale_error": pl.Float64,
    "projection_cost": pl.Float64,
}


def sphere_scales(*, dims: Sequence[int], epsilons: Sequence[float], r: float) -> pl.DataFrame:
    """:data:`SCALES_SCHEMA`: one row per ``(d, ε)``, sorted, from the closed form."""
    rows = [
        sphere_wpm(d=d, epsilon=eps, r=r)
        for d in sorted(check_integer(d, name="d", minimum=2) for d in dims)
        for eps in sorted(check_epsilon(e, allow_zero=False) for e in epsilons)
    ]
    return pl.DataFrame(
        {
            "d": [m.d for m in rows],
            "epsilon": [m.epsilon for m in rows],
            "r": [m.r for m in rows],
            "scale": [m.scale for m in rows],
            "radius": [m.radius for m in rows],
            "cap_mass": [m.cap_mass for m in rows],
            "cost": [m.cost for m in rows],
        },
        schema=SCALES_SCHEMA,
    )


def sphere_grid(d: int, n: int) -> FloatArray:
    """``n`` unit vectors: equally spaced on S¹ (``d = 2``) or a Fibonacci lattice on S²
    (``d = 3``: equal-area bands, golden-angle longitudes), each carrying mass ``1/n``."""
    d = check_integer(d, name="d", minimum=2)
    n = check_integer(n, name="n", minimum=3)
    if d == 2:
        angle = 2.0 * math.pi * np.arange(n) / n
        return np.column_stack([np.cos(angle), np.sin(angle)])
    if d == 3:
        i = np.arange(n) + 0.5
        z = 1.0 - 2.0 * i / n
        longitude = math.pi * (1.0 + math.sqrt(5.0)) * i
        ring = np.sqrt(1.0 - z**2)
        return np.column_stack([ring * np.cos(longitude), ring * np.sin(longitude), z])
    raise ValueError(f"d must be 2 (S¹) or 3 (S²) for a grid, got {d!r}")


def _grid_row(d: int, n: int, eps: float, r: float) -> dict[str, float]:
    closed = sphere_wpm(d=d, epsilon=eps, r=r)
    X = sphere_grid(d, n)
    dist = np.linalg.norm(X[:, None, :] - X[None, :, :], axis=2)
    C = dist**r
    lp = optimal_base_measure(C, epsilon=eps, method="lp")
    mu = np.full(n, closed.scale / n)
    point = np.zeros(n)
    point[0] = 1.0
    projection = wasserstein_projection(point, C, mu, epsilon=eps, method="exact")
    lp_scale = float(lp.mu.sum())
    return {
        "d": d,
        "n": n,
        "epsilon": eps,
        "r": r,
        "closed_cost": closed.cost,
        "lp_cost": lp.value,
        "cost_error": abs(lp.value - closed.cost),
        "closed_scale": closed.scale,
        "lp_scale": lp_scale,
        "scale_error": abs(lp_scale - closed.scale),
        "projection_cost": float(np.asarray(projection.cost).reshape(-1)[0]),
    }


def sphere_lp_convergence(
    *, grids: dict[int, Sequence[int]], epsilons: Sequence[float], r: float
) -> pl.DataFrame:
    """:data:`CONVERGENCE_SCHEMA`: per ``(d, n, ε)`` the discrete WPM on :func:`sphere_grid`
    against the closed form (module docstring); ``grids`` maps ``d`` to its grid sizes."""
    rows = [
        _grid_row(d, n, eps, float(r))
        for d in sorted(grids)
        for n in sorted(grids[d])
        for eps in sorted(check_epsilon(e, allow_zero=False) for e in epsilons)
    ]
    return pl.DataFrame(rows, schema=CONVERGENCE_SCHEMA, orient="row")
