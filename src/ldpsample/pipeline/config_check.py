"""Config validation whose first line names the key path and the bad value.

:func:`check_config` is what the workflow runs before any job: every number must be finite
(JSON Schema's ``minimum`` lets NaN through, since every comparison with NaN is false), then
the JSON Schema (draft 2020-12, ``$ref`` to sibling files) is checked. Errors are raised as
:class:`ConfigError` with a first line such as::

    config error at synthetic.epsilons[0]: -1 must be > 0

followed by the key's description from the schema. :func:`check_consistency` runs the
cross-field checks that a schema cannot express (theory, wpm, avazu.variants, events, ...),
which raise the same error through :func:`config_error`. The workflow runs both in
``check_config()`` of ``workflow/rules/common.smk`` and turns a ConfigError into a WorkflowError.
"""

from __future__ import annotations

import copy
import importlib.util
import math
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "AVAZU_VARIANT_KEYS",
    "EPSILON_FOLDER_PATTERN",
    "EVENTS_NAME_PATTERN",
    "ConfigError",
    "avazu_variant_name",
    "check_avazu_variants",
    "check_config",
    "check_consistency",
    "check_epsilon_folder_names",
    "check_events",
    "check_events_release",
    "check_theory",
    "check_wpm",
    "config_error",
    "epsilon_folder_name",
    "events_defaults",
    "events_ledger",
    "key_path",
]


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


def check_config(config: dict, schema_path: str | os.PathLike[str]) -> None:
    """Validate ``config``: finite numbers, then the JSON Schema at ``schema_path``.

    Raises
    ------
    ConfigError
        First line ``config error at <key path>: <value> <what is wrong>``; the next line
        quotes the key's description from the schema when it has one.
    """
    check_finite(config)
    apply_events_defaults(config, Path(schema_path).parent / "events.schema.yaml")
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


# --------------------------------------------------------------------------------------------
# Cross-field checks: what a JSON schema cannot express. Functions of the config dict (after
# check_config), so they are testable without Snakemake; each raises ConfigError naming the key.
# --------------------------------------------------------------------------------------------

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


def check_consistency(config: dict, *, download_dir: str | os.PathLike[str]) -> None:
    """Every cross-field check, in order: data_dir, downloads, the ε folder names, theory, wpm,
    avazu.variants, events. ``download_dir`` is where the workflow downloads (data_dir may name
    it before it exists)."""
    _check_data_dir(config, download_dir)
    for dataset, source in config["downloads"].items():
        if source.get("md5") and source.get("sha256"):
            raise config_error(f"downloads.{dataset}", "give md5 or sha256, not both")
    for key in ("synthetic", "movielens", "avazu"):
        check_epsilon_folder_names(f"{key}.epsilons", config[key]["epsilons"])
    check_theory(config)
    check_wpm(config)
    check_avazu_variants(config)
    check_events(config)


def _check_data_dir(config: dict, download_dir: str | os.PathLike[str]) -> None:
    data_dir = Path(config["data_dir"])
    if not data_dir.is_dir() and data_dir.resolve() != Path(download_dir).resolve():
        raise config_error(
            "data_dir",
            f"{config['data_dir']!r} is not an existing folder (it should hold pre-placed "
            "raw data in the official layouts; resources/, the download folder, needs none)",
        )


def check_theory(config: dict) -> None:
    """The theory section: an increasing ε grid, q_min <= 1/n, Example 1's two distributions."""
    theory = config["theory"]
    grid = theory["epsilon_grid"]
    if grid["start"] >= grid["stop"]:
        raise config_error(
            "theory.epsilon_grid.start",
            f"{grid['start']!r} must be < theory.epsilon_grid.stop ({grid['stop']!r})",
        )
    for index, q_min in enumerate(theory["q_mins"]):
        if q_min > 1 / theory["n"]:
            raise config_error(
                f"theory.q_mins[{index}]",
                f"{q_min!r} exceeds 1/theory.n = {1 / theory['n']!r}",
            )
    example = theory["example_1"]
    if len(example["q"]) != len(example["p"]):
        raise config_error(
            "theory.example_1.p",
            f"has {len(example['p'])} entries, theory.example_1.q has {len(example['q'])}",
        )
    for key in ("q", "p"):
        if abs(sum(example[key]) - 1) > 1e-9:
            raise config_error(
                f"theory.example_1.{key}", f"must sum to 1, got {sum(example[key])!r}"
            )


def check_wpm(config: dict) -> None:
    """The wpm section: an ordered bounding box, ε folder names, the derived Gowalla file."""
    wpm = config["wpm"]
    box = wpm["gowalla"]["bbox"]
    for low, high in (("lat_min", "lat_max"), ("lon_min", "lon_max")):
        if box[low] >= box[high]:
            raise config_error(
                f"wpm.gowalla.bbox.{low}",
                f"{box[low]!r} must be < wpm.gowalla.bbox.{high} ({box[high]!r})",
            )
    for key in ("movielens.epsilons", "gowalla.epsilons", "gowalla.map_epsilons"):
        experiment, name = key.split(".")
        check_epsilon_folder_names(f"wpm.{key}", wpm[experiment][name])
    derived = os.path.join(config["data_dir"], wpm["gowalla"]["derived_file"])
    if (
        wpm["gowalla"]["source"] == "derived"
        and config["experiments"].get("wpm_gowalla") is True
        and not Path(derived).is_file()
    ):
        raise config_error(
            "wpm.gowalla.derived_file",
            f"{derived!r} not found (it is never downloaded; set wpm.gowalla.source: snap "
            "or point data_dir at a copy)",
        )


def check_avazu_variants(config: dict) -> None:
    """Each avazu.variants entry changes something and names its own folder."""
    avazu = config["avazu"]
    seen = {"avazu"}
    for index, overrides in enumerate(avazu.get("variants", [])):
        key = f"avazu.variants[{index}]"
        unknown = sorted(set(overrides) - set(AVAZU_VARIANT_KEYS))
        if unknown or not overrides:
            raise config_error(
                key,
                f"{overrides!r}: a variant sets one or more of {list(AVAZU_VARIANT_KEYS)}",
            )
        if all(avazu[k] == v for k, v in overrides.items()):
            raise config_error(
                key, f"{overrides!r} equals the avazu section itself (results/avazu/)"
            )
        folder = f"results/avazu/{avazu_variant_name(overrides)}"
        if folder in seen:
            raise config_error(key, f"{overrides!r} repeats the variant {folder}")
        seen.add(folder)


def check_events(config: dict) -> None:
    """Every events entry: a folder-safe name and, if enabled, ε folder names, distinct
    attributes, one public column per attribute, and input files that exist (a table under
    results/ is made by another rule; relative paths are read from the working directory)."""
    for name, entry in (config.get("events") or {}).items():
        key = f"events.{name}"
        if not re.fullmatch(EVENTS_NAME_PATTERN, str(name)):
            raise config_error(
                key,
                f"{name!r} is not a valid dataset name (lowercase letters, digits, - and _; "
                "it names the folder results/events/<name>/)",
            )
        if not entry.get("enabled", True):
            continue
        check_epsilon_folder_names(f"{key}.epsilons", entry["epsilons"])
        attributes = list(entry["attributes"])
        if len(set(attributes)) != len(attributes):
            raise config_error(f"{key}.attributes", f"{attributes!r} repeats a column")
        paths = [(f"{key}.path", entry["path"])]
        prior = entry["prior"]
        if isinstance(prior, dict) and "spec" in prior:
            paths.append((f"{key}.prior.spec", prior["spec"]))
        elif not isinstance(prior, str):
            paths.append((f"{key}.prior.path", prior["path"]))
            if len(prior["attributes"]) != len(attributes):
                raise config_error(
                    f"{key}.prior.attributes",
                    f"{list(prior['attributes'])!r} must name one column of the public table "
                    f"per attribute {attributes!r} (same order)",
                )
        check_events_release(key, entry)
        for path_key, path in paths:
            if str(path).startswith("results/"):
                continue
            if path_key.endswith(".spec") or not _is_table_path(path):
                if not Path(path).exists():
                    raise config_error(
                        path_key,
                        f"file not found: {path!r} (relative paths are read from the working "
                        "directory)",
                    )
                continue
            try:  # a file, a folder or a glob: it must name at least one table file
                _events_files().list_table_files(path, key=path_key)
            except (OSError, ValueError) as exc:
                raise config_error(path_key, str(exc)) from None


def _events_files() -> Any:
    """ldpsample/events/files.py (standard library only), loaded by path like this module."""
    name = "ldpsample_events_files"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).resolve().parents[1] / "events" / "files.py"
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


def _is_table_path(path: str) -> bool:
    """Whether ``path`` names a table the way events.<name>.path may: an existing file or
    folder, or a glob (a missing file is checked as a file)."""
    return Path(path).is_dir() or _events_files().is_pattern(path)


#: Keys that only a publication uses, with their schema defaults (a config error with
#: release: false unless at the default; tests/test_publish.py checks them against the schema).
RELEASE_KEYS: dict[str, Any] = {
    "release_seed": None,
    "samples": 1,
    "attributes_public": False,
    "subcategories": None,
    "prior_smoothing": 0,
    "ledger": None,
    "budget": None,
}
#: Where the ledger of events.<name> lives when events.<name>.ledger is null.
DEFAULT_LEDGER = "privacy/{name}.ledger.sqlite"


def events_ledger(name: str, entry: dict) -> str:
    """The ledger file of ``events.<name>`` (its ``ledger`` key, or the default)."""
    return entry.get("ledger") or DEFAULT_LEDGER.format(name=name)


def check_events_release(key: str, entry: dict) -> None:
    """What makes a release publishable, checked before any job (docs/publishing.md): every
    input of the mechanism other than the users' data is public. With ``release: false`` the
    publication keys must keep their defaults (they would be ignored)."""
    prior = entry["prior"]
    if not entry.get("release"):
        for name, default in RELEASE_KEYS.items():
            value = entry.get(name, default)
            if value != default:
                raise config_error(
                    f"{key}.{name}",
                    f"{_show(value)} is only used by a publication: set {key}.release: true, "
                    f"or remove {name}",
                )
        return
    public_table = isinstance(prior, dict) and "path" in prior
    reused_spec = isinstance(prior, dict) and "spec" in prior
    if prior in ("pooled", "user_mean"):
        raise config_error(
            f"{key}.prior",
            f"{prior!r} is computed from the very users being released, so the release would "
            "not be ε-LDP; with release: true use prior: uniform (with items), a public table "
            "{path, user, item, count, attributes} or an earlier spec {spec: <folder>}",
        )
    if prior == "uniform" and entry.get("items") is None:
        raise config_error(
            f"{key}.items",
            "null: a release's item domain must be public; list the items, or give a public "
            "prior table (prior: {path, ...}) whose items are the domain",
        )
    if prior == "uniform" and entry["attributes"] and not entry.get("subcategories"):
        raise config_error(
            f"{key}.subcategories",
            "null: a release's subcategories must be public; list each attribute's values "
            f"(subcategories: {{{entry['attributes'][0]}: [...]}}), or give a public prior "
            "table (prior: {path, ...})",
        )
    if entry.get("top_items") is not None and not public_table:
        raise config_error(
            f"{key}.top_items",
            f"{entry['top_items']!r} would rank the items on the private table; with release: "
            "true top_items ranks a public prior table's items, so give prior: {path, ...} "
            "or set top_items: null",
        )
    if reused_spec and entry.get("items") is not None:
        raise config_error(
            f"{key}.items", "a reused spec (prior: {spec: ...}) fixes the domain: set items: null"
        )
    if entry.get("rank_items_by") is not None:
        raise config_error(
            f"{key}.rank_items_by",
            f"{entry['rank_items_by']!r} ranks the items on the private table; with release: "
            "true set rank_items_by: null (top_items ranks the public prior table)",
        )
    if entry["min_users"] > 1:
        raise config_error(
            f"{key}.min_users",
            f"{entry['min_users']!r} would make a subcategory's release depend on other users' "
            "data; with release: true set min_users: 1 (every spec subcategory is released)",
        )
    if entry["min_user_count"] > 0 and not entry.get("attributes_public"):
        raise config_error(
            f"{key}.min_user_count",
            f"{_show(entry['min_user_count'])}: a participation rule on a user's own data "
            "discloses whether it passed; set min_user_count: 0, or declare subcategory "
            "membership public (attributes_public: true; the manifest states the rule)",
        )
