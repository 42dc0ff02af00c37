"""Gowalla (Austin) location release with the Wasserstein projection mechanism.

Data: check-ins ``user, time, latitude, longitude, location`` (SNAP ``loc-gowalla`` format or the
derived ``gowalla3_austin.tsv``; see ``/work/shared/data/gowalla/PROVENANCE.md``: the full SNAP
file is not available offline, the derived sample is filtered towards active users).

Set-up (:func:`gowalla_grid`): check-ins inside the Austin box (inclusive
``30.1 <= lat <= 30.55``, ``-97.95 <= lon <= -97.55``) are binned on a ``g x g`` grid; users
with at least ``min_checkins`` (default 10) check-ins in the box are kept; each user's input
``P_u`` is their check-in histogram on the grid, and inputs and outputs are the grid cells with
the Euclidean distance between cell centres in kilometres (equirectangular projection at the
box's mean latitude) as cost (``r = 1``).

Evaluation (:func:`gowalla_w1`): each user releases one cell. The target is the *user-mean*
distribution ``P̄ = sum_u P_u / U`` (each user counts once, as each releases once; the
check-in-weighted histogram is available with ``target="checkins"``). For every ε and method
the table reports ``W1(P̄, Q̄)`` with ``Q̄ = sum_u Q_u / U`` (the expected release
distribution, deterministic) and, per repeat, ``W1(P̄, released)`` for the empirical
distribution of the ``U`` released cells. Methods:

* ``wpm`` -- exact WPM with the optimal uniform base measure
  (:func:`ldpsample.wasserstein.optimal_uniform_base_measure`);
* ``kpm`` -- KPM with the uniform base measure of scale ``c = m / (e^ε + m - 1)``, the one that
  maximises the mass a Dirac input keeps on its own cell (``e^ε c / m = 1 - (m - 1) c / m``), i.e.
  the minimax uniform measure for any f-divergence at the worst-case (Dirac) inputs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import NDArray

from ldpsample._types import FloatArray
from ldpsample._validation import check_epsilon, check_integer, check_rng
from ldpsample.datasets.gowalla import CHECKIN_SCHEMA, read_gowalla_derived, read_gowalla_snap
from ldpsample.sampling import sample_categorical
from ldpsample.wasserstein import (
    kpm_uniform_scale,
    optimal_uniform_base_measure,
    release_distributions,
    transport_cost,
    uniform_base_measure,
)

__all__ = [
    "AUSTIN_BBOX",
    "CHECKIN_SCHEMA",
    "MAP_SCHEMA",
    "W1_SCHEMA",
    "GowallaGrid",
    "gowalla_grid",
    "gowalla_grid_from_parquet",
    "gowalla_maps",
    "gowalla_w1",
    "read_gowalla_derived",
    "read_gowalla_snap",
]

#: (lat_min, lat_max, lon_min, lon_max) of the Austin box, inclusive.
AUSTIN_BBOX: tuple[float, float, float, float] = (30.1, 30.55, -97.95, -97.55)

EARTH_RADIUS_KM = 6371.0088

#: Columns of :func:`gowalla_w1`.
W1_SCHEMA: dict[str, pl.DataType] = {
    "epsilon": pl.Float64(),
    "method": pl.String(),
    "repeat": pl.Int64(),
    "w1_expected": pl.Float64(),
    "w1_released": pl.Float64(),
    "scale": pl.Float64(),
    "n_users": pl.Int64(),
}

#: Columns of :func:`gowalla_maps` (long format, one row per cell and distribution).
MAP_SCHEMA: dict[str, pl.DataType] = {
    "epsilon": pl.Float64(),
    "distribution": pl.String(),
    "cell": pl.Int64(),
    "row": pl.Int64(),
    "col": pl.Int64(),
    "latitude": pl.Float64(),
    "longitude": pl.Float64(),
    "probability": pl.Float64(),
}


# --------------------------------------------------------------------------------------------
# Grid
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GowallaGrid:
    """Users' check-in histograms on a grid over a box (see :func:`gowalla_grid`).

    Attributes
    ----------
    counts
        ``(users, g*g)`` check-in counts per cell (row-major: ``cell = row * g + col``, row 0 at
        the southern edge).
    users
        User ids, in the order of ``counts``.
    latitude, longitude
        Cell centres, shape ``(g*g,)``.
    cost
        Euclidean distances between cell centres in km, ``(g*g, g*g)``.
    grid_size
        ``g``.
    """

    counts: NDArray[np.int64]
    users: NDArray[np.int64]
    latitude: FloatArray
    longitude: FloatArray
    cost: FloatArray
    grid_size: int

    @property
    def inputs(self) -> FloatArray:
        """Users' distributions ``P_u`` (normalised counts)."""
        return self.counts / self.counts.sum(axis=1, keepdims=True)


def gowalla_grid(
    checkins: pl.DataFrame,
    *,
    grid_size: int,
    bbox: tuple[float, float, float, float] = AUSTIN_BBOX,
    min_checkins: int = 10,
) -> GowallaGrid:
    """Bin check-ins inside ``bbox`` on a ``grid_size x grid_size`` grid (module docstring).

    Parameters
    ----------
    checkins
        A frame with at least ``user``, ``latitude``, ``longitude`` (the readers' output).
    grid_size
        Cells per side ``g`` (``g*g`` inputs and outputs).
    bbox
        ``(lat_min, lat_max, lon_min, lon_max)``, inclusive.
    min_checkins
        Users with fewer check-ins inside the box are dropped.

    Raises
    ------
    ValueError
        For a bad grid size or box, or when no user is left.
    """
    check_integer(grid_size, name="grid_size", minimum=1)
    lat0, lat1, lon0, lon1 = (float(v) for v in bbox)
    if not (lat0 < lat1 and lon0 < lon1):
        raise ValueError(f"bbox must be (lat_min, lat_max, lon_min, lon_max), got {bbox!r}")
    inside = checkins.filter(
        pl.col("latitude").is_between(lat0, lat1) & pl.col("longitude").is_between(lon0, lon1)
    )
    per_user = inside.group_by("user").len()
    keep = per_user.filter(pl.col("len") >= min_checkins)["user"]
    inside = inside.filter(pl.col("user").is_in(keep.implode()))
    if inside.height == 0:
        raise ValueError(
            f"no user has {min_checkins} or more check-ins inside {bbox!r} "
            f"({checkins.height} check-ins given)"
        )
    g = grid_size
    lat = inside["latitude"].to_numpy()
    lon = inside["longitude"].to_numpy()
    row = np.minimum(((lat - lat0) / (lat1 - lat0) * g).astype(np.int64), g - 1)
    col = np.minimum(((lon - lon0) / (lon1 - lon0) * g).astype(np.int64), g - 1)
    users, user_idx = np.unique(inside["user"].to_numpy(), return_inverse=True)
    counts = np.zeros((users.size, g * g), dtype=np.int64)
    np.add.at(counts, (user_idx, row * g + col), 1)

    centre_lat = lat0 + (np.arange(g) + 0.5) * (lat1 - lat0) / g
    centre_lon = lon0 + (np.arange(g) + 0.5) * (lon1 - lon0) / g
    cell_lat = np.repeat(centre_lat, g)
    cell_lon = np.tile(centre_lon, g)
    km_per_deg = EARTH_RADIUS_KM * math.pi / 180.0
    y = cell_lat * km_per_deg
    x = cell_lon * km_per_deg * math.cos(math.radians(0.5 * (lat0 + lat1)))
    cost = np.hypot(x[:, None] - x[None, :], y[:, None] - y[None, :])
    return GowallaGrid(counts, users, cell_lat, cell_lon, cost, g)


def gowalla_grid_from_parquet(
    path: str | os.PathLike[str],
    *,
    grid_size: int,
    bbox: Sequence[float],
    min_checkins: int,
) -> GowallaGrid:
    """:func:`gowalla_grid` of the check-ins stored at ``path`` (the pipeline's
    ``checkins.parquet``), shared by the W1 and map jobs so both bin the same users."""
    return gowalla_grid(
        pl.read_parquet(path),
        grid_size=grid_size,
        bbox=tuple(bbox),
        min_checkins=min_checkins,
    )


# --------------------------------------------------------------------------------------------
# Mechanisms and evaluation
# --------------------------------------------------------------------------------------------


def _target(grid: GowallaGrid, target: str) -> FloatArray:
    if target == "users":
        return grid.inputs.mean(axis=0)
    if target == "checkins":
        total = grid.counts.sum(axis=0)
        return total / total.sum()
    raise ValueError(f"target must be 'users' or 'checkins', got {target!r}")


def _release_distributions(grid: GowallaGrid, method: str, eps: float) -> tuple[FloatArray, float]:
    """Per-user output distributions ``(users, m)`` and the base measure's scale."""
    m = grid.cost.shape[0]
    if method == "wpm":
        mu = optimal_uniform_base_measure(grid.cost, epsilon=eps).mu
    elif method == "kpm":
        mu = uniform_base_measure(m, min(kpm_uniform_scale(m, epsilon=eps), 1.0))
    else:
        raise ValueError(f"method must be 'wpm' or 'kpm', got {method!r}")
    Q = release_distributions(grid.inputs, method=method, epsilon=eps, cost=grid.cost, mu=mu)
    return Q, float(mu.sum())


def gowalla_w1(
    grid: GowallaGrid,
    *,
    epsilons: Sequence[float],
    repeats: int,
    rng: np.random.Generator,
    methods: Sequence[str] = ("wpm", "kpm"),
    target: str = "users",
) -> pl.DataFrame:
    """W1 between the true and the privately released location distributions, against ε.

    Parameters
    ----------
    grid
        From :func:`gowalla_grid`.
    epsilons
        Privacy levels.
    repeats
        Independent rounds of releases (one cell per user per round) drawn from ``rng``.
    rng
        Randomness of the releases.
    methods
        Subset of ``("wpm", "kpm")``.
    target
        ``"users"`` (mean of the users' distributions; default) or ``"checkins"`` (all
        check-ins pooled).

    Returns
    -------
    polars.DataFrame
        :data:`W1_SCHEMA`, one row per (ε, method, repeat): ``w1_expected = W1(target, Q̄)``
        (the same for every repeat), ``w1_released = W1(target, empirical releases)``, the base
        measure's ``scale`` and ``n_users``; W1 in km.
    """
    gen = check_rng(rng)
    check_integer(repeats, name="repeats", minimum=1)
    truth = _target(grid, target)
    m = truth.size
    n_users = grid.counts.shape[0]
    rows: list[dict[str, object]] = []
    for eps_raw in epsilons:
        eps = check_epsilon(eps_raw)
        for method in methods:
            Q, scale = _release_distributions(grid, method, eps)
            expected = float(transport_cost(truth, Q.mean(axis=0), grid.cost))
            for rep in range(repeats):
                released = sample_categorical(Q, rng=gen)
                hist = np.bincount(released, minlength=m) / n_users
                rows.append(
                    {
                        "epsilon": eps,
                        "method": method,
                        "repeat": rep,
                        "w1_expected": expected,
                        "w1_released": float(transport_cost(truth, hist, grid.cost)),
                        "scale": scale,
                        "n_users": n_users,
                    }
                )
    return pl.DataFrame(rows, schema=W1_SCHEMA)


def gowalla_maps(
    grid: GowallaGrid,
    *,
    epsilon: float,
    methods: Sequence[str] = ("wpm", "kpm"),
    target: str = "users",
    rng: np.random.Generator | None = None,
) -> pl.DataFrame:
    """Data for maps of the true and estimated location distributions at one ε.

    Distributions: ``true`` (the target of :func:`gowalla_w1`), ``<method>`` (the expected
    release distribution ``Q̄``) and, when ``rng`` is given, ``<method>_released`` (the empirical
    distribution of one round of releases).

    Returns
    -------
    polars.DataFrame
        :data:`MAP_SCHEMA` (long format; ``row``/``col`` index the grid, row 0 south).
    """
    eps = check_epsilon(epsilon)
    gen = None if rng is None else check_rng(rng)
    g = grid.grid_size
    m = g * g
    series: dict[str, FloatArray] = {"true": _target(grid, target)}
    for method in methods:
        Q, _ = _release_distributions(grid, method, eps)
        series[method] = Q.mean(axis=0)
        if gen is not None:
            released = sample_categorical(Q, rng=gen)
            series[f"{method}_released"] = np.bincount(released, minlength=m) / Q.shape[0]
    cells = np.arange(m)
    frames = [
        pl.DataFrame(
            {
                "epsilon": np.full(m, eps),
                "distribution": [name] * m,
                "cell": cells,
                "row": cells // g,
                "col": cells % g,
                "latitude": grid.latitude,
                "longitude": grid.longitude,
                "probability": values,
            },
            schema=MAP_SCHEMA,
        )
        for name, values in series.items()
    ]
    return pl.concat(frames)
