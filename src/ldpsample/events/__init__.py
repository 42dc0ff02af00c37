"""Your own data: an events table (user, item, optional weights, attribute columns) through the
mechanisms of :mod:`ldpsample` — histograms per attribute subcategory, utility of every method,
ε-LDP released samples from the minimax sampler and their privacy audit.

Modules: :mod:`~ldpsample.events.table` (reading and checking a table),
:mod:`~ldpsample.events.histograms` (subcategories, kept users, items, public priors),
:mod:`~ldpsample.events.metrics` (one attribute, all ε: divergences, release, audit),
:mod:`~ldpsample.events.release` (release kernel, seeds, audit check),
:mod:`~ldpsample.events.tables` (published tables); its figure is
:mod:`ldpsample.figures.events`.
"""

from ldpsample.events.histograms import EventHistograms, build_event_histograms
from ldpsample.events.metrics import METHODS, evaluate_attribute
from ldpsample.events.release import PrivacyAuditError
from ldpsample.events.table import EventsTableError

__all__ = [
    "METHODS",
    "EventHistograms",
    "EventsTableError",
    "PrivacyAuditError",
    "build_event_histograms",
    "evaluate_attribute",
]
