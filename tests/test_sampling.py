"""Vectorised categorical sampling and the end-to-end minimax release."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ldpsample.minimax import apply_minimax, minimax_coefficients
from ldpsample.sampling import release_minimax, sample_categorical


class _FixedUniforms(np.random.Generator):
    """A Generator whose ``random`` returns a fixed value (to hit the rounding branch)."""

    def __init__(self, value: float) -> None:
        super().__init__(np.random.PCG64(0))
        self.value = value

    def random(self, size: int | None = None, dtype: type = np.float64, out: None = None) -> object:
        return np.full(size, self.value)


def test_same_seed_same_draws_and_different_seeds_differ() -> None:
    P = np.random.default_rng(0).dirichlet(np.ones(10), size=1000)
    a = sample_categorical(P, rng=np.random.default_rng(42))
    b = sample_categorical(P, rng=np.random.default_rng(42))
    c = sample_categorical(P, rng=np.random.default_rng(43))
    assert a.shape == (1000,) and a.dtype.kind == "i"
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_frequencies_match_probabilities() -> None:
    probs = np.array([0.1, 0.0, 0.25, 0.65])
    draws = sample_categorical(np.tile(probs, (200_000, 1)), rng=np.random.default_rng(1))
    freq = np.bincount(draws, minlength=4) / draws.size
    # 5 standard errors at most 0.0054: deterministic seed, so this cannot flake
    np.testing.assert_allclose(freq, probs, rtol=0, atol=5 * np.sqrt(0.25 / draws.size))
    assert freq[1] == 0.0


def test_one_distribution_gives_one_index() -> None:
    index = sample_categorical([0.0, 1.0, 0.0], rng=np.random.default_rng(0))
    assert int(index) == 1 and np.ndim(index) == 0


def test_rounding_never_returns_a_zero_probability_item() -> None:
    probs = np.array([[0.5, 0.5 - 1e-10, 0.0], [1.0, 0.0, 0.0]])  # sums within the tolerance
    rng = _FixedUniforms(1.0 - 2.0**-53)
    assert np.array_equal(sample_categorical(probs, rng=rng), [1, 0])
    assert np.array_equal(sample_categorical(probs, rng=_FixedUniforms(0.0)), [0, 0])


def test_bad_inputs() -> None:
    with pytest.raises(TypeError, match="Generator"):
        sample_categorical([0.5, 0.5], rng=0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Generator"):
        sample_categorical([0.5, 0.5], rng=np.random.RandomState(0))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sum to 1"):
        sample_categorical([0.5, 0.4], rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="Generator"):
        release_minimax([0.5, 0.5], [0.5, 0.5], epsilon=1.0, rng=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="expected"):
        release_minimax([0.5, 0.5], [0.2, 0.3, 0.5], epsilon=1.0, rng=np.random.default_rng(0))


def test_release_minimax_samples_the_released_distribution() -> None:
    q = np.array([0.05, 0.15, 0.3, 0.5])
    p = np.array([0.7, 0.1, 0.1, 0.1])
    P = np.tile(p, (100_000, 1))
    kernel = minimax_coefficients(q, epsilon=1.0)
    draws = release_minimax(P, kernel, rng=np.random.default_rng(3))
    again = release_minimax(P, q, epsilon=1.0, rng=np.random.default_rng(3))
    assert np.array_equal(draws, again)
    expected = apply_minimax(p, kernel)
    freq = np.bincount(draws, minlength=4) / draws.size
    np.testing.assert_allclose(freq, expected, rtol=0, atol=5 * np.sqrt(0.25 / draws.size))


@pytest.mark.parametrize("threads", [None, 1, 2, 3])
def test_release_minimax_draws_do_not_depend_on_threads(
    monkeypatch: pytest.MonkeyPatch, threads: int | None
) -> None:
    """``threads`` reaches apply_minimax (several blocks, split over threads here) and changes no
    draw: the same seed gives the same items for every thread count."""
    import ldpsample.minimax as minimax_module

    rng = np.random.default_rng(7)
    n = 300
    q = rng.dirichlet(np.ones(n))
    P = rng.dirichlet(np.full(n, 0.5), size=70)
    kernel = minimax_coefficients(q, epsilon=1.5)
    expected = release_minimax(P, kernel, rng=np.random.default_rng(11), threads=1)
    monkeypatch.setattr(minimax_module, "_BLOCK_ENTRIES", 4 * n)  # blocks of 16 rows
    monkeypatch.setattr(minimax_module, "_APPLY_THREADED_ENTRIES", 1)  # threaded from any size
    draws = release_minimax(P, kernel, rng=np.random.default_rng(11), threads=threads)
    again = release_minimax(P, q, epsilon=1.5, rng=np.random.default_rng(11), threads=threads)
    np.testing.assert_array_equal(draws, expected)
    np.testing.assert_array_equal(again, expected)


@pytest.mark.parametrize(
    ("threads", "error"), [(0, ValueError), (-1, ValueError), (2.0, TypeError), (True, TypeError)]
)
def test_release_minimax_checks_threads(threads: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match="threads"):
        release_minimax(
            [0.5, 0.5], [0.5, 0.5], epsilon=1.0, rng=np.random.default_rng(0), threads=threads
        )
