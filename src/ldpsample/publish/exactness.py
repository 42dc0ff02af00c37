"""How far the floating-point draws can be from the exact kernel, and the floor on ``q`` that
keeps the realised ε of every release within a documented factor of its ε.

The client draws item ``j`` when the user's uniform ``u = k / 2**53`` falls between the
computed CDF values ``F̂_{j-1} <= u < F̂_j`` (:func:`ldpsample.sample_minimax_sparse`). If every
computed CDF value is within ``η`` of the exact ``F_j``, the probability of ``j`` over the grid
is within ``2η + 2**-53`` of the exact ``(pK)_j`` (one grid step for the rounding of each end
to the grid). The sampler's CDF is a running sum of at most ``2n + 1`` non-negative pieces,
each a product of prefix sums of at most ``n`` non-negative terms, all of them at most 1; by
the standard bound on recursive summation (Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., §4.2: an error of at most ``(m - 1) u Σ|x_i|`` for ``m`` terms with unit
roundoff ``u = 2**-53``), ``η <= 4 (n + 1) 2**-53`` with room for the products. Every column
of ``K_{q,ε}`` lies within a factor ``e^ε`` of its mean and ``qK = q``, so every input draws
``j`` with probability at least ``q_j e^{-ε}``. Hence for any two inputs, with
``a = (2η + 2**-53) e^ε / q_min`` (``q_min`` the smallest positive ``q`` of the subcategory):

    realised ε  <=  ε + ln((1 + a) / (1 - a))            (a < 1)

(:func:`realised_epsilon_bound`). A spec is refused when this excess exceeds
:data:`RELATIVE_EXCESS` × ε for any subcategory and ε (:func:`check_sampling_floor`): below the
floor the grid cannot represent the kernel's smallest probabilities (at ``q ≈ 4e-17`` an item
is drawn by one grid point or none, ε = ∞). Items with ``q = 0`` are never drawn and do not
count. A joint release (``release_mode: joint``) draws on each attribute's joint domain with
``q = π(s) q_s(i)`` and ``n = Σ_s n_s``: the same bound and check apply to that domain (one
cell per attribute), which is what :func:`ldpsample.publish.build_spec` checks for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl

from ldpsample.publish.spec import SpecError

__all__ = [
    "GRID",
    "RELATIVE_EXCESS",
    "cdf_error_bound",
    "check_sampling_floor",
    "realised_epsilon_bound",
]

#: The uniforms' grid: ``k / 2**53``, ``k = 0 .. 2**53 - 1``.
GRID = 2**53
#: The largest accepted excess of the realised ε over ε, relative to ε.
RELATIVE_EXCESS = 1e-4


def cdf_error_bound(n):
    """``η``: the bound on the absolute error of a computed CDF value of an ``n``-item domain
    (see the module docstring); ``n`` an int or an integer array."""
    return 4.0 * (n + 1) / GRID


def realised_epsilon_bound(q_min: float, *, n: int, epsilon: float) -> float:
    """The proved bound on the realised ε over the uniform grid of a subcategory whose
    smallest positive prior mass is ``q_min`` (``inf`` when ``a >= 1``)."""
    a = (2.0 * cdf_error_bound(n) + 1.0 / GRID) * math.exp(epsilon) / q_min
    if not a < 1.0:
        return math.inf
    return epsilon + math.log1p(a) - math.log1p(-a)


def check_sampling_floor(domain: pl.DataFrame, *, epsilons: Sequence[float], key: str) -> None:
    """Raise :class:`~ldpsample.publish.spec.SpecError` naming ``key`` if a subcategory of
    ``domain`` (``attribute, subcategory, q``) has a positive ``q`` so small that the proved
    bound exceeds ``ε (1 + RELATIVE_EXCESS)`` at some ε of ``epsilons``."""
    stats = (
        domain.group_by("attribute", "subcategory", maintain_order=True)
        .agg(
            pl.col("q").filter(pl.col("q") > 0).min().alias("q_min"),
            pl.len().alias("n"),
        )
        .drop_nulls("q_min")
    )
    if stats.height == 0:
        return
    q_min = stats["q_min"].to_numpy()
    n = stats["n"].to_numpy()
    for eps in sorted(epsilons):
        a = (2.0 * cdf_error_bound(n) + 1.0 / GRID) * math.exp(eps) / q_min
        excess = np.full(a.shape, np.inf)
        ok = a < 1.0
        excess[ok] = np.log1p(a[ok]) - np.log1p(-a[ok])
        bad = np.flatnonzero(excess > RELATIVE_EXCESS * eps)
        if bad.size:
            row = stats.row(int(bad[0]), named=True)
            floor = _floor(int(row["n"]), eps)
            raise SpecError(
                f"config key {key}.prior_smoothing: subcategory "
                f"{row['attribute']}={row['subcategory']!r} has an item of q = {row['q_min']!r}, "
                f"below the sampling floor {floor:.3g} at epsilon {eps!r} ({bad.size} "
                "subcategories): the 2**-53 grid of the uniforms cannot draw it within a factor "
                f"1 + {RELATIVE_EXCESS:g} of epsilon (docs/publishing.md, exact enough sampling). "
                "Raise prior_smoothing, or drop the items of tiny public mass"
            )


def _floor(n: int, epsilon: float) -> float:
    """The smallest ``q_min`` the check accepts for ``n`` items at ``epsilon``."""
    target = RELATIVE_EXCESS * epsilon  # ln((1+a)/(1-a)) = target  <=>  a = tanh(target / 2)
    return (2.0 * cdf_error_bound(n) + 1.0 / GRID) * math.exp(epsilon) / math.tanh(target / 2)
