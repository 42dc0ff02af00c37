"""Linear algebra with the minimax kernel ``K_{q,ε}`` in O(n): products with ``K`` from either
side, the solve ``x K = h``, and the entries of ``K^{-1}`` that standard errors and condition
numbers need, all without forming an ``n x n`` matrix.

Zamanlooy, Diaz & Asoodeh (AISTATS 2025; /work/shared/papers/000_904d48b38ce41b65.txt, §3,
Step 3: "we invoke a recursive call of Algorithm 1 to compute K_{q̄,ε}") build the kernel by a
recursion on ``n``; ``ldpsample.minimax`` holds its closed form: with ``q``
sorted ascending, ``K[i, j] = q_j c_{min(i, j)}`` off the diagonal and ``e^ε q_i c_i`` on it,
``c`` non-increasing and positive. Writing ``w = e^ε - 1``, ``C[i, j] = c_{min(i, j)}`` and
``Q = diag(q)``, that is ``K = G Q`` with the symmetric ``G = C + w diag(c)``. ``C`` is a sum of
nested blocks of ones, ``C = E^{-1} diag(δ) E^{-T}`` with ``δ_k = c_k - c_{k-1}`` (``c_0 = 0``)
and the difference operator ``(E y)_i = y_i - y_{i-1}`` (``E^{-1} e_k`` is the indicator of
``i >= k``); hence ``G = E^{-1} T E^{-T}`` with the symmetric tridiagonal

    T = diag(δ) + w E diag(c) E^T,   T_ii = δ_i + w (c_i + c_{i-1}),   T_{i,i+1} = -w c_i,

and ``det K = prod(q) det T`` (``det E = 1``). ``K`` is similar to the symmetric
``Q^{1/2} G Q^{1/2}``, so its eigenvalues are real; for ε > 0 and every ``q_j > 0`` it is
invertible (``det T > 0``: checked over random priors, ties and ε from 0.05 to 8 in
tests/test_estimate_structured.py; a singular ``T`` would make the LU solve raise). Then
``x K = h`` is ``x = E^T T^{-1} E (h / q)``: one banded LU solve (LAPACK, no Python loop).
``G^{-1}`` is diagonal plus rank-one semiseparable, ``G^{-1}[i, j] = s_i t_j`` for ``i > j``,
with ``s = G^{-1} e_1`` and ``t = G^{-1} e_n / s_n``: two more solves give every entry of
``K^{-1} = Q^{-1} G^{-1}`` as prefix and suffix sums.

For large ``w`` the difference operator cancels: ``E^T z`` subtracts nearly equal entries, which
costs about ``log10(w u)`` digits (``u`` the machine precision): every entry of ``K^{-1}`` is inf
from ε ≈ 37, and for masses of 1e-12 the solve is off by 1e-9 at ε = 16 and 1e-4 at ε = 30.
There ``G`` is close to its diagonal ``w D`` (``D = diag(c)``), and the same solves run as the
fixed-point series ``x = (w D)^{-1} (r - C x)``, whose steps are running sums and subtract
nothing nearly equal; a kernel uses it where it settles within ``_SERIES_STEPS`` steps on the
generators' columns.

Items with ``q_j = 0`` have an all-zero column (never released): callers restrict a kernel to
the items with ``q > 0`` (:func:`positive_support`), whose kernel is the minimax kernel of the
renormalised ``q`` restricted to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import solve_banded

from ldpsample.minimax import MinimaxKernel, minimax_coefficients

__all__ = ["StructuredKernel", "positive_support", "structured_kernel"]

FloatArray = NDArray[np.float64]

#: At most this many steps of :meth:`StructuredKernel._solve_g_series`: it settles within them
#: where the iteration's matrix ``(w D)^{-1} C`` has a spectral radius below about 0.05 (ε from
#: about 10 to 16, depending on the prior), the regime where the banded solve starts to lose
#: digits; where it takes more, the banded solve is accurate and cheaper.
_SERIES_STEPS = 12
#: Steps before the series must shrink by half each (a diverging series stops early).
_SERIES_GRACE = 3


def positive_support(q: ArrayLike) -> NDArray[np.bool_]:
    """The items a minimax kernel can release: ``q > 0``."""
    return np.asarray(q, dtype=float) > 0


@dataclass(frozen=True, eq=False)
class StructuredKernel:
    """``K_{q,ε}`` of a prior with every ``q_j > 0``, for O(n) products, solves and entries of
    ``K^{-1}``; build with :func:`structured_kernel`. Every method takes and returns arrays in
    the caller's item order; a 2-D argument holds one vector per row."""

    kernel: MinimaxKernel

    @property
    def n(self) -> int:
        """Number of items."""
        return self.kernel.n

    @property
    def epsilon(self) -> float:
        """The kernel's ε."""
        return self.kernel.epsilon

    @property
    def q(self) -> FloatArray:
        """The prior in the caller's order."""
        return self.kernel.q

    @cached_property
    def _w(self) -> float:
        return float(np.expm1(self.kernel.epsilon))

    def _sorted(self, x: FloatArray) -> FloatArray:
        return x[..., self.kernel.order]

    def _caller(self, x: FloatArray) -> FloatArray:
        out = np.empty_like(x)
        out[..., self.kernel.order] = x
        return out

    def _c_product(self, y: FloatArray) -> FloatArray:
        """``(C y)_i = sum_{j<i} c_j y_j + c_i sum_{j>=i} y_j`` in sorted order (rows of ``y``)."""
        c = self.kernel.c
        cy = c * y
        before = np.zeros_like(cy)  # exclusive prefix sums of c y
        np.cumsum(cy[..., :-1], axis=-1, out=before[..., 1:])
        after = np.cumsum(y[..., ::-1], axis=-1)[..., ::-1]  # inclusive suffix sums of y
        return before + c * after

    def _apply_sorted(self, x: FloatArray) -> FloatArray:
        k = self.kernel
        return k.q_sorted * (self._c_product(x) + self._w * k.c * x)

    def _apply_columns_sorted(self, x: FloatArray) -> FloatArray:
        k = self.kernel
        qx = k.q_sorted * x
        return self._c_product(qx) + self._w * k.c * qx

    def apply(self, p: ArrayLike) -> FloatArray:
        """``p K`` (rows of ``p``): ``q ⊙ (C p) + w q c ⊙ p``, since ``C`` is symmetric."""
        return self._caller(self._apply_sorted(self._sorted(np.asarray(p, dtype=float))))

    def apply_columns(self, u: ArrayLike) -> FloatArray:
        """``K u`` for column vectors ``u`` (given as rows): ``C (q ⊙ u) + w c q ⊙ u``."""
        return self._caller(self._apply_columns_sorted(self._sorted(np.asarray(u, dtype=float))))

    @cached_property
    def _banded(self) -> FloatArray:
        """``T`` in the banded form of :func:`scipy.linalg.solve_banded` (one band above and
        one below the diagonal)."""
        c = self.kernel.c
        c_before = np.concatenate([[0.0], c[:-1]])
        w = self._w
        ab = np.zeros((3, self.n))
        ab[1] = (c - c_before) + w * (c + c_before)
        ab[0, 1:] = -w * c[:-1]
        ab[2, :-1] = -w * c[:-1]
        ab.flags.writeable = False
        return ab

    def _solve_g(self, r: FloatArray) -> FloatArray:
        """``G^{-1} r`` for rows ``r`` in sorted order: ``E^T T^{-1} E r``."""
        if self.n == 1:  # G = (w + 1) c_1
            return r / ((self._w + 1.0) * self.kernel.c[0])
        zero = np.zeros((*r.shape[:-1], 1))
        er = r - np.concatenate([zero, r[..., :-1]], axis=-1)
        z = solve_banded((1, 1), self._banded, er.T, check_finite=False).T
        return z - np.concatenate([z[..., 1:], zero], axis=-1)

    def solve(self, h: ArrayLike) -> FloatArray:
        """``x`` with ``x K = h`` (rows of ``h``): the unbiased inversion ``h K^{-1}``.

        ``x = G^{-1} (h / q)``: by :meth:`_solve_g_series` where the kernel is in its regime
        (:attr:`_series_columns`), else by the banded solve."""
        r = self._sorted(np.asarray(h, dtype=float)) / self.kernel.q_sorted
        x = self._solve_g_series(r) if self._series_columns is not None else None
        return self._caller(self._solve_g(r) if x is None else x)

    def _solve_g_series(self, r: FloatArray) -> FloatArray | None:
        """``G^{-1} r`` for rows ``r`` (sorted order) as the fixed point of
        ``x = (w D)^{-1} (r - C x)`` (``G = w D + C``, ``D = diag(c)``), iterated from
        ``x = (w D)^{-1} r`` until no entry moves by more than 4 ulp of itself; None when it does
        not settle in ``_SERIES_STEPS`` steps or its steps stop shrinking by half each (the
        iteration's matrix ``(w D)^{-1} C`` then has too large a spectral radius: smaller
        ``w``). Each step is one O(n) product with ``C``. Entries far below the largest keep
        their relative accuracy: none is a difference of nearly equal numbers, unlike
        ``E^T T^{-1} E r`` once ``w`` nears the reciprocal of the machine precision."""
        scale = self._w * self.kernel.c
        x = r / scale
        ulp = np.finfo(float).eps
        previous = np.inf
        for step in range(_SERIES_STEPS):
            new = (r - self._c_product(x)) / scale
            change = np.abs(new - x)
            x = new
            if np.all(change <= 4 * ulp * np.abs(new)):
                return x
            size = float(change.max())
            if step >= _SERIES_GRACE and not size <= 0.5 * previous:
                return None
            previous = size
        return None

    @cached_property
    def _series_columns(self) -> FloatArray | None:
        """``w G^{-1} [e_1, e_n]`` (rows) by :meth:`_solve_g_series`, or None where the series
        does not settle in its steps (smaller ``w``; also for ``n = 1``): whether this kernel is in
        the series' regime, where the banded solve's differences cancel."""
        if self.n == 1:
            return None
        unit = np.zeros((2, self.n))
        unit[0, 0] = self._w
        unit[1, -1] = self._w
        columns = self._solve_g_series(unit)
        if columns is not None:
            columns.flags.writeable = False
        return columns

    @cached_property
    def _inverse_parts(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(g, s, t)`` in sorted order: ``diag(G^{-1})`` and the generators with
        ``G^{-1}[i, j] = s_i t_j`` for ``i > j``.

        ``s`` is proportional to ``G^{-1} e_1`` and ``t`` to ``G^{-1} e_n``, with ``s_n t`` the
        last column; the diagonal from row ``i`` of ``G G^{-1} = I``:
        ``(w + 1) c_i g_i + s_i sum_{j<i} c_j t_j + c_i t_i sum_{j>i} s_j = 1``.

        Where :meth:`_solve_g_series` settles (large ``w``: ``G`` is close to ``w D``) the columns
        come from it, scaled by ``w`` (``s = w G^{-1} e_1``, ``t = G^{-1} e_n / (w s_n)``), since
        their entries below the diagonal fall to ``~1/w`` of it: the banded solve's differences
        cancel there (inf from ε ≈ 37), and unscaled ``s_n`` underflows near ε = 700. Elsewhere
        they come from the banded solve.
        """
        if self._series_columns is not None:
            s, last = self._series_columns.copy()
            t = last / (self._w * s[-1])
        else:
            unit = np.zeros((2, self.n))
            unit[0, 0] = 1.0
            unit[1, -1] = 1.0
            s, last = self._solve_g(unit)
            t = last / s[-1]
        # s_1 and t_n enter no entry below the diagonal and no g_i (scaled by w they are of
        # order w q and would overflow when squared): zero, so that sums over j < i or j > i
        # never carry them.
        s[0] = 0.0
        t[-1] = 0.0
        c = self.kernel.c
        ct_before = np.concatenate([[0.0], np.cumsum(c * t)[:-1]])
        s_after = np.concatenate([np.cumsum(s[::-1])[::-1][1:], [0.0]])
        g = (1.0 - s * ct_before - c * t * s_after) / ((self._w + 1.0) * c)
        for a in (g, s, t):
            a.flags.writeable = False
        return g, s, t

    def inverse_column_moments(self, weights: ArrayLike) -> FloatArray:
        """``sum_j weights_j (K^{-1}[j, i])^2`` for every item ``i`` (rows of ``weights``).

        With ``weights = π`` (the released distribution) this is the first term of
        ``N Var(p̂_i) = sum_j π_j (K^{-1}[j, i])^2 - p̄_i^2``. Prefix and suffix sums of the
        semiseparable form: O(n).
        """
        g, s, t = self._inverse_parts
        q = self.kernel.q_sorted
        rho = self._sorted(np.asarray(weights, dtype=float)) / q**2
        zero = np.zeros((*rho.shape[:-1], 1))
        before = np.concatenate([zero, np.cumsum(rho * t**2, axis=-1)[..., :-1]], axis=-1)
        rs = rho * s**2
        after = np.concatenate([np.flip(np.cumsum(np.flip(rs, -1), -1), -1)[..., 1:], zero], -1)
        return self._caller(rho * g**2 + s**2 * before + t**2 * after)

    def inverse_dense(self) -> FloatArray:
        """``K^{-1}`` as an ``(n, n)`` matrix (from the semiseparable form; for tests and small
        domains only)."""
        g, s, t = self._inverse_parts
        idx = np.arange(self.n)
        lower = np.outer(s, t)
        inv = np.where(idx[:, None] > idx[None, :], lower, lower.T)
        np.fill_diagonal(inv, g)
        inv = inv / self.kernel.q_sorted[:, None]
        order = self.kernel.order
        out = np.empty_like(inv)
        out[np.ix_(order, order)] = inv
        return out

    def condition_number(self) -> float:
        """``cond_1(K) = ||K||_1 ||K^{-1}||_1`` (largest absolute column sums), exact, O(n)."""
        g, s, t = self._inverse_parts
        k = self.kernel
        q, c = k.q_sorted, k.c
        n = self.n
        c_before = np.concatenate([[0.0], np.cumsum(c)[:-1]])
        columns = q * (c_before + c * (n - np.arange(n)) + self._w * c)
        at, as_ = np.abs(t) / q, np.abs(s) / q
        before = np.concatenate([[0.0], np.cumsum(at)[:-1]])
        after = np.concatenate([np.cumsum(as_[::-1])[::-1][1:], [0.0]])
        inverse_columns = np.abs(g) / q + np.abs(s) * before + np.abs(t) * after
        return float(columns.max() * inverse_columns.max())


def structured_kernel(q: ArrayLike, *, epsilon: float) -> StructuredKernel:
    """The minimax kernel of ``q`` for :class:`StructuredKernel`'s O(n) operations.

    Raises
    ------
    ValueError
        ``epsilon`` is 0 (``K`` is then the singular ``1 q``), or some ``q_j = 0`` (restrict to
        :func:`positive_support` first), or ``q`` is not a distribution.
    """
    kernel = minimax_coefficients(q, epsilon=epsilon)
    if kernel.epsilon == 0.0:
        raise ValueError("epsilon=0.0: the kernel 1 q cannot be inverted (every row is q)")
    if kernel.q_sorted[0] <= 0.0:
        raise ValueError(
            "q has items of probability 0 (never released): restrict q to positive_support(q)"
        )
    return StructuredKernel(kernel)
