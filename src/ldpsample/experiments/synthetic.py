"""Synthetic experiment of Zamanlooy et al. (2025), Fig. 2.

For each run a public prior ``q ~ U[0, 1]^n`` (normalised) is drawn; the private distribution
puts mass ``p1`` on one item and ``(1 - p1) / (n - 1)`` on every other item, for ``p1`` on a grid
from ``1/n`` (the uniform distribution) to 1 (a point mass). For every ``p`` the experiment
records ``TV(p, pK)`` and ``KL(p || pK)`` of the minimax-optimal sampler ``K = K_{q, eps}`` and of
the relative mollifier (Husain et al. 2020): its TV projection for TV and its KL projection for
KL.

The priors depend on ``(seed, n, run)`` only, not on ``epsilon``, so every epsilon of a sweep is
evaluated on the same priors and the curves are comparable.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from numpy.typing import NDArray

from ldpsample._validation import check_epsilon
from ldpsample.divergences import kl_divergence, tv_distance
from ldpsample.minimax import apply_minimax
from ldpsample.mollifier import relative_mollifier_kl, relative_mollifier_tv
from ldpsample.pipeline.progress import progress as _progress

__all__ = ["SCHEMA", "draw_priors", "point_mass_grid", "synthetic_values"]

#: Column order and types of the tidy table (one row per value).
SCHEMA: dict[str, pl.DataType] = {
    "n": pl.Int64(),
    "epsilon": pl.Float64(),
    "run": pl.Int64(),
    "p1": pl.Float64(),
    "method": pl.String(),
    "divergence": pl.String(),
    "value": pl.Float64(),
}


def draw_priors(*, n: int, runs: int, seed: int) -> NDArray[np.float64]:
    """Draw ``runs`` public priors ``q ~ U[0, 1]^n`` normalised, shape ``(runs, n)``.

    The stream is ``numpy.random.default_rng([seed, n])``: the same for every epsilon.
    """
    rng = np.random.default_rng([seed, n])
    u = rng.uniform(0.0, 1.0, size=(runs, n))
    return u / u.sum(axis=1, keepdims=True)


def point_mass_grid(*, n: int, grid_size: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return ``(p1, P)``: the grid ``p1 = linspace(1/n, 1, grid_size)`` and the matrix of
    distributions with ``p1`` on item 0 and ``(1 - p1)/(n - 1)`` elsewhere (shape ``(grid, n)``).
    """
    p1 = np.linspace(1.0 / n, 1.0, grid_size)
    P = np.repeat(((1.0 - p1) / (n - 1))[:, None], n, axis=1)
    P[:, 0] = p1
    P /= P.sum(axis=1, keepdims=True)  # remove rounding so every row passes validation
    return p1, P


def synthetic_values(
    *,
    n: int,
    epsilon: float,
    runs: int,
    grid_size: int,
    seed: int,
    progress: bool = False,
    threads: int | None = None,
) -> pl.DataFrame:
    """Compute the Fig. 2 values for one ``(n, epsilon)``.

    Parameters
    ----------
    n
        Number of items (>= 2).
    epsilon
        Privacy parameter (> 0).
    runs
        Number of random priors.
    grid_size
        Number of ``p1`` values between ``1/n`` and 1.
    seed
        Seed of the priors (see :func:`draw_priors`).
    progress
        Show a progress bar over the runs on stderr.
    threads
        Threads of the minimax sampler and the KL mollifier (None: their default; see
        :mod:`ldpsample._threads`); no value depends on it.

    Returns
    -------
    polars.DataFrame
        Columns of :data:`SCHEMA`, methods ``minimax`` and ``mollifier``, divergences ``tv`` and
        ``kl``; ``runs * grid_size * 4`` rows sorted by run, p1, method, divergence.
    """
    epsilon = check_epsilon(epsilon)
    if n < 2 or runs < 1 or grid_size < 1:
        raise ValueError(f"need n >= 2, runs >= 1, grid_size >= 1; got {n=}, {runs=}, {grid_size=}")
    priors = draw_priors(n=n, runs=runs, seed=seed)
    p1, P = point_mass_grid(n=n, grid_size=grid_size)
    parts = []
    for run, q in _progress(enumerate(priors), desc="runs", total=runs, enabled=progress):
        released = apply_minimax(P, q, epsilon=epsilon, threads=threads)
        values = {
            ("minimax", "tv"): tv_distance(P, released),
            ("minimax", "kl"): kl_divergence(P, released),
            ("mollifier", "tv"): tv_distance(P, relative_mollifier_tv(P, q, epsilon=epsilon)),
            ("mollifier", "kl"): kl_divergence(
                P, relative_mollifier_kl(P, q, epsilon=epsilon, threads=threads)
            ),
        }
        for (method, divergence), value in values.items():
            parts.append(
                pl.DataFrame(
                    {
                        "n": np.full(grid_size, n),
                        "epsilon": np.full(grid_size, epsilon),
                        "run": np.full(grid_size, run),
                        "p1": p1,
                        "method": [method] * grid_size,
                        "divergence": [divergence] * grid_size,
                        "value": value,
                    },
                    schema=SCHEMA,
                )
            )
    return pl.concat(parts).sort("run", "p1", "method", "divergence")
