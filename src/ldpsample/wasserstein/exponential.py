"""Exponential-mechanism baseline and the release sampler.

The exponential mechanism (McSherry & Talwar 2007) with utility ``u(P, y) = -sum_i P_i C[i, y]``
(the expected cost of moving the input to ``y``) releases ``y`` with probability

    Q(y | P) ∝ exp(k u(P, y)).

Privacy (proved in ``docs/wasserstein.md``): for any inputs ``P, P'`` and output ``y``,

    log Q(y|P) / Q(y|P') <= k max_{y'} [(u(P,y) - u(P',y)) - (u(P,y') - u(P',y'))] <= k D,
    D = max_{j, j'} [max_i (C_ij - C_ij') - min_i (C_ij - C_ij')] <= 2 Δu,
    Δu = max_j (max_i C_ij - min_i C_ij)   (the utility's sensitivity over all pairs of inputs).

So ``k = ε / (2 Δu)`` (the standard scaling, ``sensitivity="standard"``) and ``k = ε / D``
(``sensitivity="pairwise"``, never smaller) are both ε-LDP. ``k = ε / Δu`` is *not* in general:
the utility is not monotone in the input, and the normalising constant can contribute another
``k Δu`` (example in the docs).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ldpsample._types import FloatArray
from ldpsample._validation import check_epsilon
from ldpsample.sampling import sample_categorical
from ldpsample.wasserstein._common import check_cost, check_inputs

__all__ = ["exponential_mechanism", "exponential_sensitivity", "sample_outputs"]

_SENSITIVITIES = ("standard", "pairwise")


def exponential_sensitivity(C: ArrayLike, *, sensitivity: str = "standard") -> float:
    """The denominator ``Δ`` in ``k = ε / Δ`` that makes the exponential mechanism ε-LDP.

    ``"standard"``: ``2 Δu`` with ``Δu = max_j (max_i C_ij - min_i C_ij)``.
    ``"pairwise"``: ``D = max_{j,j'} [max_i (C_ij - C_ij') - min_i (C_ij - C_ij')]``
    (``D <= 2 Δu``; computed in ``O(n m^2)`` time, blockwise).
    """
    C_arr = check_cost(C)
    if sensitivity == "standard":
        return float(2.0 * (C_arr.max(axis=0) - C_arr.min(axis=0)).max())
    if sensitivity != "pairwise":
        raise ValueError(f"sensitivity must be one of {_SENSITIVITIES}, got {sensitivity!r}")
    n, m = C_arr.shape
    best = 0.0
    block = max(1, (1 << 22) // max(n * m, 1))
    for s in range(0, m, block):
        diff = C_arr[:, s : s + block, None] - C_arr[:, None, :]  # (n, b, m)
        best = max(best, float((diff.max(axis=0) - diff.min(axis=0)).max()))
    return best


def exponential_mechanism(
    P: ArrayLike, C: ArrayLike, *, epsilon: float, sensitivity: str = "standard"
) -> FloatArray:
    """Output distributions of the exponential mechanism with utility ``-sum_i P_i C[i, y]``.

    Parameters
    ----------
    P
        Input distributions, shape ``(batch, n)`` or ``(n,)``.
    C
        Cost matrix, shape ``(n, m)`` (use ``d`` or ``d^r`` as the utility's distance).
    epsilon
        Privacy parameter ε >= 0.
    sensitivity
        ``"standard"`` (``k = ε / (2 Δu)``) or ``"pairwise"`` (``k = ε / D``); see the module
        docstring. Both are ε-LDP.

    Returns
    -------
    numpy.ndarray
        Shape ``(batch, m)`` or ``(m,)``; uniform when ``Δ = 0`` (constant utility differences).
    """
    eps = check_epsilon(epsilon)
    C_arr = check_cost(C)
    P2, was_1d = check_inputs(P, C_arr.shape[0])
    delta = exponential_sensitivity(C_arr, sensitivity=sensitivity)
    k = eps / delta if delta > 0 else 0.0
    logits = -k * (P2 @ C_arr)
    logits -= logits.max(axis=1, keepdims=True)
    Q = np.exp(logits)
    Q /= Q.sum(axis=1, keepdims=True)
    return Q[0] if was_1d else Q


def sample_outputs(Q: ArrayLike, *, rng: np.random.Generator) -> NDArray[np.intp]:
    """Release one output index per row of ``Q`` (the private sample of each user).

    A thin alias of :func:`ldpsample.sampling.sample_categorical` (inverse CDF, one uniform per
    row, zero-probability outputs never drawn), kept here so a WPM user finds it next to
    :func:`wasserstein_projection`.

    Parameters
    ----------
    Q
        Output distributions, shape ``(batch, m)`` or ``(m,)`` (e.g. ``ProjectionResult.Q``).
    rng
        A :class:`numpy.random.Generator`.

    Returns
    -------
    numpy.ndarray
        Integer indices, shape ``(batch,)`` (one integer for a 1-D ``Q``).
    """
    return sample_categorical(Q, rng=rng)
