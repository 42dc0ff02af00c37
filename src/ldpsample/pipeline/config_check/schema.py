"""The config's JSON Schema: :func:`check_config`, and the events entries' schema defaults.

:func:`check_config` is the first check the workflow runs: numbers in exponent form read as
numbers, every number finite (:mod:`.yaml_numbers`), the events entries' absent keys filled
with their schema defaults (:func:`apply_events_defaults`; JSON Schema validators apply none),
then the JSON Schema (draft 2020-12, ``$ref`` to sibling files) checked, its errors raised as
one :class:`~.errors.ConfigError` (:mod:`.schema_messages`).
"""

from __future__ import annotations

import copy
import functools
import os
from pathlib import Path
from typing import Any

from .schema_messages import schema_error
from .yaml_numbers import check_finite, convert_exponent_numbers


def check_config(config: dict, schema_path: str | os.PathLike[str]) -> None:
    """Validate ``config``: numbers in exponent form read as numbers
    (:func:`convert_exponent_numbers`, in place), finite numbers, the events entries' schema
    defaults filled in (:func:`apply_events_defaults`), then the JSON Schema at
    ``schema_path``.

    Raises
    ------
    ConfigError
        First line ``config error at <key path>: <value> <what is wrong>``; the next line
        quotes the key's description from the schema when it has one.
    """
    validator = _validator(Path(schema_path))
    convert_exponent_numbers(config, validator)
    check_finite(config)
    apply_events_defaults(config, Path(schema_path).parent / "events.schema.yaml")
    errors = list(validator.iter_errors(config))
    if errors:
        raise schema_error(errors)


def events_defaults(schema_path: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``default`` of every ``events.<name>`` key that has one, from the events schema
    (the one place defaults are written; config/README.md and docs/own-data.md list them)."""
    schema = _load_yaml(Path(schema_path))
    properties = schema["$defs"]["dataset"]["properties"]
    return {key: spec["default"] for key, spec in properties.items() if "default" in spec}


def apply_events_defaults(config: dict, schema_path: str | os.PathLike[str]) -> None:
    """Fill every absent ``events.<name>`` key that has a schema default, in place (JSON
    Schema validators do not apply defaults, and the workflow reads complete entries); a public
    prior table's absent ``user``, ``item``, ``count`` and ``attributes`` are the events
    table's."""
    entries = config.get("events")
    if not isinstance(entries, dict) or not entries:
        return
    defaults = events_defaults(schema_path)
    for entry in entries.values():
        if isinstance(entry, dict):
            for key, value in defaults.items():
                entry.setdefault(key, copy.deepcopy(value))
            prior = entry.get("prior")
            if isinstance(prior, dict) and "path" in prior:
                # a public table's columns default to the events table's own names
                for key in ("user", "item", "count", "attributes"):
                    if key in entry:
                        prior.setdefault(key, copy.deepcopy(entry[key]))


def _load_yaml(path: Path) -> Any:
    """The parsed YAML file ``path``: a fresh copy of the parse cached by the file's identity
    (path, size, modification time), so repeated checks in one process parse each schema file
    once and an edited file is read again."""
    path = Path(path).resolve()
    stat = path.stat()
    return copy.deepcopy(_parsed_yaml(path, stat.st_size, stat.st_mtime_ns))


@functools.lru_cache(maxsize=64)
def _parsed_yaml(path: Path, size: int, mtime_ns: int) -> Any:
    import yaml

    # libyaml's parser where PyYAML was built with it, with the same safe constructor: the schema
    # files are parsed at every Snakemake start (its cost: docs/performance.md).
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=loader)


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
