"""Config validation whose first line names the key path and the bad value.

:func:`check_config` is what the workflow runs before any job: numbers written in exponent
form, which YAML 1.1 reads as strings (``1e-12``, ``1e6``), are read as the numbers the schema
expects (:func:`convert_exponent_numbers`); every number must be finite (JSON Schema's
``minimum`` lets NaN through, since every comparison with NaN is false) and every integer fit
in 64 bits; then the JSON Schema (draft 2020-12, ``$ref`` to sibling files) is checked.
Errors are raised as :class:`ConfigError` with a first line such as::

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
    "convert_exponent_numbers",
    "epsilon_folder_name",
    "events_defaults",
    "events_ledger",
    "events_release_problems",
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


_STRING_HINT = (
    " (a string: in a YAML file write the value without quotes; a nested value given with "
    "--config is always read as a string: put it in an overlay file passed with --configfile, "
    "see config/README.md)"
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
            # an error under oneOf/anyOf: pick the branch that got furthest, preferring one the
            # value has the right type for (0 for "an integer >= 1 or null" fails the minimum,
            # not the type null)
            shaped = ("type", "const", "enum")
            typed = [e for e in error.context if e.validator not in shaped] or error.context
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
    if not errors:
        return
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
    raise ConfigError(_combined([text, *lines[1:]]))


def _error_lines(error: Any) -> tuple[list[str], str | None]:
    """``config error at <key path>: ...`` lines for one schema error (one per unknown or
    missing key), and the key's description from the schema."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        error = _first_error([error])
    parts = list(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        return [
            str(
                config_error(
                    [*parts, key], f"unknown key {key!r} (allowed here: {', '.join(allowed)})"
                )
            )
            for key in extra
        ], None
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return [str(config_error([*parts, key], f"missing key {key!r}")) for key in missing], None
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    parent = error.parent.schema if error.parent is not None else None
    if not description and isinstance(parent, dict):
        description = parent.get("description")
    text = " ".join(str(description).split()) if description else None
    return [str(config_error(parts, _message(error)))], text


def _line_order(line: str) -> str:
    """Sort key of an error line: its key path."""
    return line.split(":", 1)[0]


def _combined(lines: list[str]) -> str:
    """One message for several problems: the first as the first line (a key path), then every
    other one, each on its own line."""
    if len(lines) == 1:
        return lines[0]
    return "\n".join(
        [lines[0], f"  ... and {len(lines) - 1} more:", *(f"  {line}" for line in lines[1:])]
    )


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
    attributes, one public column per attribute, input files that exist (a table under
    results/ is made by another rule; relative paths are read from the working directory) and
    what a publication needs (:func:`events_release_problems`). Every problem of every entry is
    listed in one error, the first on its first line."""
    problems: list[str] = []
    for name, entry in (config.get("events") or {}).items():
        key = f"events.{name}"
        problems += _events_entry_problems(key, entry)
        if entry.get("enabled", True):
            problems += events_release_problems(key, entry)
    if problems:
        raise ConfigError(_combined(problems))


def _events_entry_problems(key: str, entry: dict) -> list[str]:
    """The name, ε folder names, attributes, public columns and input files of one entry."""
    problems: list[str] = []

    def problem(where: str, message: str) -> None:
        problems.append(str(config_error(where, message)))

    name = key.split(".", 1)[1]
    if not re.fullmatch(EVENTS_NAME_PATTERN, str(name)):
        problem(
            key,
            f"{name!r} is not a valid dataset name (lowercase letters, digits, - and _; "
            "it names the folder results/events/<name>/)",
        )
    if not entry.get("enabled", True):
        return problems
    try:
        check_epsilon_folder_names(f"{key}.epsilons", entry["epsilons"])
    except ConfigError as exc:
        problems.append(str(exc))
    attributes = list(entry["attributes"])
    if len(set(attributes)) != len(attributes):
        problem(f"{key}.attributes", f"{attributes!r} repeats a column")
    paths = [(f"{key}.path", entry["path"])]
    prior = entry["prior"]
    if isinstance(prior, dict) and "spec" in prior:
        paths.append((f"{key}.prior.spec", prior["spec"]))
    elif not isinstance(prior, str):
        paths.append((f"{key}.prior.path", prior["path"]))
        if len(prior["attributes"]) != len(attributes):
            problem(
                f"{key}.prior.attributes",
                f"{list(prior['attributes'])!r} must name one column of the public table "
                f"per attribute {attributes!r} (same order)",
            )
    for path_key, path in paths:
        if str(path).startswith("results/"):
            continue
        if path_key.endswith(".spec") or not _is_table_path(path):
            if not Path(path).exists():
                problem(
                    path_key,
                    f"file not found: {path!r} (relative paths are read from the working "
                    "directory)",
                )
            continue
        try:  # a file, a folder or a glob: it must name at least one table file
            _events_files().list_table_files(path, key=path_key)
        except (OSError, ValueError) as exc:
            problem(path_key, str(exc))
    return problems


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
#: What ``top_items: auto`` means in an evaluation (a release's auto keeps the public domain).
AUTO_TOP_ITEMS = 100
#: Where the ledger of events.<name> lives when events.<name>.ledger is null.
DEFAULT_LEDGER = "privacy/{name}.ledger.sqlite"


def events_ledger(name: str, entry: dict) -> str:
    """The ledger file of ``events.<name>`` (its ``ledger`` key, or the default)."""
    return entry.get("ledger") or DEFAULT_LEDGER.format(name=name)


def check_events_release(key: str, entry: dict) -> None:
    """Raise one :class:`ConfigError` listing :func:`events_release_problems`, if any."""
    problems = events_release_problems(key, entry)
    if problems:
        raise ConfigError(_combined(problems))


def events_release_problems(key: str, entry: dict) -> list[str]:
    """What makes a release publishable, checked before any job (docs/publishing.md): every
    input of the mechanism other than the users' data is public. With ``release: false`` the
    publication keys must keep their defaults (they would be ignored). One line per problem,
    each naming its key and the way out."""
    problems: list[str] = []

    def problem(where: str, message: str) -> None:
        problems.append(str(config_error(where, message)))

    prior = entry["prior"]
    if not entry.get("release"):
        for name, default in RELEASE_KEYS.items():
            value = entry.get(name, default)
            if value != default:
                problem(
                    f"{key}.{name}",
                    f"{_show(value)} is only used by a publication: set {key}.release: true, "
                    f"or remove {name}",
                )
        return problems
    public_table = isinstance(prior, dict) and "path" in prior
    reused_spec = isinstance(prior, dict) and "spec" in prior
    if prior in ("pooled", "user_mean"):
        problem(
            f"{key}.prior",
            f"{prior!r} is computed from the very users being released, so the release would "
            "not be ε-LDP; with release: true use prior: uniform (with items), a public table "
            "{path, user, item, count, attributes} or an earlier spec {spec: <folder>}",
        )
    if prior == "uniform" and entry.get("items") is None:
        problem(
            f"{key}.items",
            "null: a release's item domain must be public; list the items, or give a public "
            "prior table (prior: {path, ...}) whose items are the domain",
        )
    if prior == "uniform" and entry["attributes"] and not entry.get("subcategories"):
        problem(
            f"{key}.subcategories",
            "null: a release's subcategories must be public; list each attribute's values "
            f"(subcategories: {{{entry['attributes'][0]}: [...]}}), or give a public prior "
            "table (prior: {path, ...})",
        )
    if entry.get("top_items") not in (None, "auto") and not public_table:
        problem(
            f"{key}.top_items",
            f"{entry['top_items']!r} would rank the items on the private table; with release: "
            "true top_items ranks a public prior table's items, so give prior: {path, ...} "
            "or leave top_items at auto",
        )
    if reused_spec and entry.get("items") is not None:
        problem(
            f"{key}.items", "a reused spec (prior: {spec: ...}) fixes the domain: set items: null"
        )
    if entry.get("rank_items_by") is not None:
        problem(
            f"{key}.rank_items_by",
            f"{entry['rank_items_by']!r} ranks the items on the private table; with release: "
            "true set rank_items_by: null (top_items ranks the public prior table)",
        )
    if entry["min_users"] > 1:
        problem(
            f"{key}.min_users",
            f"{entry['min_users']!r} would make a subcategory's release depend on other users' "
            "data; with release: true set min_users: 1 (every spec subcategory is released)",
        )
    if entry["min_user_count"] > 0 and not entry.get("attributes_public"):
        problem(
            f"{key}.min_user_count",
            f"{_show(entry['min_user_count'])}: a participation rule on a user's own data "
            "discloses whether it passed; set min_user_count: 0, or declare subcategory "
            "membership public (attributes_public: true; the manifest states the rule)",
        )
    return problems
