"""Your own table from Python in one call: the evaluation the pipeline's events stage runs
(``events.<name>`` in a config), with the same functions its rules call and the same defaults.

Per attribute, as the histogram and metrics jobs do: :func:`build_event_histograms` on the table
(one attribute at a time), then :func:`evaluate_attribute` (every ε); then the combine job's tables
(:mod:`ldpsample.events.outputs.tables`). ``evaluate_events(path, user=..., item=...)`` with nothing
else gives the numbers a config entry ``{path, user, item}`` gives. Publishing a release is
:mod:`ldpsample.publish`'s (docs/publishing.md).

The arguments are checked as the workflow checks a config entry, before any table is read:
the events schema (workflow/schemas/events.schema.yaml of the source tree) and the cross-field
checks (:func:`ldpsample.pipeline.config_check.check_events_entries`), with the same messages
naming the argument (``evaluate_events argument epsilons[0]: 0 must be > 0``) instead of the
config key, and an unknown keyword argument names the nearest one.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import polars as pl

from ldpsample.events.counting.histograms import build_event_histograms
from ldpsample.events.options import EventsOptions
from ldpsample.events.outputs import tables
from ldpsample.events.reading.scan import EventsTableError
from ldpsample.events.schemas import ALL
from ldpsample.events.scoring.metrics import evaluate_attribute
from ldpsample.pipeline.config_check import ConfigError, check_events_entries
from ldpsample.pipeline.progress import phase

__all__ = ["SCHEMA", "EventsEvaluation", "evaluate_events", "evaluate_options"]

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

#: The events entries' schema the workflow checks a config with (the source tree's).
SCHEMA = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "events.schema.yaml"
#: The options fields :func:`evaluate_events` takes as its own parameters (or sets: ``key``).
_OWN_FIELDS = ("key", "path", "user", "item")
#: The errors whose messages name config keys, re-raised naming the arguments.
_RENAMED = (ConfigError, EventsTableError, FileNotFoundError)


@dataclass(frozen=True)
class EventsEvaluation:
    """The tables of ``results/events/<name>/`` (docs/own-data.md), as polars frames.

    Attributes
    ----------
    histograms
        Every kept (attribute, subcategory, user, item) count.
    subcategories, per_user, max_tv, max_kl, summary, tradeoff, audit
        As ``subcategories.csv``, ``per_user.parquet``, ``max_tv.csv``, ``max_kl.csv``,
        ``summary.csv``, ``tradeoff.csv`` and ``audit.csv``.
    """

    histograms: pl.DataFrame
    subcategories: pl.DataFrame
    per_user: pl.DataFrame
    max_tv: pl.DataFrame
    max_kl: pl.DataFrame
    summary: pl.DataFrame
    tradeoff: pl.DataFrame
    audit: pl.DataFrame


def _nearest_keywords(function: F) -> F:
    """``function`` raising, for an unknown keyword argument, a TypeError that names the nearest
    known one (difflib) instead of Python's bare "unexpected keyword argument": its own
    parameters and the :class:`~ldpsample.events.options.EventsOptions` fields it takes as
    ``**options``."""
    own = [p for p in inspect.signature(function).parameters if p != "options"]
    known = own + [f.name for f in dataclasses.fields(EventsOptions) if f.name not in _OWN_FIELDS]

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        for keyword in kwargs:
            if keyword not in known:
                near = difflib.get_close_matches(keyword, known, n=1, cutoff=0.6)
                hint = f"; did you mean {near[0]!r}?" if near else f"; known: {', '.join(known)}"
                raise TypeError(
                    f"{function.__name__}() got an unexpected keyword argument {keyword!r}{hint}"
                )
        return function(*args, **kwargs)

    return checked  # type: ignore[return-value]


def _plain(value: Any) -> Any:
    """Tuples and other sequences as lists, mappings as dicts, paths as text: the values a
    config file holds, for the schema."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [_plain(v) for v in value]
    return value


def _as_arguments(text: str, key: str) -> str:
    """A message naming ``events.<name>`` keys, naming evaluate_events' arguments instead."""
    return (
        text.replace(f"config error at {key}.", "evaluate_events argument ")
        .replace(f"config error at {key}:", "evaluate_events argument name:")
        .replace("config error at events:", "evaluate_events argument name:")
        .replace(f"config key {key}.", "argument ")
        .replace(f"{key}.", "")
    )


def _renamed(exc: Exception, key: str) -> Exception:
    return type(exc)(_as_arguments(str(exc), key))


@_nearest_keywords
def evaluate_events(
    path: str | os.PathLike[str],
    *,
    user: str,
    item: str,
    name: str = "events",
    progress: bool = False,
    threads: int | None = None,
    **options: Any,
) -> EventsEvaluation:
    """Evaluate an events table as the pipeline does for ``events.<name>``.

    ``options`` are the other keys of an evaluation (``count``, ``attributes``, ``prior``,
    ``items``, ``top_items``, ``rank_items_by``, ``activity_by``, ``min_user_count``,
    ``activity_scope``, ``min_users``, ``exclude_users``, ``on_null``, ``on_bad_rows``,
    ``epsilons``, ``methods``; docs/own-data.md), with the schema's defaults
    (:class:`~ldpsample.events.options.EventsOptions`); a public prior table is
    ``prior={"path": ..., "user": ..., "item": ..., "count": ..., "attributes": [...]}`` (its
    columns default to the table's own names). ``progress`` shows a bar per attribute's
    subcategories on stderr; every scan is logged as a phase with its elapsed time
    (``logging.basicConfig(level=logging.INFO)`` shows them). ``threads`` as
    :func:`evaluate_attribute`.

    Returns
    -------
    EventsEvaluation

    Raises
    ------
    ConfigError
        An argument the workflow's config check rejects (before any table is read), named
        as ``evaluate_events argument <name>``.
    TypeError
        An unknown keyword argument (naming the nearest known one).
    FileNotFoundError, EventsTableError, PrivacyAuditError
        As :func:`build_event_histograms` and :func:`evaluate_attribute` (naming the arguments,
        not config keys).
    """
    key = f"events.{name}"
    entry = _plain({"path": path, "user": user, "item": item, **options})
    try:
        check_events_entries({name: entry}, SCHEMA)  # also fills the schema's defaults
        built = EventsOptions.from_entry({**entry, "path": path}, key=key)
        return evaluate_options(built, name=name, progress=progress, threads=threads)
    except _RENAMED as exc:
        if type(exc) not in _RENAMED:
            raise
        raise _renamed(exc, key) from None


def evaluate_options(
    options: EventsOptions,
    *,
    name: str = "events",
    progress: bool = False,
    threads: int | None = None,
) -> EventsEvaluation:
    """:func:`evaluate_events` of options already built (and checked): per attribute the
    histogram job's :func:`build_event_histograms` and the metrics job's
    :func:`evaluate_attribute`, then the combine job's tables."""
    key = options.key
    kind = options.prior_kind
    histograms, subcategories, per_user, audit = [], [], [], []
    for attribute in options.attributes or (ALL,):
        with phase(log, f"{key}: attribute {attribute!r}"):
            built = build_event_histograms(options.for_attribute(attribute))
            result = evaluate_attribute(
                built.histograms,
                built.priors,
                name=name,
                attribute=attribute,
                prior=kind,
                epsilons=options.epsilons,
                methods=options.methods,
                progress=progress,
                threads=threads,
            )
        histograms.append(built.histograms)
        subcategories.append(built.subcategories)
        per_user.append(result.per_user)
        audit.append(result.audit)
    per_user_table = tables.concat_attribute_parts(per_user)
    audit_table = pl.concat(audit).sort("attribute", "subcategory", "epsilon", "kernel")
    tables.check_audit(audit_table)
    max_tv, max_kl = tables.max_table(per_user_table, "tv"), tables.max_table(per_user_table, "kl")
    tradeoff = tables.tradeoff_table(per_user_table)
    return EventsEvaluation(
        histograms=pl.concat(histograms).sort("attribute", "subcategory", "user", "item"),
        subcategories=pl.concat(subcategories).sort("attribute", "status", "subcategory"),
        per_user=per_user_table,
        max_tv=max_tv,
        max_kl=max_kl,
        summary=tables.events_summary(max_tv, max_kl, tradeoff),
        tradeoff=tradeoff,
        audit=audit_table,
    )
