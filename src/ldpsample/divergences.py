"""f-divergences with exact handling of zeros and infinities.

For a convex ``f`` on ``[0, inf)`` with ``f(1) = 0``, the f-divergence of ``P`` from ``Q`` is

    D_f(P || Q) = sum_j Q_j f(P_j / Q_j),

with the standard conventions (Csiszár; Liese & Vajda 2006) that make it lower semicontinuous:

* ``0 * f(0 / 0) = 0``;
* ``0 * f(a / 0) = a * f'(inf)`` for ``a > 0``, where ``f'(inf) = lim_{t -> inf} f(t) / t``;
* ``Q_j * f(0 / Q_j) = Q_j * f(0)`` with ``f(0) = lim_{t -> 0+} f(t)`` (possibly ``inf``).

So KL(P || Q) is ``inf`` as soon as some ``P_j > 0`` has ``Q_j = 0``, while TV stays finite.

Built in: ``"tv"`` (``f(t) = |t - 1| / 2``), ``"kl"`` (``t log t``), ``"chi2"`` (``(t - 1)^2``) and
``"hellinger"`` (squared Hellinger, ``(sqrt(t) - 1)^2``, i.e. ``sum_j (sqrt(P_j) - sqrt(Q_j))^2``
without a factor 1/2). Any other convex ``f`` with ``f(1) = 0`` is accepted through
:meth:`Divergence.from_function`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ldpsample._types import FloatArray

__all__ = [
    "CHI2",
    "DIVERGENCES",
    "HELLINGER",
    "KL",
    "TV",
    "Divergence",
    "DivergenceLike",
    "f_divergence",
    "get_divergence",
    "kl_divergence",
    "point_mass_divergence",
    "rel_entr_terms",
    "tv_distance",
]


@dataclass(frozen=True)
class Divergence:
    """An f-divergence: the generator ``f`` and its two limits.

    Parameters
    ----------
    name
        Short name used in tables and file paths.
    f
        Vectorised convex function on ``(0, inf)`` with ``f(1) = 0``.
    f_at_zero
        ``f(0) = lim_{t -> 0+} f(t)``; may be ``inf``.
    slope_at_infinity
        ``f'(inf) = lim_{t -> inf} f(t) / t``; may be ``inf``.
    cvxpy_objective
        Optional builder ``(p, Q) -> cvxpy expression`` returning ``sum_users D_f(p_u || Q_u)``
        for a constant ``p`` of shape ``(users, n)`` and a variable ``Q`` of the same shape. It is
        what :func:`ldpsample.mollifier_projection` minimises; built-ins have one.
    """

    name: str
    f: Callable[[FloatArray], FloatArray] = field(repr=False)
    f_at_zero: float
    slope_at_infinity: float
    cvxpy_objective: Callable[[FloatArray, Any], Any] | None = field(default=None, repr=False)

    @classmethod
    def from_function(
        cls,
        f: Callable[[FloatArray], FloatArray],
        *,
        name: str = "custom",
        f_at_zero: float | None = None,
        slope_at_infinity: float | None = None,
        cvxpy_objective: Callable[[FloatArray, Any], Any] | None = None,
    ) -> Divergence:
        """Build a divergence from a user-supplied generator ``f``.

        ``f`` must be vectorised, convex and satisfy ``f(1) = 0``; both are checked on a grid and
        violations raise ``ValueError``. When the limits are not given, ``f(0)`` is evaluated
        directly and ``f'(inf)`` is estimated from ``f(t) / t`` at ``t = 1e8`` and ``1e16``: a
        relative change above 1e-6 between them is taken to mean ``f'(inf) = inf``. Give the
        limits explicitly when you know them.
        """
        if not callable(f):
            raise TypeError(f"f must be callable, got {f!r}")
        with np.errstate(all="ignore"):
            one = float(np.asarray(f(np.array([1.0])))[0])
            if not abs(one) <= 1e-12:
                raise ValueError(f"f(1) must be 0 for an f-divergence, got f(1) = {one!r}")
            grid = np.geomspace(1e-6, 1e6, 241)
            values = np.asarray(f(grid), dtype=float)
            if values.shape != grid.shape or not np.isfinite(values).all():
                raise ValueError("f must be vectorised and finite on (0, inf)")
            mid = np.sqrt(grid[:-2] * grid[2:])  # not the midpoint: check convexity by chords
            lam = (grid[2:] - mid) / (grid[2:] - grid[:-2])
            chord = lam * values[:-2] + (1 - lam) * values[2:]
            if np.any(values[1:-1] > chord + 1e-9 * (1 + np.abs(chord))):
                raise ValueError(f"f must be convex; {name!r} is not convex on (0, inf)")
            if f_at_zero is None:
                f_at_zero = float(np.asarray(f(np.array([0.0])))[0])
                if math.isnan(f_at_zero):
                    raise ValueError("f(0) is NaN: pass f_at_zero explicitly")
            if slope_at_infinity is None:
                slope_at_infinity = _estimate_slope_at_infinity(f)
        return cls(name, f, float(f_at_zero), float(slope_at_infinity), cvxpy_objective)


def _estimate_slope_at_infinity(f: Callable[[FloatArray], FloatArray]) -> float:
    """Estimate ``lim_{t -> inf} f(t) / t`` from ``s(t) = f(t) / t`` at ``t = 1e4 ... 1e16``.

    The increments of ``s`` between these points shrink geometrically when ``s`` converges
    (by a factor 100 for the ``t^{-1/2}`` approach of squared Hellinger, 1e4 for ``1/t``) and do
    not shrink when it diverges (constant for ``log t`` as in KL, growing for chi-square). The
    limit is taken as finite, ``s(1e16)``, when the last increment is below a tenth of the one
    before it (or both are below 1e-12 relative), and as ``inf`` otherwise.
    """
    t = np.array([1e4, 1e8, 1e12, 1e16])
    s = np.asarray(f(t), dtype=float) / t
    if not np.isfinite(s).all():
        return math.inf
    d = np.abs(np.diff(s))
    scale = max(1.0, abs(s[-1]))
    if d[2] <= 1e-12 * scale or d[2] <= 0.1 * d[1]:
        return float(s[-1])
    return math.inf


def _tv_f(t: FloatArray) -> FloatArray:
    return 0.5 * np.abs(t - 1.0)


def _kl_f(t: FloatArray) -> FloatArray:
    from scipy.special import xlogy  # imported where used: see _kl_terms

    return xlogy(t, t)


def _kl_terms(P: FloatArray, Q: FloatArray) -> FloatArray:
    """Elementwise ``kl_div(P, Q) = P log(P/Q) - P + Q``. scipy.special is imported here, not
    at the top, because most of the pipeline's jobs import this module (through ldpsample.events)
    without computing a KL divergence."""
    from scipy.special import kl_div

    return kl_div(P, Q)


def rel_entr_terms(P: ArrayLike, Q: ArrayLike) -> FloatArray:
    """Elementwise ``P log(P/Q)``: 0 where ``P = 0``, ``inf`` where ``P > 0 = Q``
    (:func:`scipy.special.rel_entr`); summed over one distribution's support it is KL(P || Q).

    The sparse mechanisms' KL risks sum these terms. scipy.special is imported here, as in
    :func:`_kl_terms`, so that the jobs that sample or publish without scoring a KL divergence
    (they import the sparse mechanisms) do not load it."""
    from scipy.special import rel_entr

    return rel_entr(P, Q)


def _chi2_f(t: FloatArray) -> FloatArray:
    return (t - 1.0) ** 2


def _hellinger_f(t: FloatArray) -> FloatArray:
    return (np.sqrt(t) - 1.0) ** 2


def _tv_cvx(p: FloatArray, Q: Any) -> Any:
    import cvxpy as cp

    return 0.5 * cp.sum(cp.abs(Q - p))


def _kl_cvx(p: FloatArray, Q: Any) -> Any:
    import cvxpy as cp

    # sum p log(p / Q) = sum kl_div(p, Q) because sum p = sum Q = 1 (kl_div adds Q - p).
    return cp.sum(cp.kl_div(p, Q))


def _chi2_cvx(p: FloatArray, Q: Any) -> Any:
    import cvxpy as cp

    # sum (p - Q)^2 / Q = sum p^2 / Q - 1 per user on the simplex (p has shape (users, n)).
    return cp.sum(cp.multiply(p**2, cp.inv_pos(Q))) - p.shape[0]


def _hellinger_cvx(p: FloatArray, Q: Any) -> Any:
    import cvxpy as cp

    # sum (sqrt p - sqrt Q)^2 = 2 - 2 sum sqrt(p Q) per user on the simplex.
    return 2 * p.shape[0] - 2 * cp.sum(cp.multiply(np.sqrt(p), cp.sqrt(Q)))


TV = Divergence("tv", _tv_f, 0.5, 0.5, _tv_cvx)
KL = Divergence("kl", _kl_f, 0.0, math.inf, _kl_cvx)
CHI2 = Divergence("chi2", _chi2_f, 1.0, math.inf, _chi2_cvx)
HELLINGER = Divergence("hellinger", _hellinger_f, 1.0, 1.0, _hellinger_cvx)

#: The built-in divergences by name.
DIVERGENCES: dict[str, Divergence] = {d.name: d for d in (TV, KL, CHI2, HELLINGER)}

DivergenceLike = str | Divergence


def get_divergence(divergence: DivergenceLike) -> Divergence:
    """Return the :class:`Divergence` named ``divergence`` (or ``divergence`` itself).

    Raises
    ------
    ValueError
        For an unknown name; the message lists the known ones.
    TypeError
        For anything that is neither a name nor a :class:`Divergence`.
    """
    if isinstance(divergence, Divergence):
        return divergence
    if isinstance(divergence, str):
        try:
            return DIVERGENCES[divergence.lower()]
        except KeyError:
            known = ", ".join(sorted(DIVERGENCES))
            raise ValueError(f"unknown divergence {divergence!r}; known: {known}") from None
    raise TypeError(f"divergence must be a name or a Divergence, got {divergence!r}")


def f_divergence(P: ArrayLike, Q: ArrayLike, divergence: DivergenceLike) -> FloatArray:
    """``D_f(P || Q)`` along the last axis, with the zero/infinity conventions of the module.

    ``P`` and ``Q`` broadcast against each other; the result has their broadcast shape without
    the last axis. Inputs are not validated as distributions (metrics are computed on outputs
    of the mechanisms, which are); use :func:`ldpsample.check_distributions` for user data.
    """
    div = get_divergence(divergence)
    P = np.asarray(P, dtype=float)
    Q = np.asarray(Q, dtype=float)
    if div is TV:
        # |P - Q| in the difference's own buffer: one temporary instead of two (same values).
        difference = np.subtract(P, Q)
        return 0.5 * np.abs(difference, out=difference).sum(axis=-1)
    if div is KL:
        # Elementwise kl_div(P, Q) = P log(P/Q) - P + Q is >= 0 (so no -1e-17 from rounding) and
        # sums to KL(P || Q) for distributions; it is inf where P > 0 = Q.
        return _kl_terms(P, Q).sum(axis=-1)
    P, Q = np.broadcast_arrays(P, Q)
    pos_q = Q > 0
    t = np.divide(P, Q, out=np.ones_like(P), where=pos_q)
    with np.errstate(all="ignore"):
        vals = np.asarray(div.f(t), dtype=float)
        vals = np.where(t == 0, div.f_at_zero, vals)
        terms = np.where(pos_q, Q * vals, 0.0)
    only_p = (~pos_q) & (P > 0)
    if only_p.any():
        with np.errstate(invalid="ignore"):
            terms = np.where(only_p, P * div.slope_at_infinity, terms)
    return terms.sum(axis=-1)


def point_mass_divergence(k: ArrayLike, divergence: DivergenceLike) -> FloatArray:
    """``D_f(delta || Q)`` for a point mass ``delta`` at an item to which ``Q`` gives mass ``k``.

    Equal to ``k f(1/k) + (1 - k) f(0)``, the worst case of Lemma 1 of Zamanlooy et al. (2025);
    at ``k = 0`` the first term is ``f'(inf)``. The result does not depend on how ``Q`` spreads
    the other ``1 - k``.
    """
    div = get_divergence(divergence)
    k = np.asarray(k, dtype=float)
    with np.errstate(all="ignore"):
        safe = np.where(k > 0, k, 1.0)
        first = np.where(
            k > 0, safe * np.asarray(div.f(1.0 / safe), dtype=float), div.slope_at_infinity
        )
        rest = np.where(k < 1, (1.0 - k) * div.f_at_zero, 0.0)
    return first + rest


def tv_distance(P: ArrayLike, Q: ArrayLike) -> FloatArray:
    """Total variation distance ``sum_j |P_j - Q_j| / 2`` along the last axis."""
    return f_divergence(P, Q, TV)


def kl_divergence(P: ArrayLike, Q: ArrayLike) -> FloatArray:
    """``KL(P || Q) = sum_j P_j log(P_j / Q_j)`` in nats along the last axis (``inf`` if needed)."""
    return f_divergence(P, Q, KL)
