"""The WPM on the sphere S^{d-1} (Appendix H of the WPM paper): the closed form against direct
quadrature, the exact LP on grids of S¹ and S², an exact sampler, the privacy bound from both
sides and monotonicity (the Snakemake stage: tests/test_wpm_workflow.py's run of the WPM stages)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from ldpsample.experiments.wpm_sphere import sphere_grid, sphere_lp_convergence
from ldpsample.wasserstein.sphere import (
    SphereWPM,
    sample_sphere_wpm,
    sphere_density,
    sphere_wpm,
)


def _distance_density(d: int):
    """Density of ||x - Y|| on [0, 2] for Y uniform on S^{d-1} (from the angle's law)."""
    norm = math.gamma(d / 2) / (math.sqrt(math.pi) * math.gamma((d - 1) / 2))

    def f(t: float) -> float:
        u = 1.0 - t * t / 2.0  # <x, y>
        return norm * (1.0 - u * u) ** ((d - 3) / 2) * t  # |du/dt| = t

    return f


def _cost_by_quadrature(d: int, eps: float, r: float, radius: float) -> float:
    """W_r^r of the cap mechanism with cap radius ``radius``, with c from normalisation,
    integrated directly over the distance (independent of the Beta-function formulas)."""
    f = _distance_density(d)
    cap = integrate.quad(f, 0.0, radius, limit=200)[0]
    scale = 1.0 / (1.0 + math.expm1(eps) * cap)
    near = integrate.quad(lambda t: t**r * f(t), 0.0, radius, limit=200)[0]
    far = integrate.quad(lambda t: t**r * f(t), radius, 2.0, limit=200)[0]
    return scale * (math.exp(eps) * near + far)


@pytest.mark.parametrize(
    ("d", "eps", "r"), [(2, 1.0, 1.0), (3, 0.5, 1.0), (3, 4.0, 2.0), (5, 2.0, 1.0)]
)
def test_closed_form_minimises_the_worst_case_cost_by_quadrature(d, eps, r):
    """The closed form's cost equals the cap mechanism's cost integrated directly, it is the
    minimum over cap radii (a grid search finds nothing lower), and W_r^r = R*^r."""
    m = sphere_wpm(d=d, epsilon=eps, r=r)
    assert _cost_by_quadrature(d, eps, r, m.radius) == pytest.approx(m.cost, rel=1e-7)
    radii = np.linspace(0.01, 1.99, 199)
    costs = [_cost_by_quadrature(d, eps, r, t) for t in radii]
    assert min(costs) >= m.cost - 1e-9
    assert m.cost == pytest.approx(m.radius**r, rel=1e-12)
    # The cap's σ-mass against quadrature, and the normalisation of the density.
    cap = integrate.quad(_distance_density(d), 0.0, m.radius)[0]
    assert m.cap_mass == pytest.approx(cap, rel=1e-7)
    assert m.scale * (math.exp(eps) * m.cap_mass + 1.0 - m.cap_mass) == pytest.approx(
        1.0, abs=1e-12
    )


def test_closed_form_fails_for_a_perturbed_scale():
    """The same quadrature with the cap 5 % too large or too small costs more."""
    m = sphere_wpm(d=3, epsilon=1.0)
    for factor in (0.95, 1.05):
        assert _cost_by_quadrature(3, 1.0, 1.0, factor * m.radius) > m.cost + 1e-5


def test_circle_at_tiny_epsilon_keeps_the_uniform_measure():
    m = sphere_wpm(d=2, epsilon=1e-6)
    assert m.scale == pytest.approx(1.0, abs=1e-6)
    # r = 1 on S¹: E||x - Y|| = 4/π; as ε -> 0 the minimax cost tends to it.
    assert m.cost == pytest.approx(4 / math.pi, abs=1e-3)


@settings(max_examples=30, deadline=None)
@given(
    d=st.integers(2, 12),
    eps=st.floats(0.05, 10.0),
    step=st.floats(0.05, 2.0),
    r=st.sampled_from([0.5, 1.0, 2.0]),
)
def test_scale_and_radius_decrease_in_epsilon(d, eps, step, r):
    """c is strictly decreasing in ε (and stays in (e^{-ε}, 1)), as is the cap radius."""
    low, high = sphere_wpm(d=d, epsilon=eps, r=r), sphere_wpm(d=d, epsilon=eps + step, r=r)
    assert high.scale < low.scale
    assert high.radius < low.radius
    for m in (low, high):
        assert math.exp(-m.epsilon) < m.scale < 1.0


@pytest.mark.parametrize("d", [2, 3, 6])
def test_scale_decreases_in_the_wasserstein_order(d):
    """Prop. H.1's "the map is decreasing" in the order r (Step 5's power means)."""
    scales = [sphere_wpm(d=d, epsilon=1.5, r=r).scale for r in (0.5, 1.0, 2.0, 3.0, 4.0)]
    assert all(b < a for a, b in itertools.pairwise(scales))


def test_density_ratio_is_exactly_e_epsilon_and_a_broken_mechanism_fails():
    """ε-LDP from both sides: over inputs and outputs the density ratio reaches e^ε and no
    more; a mechanism whose cap density is scaled up by 1 % exceeds it."""
    m = sphere_wpm(d=3, epsilon=2.0)
    rng = np.random.default_rng(0)
    points = rng.standard_normal((400, 3))
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    dens = sphere_density(points[:200], points[200:], mechanism=m)
    ratio = dens.max(axis=0) / dens.min(axis=0)
    assert ratio.max() == pytest.approx(math.exp(2.0), rel=1e-12)
    assert ratio.max() <= math.exp(2.0) * (1 + 1e-12)
    broken_dens = np.where(dens > m.scale, dens * 1.01, dens)
    assert (broken_dens.max(axis=0) / broken_dens.min(axis=0)).max() > math.exp(2.0)


def test_sampler_matches_the_density():
    """The distances ||Y - x|| of 40 000 draws follow the mechanism's law (KS test on the
    distance's CDF computed by quadrature); a sampler with the wrong cap fails the same test."""
    m = sphere_wpm(d=3, epsilon=1.5)
    rng = np.random.default_rng(1)
    x = np.array([0.0, 0.6, 0.8])
    ys = sample_sphere_wpm(np.tile(x, (40_000, 1)), mechanism=m, rng=rng)
    assert np.allclose(np.linalg.norm(ys, axis=1), 1.0)
    dist = np.linalg.norm(ys - x, axis=1)
    f = _distance_density(3)
    high = math.exp(m.epsilon) * m.scale

    def cdf(t: float) -> float:
        if t <= m.radius:
            return high * integrate.quad(f, 0, t)[0]
        return high * m.cap_mass + m.scale * integrate.quad(f, m.radius, min(t, 2.0))[0]

    grid = np.linspace(0, 2, 401)
    table = np.array([cdf(t) for t in grid])
    law = lambda t: np.interp(t, grid, table)  # noqa: E731
    assert stats.kstest(dist, law).pvalue > 1e-3
    assert np.mean(dist <= m.radius) == pytest.approx(m.cap_probability, abs=0.01)
    wrong = SphereWPM(**{**m.__dict__, "threshold": m.threshold * 1.2})
    bad = np.linalg.norm(
        sample_sphere_wpm(np.tile(x, (40_000, 1)), mechanism=wrong, rng=rng) - x, axis=1
    )
    assert stats.kstest(bad, law).pvalue < 1e-6


def test_sampler_is_reproducible_from_a_seed_and_checks_its_input():
    m = sphere_wpm(d=2, epsilon=1.0)
    x = np.array([[1.0, 0.0], [0.0, 1.0]])
    a = sample_sphere_wpm(x, mechanism=m, rng=np.random.default_rng(5))
    b = sample_sphere_wpm(x, mechanism=m, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="unit vectors; row 0"):
        sample_sphere_wpm(np.array([[2.0, 0.0]]), mechanism=m, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"shape \(k, 2\)"):
        sample_sphere_wpm(np.ones((1, 3)) / math.sqrt(3), mechanism=m)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"d": 1, "epsilon": 1.0}, ValueError, "d"),
        ({"d": 3, "epsilon": 0.0}, ValueError, "epsilon"),
        ({"d": 3, "epsilon": float("nan")}, ValueError, "epsilon"),
        ({"d": 3, "epsilon": 1.0, "r": -1.0}, ValueError, "r must be > 0"),
        ({"d": 3, "epsilon": "1"}, TypeError, "epsilon"),
    ],
)
def test_bad_parameters_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        sphere_wpm(**kwargs)


def _h(s: float, a: float, r: float, growth: float) -> float:
    """h(s) of docs/wasserstein.md ("WPM on the sphere", step 4), written out from the Beta laws:
    M (1 + (e^ε - 1) I_s(a + r/2, a)) - (4 s)^(r/2) (1 + (e^ε - 1) I_s(a, a))."""
    mean = 2.0**r * math.exp(special.betaln(a + r / 2, a) - special.betaln(a, a))
    partial = special.betainc(a + r / 2, a, s)
    return mean * (1 + growth * partial) - (4 * s) ** (r / 2) * (
        1 + growth * special.betainc(a, a, s)
    )


@pytest.mark.parametrize(("d", "r"), [(2, 2.0), (3, 0.5), (3, 1.0), (4, 2.0), (6, 3.0)])
def test_the_root_is_found_up_to_the_largest_epsilon_and_an_unreachable_one_is_named(d, r):
    """At the config's largest ε (700) s* is far below 1e-50 and Brent's method needs hundreds
    of steps: the returned s* is a sign change of h (positive just below, negative just above),
    the radius is 2 sqrt(s*) > 0 and the scale lies in (e^-ε, 1). On the circle with r = 0.5
    the root would fall below double precision's reach: a ValueError names ε."""
    mechanism = sphere_wpm(d=d, epsilon=700.0, r=r)
    s, a, growth = mechanism.threshold, (d - 1) / 2, math.expm1(700.0)
    assert 0 < s < 1e-50
    assert _h(s * (1 - 1e-9), a, r, growth) > 0 > _h(s * (1 + 1e-9), a, r, growth)
    assert mechanism.radius == pytest.approx(2 * math.sqrt(s), rel=1e-15)
    assert math.exp(-700.0) < mechanism.scale < 1
    with pytest.raises(ValueError, match=r"^epsilon=600\.0 is too large .* S\^1 with r=0\.5"):
        sphere_wpm(d=2, epsilon=600.0, r=0.5)


@pytest.mark.slow
def test_exact_lp_on_grids_converges_to_the_closed_form():
    """The exact base-measure LP on S¹ (equally spaced) and S² (Fibonacci) grids: its minimax
    cost approaches R*^r as the grid is refined (within 2 % on the coarsest grid),
    and the exact projection of a point input onto M_ε(c σ_n) costs nearly the same."""
    table = sphere_lp_convergence(
        grids={2: [16, 32, 64, 128], 3: [25, 50, 100]}, epsilons=[1.0], r=1.0
    )
    for d in (2, 3):
        part = table.filter(pl.col("d") == d).sort("n")
        errors = part["cost_error"].to_numpy()
        assert np.all(np.diff(errors) < 0), (d, errors)
        assert errors[-1] < errors[0] / 4
        assert errors[0] < 0.02 * part["closed_cost"][0]
        gap = (part["projection_cost"] - part["closed_cost"]).abs().to_numpy()
        assert np.all(gap < 0.02), gap
    s1 = table.filter(pl.col("d") == 2, pl.col("n") == 128)
    assert s1["cost_error"][0] < 2e-4
    assert s1["scale_error"][0] < 5e-3


def test_grid_comparison_fails_against_a_wrong_closed_form():
    """The finest S¹ grid separates the closed form from one computed at a 10 % larger ε."""
    table = sphere_lp_convergence(grids={2: [128]}, epsilons=[1.0], r=1.0)
    wrong = sphere_wpm(d=2, epsilon=1.1).cost
    assert abs(table["lp_cost"][0] - wrong) > 50 * table["cost_error"][0]


def test_grids_have_unit_points():
    for d, n in ((2, 7), (3, 40)):
        grid = sphere_grid(d, n)
        assert grid.shape == (n, d)
        np.testing.assert_allclose(np.linalg.norm(grid, axis=1), 1.0)
    with pytest.raises(ValueError, match="d must be 2"):
        sphere_grid(4, 10)
