"""Config validation whose first line names the key path and the bad value.

:func:`check_config` is what the workflow runs before any job: every number must be finite
(JSON Schema's ``minimum`` lets NaN through, since every comparison with NaN is false), then
the JSON Schema (draft 2020-12, ``$ref`` to sibling files) is checked. Errors are raised as
:class:`ConfigError` with a first line such as::

    config error at synthetic.epsilons[0]: -1 must be > 0

followed by the key's description from the schema. Cross-field checks that a schema cannot
express raise the same error through :func:`config_error`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ConfigError", "check_config", "config_error", "key_path"]


class ConfigError(ValueError):
    """An invalid config value; the message's first line names the key path and the value."""


def key_path(parts: Sequence[str | int]) -> str:
    """``["synthetic", "epsilons", 0]`` -> ``"synthetic.epsilons[0]"``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "<root>"


def _show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value)) if not math.isinf(value) else repr(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)


def config_error(parts: Sequence[str | int] | str, message: str) -> ConfigError:
    """A :class:`ConfigError` for the key at ``parts`` (a path list or a dotted string)."""
    where = parts if isinstance(parts, str) else key_path(parts)
    return ConfigError(f"config error at {where}: {message}")


def _walk(value: Any, parts: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple, Any]]:
    yield parts, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, (*parts, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _walk(item, (*parts, index))


def check_finite(config: dict) -> None:
    """Reject NaN and ±inf anywhere in ``config``, naming the key path."""
    for parts, value in _walk(config):
        if isinstance(value, float) and not math.isfinite(value):
            raise config_error(parts, f"{value!r} is not a finite number")


_STRING_HINT = (
    " (a nested value given with --config is read as a string: put it in a YAML file and "
    "pass --configfile, see config/README.md)"
)


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


def _load_yaml(path: Path) -> Any:
    import yaml

    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _validator(schema_path: Path) -> Any:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    schema_path = schema_path.resolve()
    schema = _load_yaml(schema_path)
    schema["$id"] = schema_path.as_uri()

    def retrieve(uri: str) -> Resource:
        from urllib.parse import urlparse
        from urllib.request import url2pathname

        return Resource.from_contents(_load_yaml(Path(url2pathname(urlparse(uri).path))))

    registry = Registry(retrieve=retrieve).with_resource(
        schema_path.as_uri(), Resource.from_contents(schema)
    )
    return Draft202012Validator(schema, registry=registry)


def _first_error(errors: list[Any]) -> Any:
    """The error a user should read first: the deepest, most specific one on the first key."""
    from jsonschema.exceptions import best_match, relevance

    def deepest(error: Any) -> Any:
        while error.context:
            # an error under oneOf/anyOf: pick the branch that got furthest
            error = best_match(error.context, key=relevance) or error.context[0]
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


def check_config(config: dict, schema_path: str | os.PathLike[str]) -> None:
    """Validate ``config``: finite numbers, then the JSON Schema at ``schema_path``.

    Raises
    ------
    ConfigError
        First line ``config error at <key path>: <value> <what is wrong>``; the next line
        quotes the key's description from the schema when it has one.
    """
    check_finite(config)
    validator = _validator(Path(schema_path))
    errors = list(validator.iter_errors(config))
    if not errors:
        return
    error = _first_error(errors)
    parts = list(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        raise config_error(
            [*parts, extra[0]],
            f"unknown key {extra[0]!r} (allowed here: {', '.join(allowed)})",
        )
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        raise config_error([*parts, missing[0]], f"missing key {missing[0]!r}")
    message = _message(error)
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    parent = error.parent.schema if error.parent is not None else None
    if not description and isinstance(parent, dict):
        description = parent.get("description")
    text = str(config_error(parts, message))
    if description:
        text += f"\n  {key_path(parts)}: {' '.join(str(description).split())}"
    raise ConfigError(text)
