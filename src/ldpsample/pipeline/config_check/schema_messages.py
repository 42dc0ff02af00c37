"""A JSON Schema error as the user reads it: one sentence naming the key path and the value.

:func:`schema_error` turns the validator's errors into one :class:`~.errors.ConfigError`: the
error to read first (the deepest, most specific one on the first key, ``_first_error``) on the
first line, one line per unknown or missing key, the others after it, and the key's
``description`` from the schema when there is one problem. ``_message`` writes each
ValidationError as a short sentence (``-1 must be > 0``, ``'x' must be of type number`` with a
hint about strings).

An unknown key names the nearest allowed one (``did you mean 'top_items'?``, difflib), or
lists the allowed keys when none is near.
"""

from __future__ import annotations

import difflib
from typing import Any

from .errors import ConfigError, _combined, _show, config_error, key_path

_STRING_HINT = (
    " (a string: in a YAML file write the value without quotes; a nested value given with "
    "--config is always read as a string: put it in an overlay file passed with --configfile, "
    "see config/README.md)"
)


def schema_error(errors: list[Any]) -> ConfigError:
    """One :class:`ConfigError` for the schema's ``errors`` (at least one): the first error a
    user should read on the first line, every other problem after it (sorted by key path), and
    the key's description from the schema when there is only one."""
    first = _first_error(errors)
    lines, description = _error_lines(first)
    others = sorted(
        {line for error in errors if error is not first for line in _error_lines(error)[0]}
        - set(lines),
        key=_line_order,
    )
    lines = [*lines, *others]
    text = lines[0]
    if description and not others:
        text += f"\n  {key_path(list(first.absolute_path))}: {description}"
    return ConfigError(_combined([text, *lines[1:]]))


def _error_lines(error: Any) -> tuple[list[str], str | None]:
    """``config error at <key path>: ...`` lines for one schema error (one per unknown or
    missing key), and the key's description from the schema."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        error = _first_error([error])
    parts = list(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        return [str(config_error([*parts, key], _unknown_key(key, allowed))) for key in extra], None
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return [str(config_error([*parts, key], f"missing key {key!r}")) for key in missing], None
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    parent = error.parent.schema if error.parent is not None else None
    if not description and isinstance(parent, dict):
        description = parent.get("description")
    text = " ".join(str(description).split()) if description else None
    return [str(config_error(parts, _message(error)))], text


def _unknown_key(key: Any, allowed: list[str]) -> str:
    """``unknown key 'top_item' (did you mean 'top_items'?)``: the nearest allowed key
    (difflib), or every allowed key when none is near."""
    near = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
    if near:
        return f"unknown key {key!r} (did you mean {near[0]!r}?)"
    return f"unknown key {key!r} (allowed here: {', '.join(allowed)})"


def _line_order(line: str) -> str:
    """Sort key of an error line: its key path."""
    return line.split(":", 1)[0]


def _first_error(errors: list[Any]) -> Any:
    """The error a user should read first: the deepest, most specific one on the first key."""
    from jsonschema.exceptions import best_match, relevance

    def deepest(error: Any) -> Any:
        while error.context:
            # an error under oneOf/anyOf: pick the branch that got furthest, preferring one the
            # value has the right type for (0 for "an integer >= 1 or null" fails the minimum,
            # not the type null)
            shaped = ("type", "const", "enum")
            typed = [e for e in error.context if e.validator not in shaped] or error.context
            # of several branches of the right type (a mapping: a spec or a public table), the
            # one the value misses least
            branches: dict[Any, list[Any]] = {}
            for sub in typed:
                branches.setdefault(sub.relative_schema_path[0], []).append(sub)
            typed = min(branches.values(), key=len)
            error = best_match(typed, key=relevance) or typed[0]
            if error.validator in ("oneOf", "anyOf") and not error.context:
                break
        return error

    chosen = min(errors, key=lambda e: (list(map(str, e.absolute_path)), -len(e.absolute_path)))
    if chosen.validator in ("oneOf", "anyOf") and chosen.context:
        # a toggle (true/false/"auto") or a choice of shapes: name the options, not a branch
        if all(sub.validator in ("type", "const", "enum") for sub in chosen.context):
            return chosen
        return deepest(chosen)
    return chosen


def _message(error: Any) -> str:
    """A short sentence for one jsonschema ValidationError."""
    kind, limit, value = error.validator, error.validator_value, error.instance
    shown = _show(value)
    comparisons = {
        "exclusiveMinimum": ">",
        "minimum": ">=",
        "exclusiveMaximum": "<",
        "maximum": "<=",
    }
    if kind in comparisons:
        return f"{shown} must be {comparisons[kind]} {_show(limit)}"
    if kind == "type":
        types = [limit] if isinstance(limit, str) else list(limit)
        text = f"{shown} must be of type {' or '.join(types)}"
        if isinstance(value, str) and set(types) & {
            "number",
            "integer",
            "boolean",
            "array",
            "object",
        }:
            text += _STRING_HINT
        return text
    if kind == "enum":
        return f"{shown} must be one of {', '.join(_show(v) for v in limit)}"
    if kind == "const":
        return f"{shown} must be {_show(limit)}"
    if kind in ("oneOf", "anyOf"):
        options = []
        for sub in limit:
            if "const" in sub:
                options.append(_show(sub["const"]))
            elif "enum" in sub:
                options.extend(_show(v) for v in sub["enum"])
            elif "type" in sub:
                options.append(f"a {sub['type']}")
        hint = _STRING_HINT if isinstance(value, str) and value in ("true", "false") else ""
        if options:
            return f"{shown} must be {' or '.join(options)}{hint}"
    if kind == "minItems":
        return f"needs at least {limit} item(s), got {len(value)}"
    if kind == "uniqueItems":
        return f"items must be unique, got {value!r}"
    if kind == "minLength":
        return f"{shown} must not be empty"
    if kind == "pattern":
        return f"{shown} does not match the pattern {limit}"
    if kind == "propertyNames":
        return error.message
    return error.message
