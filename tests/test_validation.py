"""The shared boundary checks in ldpsample._validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsample._validation import (
    SUM_TOLERANCE,
    check_distribution,
    check_distributions,
    check_epsilon,
    check_integer,
    check_rng,
    normalize,
)

# --- check_integer ------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 3, np.int64(3), np.uint8(7)])
def test_check_integer_accepts_python_and_numpy_integers(value: object) -> None:
    result = check_integer(value, name="k", minimum=0)
    assert type(result) is int and result == int(value)


@pytest.mark.parametrize("value", [True, 1.0, "3", None, np.float64(2.0)])
def test_check_integer_rejects_non_integers_with_type_error(value: object) -> None:
    with pytest.raises(TypeError, match="k must be a positive integer, got"):
        check_integer(value, name="k", minimum=1)


@pytest.mark.parametrize(
    ("minimum", "message"),
    [(0, "a non-negative integer"), (1, "a positive integer"), (3, "an integer >= 3")],
)
def test_check_integer_names_its_bound(minimum: int, message: str) -> None:
    with pytest.raises(ValueError, match=f"k must be {message}, got -1"):
        check_integer(-1, name="k", minimum=minimum)


# --- check_epsilon ------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 0.0, 1, 2.5, np.float64(3.0), np.int64(4), 1e300])
def test_check_epsilon_accepts_finite_non_negative_reals(value: object) -> None:
    result = check_epsilon(value)
    assert isinstance(result, float) and result == float(value)


@pytest.mark.parametrize("value", [math.nan, -1.0, -1e-300, math.inf, -math.inf, np.float64("nan")])
def test_check_epsilon_rejects_bad_values_with_their_repr(value: float) -> None:
    with pytest.raises(ValueError, match="epsilon must be a finite real number >= 0") as info:
        check_epsilon(value)
    assert repr(value) in str(info.value)


@pytest.mark.parametrize("value", ["2", None, True, False, 1 + 0j, [1.0], np.array([1.0])])
def test_check_epsilon_rejects_non_reals_naming_the_type(value: object) -> None:
    with pytest.raises(
        TypeError, match=f"epsilon must be a real number, got .*{type(value).__name__}"
    ):
        check_epsilon(value)


def test_check_epsilon_allow_zero_and_name() -> None:
    with pytest.raises(ValueError, match="delta must be a finite real number > 0, got 0"):
        check_epsilon(0, name="delta", allow_zero=False)
    assert check_epsilon(1e-12, allow_zero=False) == 1e-12


# --- check_distributions / check_distribution ------------------------------------------------


def test_check_distributions_returns_float64_unchanged_shape() -> None:
    P = check_distributions([[1, 0], [0, 1]])
    assert P.dtype == np.float64 and P.shape == (2, 2)
    assert check_distributions([True, False]).tolist() == [1.0, 0.0]
    p = np.array([0.25, 0.75])
    assert check_distributions(p) is p  # no copy for float64 input
    within = np.array([0.5, 0.5 + 0.9 * SUM_TOLERANCE])
    assert check_distributions(within) is within


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (np.ones((2, 2, 2)) / 2, r"shape \(n,\) or \(users, n\), got shape \(2, 2, 2\)"),
        (np.float64(1.0), r"got shape \(\)"),
        ([], "at least 1 items"),
        ([0.5, np.nan, 0.5], r"finite, got .*nan.* at index \(1,\)"),
        ([[0.5, 0.5], [np.inf, 0.0]], r"finite, got .*inf.* at index \(1, 0\)"),
        ([0.5, -0.25, 0.75], r"non-negative, got .*-0\.25.* at index \(1,\)"),
        ([0.3, 0.6], r"sum to 1 within 1e-09, got sum 0\.(9|8999)"),
        ([[0.5, 0.5], [0.2, 0.2]], r"got sum 0.4 \(row 1\)"),
        ([0.5, 0.5 + 2 * SUM_TOLERANCE], "sum to 1"),
    ],
)
def test_check_distributions_rejects_bad_values(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_distributions(value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        # Non-finite entries are reported before negative ones, wherever they are.
        ([[-0.5, 1.5], [np.inf, 0.0]], r"finite, got inf at index \(1, 0\)"),
        ([[-0.5, 1.5], [0.5, np.nan]], r"finite, got nan at index \(1, 1\)"),
        ([[0.5, 0.5], [np.inf, -np.inf]], r"finite, got inf at index \(1, 0\)"),
        ([[0.5, 0.5], [-np.inf, 1.0]], r"finite, got -inf at index \(1, 0\)"),
        # Finite entries whose row sum overflows: a sum error (or the negative entry), not
        # "finite", and no overflow warning (warnings are errors in the tests).
        ([[0.5, 0.5], [1e308, 1e308]], r"got sum inf \(row 1\)"),
        ([[1e308, 1e308], [-0.25, 1.25]], r"non-negative, got -0\.25 at index \(1, 0\)"),
        ([-0.0, 1.0, 0.0], None),
    ],
)
def test_check_distributions_reports_the_first_failing_check(
    value: object, message: str | None
) -> None:
    """The checks run on ``min`` and the row sums; the messages (and their order: finite, then
    non-negative, then the sums) are those of the entry-by-entry scans."""
    if message is None:
        assert check_distributions(value).tolist() == value
        return
    with pytest.raises(ValueError, match=message):
        check_distributions(value)


def test_check_distributions_message_points_to_normalize() -> None:
    with pytest.raises(ValueError, match="normalize"):
        check_distributions([1, 2, 3], name="counts")


@pytest.mark.parametrize("value", ["abc", b"ab", ["a", "b"], [1 + 0j], [None, 1.0], {"a": 1}])
def test_check_distributions_rejects_non_numeric(value: object) -> None:
    with pytest.raises(TypeError, match="array of real numbers"):
        check_distributions(value)


def test_check_distributions_number_of_items_and_min_items() -> None:
    with pytest.raises(ValueError, match="P has 3 items but 2 were expected"):
        check_distributions(np.ones((4, 3)) / 3, name="P", n=2)
    with pytest.raises(ValueError, match="at least 2 items"):
        check_distributions([1.0], min_items=2)
    assert check_distributions(np.ones((0, 3)), n=3).shape == (0, 3)


def test_check_distribution_is_one_dimensional() -> None:
    assert check_distribution([0.5, 0.5]).shape == (2,)
    with pytest.raises(ValueError, match="one distribution of shape"):
        check_distribution([[0.5, 0.5]])
    with pytest.raises(ValueError, match=r"^q must"):
        check_distribution([0.5, 0.6])


# --- normalize -----------------------------------------------------------------------------


def test_normalize_rescales_rows() -> None:
    np.testing.assert_allclose(normalize([[1, 3], [2, 2]]), [[0.25, 0.75], [0.5, 0.5]])
    np.testing.assert_allclose(normalize([0, 5, 5]), [0, 0.5, 0.5])
    out = normalize(np.array([2.0, 6.0]))
    check_distribution(out)


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ([[1, -1]], ValueError, "finite and non-negative"),
        ([np.nan, 1.0], ValueError, "finite and non-negative"),
        ([np.inf, 1.0], ValueError, "finite and non-negative"),
        ([[1, 1], [0, 0]], ValueError, r"total weight 0 \(row 1\)"),
        (3, ValueError, "scalar"),
        ("ab", TypeError, "real numbers"),
    ],
)
def test_normalize_rejects(value: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        normalize(value)


# --- check_rng ------------------------------------------------------------------------------


def test_check_rng() -> None:
    rng = np.random.default_rng(0)
    assert check_rng(rng) is rng
    for bad in (0, None, np.random.RandomState(0), np.random, np.random.PCG64(0)):
        with pytest.raises(TypeError, match="default_rng"):
            check_rng(bad)


def test_check_input_false_skips_only_the_check():
    """apply_minimax, relative_mollifier_tv and sample_categorical with check_input=False give
    the same values on valid distributions (ldpsample.events checks them once and skips the
    mechanisms' own checks), still check the shape, and with the default still reject what
    the check exists for."""
    from ldpsample import apply_minimax, relative_mollifier_tv, sample_categorical

    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.full(7, 0.4), size=50)
    q = rng.dirichlet(np.ones(7))
    assert np.array_equal(
        apply_minimax(P, q, epsilon=1.5), apply_minimax(P, q, epsilon=1.5, check_input=False)
    )
    assert np.array_equal(
        relative_mollifier_tv(P, q, epsilon=1.5),
        relative_mollifier_tv(P, q, epsilon=1.5, check_input=False),
    )
    draws = sample_categorical(P, rng=np.random.default_rng(9))
    assert np.array_equal(
        draws, sample_categorical(P, rng=np.random.default_rng(9), check_input=False)
    )
    bad = P.copy()
    bad[4, 2] = -0.1
    with pytest.raises(ValueError, match="non-negative"):
        apply_minimax(bad, q, epsilon=1.5)
    with pytest.raises(ValueError, match="non-negative"):
        relative_mollifier_tv(bad, q, epsilon=1.5)
    with pytest.raises(ValueError, match="non-negative"):
        sample_categorical(bad, rng=np.random.default_rng(9))
    with pytest.raises(ValueError, match="items but 7 were expected"):
        apply_minimax(P[:, :6], q, epsilon=1.5, check_input=False)
