"""Testing a released mechanism's privacy from its outputs alone (a black-box audit).

ε-LDP bounds, for every output ``j`` and inputs ``a, b``, the ratio
``P(j | a) / P(j | b) <= e^ε``. Given released outputs of many independent draws with input
``a`` and with input ``b``, a one-sided test rejects the claim "ε-LDP" only when a lower
confidence bound of that ratio exceeds ``e^ε``: with the exact (Clopper–Pearson) lower bound of
``P(j | a)`` and upper bound of ``P(j | b)``, each at level ``α / 2``, a mechanism that is ε-LDP
is rejected with probability at most ``α`` (union bound). For the minimax kernel the worst pair
is the point masses on the item of smallest prior mass and on any other item, where the ratio
is exactly ``e^ε`` (the kernel is tight), so a mechanism built for a larger ε is rejected once
there are enough draws.
"""

from __future__ import annotations

import math

__all__ = ["epsilon_lower_bound"]


def _check_counts(hits: int, trials: int, name: str) -> None:
    if not (isinstance(hits, int) and isinstance(trials, int)) or isinstance(hits, bool):
        raise TypeError(f"{name}: hits and trials must be integers, got {hits!r}, {trials!r}")
    if not 0 <= hits <= trials or trials < 1:
        raise ValueError(f"{name}: need 0 <= hits <= trials and trials >= 1, got {hits}, {trials}")


def epsilon_lower_bound(
    hits_a: int, trials_a: int, hits_b: int, trials_b: int, *, alpha: float
) -> float:
    """A ``1 - alpha`` lower confidence bound of ``log(P(j | a) / P(j | b))``.

    ``hits_a`` of ``trials_a`` independent draws with input ``a`` gave output ``j``, and
    ``hits_b`` of ``trials_b`` with input ``b``. The bound is ``log(L_a / U_b)`` with ``L_a`` the
    Clopper–Pearson lower bound of ``P(j | a)`` and ``U_b`` the upper bound of ``P(j | b)``, each
    at level ``alpha / 2``. A mechanism claimed ε-LDP is rejected at level ``alpha`` when the
    result exceeds ε; ``-inf`` when ``hits_a`` is 0.

    Parameters
    ----------
    hits_a, trials_a, hits_b, trials_b
        Counts (integers, ``0 <= hits <= trials``, ``trials >= 1``).
    alpha
        Level in ``(0, 1)``: the chance of rejecting a mechanism that is ε-LDP.

    Returns
    -------
    float
    """
    from scipy.stats import beta

    _check_counts(hits_a, trials_a, "a")
    _check_counts(hits_b, trials_b, "b")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    half = alpha / 2.0
    lower_a = 0.0 if hits_a == 0 else float(beta.ppf(half, hits_a, trials_a - hits_a + 1))
    upper_b = (
        1.0 if hits_b == trials_b else float(beta.ppf(1 - half, hits_b + 1, trials_b - hits_b))
    )
    if lower_a == 0.0:
        return -math.inf
    return math.log(lower_a / upper_b)
