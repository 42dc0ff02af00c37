"""f-divergences: conventions for zeros and infinities, built-ins vs direct formulas, custom f."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import xlogy

from ldpsample.divergences import (
    CHI2,
    DIVERGENCES,
    HELLINGER,
    KL,
    TV,
    Divergence,
    f_divergence,
    get_divergence,
    kl_divergence,
    point_mass_divergence,
    tv_distance,
)


@st.composite
def positive_pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 10))
    element = st.floats(1e-3, 1.0)
    P = np.array(draw(st.lists(element, min_size=n, max_size=n)))
    Q = np.array(draw(st.lists(element, min_size=n, max_size=n)))
    return P / P.sum(), Q / Q.sum()


@given(pair=positive_pairs())
def test_builtins_match_direct_formulas(pair: tuple[np.ndarray, np.ndarray]) -> None:
    P, Q = pair
    assert tv_distance(P, Q) == pytest.approx(0.5 * np.abs(P - Q).sum(), rel=1e-12, abs=1e-15)
    assert kl_divergence(P, Q) == pytest.approx(np.sum(P * np.log(P / Q)), rel=1e-9, abs=1e-13)
    assert f_divergence(P, Q, "chi2") == pytest.approx(
        np.sum((P - Q) ** 2 / Q), rel=1e-9, abs=1e-13
    )
    assert f_divergence(P, Q, "hellinger") == pytest.approx(
        np.sum((np.sqrt(P) - np.sqrt(Q)) ** 2), rel=1e-9, abs=1e-13
    )
    for name in DIVERGENCES:
        assert f_divergence(P, P, name) == pytest.approx(0.0, abs=1e-12)
        assert f_divergence(P, Q, name) >= -1e-12


def test_zero_conventions() -> None:
    P, Q = np.array([0.5, 0.5]), np.array([1.0, 0.0])
    assert kl_divergence(P, Q) == math.inf  # Q_j = 0 < P_j
    assert f_divergence(P, Q, "chi2") == math.inf
    assert tv_distance(P, Q) == pytest.approx(0.5)  # TV stays finite
    assert f_divergence(P, Q, "hellinger") == pytest.approx((math.sqrt(0.5) - 1) ** 2 + 0.5)
    # P_j = 0 < Q_j uses f(0); 0 * f(0/0) = 0
    assert kl_divergence(Q, P) == pytest.approx(math.log(2))
    assert f_divergence([1.0, 0.0, 0.0], [0.5, 0.5, 0.0], "chi2") == pytest.approx(1.0)


def test_broadcasting_over_users() -> None:
    P = np.array([[0.5, 0.5], [1.0, 0.0], [0.2, 0.8]])
    Q = np.array([0.4, 0.6])
    out = f_divergence(P, Q, "kl")
    assert out.shape == (3,)
    for row, value in zip(P, out, strict=True):
        assert value == pytest.approx(float(kl_divergence(row, Q)))


def test_point_mass_divergence_is_lemma_1() -> None:
    k = np.array([0.0, 0.25, 1.0])
    np.testing.assert_allclose(point_mass_divergence(k, "tv"), 1 - k)
    np.testing.assert_allclose(point_mass_divergence(k, "kl"), [math.inf, math.log(4), 0.0])
    np.testing.assert_allclose(point_mass_divergence(k, "chi2"), [math.inf, 3.0, 0.0])
    np.testing.assert_allclose(point_mass_divergence(k, "hellinger"), [2.0, 1.0, 0.0])
    # equals D_f(delta || Q) for any spread of the remaining mass
    Q = np.array([0.25, 0.5, 0.25, 0.0])
    for name in DIVERGENCES:
        direct = f_divergence([1.0, 0, 0, 0], Q, name)
        assert point_mass_divergence(0.25, name) == pytest.approx(float(direct))


def test_get_divergence() -> None:
    assert get_divergence("KL") is KL
    assert get_divergence(TV) is TV
    assert {d.name for d in (TV, KL, CHI2, HELLINGER)} == set(DIVERGENCES)
    with pytest.raises(ValueError, match="unknown divergence 'js'; known: chi2, hellinger, kl, tv"):
        get_divergence("js")
    with pytest.raises(TypeError, match="name or a Divergence"):
        get_divergence(3)  # type: ignore[arg-type]


def test_custom_divergence_reproduces_builtins() -> None:
    kl = Divergence.from_function(lambda t: xlogy(t, t), name="kl2")
    assert kl.name == "kl2" and kl.f_at_zero == 0.0 and kl.slope_at_infinity == math.inf
    tv = Divergence.from_function(lambda t: 0.5 * np.abs(t - 1.0))
    assert tv.f_at_zero == 0.5 and tv.slope_at_infinity == pytest.approx(0.5)
    P, Q = np.array([0.1, 0.6, 0.3, 0.0]), np.array([0.3, 0.3, 0.0, 0.4])
    assert f_divergence(P, Q, kl) == f_divergence(P, Q, KL) == math.inf
    assert f_divergence(P, Q, tv) == pytest.approx(float(tv_distance(P, Q)))
    finite = np.array([0.2, 0.3, 0.1, 0.4])
    assert f_divergence(P, finite, kl) == pytest.approx(float(kl_divergence(P, finite)))


def test_custom_divergence_with_explicit_limits() -> None:
    # (sqrt t - 1)^2 / t -> 1 only like 1/sqrt(t): pass the limit rather than rely on estimation
    h = Divergence.from_function(
        lambda t: (np.sqrt(t) - 1.0) ** 2, f_at_zero=1.0, slope_at_infinity=1.0
    )
    P, Q = np.array([0.5, 0.5]), np.array([1.0, 0.0])
    assert f_divergence(P, Q, h) == pytest.approx(float(f_divergence(P, Q, HELLINGER)))


def test_custom_divergence_rejections() -> None:
    with pytest.raises(ValueError, match="f\\(1\\) must be 0"):
        Divergence.from_function(lambda t: (t - 1.0) ** 2 + 1.0)
    with pytest.raises(ValueError, match="convex"):
        Divergence.from_function(lambda t: -((t - 1.0) ** 2), name="concave")
    with pytest.raises(ValueError, match="convex"):
        Divergence.from_function(lambda t: np.sin(t - 1.0))  # f(1) = 0 but not convex
    with pytest.raises(ValueError, match="vectorised and finite"):
        Divergence.from_function(lambda t: np.where(t > 10, np.inf, (t - 1.0) ** 2))
    with pytest.raises(TypeError, match="callable"):
        Divergence.from_function(3)  # type: ignore[arg-type]
