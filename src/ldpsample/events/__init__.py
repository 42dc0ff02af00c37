"""Your own data: an events table (user, item, optional weights, attribute columns) through the
mechanisms of :mod:`ldpsample` — histograms per attribute subcategory, utility of every method
and the audit of every kernel used (evaluation; publishing a release is
:mod:`ldpsample.publish`).

Modules: :mod:`~ldpsample.events.options` (an entry's keys as one object, the schema's
defaults), :mod:`~ldpsample.events.files` and :mod:`~ldpsample.events.table` (which files a
table is; reading and checking it), :mod:`~ldpsample.events.histograms` (subcategories, kept
users, items, public priors, in one job; its steps are ``table_checks``, ``prepared``,
``item_tops``, ``kept_histograms``, ``subcategories`` and ``prior_tables``),
:mod:`~ldpsample.events.buckets` (the same as map/reduce steps, the ``bucket_*`` modules),
:mod:`~ldpsample.events.priors` (data-derived priors, user by user),
:mod:`~ldpsample.events.metrics` (one attribute, all ε: divergences, audit),
:mod:`~ldpsample.events.release` (the release kernel and its audit check),
:mod:`~ldpsample.events.tables` and :mod:`~ldpsample.events.tradeoff` (published tables),
:mod:`~ldpsample.events.schemas` (the tables' layouts and the methods),
:mod:`~ldpsample.events.evaluation` (all of it in one call, from Python),
:mod:`~ldpsample.events.movielens` and :mod:`~ldpsample.events.avazu` (the experiments'
tables); its figure is :mod:`ldpsample.figures.events`.

Uses: ldpsample._lazy (each name of the export table is imported from its module on first
use: evaluation, histograms, metrics, options, release, schemas, table); no Snakemake.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ldpsample._lazy import lazy_exports

#: Public name -> module defining it. Loaded on first use (PEP 562, as :mod:`ldpsample`): a
#: histogram job imports ldpsample.events.histograms without the metrics' scipy (0.24 s of
#: each such job's start).
_EXPORTS: dict[str, str] = {
    "METHODS": "ldpsample.events.schemas",
    "EventHistograms": "ldpsample.events.histograms",
    "EventsEvaluation": "ldpsample.events.evaluation",
    "EventsOptions": "ldpsample.events.options",
    "EventsTableError": "ldpsample.events.table",
    "PrivacyAuditError": "ldpsample.events.release",
    "build_event_histograms": "ldpsample.events.histograms",
    "evaluate_attribute": "ldpsample.events.metrics",
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
    from ldpsample.events.evaluation import EventsEvaluation, evaluate_events
    from ldpsample.events.histograms import EventHistograms, build_event_histograms
    from ldpsample.events.metrics import evaluate_attribute
    from ldpsample.events.options import EventsOptions
    from ldpsample.events.release import PrivacyAuditError
    from ldpsample.events.schemas import METHODS
    from ldpsample.events.table import EventsTableError
