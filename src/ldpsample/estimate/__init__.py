"""The analyst's side of a publication: population estimates with standard errors and intervals
from a ``publish/`` folder alone, the accuracy plan of a spec before any draw, and (evaluation
only, with the private data) each estimator's error against the truth (docs/analysing.md).

Modules: :mod:`~ldpsample.estimate.publication` (reading ``publish/``),
:mod:`~ldpsample.estimate.structured` (O(n) products, solves and ``K^{-1}`` entries of the
minimax kernel), :mod:`~ldpsample.estimate.estimators` (inversion, Norm-Sub, EM, χ² test),
:mod:`~ldpsample.estimate.table` (the tidy table of a publication),
:mod:`~ldpsample.estimate.plan` (accuracy from public inputs),
:mod:`~ldpsample.estimate.evaluation` (errors against the truth) and
:mod:`~ldpsample.estimate.modes` (the two release modes compared at an equal per-user budget).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ldpsample._lazy import lazy_exports

#: Public name -> module defining it (loaded on first use, as :mod:`ldpsample`).
_EXPORTS: dict[str, str] = {
    "AccuracyPlan": "ldpsample.estimate.plan",
    "ChiSquareTest": "ldpsample.estimate.estimators",
    "Estimates": "ldpsample.estimate.table",
    "Publication": "ldpsample.estimate.publication",
    "PublicationError": "ldpsample.estimate.publication",
    "StructuredKernel": "ldpsample.estimate.structured",
    "accuracy_plan": "ldpsample.estimate.plan",
    "analytic_standard_errors": "ldpsample.estimate.estimators",
    "chi_square_test": "ldpsample.estimate.estimators",
    "em_estimate": "ldpsample.estimate.estimators",
    "estimate_publication": "ldpsample.estimate.table",
    "estimator_errors": "ldpsample.estimate.evaluation",
    "inversion": "ldpsample.estimate.estimators",
    "log_likelihood": "ldpsample.estimate.estimators",
    "norm_sub": "ldpsample.estimate.estimators",
    "plan_summary": "ldpsample.estimate.plan",
    "population_truth": "ldpsample.estimate.evaluation",
    "read_publication": "ldpsample.estimate.publication",
    "releasing_users": "ldpsample.estimate.plan",
    "structured_kernel": "ldpsample.estimate.structured",
    "summarise_errors": "ldpsample.estimate.evaluation",
}

__all__ = [
    "AccuracyPlan",
    "ChiSquareTest",
    "Estimates",
    "Publication",
    "PublicationError",
    "StructuredKernel",
    "accuracy_plan",
    "analytic_standard_errors",
    "chi_square_test",
    "em_estimate",
    "estimate_publication",
    "estimator_errors",
    "inversion",
    "log_likelihood",
    "norm_sub",
    "plan_summary",
    "population_truth",
    "read_publication",
    "releasing_users",
    "structured_kernel",
    "summarise_errors",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


if TYPE_CHECKING:  # static analysers see the eager imports
    from ldpsample.estimate.estimators import (
        ChiSquareTest,
        analytic_standard_errors,
        chi_square_test,
        em_estimate,
        inversion,
        log_likelihood,
        norm_sub,
    )
    from ldpsample.estimate.evaluation import (
        estimator_errors,
        population_truth,
        summarise_errors,
    )
    from ldpsample.estimate.plan import (
        AccuracyPlan,
        accuracy_plan,
        plan_summary,
        releasing_users,
    )
    from ldpsample.estimate.publication import Publication, PublicationError, read_publication
    from ldpsample.estimate.structured import StructuredKernel, structured_kernel
    from ldpsample.estimate.table import Estimates, estimate_publication
