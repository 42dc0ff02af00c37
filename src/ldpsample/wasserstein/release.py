"""Release distributions by mechanism name: the one dispatch the WPM experiments share.

:func:`release_distributions` maps a mechanism name to its per-input output distributions
``Q`` (one row per input); the experiments choose the base measure (the science) and call it
instead of each carrying its own ``if method == ...`` chain. :func:`kpm_uniform_scale` is the
scale of the KPM's uniform base measure that is minimax at the worst-case (Dirac) inputs.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ldpsample._types import FloatArray
from ldpsample._validation import check_epsilon
from ldpsample.wasserstein.exponential import exponential_mechanism
from ldpsample.wasserstein.projection import kl_projection_mechanism, wasserstein_projection

__all__ = ["MECHANISMS", "kpm_uniform_scale", "release_distributions"]

#: Mechanism names :func:`release_distributions` knows (``nonprivate`` is the ε = ∞ reference).
MECHANISMS = ("wpm", "kpm", "exponential", "nonprivate")


def kpm_uniform_scale(m: int, *, epsilon: float) -> float:
    """Scale ``c = m / (e^ε + m - 1)`` of the KPM's uniform base measure over ``m`` outputs.

    It maximises the mass a Dirac input keeps on its own output (``e^ε c / m = 1 - (m - 1) c /
    m``), i.e. it is the minimax uniform measure for any f-divergence at the worst-case (Dirac)
    inputs.
    """
    eps = check_epsilon(epsilon)
    if eps >= 700.0:
        return math.exp(-eps) if eps < 745.0 else 0.0
    return m / (math.exp(eps) + m - 1)


def release_distributions(
    P: ArrayLike,
    *,
    method: str,
    epsilon: float,
    cost: ArrayLike | None = None,
    mu: ArrayLike | None = None,
    wpm_method: str = "exact",
    eta: float | None = None,
) -> FloatArray:
    """Per-input output distributions of one mechanism, shape ``(batch, m)``.

    Parameters
    ----------
    P
        Input distributions, one per row.
    method
        ``wpm`` (:func:`wasserstein_projection` with base measure ``mu`` and cost ``cost``;
        ``wpm_method`` and ``eta`` are its ``method`` and ``eta``), ``kpm``
        (:func:`kl_projection_mechanism` with base measure ``mu``), ``exponential``
        (:func:`exponential_mechanism` with cost ``cost``) or ``nonprivate`` (each input point's
        mass goes to its cheapest output; ε is ignored).
    epsilon
        Privacy level of the private mechanisms.
    """
    if method == "wpm":
        return wasserstein_projection(P, cost, mu, epsilon=epsilon, method=wpm_method, eta=eta).Q
    if method == "kpm":
        return kl_projection_mechanism(P, mu, epsilon=epsilon)
    if method == "exponential":
        return exponential_mechanism(P, cost, epsilon=epsilon)
    if method == "nonprivate":
        C = np.asarray(cost, dtype=float)
        Pa = np.asarray(P, dtype=float)
        Q = np.zeros((Pa.shape[0], C.shape[1]))
        np.add.at(Q.T, C.argmin(axis=1), Pa.T)
        return Q
    raise ValueError(f"unknown method {method!r}; known: {MECHANISMS}")
