"""Numbers as the user meant them: exponent form read as numbers, finite, within 64 bits.

YAML 1.1 (PyYAML, which Snakemake loads config files with) reads ``1e-12`` or ``1e6`` as
strings; :func:`convert_exponent_numbers` reads them as the numbers the schema expects. JSON
Schema's ``minimum`` lets NaN through (every comparison with NaN is false), so
:func:`check_finite` rejects NaN and ±inf, and integers beyond 64 bits, naming the key path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from .errors import config_error


def _walk(value: Any, parts: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple, Any]]:
    yield parts, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, (*parts, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _walk(item, (*parts, index))


#: The largest integer a config value may hold: numpy's and polars' 64-bit integers (an integer
#: key may also name a folder, such as n~<n>, which Snakemake's wildcard matching must accept).
INT64_MAX = 2**63 - 1


def check_finite(config: dict) -> None:
    """Reject NaN and ±inf anywhere in ``config``, and integers beyond 64 bits, naming the key
    path."""
    for parts, value in _walk(config):
        if isinstance(value, float) and not math.isfinite(value):
            raise config_error(parts, f"{value!r} is not a finite number")
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > INT64_MAX:
            raise config_error(
                parts, f"{value!r} does not fit in a 64-bit integer (at most {INT64_MAX})"
            )


#: A number in exponent form, as YAML 1.2 reads it (``1e-12``, ``1e6``, ``2.5E3``, ``-1.0e+3``).
#: YAML 1.1 (PyYAML, which Snakemake loads config files with) wants a dot in the mantissa and a
#: sign in the exponent, and reads the others as strings.
_EXPONENT_NUMBER = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+")


def _type_errors(error: Any) -> Iterator[Any]:
    """``error`` and the errors under it (the branches of a oneOf/anyOf) that are type errors."""
    if error.validator == "type":
        yield error
    for sub in error.context or ():
        yield from _type_errors(sub)


def _exponent_number(text: str, types: list[str]) -> int | float | None:
    """``text`` as the number a schema ``type`` of ``types`` expects, if it is one in exponent
    form (an integer only where it is whole: ``1e6`` -> 1000000)."""
    if not _EXPONENT_NUMBER.fullmatch(text):
        return None
    if "number" in types:
        return float(text)
    if "integer" in types:
        from decimal import Decimal

        exact = Decimal(text)
        return int(exact) if exact == exact.to_integral_value() else None
    return None


def convert_exponent_numbers(config: dict, validator: Any) -> None:
    """Read strings in exponent form as numbers where the schema expects a number (in place).

    YAML 1.1 reads ``1e-12`` or ``1e6`` as strings; YAML 1.2, and the user, mean numbers. A
    string is converted only where the schema wants a number or an integer and not a string
    (``items: [a, 1e3]`` of an events entry stays text), so every other string still fails
    validation with its message.
    """
    while True:
        changed = False
        for error in validator.iter_errors(config):
            for found in _type_errors(error):
                types = (
                    [found.validator_value]
                    if isinstance(found.validator_value, str)
                    else list(found.validator_value)
                )
                if not isinstance(found.instance, str) or "string" in types:
                    continue
                number = _exponent_number(found.instance, types)
                path = list(found.absolute_path)
                if number is None or not path:
                    continue
                parent = config
                for part in path[:-1]:
                    parent = parent[part]
                parent[path[-1]] = number
                changed = True
        if not changed:
            return
