"""The folder names that config values become, and the patterns they must match.

An ε names the folder ``eps~<ε>`` as a plain decimal (:func:`epsilon_folder_name`, matching
:data:`EPSILON_FOLDER_PATTERN`, the workflow's ``eps`` wildcard constraint); an
``avazu.variants`` entry names ``results/avazu/<key~value_...>/`` (:func:`avazu_variant_name`,
from :data:`AVAZU_VARIANT_KEYS`); an ``events.<name>`` entry names ``results/events/<name>/``
(:data:`EVENTS_NAME_PATTERN`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .errors import config_error

#: An ε folder's name, eps~<ε>: a plain decimal (the workflow's ``eps`` wildcard constraint).
EPSILON_FOLDER_PATTERN = r"[0-9]+(\.[0-9]+)?"
#: Names of ``events.<name>`` entries (they name the folder ``results/events/<name>/``).
EVENTS_NAME_PATTERN = r"[a-z0-9][a-z0-9_-]*"
#: The keys an ``avazu.variants`` entry may change (the histogram filters).
AVAZU_VARIANT_KEYS = (
    "top_sites",
    "site_rank_by",
    "min_rows",
    "user_activity",
    "activity_scope",
    "min_users",
    "exclude_placeholder_device",
)


def epsilon_folder_name(value: float) -> str:
    """Folder-safe, reversible plain decimal for an ε: ``8.0 -> "8"``, ``1e-05 -> "0.00001"``."""
    import numpy as np

    return np.format_float_positional(float(value), trim="-")


def check_epsilon_folder_names(key: str, epsilons: Sequence[float]) -> None:
    """ε values must have a plain decimal folder name eps~<ε> (the eps wildcard's pattern)."""
    for index, eps in enumerate(epsilons):
        text = epsilon_folder_name(eps)
        if not re.fullmatch(EPSILON_FOLDER_PATTERN, text) or float(text) != eps:
            raise config_error(
                f"{key}[{index}]",
                f"{eps!r} has no plain decimal folder name eps~<ε> (got {text!r}); "
                "use a value like 0.5 or 8",
            )


def avazu_variant_name(overrides: dict[str, Any]) -> str:
    """Folder of an ``avazu.variants`` entry: its keys and values, sorted by key
    (``min_users~1000``)."""

    def text(value: Any) -> str:
        return str(value).lower() if isinstance(value, bool) else str(value)

    return "_".join(f"{key}~{text(overrides[key])}" for key in sorted(overrides))
