"""Wasserstein projection mechanism (WPM) for locally private sampling.

Implements *Differentially Private Sampling from Distributions via Wasserstein Projection*:
a user holding a distribution ``P`` over input points ``x_1..x_n`` releases one sample of

    Q*(P) = argmin_{Q in M_ε(μ)} W_r(P, Q),   M_ε(μ) = {Q in Δ_m : μ <= Q <= e^ε μ},

a distribution over output points ``y_1..y_m`` with cost ``C[i, j] = d(x_i, y_j)^r``. Every
output lies in ``M_ε(μ)``, so the release is ε-LDP. Contents:

* :func:`wasserstein_projection` -- exact (min-cost flow) or entropic (alternating KL
  projections) WPM, vectorised over a batch, returning a :class:`ProjectionResult`;
  :func:`sinkhorn_iterates` exposes the entropic iterates.
* :func:`kl_projection_mechanism` -- the KL projection baseline (same input and output space);
  :func:`clip_normalize` -- its exact sort-based normaliser.
* :func:`dirac_projection`, :func:`worst_case_cost`, :func:`optimal_base_measure`,
  :func:`optimal_uniform_base_measure`, :func:`uniform_base_measure` -- base measures.
* :func:`exponential_mechanism`, :func:`exponential_sensitivity` -- exponential-mechanism
  baseline; :func:`sample_outputs` -- one release per input; :func:`transport_cost` -- exact
  ``W_r^r`` between distributions, for evaluation.
* :func:`release_distributions` -- any of the above by name (``MECHANISMS``), as the experiments
  call them; :func:`kpm_uniform_scale` -- the KPM's minimax uniform scale.
* :func:`sphere_wpm`, :func:`sphere_density`, :func:`sample_sphere_wpm` -- the WPM on the unit
  sphere with the Euclidean cost in closed form (:class:`SphereWPM`; module ``sphere``).

Algorithms, choices and proofs: ``docs/wasserstein.md``.
"""

from ldpsample.wasserstein._common import clip_normalize
from ldpsample.wasserstein.base_measure import (
    BaseMeasureResult,
    dirac_projection,
    optimal_base_measure,
    optimal_uniform_base_measure,
    uniform_base_measure,
    worst_case_cost,
)
from ldpsample.wasserstein.exponential import (
    exponential_mechanism,
    exponential_sensitivity,
    sample_outputs,
)
from ldpsample.wasserstein.projection import (
    ProjectionResult,
    kl_projection_mechanism,
    sinkhorn_iterates,
    transport_cost,
    wasserstein_projection,
)
from ldpsample.wasserstein.release import MECHANISMS, kpm_uniform_scale, release_distributions
from ldpsample.wasserstein.sphere import (
    SphereWPM,
    sample_sphere_wpm,
    sphere_density,
    sphere_wpm,
)

__all__ = [
    "MECHANISMS",
    "BaseMeasureResult",
    "ProjectionResult",
    "SphereWPM",
    "clip_normalize",
    "dirac_projection",
    "exponential_mechanism",
    "exponential_sensitivity",
    "kl_projection_mechanism",
    "kpm_uniform_scale",
    "optimal_base_measure",
    "optimal_uniform_base_measure",
    "release_distributions",
    "sample_outputs",
    "sample_sphere_wpm",
    "sinkhorn_iterates",
    "sphere_density",
    "sphere_wpm",
    "transport_cost",
    "uniform_base_measure",
    "wasserstein_projection",
    "worst_case_cost",
]
