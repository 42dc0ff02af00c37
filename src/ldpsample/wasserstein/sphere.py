"""The WPM on the unit sphere S^{d-1} with the Euclidean distance: closed form and exact sampler.

Implements Appendix H of *Differentially Private Sampling from Distributions via Wasserstein
Projection* (``001_520e0969f7c94e6f.txt``, Proposition H.1: "Utilizing the rotational symmetry
of the sphere, we can derive the optimal base measure analytically"). The optimal base measure
is ``c σ`` with σ the uniform probability measure on the sphere and ``c`` the scale parameter;
for a point input ``x`` the projection onto ``{Q : c σ <= Q <= e^ε c σ}`` has density

    dQ/dσ (y) = e^ε c  on the cap ||y - x|| <= R*,      c  on its complement,

("the minimizer saturates the upper bound on a spherical cap and the lower bound on its
complement"). With ``S = ||x - Y||² / 4 ~ Beta(a, a)``, ``a = (d - 1)/2``, for ``Y ~ σ``, cost
``g(s) = (4 s)^{r/2}`` (the distance to the power ``r``), ``F = I(·; a, a)`` the cap's σ-mass
and ``G(s) = E[g(S) 1{S <= s}]``, the worst-case cost of a cap at ``s`` is

    J(s) = (E g + (e^ε - 1) G(s)) / (1 + (e^ε - 1) F(s)),

minimised at the unique root ``s*`` of ``J(s) = g(s)``, i.e. of
``E[(g(S) - g(s))_+] = e^ε E[(g(s) - g(S))_+]``. Then ``c = 1 / (1 + (e^ε - 1) F(s*))``, the cap
radius is ``R* = 2 sqrt(s*)`` and the minimax cost is ``W_r = R*``. Derivation: docs/wasserstein.md
("WPM on the sphere").

* :func:`sphere_wpm` -- the scale parameter, cap and minimax cost as a :class:`SphereWPM`;
* :func:`sphere_density` -- ``dQ/dσ`` of the mechanism for point inputs;
* :func:`sample_sphere_wpm` -- one exact draw per input point (inverse-CDF of the Beta law).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.special import betainc, betaincinv, betaln

from ldpsample._types import FloatArray
from ldpsample._validation import check_epsilon, check_integer, check_rng

__all__ = ["SphereWPM", "sample_sphere_wpm", "sphere_density", "sphere_wpm"]


@dataclass(frozen=True)
class SphereWPM:
    """The minimax WPM on ``S^{d-1}`` for cost ``||x - y||^r`` (module docstring).

    Attributes
    ----------
    d, epsilon, r
        Ambient dimension (the sphere is ``S^{d-1}``), privacy parameter, Wasserstein order.
    scale
        ``c``: the optimal base measure is ``c σ``; ``e^{-ε} < c < 1``.
    threshold
        ``s* = R*² / 4``, the cap in the Beta(a, a) variable ``||x - y||² / 4``.
    radius
        ``R*``: the cap is ``{y : ||y - x|| <= R*}``; also the minimax ``W_r``.
    cap_mass
        ``σ(cap) = F(s*)``; the mechanism puts ``e^ε c σ(cap)`` of its mass on the cap.
    cost
        The minimax worst-case ``W_r^r = R*^r``.
    """

    d: int
    epsilon: float
    r: float
    scale: float
    threshold: float
    radius: float
    cap_mass: float
    cost: float

    @property
    def cap_probability(self) -> float:
        """Probability that one release falls in the cap: ``e^ε c σ(cap)``."""
        return math.exp(self.epsilon) * self.scale * self.cap_mass


#: The smallest cap threshold ``s*`` solved for: below it the root leaves double precision.
_SMALLEST_THRESHOLD = 1e-290
#: Brent's iterations allowed: at ε = 700 the root needs up to about 1,800 (``d = 3``, ``r = 0.5``).
_MAX_ITERATIONS = 4000


def _check_order(r: object) -> float:
    if isinstance(r, bool) or not isinstance(r, int | float):
        raise TypeError(f"r must be a real number, got {r!r}")
    if not (0 < r < math.inf):
        raise ValueError(f"r must be > 0 and finite, got {r!r}")
    return float(r)


def _moments(a: float, r: float) -> tuple[float, float]:
    """``E g(S) = 2^r B(a + r/2, a) / B(a, a)`` and the partial-moment Beta's first parameter."""
    mean = 2.0**r * math.exp(betaln(a + r / 2, a) - betaln(a, a))
    return mean, a + r / 2


def _excess(s: float, a: float, r: float, growth: float) -> float:
    """``E g + (e^ε - 1) G(s) - g(s) (1 + (e^ε - 1) F(s))``: > 0 below ``s*``, < 0 above."""
    mean, shifted = _moments(a, r)
    g = (4.0 * s) ** (r / 2)
    return mean * (1.0 + growth * betainc(shifted, a, s)) - g * (1.0 + growth * betainc(a, a, s))


def sphere_wpm(*, d: int, epsilon: float, r: float = 1.0) -> SphereWPM:
    """The optimal base measure's scale and the mechanism's cap on ``S^{d-1}`` (Prop. H.1).

    Parameters
    ----------
    d
        Ambient dimension, ``d >= 2`` (``d = 2`` is the circle S¹, ``d = 3`` the sphere S²).
    epsilon
        Privacy parameter, ``0 < ε < inf``.
    r
        Order of the Wasserstein distance (cost ``||x - y||^r``), ``r > 0``.

    Returns
    -------
    SphereWPM
        ``s*`` is the unique root in ``(0, 1)`` of the scalar equation (module docstring),
        found by Brent's method to machine precision.

    Raises
    ------
    TypeError, ValueError
        For a non-integer ``d`` or ``d < 2``, and ``ε`` or ``r`` outside ``(0, inf)``; and a
        ``ValueError`` naming ``epsilon`` when ``s*`` lies below ``1e-290`` (on the circle,
        ``d = 2``, from ε ≈ 502 with ``r = 0.5`` and ε ≈ 668 with ``r = 1``), where double
        precision cannot hold it.
    """
    d = check_integer(d, name="d", minimum=2)
    eps = check_epsilon(epsilon, allow_zero=False)
    order = _check_order(r)
    a = (d - 1) / 2
    growth = math.expm1(eps)
    # _excess(0) = E g > 0 and _excess(1) = e^ε (E g - 2^r) < 0: one sign change (docs).
    if _excess(_SMALLEST_THRESHOLD, a, order, growth) <= 0:
        raise ValueError(
            f"epsilon={eps!r} is too large for the WPM on S^{d - 1} with r={order!r}: its cap "
            f"threshold s* = R*^2/4 is below {_SMALLEST_THRESHOLD:g}, out of double precision's "
            "reach; use a smaller epsilon"
        )
    # Large ε puts s* near 0, where Brent's method bisects for up to ~1,800 steps.
    s = brentq(
        _excess,
        0.0,
        1.0,
        args=(a, order, growth),
        xtol=1e-300,
        rtol=4 * np.finfo(float).eps,
        maxiter=_MAX_ITERATIONS,
    )
    cap = float(betainc(a, a, s))
    scale = 1.0 / (1.0 + growth * cap)
    radius = 2.0 * math.sqrt(s)
    return SphereWPM(
        d=d,
        epsilon=eps,
        r=order,
        scale=scale,
        threshold=float(s),
        radius=radius,
        cap_mass=cap,
        cost=radius**order,
    )


def _unit_rows(x: ArrayLike, d: int, name: str) -> FloatArray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != d:
        raise ValueError(f"{name} must have shape (k, {d}), got {np.shape(x)!r}")
    norms = np.linalg.norm(arr, axis=1)
    if not np.all(np.abs(norms - 1.0) <= 1e-9):
        bad = int(np.argmax(np.abs(norms - 1.0)))
        raise ValueError(f"{name} must hold unit vectors; row {bad} has norm {norms[bad]!r}")
    return arr


def sphere_density(x: ArrayLike, y: ArrayLike, *, mechanism: SphereWPM) -> FloatArray:
    """``dQ_x/dσ (y)`` of the mechanism's output for the point input ``x``, pairwise.

    ``x`` has shape ``(k, d)`` and ``y`` shape ``(m, d)`` (unit vectors; 1-d arrays are one
    point); the result has shape ``(k, m)``: ``e^ε c`` where ``||y - x|| <= R*``, ``c`` elsewhere.
    """
    d = mechanism.d
    xs, ys = _unit_rows(x, d, "x"), _unit_rows(y, d, "y")
    quarter_sq = np.clip((1.0 - xs @ ys.T) / 2.0, 0.0, 1.0)  # ||x - y||² / 4
    high = mechanism.scale * math.exp(mechanism.epsilon)
    return np.where(quarter_sq <= mechanism.threshold, high, mechanism.scale)


def _orthogonal_directions(xs: FloatArray, rng: np.random.Generator) -> FloatArray:
    """A uniform unit vector orthogonal to each row of ``xs``."""
    z = rng.standard_normal(xs.shape)
    z -= np.sum(z * xs, axis=1, keepdims=True) * xs
    return z / np.linalg.norm(z, axis=1, keepdims=True)


def sample_sphere_wpm(
    x: ArrayLike, *, mechanism: SphereWPM, rng: np.random.Generator | None = None
) -> FloatArray:
    """One release of the mechanism per input point: exact draws from ``Q_x``.

    The cap is chosen with probability ``e^ε c σ(cap)``; ``S = ||x - Y||² / 4`` is then drawn
    from Beta(a, a) restricted to ``[0, s*]`` (cap) or ``[s*, 1]`` (complement) by inverting its
    CDF, and ``Y = (1 - 2S) x + sqrt(1 - (1 - 2S)²) v`` with ``v`` uniform on the unit vectors
    orthogonal to ``x`` (σ is rotation-invariant about ``x``).

    Parameters
    ----------
    x
        Input points, shape ``(k, d)`` (or ``(d,)``), unit vectors.
    mechanism
        From :func:`sphere_wpm`.
    rng
        Source of randomness (default: a fresh OS-seeded generator).

    Returns
    -------
    Array of shape ``(k, d)``: unit vectors.
    """
    gen = np.random.default_rng() if rng is None else check_rng(rng)
    xs = _unit_rows(x, mechanism.d, "x")
    k = xs.shape[0]
    a = (mechanism.d - 1) / 2
    in_cap = gen.random(k) < mechanism.cap_probability
    u = gen.random(k)
    level = np.where(
        in_cap, u * mechanism.cap_mass, mechanism.cap_mass + u * (1.0 - mechanism.cap_mass)
    )
    s = betaincinv(a, a, level)
    s = np.where(in_cap, np.minimum(s, mechanism.threshold), np.maximum(s, mechanism.threshold))
    cos = 1.0 - 2.0 * s
    sin = np.sqrt(np.clip(1.0 - cos**2, 0.0, None))
    out = cos[:, None] * xs + sin[:, None] * _orthogonal_directions(xs, gen)
    return out / np.linalg.norm(out, axis=1, keepdims=True)
