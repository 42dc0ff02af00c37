"""Entropic WPM: alternating KL projections from the Gibbs kernel ``exp(-C/η)``.

Rows: scale row ``i`` to sum ``P_i``. Columns: KL-project the column sums onto ``M_ε(μ)``
(the KPM step, :func:`ldpsample.wasserstein._common.log_clip_normalise`). ``variant="dykstra"``
projects the column sums of ``diag(u) K`` (the Dykstra-corrected step, equal to the scaling
algorithm of Chizat et al. 2018, which converges to the entropic optimum); ``"vanilla"`` projects
the current plan's column sums. See ``docs/wasserstein.md``.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ldpsample._types import FloatArray
from ldpsample.wasserstein._common import log_clip_normalise

#: Above this ``(max C - min C) / η`` (per row) the entropic solver works in the log domain: the
#: Gibbs kernel would hold values below e^-400 and its scalings (up to ~e^400) would approach
#: the float64 range. Up to 500 the two domains were checked to agree to 1e-15.
LINEAR_DOMAIN_MAX_RANGE = 400.0

#: Elements of a ``(batch, n, m)`` temporary allowed at once in the log domain (~128 MB).
_LOG_DOMAIN_BLOCK = 1 << 24


def lse(x: FloatArray, axis: int) -> FloatArray:
    """log-sum-exp along ``axis`` (overwrites ``x``); ``-inf`` where everything is ``-inf``."""
    mx = x.max(axis=axis, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    x -= mx
    np.exp(x, out=x)
    with np.errstate(divide="ignore"):
        return np.log(x.sum(axis=axis)) + np.squeeze(mx, axis=axis)


class Sinkhorn:
    """State of the alternating projections for a batch (columns restricted to ``upper > 0``).

    ``linear`` keeps scalings ``u, v`` of ``K = exp(-(C - min_j C)/η)`` and uses matrix products;
    ``log`` keeps potentials ``f, g`` and log-sum-exps over ``(batch, n, m)`` blocks.
    """

    def __init__(self, P, C, lower, upper, eta, domain, variant):
        self.dykstra = variant == "dykstra"
        self.P = P
        self.C = C
        self.lower, self.upper = lower, upper
        self.domain = domain
        batch, m = P.shape[0], C.shape[1]
        if domain == "linear":
            self.K = np.exp(-(C - C.min(axis=1, keepdims=True)) / eta)
            self.v = np.ones((batch, m))
            self.u = np.zeros_like(P)
        else:
            self.logK = -C / eta
            self.g = np.zeros((batch, m))
            self.f = np.zeros_like(P)
            with np.errstate(divide="ignore"):
                self.logP = np.log(P)
        self._rowsum_factor: FloatArray | None = None  # K v (or LSE) for the current v / g
        self.Q = np.zeros((batch, m))
        self.t = np.zeros(batch)  # log of the column normaliser, a warm start for the next

    # The block helpers keep the (batch, n, m) temporaries of the log domain small.
    def _blocks(self, batch: int) -> Iterator[slice]:
        n, m = self.C.shape
        step = max(1, _LOG_DOMAIN_BLOCK // (n * m))
        for s in range(0, batch, step):
            yield slice(s, s + step)

    def _row_factor(self, idx):
        if self.domain == "linear":
            return self.v[idx] @ self.K.T
        g = self.g[idx]
        out = np.empty((g.shape[0], self.C.shape[0]))
        for sl in self._blocks(g.shape[0]):
            out[sl] = lse(self.logK[None] + g[sl, None, :], axis=2)
        return out

    def row_error(self, idx) -> FloatArray:
        """``||π 1 - P||_1`` of the current plan; caches the factor for the next row step."""
        factor = self._row_factor(idx)
        self._rowsum_factor = factor
        rows = self.u[idx] * factor if self.domain == "linear" else np.exp(self.f[idx] + factor)
        return np.abs(rows - self.P[idx]).sum(axis=1)

    def step(self, idx) -> None:
        """Row projection then column (KPM) projection for the inputs ``idx``."""
        factor = self._rowsum_factor
        if factor is None:
            factor = self._row_factor(idx)
        self._rowsum_factor = None
        if self.domain == "linear":
            P = self.P[idx]
            u = np.divide(P, factor, out=np.zeros_like(P), where=P > 0)
            self.u[idx] = u
            z = u @ self.K  # column sums of diag(u) K
            s = z if self.dykstra else self.v[idx] * z
            log_s = np.log(s)
            log_new, self.t[idx] = log_clip_normalise(log_s, self.lower, self.upper, self.t[idx])
            ratio = np.exp(log_new - log_s)
            self.v[idx] = ratio if self.dykstra else self.v[idx] * ratio
            self.Q[idx] = np.exp(log_new)
        else:
            f = self.logP[idx] - factor
            self.f[idx] = f
            log_s = np.empty((f.shape[0], self.C.shape[1]))
            for sl in self._blocks(f.shape[0]):
                log_s[sl] = lse(self.logK[None] + f[sl, :, None], axis=1)
            if not self.dykstra:
                log_s += self.g[idx]
            log_new, self.t[idx] = log_clip_normalise(log_s, self.lower, self.upper, self.t[idx])
            shift = log_new - log_s
            self.g[idx] = shift if self.dykstra else self.g[idx] + shift
            self.Q[idx] = np.exp(log_new)

    def cost(self, idx) -> FloatArray:
        if self.domain == "linear":
            return ((self.u[idx] @ (self.K * self.C)) * self.v[idx]).sum(axis=1)
        f, g = self.f[idx], self.g[idx]
        out = np.empty(f.shape[0])
        for sl in self._blocks(f.shape[0]):
            logpi = self.logK[None] + f[sl, :, None] + g[sl, None, :]
            out[sl] = (np.exp(logpi) * self.C[None]).sum(axis=(1, 2))
        return out


def choose_domain(C: FloatArray, eta: float, domain: str) -> str:
    if domain not in ("auto", "linear", "log"):
        raise ValueError(f"domain must be 'auto', 'linear' or 'log', got {domain!r}")
    if domain != "auto":
        return domain
    spread = float((C.max(axis=1) - C.min(axis=1)).max())
    return "linear" if spread / eta <= LINEAR_DOMAIN_MAX_RANGE else "log"


def check_variant(variant: object) -> str:
    if variant not in ("dykstra", "vanilla"):
        raise ValueError(f"variant must be 'dykstra' or 'vanilla', got {variant!r}")
    return str(variant)


def entropic_projection(P2, C, lower, upper, eta, max_iter, tol, domain, variant):
    cols = np.flatnonzero(upper > 0)
    C_c = C[:, cols]
    dom = choose_domain(C_c, eta, domain)
    state = Sinkhorn(P2, C_c, lower[cols], upper[cols], eta, dom, variant)
    batch = P2.shape[0]
    iterations = np.zeros(batch, dtype=np.int64)
    error = np.full(batch, np.inf)
    active = np.arange(batch)
    for _ in range(max_iter):
        state.step(active)
        iterations[active] += 1
        err = state.row_error(active)
        error[active] = err
        keep = err > tol
        if not keep.all():
            active = active[keep]
            state._rowsum_factor = state._rowsum_factor[keep]
        if active.size == 0:
            break
    Q = np.zeros((batch, C.shape[1]))
    Q[:, cols] = state.Q
    return Q, state.cost(np.arange(batch)), iterations, error, dom
