"""Input validation shared by every mechanism.

Everything a user passes in is checked at the boundary, with ``TypeError`` for a value of the
wrong type and ``ValueError`` for a value of the right type but outside its domain. Messages
show the offending value with ``repr()``. Range checks are written so that NaN fails them
(``not (0 <= x < inf)`` rather than ``x < 0``).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Absolute tolerance on ``sum(p) == 1`` for anything called a distribution.
SUM_TOLERANCE = 1e-9

__all__ = [
    "SUM_TOLERANCE",
    "check_distribution",
    "check_distributions",
    "check_epsilon",
    "check_integer",
    "check_rng",
    "normalize",
]


def check_epsilon(epsilon: object, *, name: str = "epsilon", allow_zero: bool = True) -> float:
    """Return ``epsilon`` as a float after checking it is a finite real number >= 0.

    Raises
    ------
    TypeError
        If ``epsilon`` is not a real number (strings, ``None``, arrays, complex, bool).
    ValueError
        If ``epsilon`` is NaN, infinite, negative (or zero when ``allow_zero`` is False).
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(
            f"{name} must be a real number, got {epsilon!r} of type {type(epsilon).__name__}"
        )
    value = float(epsilon)
    lower_ok = value >= 0.0 if allow_zero else value > 0.0
    if not (lower_ok and math.isfinite(value)):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite real number {bound}, got {epsilon!r}")
    return value


def check_integer(value: object, *, name: str, minimum: int | None = None) -> int:
    """Return ``value`` as an int after checking it is an integer ``>= minimum``.

    Python and numpy integers pass; bools do not (``True`` is not a count).

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If ``value < minimum``.
    """
    what = {None: "an integer", 0: "a non-negative integer", 1: "a positive integer"}.get(
        minimum, f"an integer >= {minimum}"
    )
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be {what}, got {value!r} of type {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return int(value)


def _as_float_array(x: ArrayLike, name: str) -> NDArray[np.float64]:
    if isinstance(x, str | bytes):
        raise TypeError(f"{name} must be an array of real numbers, got {x!r}")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # pragma: no cover - numpy raises many things for ragged input
        raise TypeError(f"{name} must be an array of real numbers: {exc}") from exc
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.floating)
        or np.issubdtype(arr.dtype, np.integer)
        or np.issubdtype(arr.dtype, np.bool_)
    ):
        raise TypeError(
            f"{name} must be an array of real numbers, got dtype {arr.dtype} ({x!r:.200})"
        )
    return arr.astype(np.float64, copy=False)


def _raise_if_not_finite(arr: NDArray[np.float64], name: str) -> None:
    """``ValueError`` naming the first non-finite entry of ``arr`` (in C order), if any."""
    finite = np.isfinite(arr)
    if not finite.all():
        idx = np.argwhere(~finite)[0]
        raise ValueError(
            f"{name} must be finite, got {arr[tuple(idx)].item()!r} at index {tuple(idx.tolist())}"
        )


def check_distributions(
    p: ArrayLike,
    *,
    name: str = "p",
    n: int | None = None,
    min_items: int = 1,
    check_values: bool = True,
) -> NDArray[np.float64]:
    """Validate a batch of distributions along the last axis.

    ``p`` may be one distribution (shape ``(n,)``) or a batch (shape ``(users, n)``); the array is
    returned as float64 with its shape unchanged. ``check_values=False`` checks the shape only,
    with no pass over the values: the ``check_input=False`` path of the mechanisms, whose
    caller has built or checked the distributions.

    Raises
    ------
    TypeError
        For non-numeric input.
    ValueError
        For a wrong number of dimensions, a wrong number of items ``n``, non-finite or negative
        entries, or a row whose sum differs from 1 by more than :data:`SUM_TOLERANCE`. The message
        names the first offending row and its value.
    """
    arr = _as_float_array(p, name)
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must have shape (n,) or (users, n), got shape {arr.shape}")
    items = arr.shape[-1]
    if items < min_items:
        raise ValueError(f"{name} must have at least {min_items} items, got shape {arr.shape}")
    if n is not None and items != n:
        raise ValueError(f"{name} has {items} items but {n} were expected (shape {arr.shape})")
    if not check_values:
        return arr
    # Two passes and no full-size temporaries on the common path: the minimum (NaN propagates
    # through it; -inf is its own minimum) and the row sums (a +inf entry makes its row's sum
    # +inf or NaN). The full-size boolean scans run only to locate an offending entry.
    with np.errstate(invalid="ignore", over="ignore"):  # only in rows rejected below
        sums = arr.sum(axis=-1)
    if arr.size:
        lowest = float(arr.min())
        if not (math.isfinite(lowest) and np.isfinite(sums).all()):
            _raise_if_not_finite(arr, name)  # else finite entries whose row sum overflowed
        if lowest < 0.0:
            idx = tuple(np.argwhere(arr < 0)[0].tolist())
            raise ValueError(f"{name} must be non-negative, got {arr[idx].item()!r} at index {idx}")
    bad = np.abs(sums - 1.0) > SUM_TOLERANCE
    if np.any(bad):
        row = int(np.argmax(bad)) if arr.ndim == 2 else None
        where = "" if row is None else f" (row {row})"
        value = float(np.atleast_1d(sums)[row or 0])
        raise ValueError(
            f"{name} must sum to 1 within {SUM_TOLERANCE:g}, got sum {value!r}{where}; "
            "use ldpsample.normalize() to rescale counts explicitly"
        )
    return arr


def check_distribution(p: ArrayLike, *, name: str = "q", min_items: int = 1) -> NDArray[np.float64]:
    """Validate a single distribution (a 1-D array); see :func:`check_distributions`."""
    arr = check_distributions(p, name=name, min_items=min_items)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one distribution of shape (n,), got shape {arr.shape}")
    return arr


def normalize(counts: ArrayLike, *, name: str = "counts") -> NDArray[np.float64]:
    """Rescale non-negative weights along the last axis so that each row sums to 1.

    This is the explicit way to turn counts into distributions: mechanisms never rescale silently.

    Raises
    ------
    ValueError
        If an entry is negative or non-finite, or a row sums to zero.
    """
    arr = _as_float_array(counts, name)
    if arr.ndim == 0:
        raise ValueError(f"{name} must have at least one dimension, got a scalar {counts!r}")
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise ValueError(f"{name} must be finite and non-negative, got {arr!r:.200}")
    sums = arr.sum(axis=-1, keepdims=True)
    if (sums <= 0).any():
        row = int(np.argmax((sums <= 0).ravel()))
        raise ValueError(
            f"{name} has a row with total weight 0 (row {row}); it cannot be normalised"
        )
    return arr / sums


def check_rng(rng: object) -> np.random.Generator:
    """Return ``rng`` if it is a :class:`numpy.random.Generator`; raise ``TypeError`` otherwise.

    Randomness is always injected: pass ``numpy.random.default_rng(seed)``.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), got {rng!r}"
        )
    return rng
