"""Your own data: an events table (user, item, optional weights, attribute columns) through the
mechanisms of :mod:`ldpsample` — histograms per attribute subcategory, utility of every method
and the audit of every kernel used (evaluation; publishing a release is
:mod:`ldpsample.publish`).

One sub-package per step: :mod:`~ldpsample.events.reading` (which files a table is, scanning and
checking it), :mod:`~ldpsample.events.counting` (the histograms, items and priors in one job),
:mod:`~ldpsample.events.bucketed` (the same as map/reduce steps for a table too large for one
job), :mod:`~ldpsample.events.scoring` (one attribute, every ε: divergences and the kernel
audit), :mod:`~ldpsample.events.outputs` (the tables an evaluation writes). Beside them,
:mod:`~ldpsample.events.options` (an entry's keys as one object, with the schema's defaults),
:mod:`~ldpsample.events.schemas` (the tables' layouts and the methods) and
:mod:`~ldpsample.events.evaluation` (all of it in one call, from Python). The experiments' own
tables are in :mod:`ldpsample.experiments`; the figure is :mod:`ldpsample.figures.events`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ldpsample._lazy import lazy_exports

#: Public name -> module defining it. Loaded on first use (PEP 562, as :mod:`ldpsample`): a
#: histogram job imports ldpsample.events.counting.histograms without the metrics' scipy.
_EXPORTS: dict[str, str] = {
    "METHODS": "ldpsample.events.schemas",
    "EventHistograms": "ldpsample.events.counting.histograms",
    "EventsEvaluation": "ldpsample.events.evaluation",
    "EventsOptions": "ldpsample.events.options",
    "EventsTableError": "ldpsample.events.reading.scan",
    "PrivacyAuditError": "ldpsample.events.scoring.release_kernel",
    "build_event_histograms": "ldpsample.events.counting.histograms",
    "evaluate_attribute": "ldpsample.events.scoring.metrics",
    "evaluate_events": "ldpsample.events.evaluation",
}

__all__ = [
    "METHODS",
    "EventHistograms",
    "EventsEvaluation",
    "EventsOptions",
    "EventsTableError",
    "PrivacyAuditError",
    "build_event_histograms",
    "evaluate_attribute",
    "evaluate_events",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


if TYPE_CHECKING:  # static analysers see the eager imports
    from ldpsample.events.counting.histograms import EventHistograms, build_event_histograms
    from ldpsample.events.evaluation import EventsEvaluation, evaluate_events
    from ldpsample.events.options import EventsOptions
    from ldpsample.events.reading.scan import EventsTableError
    from ldpsample.events.schemas import METHODS
    from ldpsample.events.scoring.metrics import evaluate_attribute
    from ldpsample.events.scoring.release_kernel import PrivacyAuditError
