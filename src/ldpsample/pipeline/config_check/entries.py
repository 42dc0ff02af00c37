"""Events entries given outside a config file (``ldpsample.events.evaluate_events``): the same
checks and messages as the workflow's config check, for a mapping of entries.

:func:`check_events_entries` runs what :func:`~.schema.check_config` and
:func:`~.events.check_events` run on ``config["events"]``: finite numbers, the schema defaults
filled in, the events schema (its errors' key paths under ``events``, as in a config) and the
cross-field checks; so ``epsilons=[0]`` fails here as it fails a config, before any table is
read.
"""

from __future__ import annotations

import os
from pathlib import Path

from .events import check_events
from .schema import _validator, apply_events_defaults
from .schema_messages import schema_error
from .yaml_numbers import check_finite


def check_events_entries(events: dict, schema_path: str | os.PathLike[str]) -> None:
    """Check ``events`` (``{name: entry}``, plain lists and dicts) as the workflow checks a
    config's ``events``, filling absent keys with their schema defaults in place.

    Raises
    ------
    ConfigError
        First line ``config error at events.<name>.<key>: <value> <what is wrong>``.
    """
    config = {"events": events}
    check_finite(config)
    apply_events_defaults(config, schema_path)
    errors = list(_validator(Path(schema_path)).iter_errors(events))
    for error in errors:  # key paths as in a config: under "events"
        error.relative_path.appendleft("events")
    if errors:
        raise schema_error(errors)
    check_events(config)
