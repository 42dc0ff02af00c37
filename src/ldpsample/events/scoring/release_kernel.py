"""The release kernel and its privacy audit: which kernel evaluation scores and a release
draws from, and the check that its realised ε does not exceed the claimed ε.

A user's released item is drawn from ``p K`` where ``K`` is the minimax-optimal kernel of the
subcategory's public prior (:func:`ldpsample.minimax_coefficients`); the evaluation
(:mod:`ldpsample.events.scoring.metrics`) and the client-side release
(:mod:`ldpsample.publish.client`) both build it here. The audit looks only at the kernel actually
used, never at its claimed ε: a minimax kernel's coefficients in O(n)
(:func:`ldpsample.minimax_realized_epsilon`), any other kernel's matrix
(:func:`ldpsample.realized_epsilon`), so it would catch a kernel built wrongly anywhere upstream.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ldpsample.audit import minimax_realized_epsilon, realized_epsilon
from ldpsample.minimax import MinimaxKernel, minimax_coefficients

__all__ = [
    "EPSILON_TOLERANCE",
    "PrivacyAuditError",
    "audit_kernel",
    "check_realized",
    "epsilon_text",
    "minimax_release_kernel",
]

#: Rounding allowed between a kernel's realised ε and its claimed ε (relative to max(1, ε)).
EPSILON_TOLERANCE = 1e-9


class PrivacyAuditError(RuntimeError):
    """A kernel's realised ε exceeds the claimed ε: nothing may be released."""


def epsilon_text(epsilon: float) -> str:
    """Plain decimal text of ε (as the pipeline's ``eps~<ε>`` folders): 8.0 -> "8"."""
    return np.format_float_positional(float(epsilon), trim="-")


def minimax_release_kernel(q: NDArray[np.float64], *, epsilon: float) -> MinimaxKernel:
    """The kernel that releases (and whose audit is recorded) for prior ``q`` at ``epsilon``."""
    return minimax_coefficients(q, epsilon=epsilon)


def audit_kernel(K: MinimaxKernel | NDArray[np.float64], *, epsilon: float, what: str) -> float:
    """Realised ε of a kernel; raise :class:`PrivacyAuditError` if it exceeds ε.

    ``K`` is a :class:`~ldpsample.MinimaxKernel` (audited from its coefficients in O(n), no
    matrix built) or a kernel matrix. ``what`` names the kernel in the message (dataset,
    attribute, subcategory, mechanism).
    """
    audit = minimax_realized_epsilon if isinstance(K, MinimaxKernel) else realized_epsilon
    return check_realized(audit(K), epsilon=epsilon, what=what)


def check_realized(realized: float, *, epsilon: float, what: str) -> float:
    """``realized`` (a kernel's realised ε); raise :class:`PrivacyAuditError` if it exceeds
    ``epsilon`` beyond :data:`EPSILON_TOLERANCE`."""
    if not realized <= epsilon + EPSILON_TOLERANCE * max(1.0, epsilon):
        raise PrivacyAuditError(
            f"privacy audit FAILED for {what}: realised epsilon {realized!r} exceeds the claimed "
            f"epsilon {epsilon!r}; nothing is released"
        )
    return realized
