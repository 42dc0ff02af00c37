"""The checks of the ``events.<name>`` entries that a schema cannot express.

:func:`check_events`: a folder-safe name and, for an enabled entry, ε folder names, distinct
attributes, one public column per attribute, input files that exist (a file, a folder or a
glob naming at least one table file) and what a publication needs
(:func:`~.release.events_release_problems`); every problem of every entry in one error.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

from .errors import ConfigError, _combined, config_error
from .names import EVENTS_NAME_PATTERN, check_epsilon_folder_names
from .release import events_release_problems


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
    """ldpsample/events/reading/files.py (standard library only), loaded by path like this
    module."""
    name = "ldpsample_events_files"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).resolve().parents[2] / "events" / "reading" / "files.py"
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


def _is_table_path(path: str) -> bool:
    """Whether ``path`` names a table the way events.<name>.path may: an existing file or
    folder, or a glob (a missing file is checked as a file)."""
    return Path(path).is_dir() or _events_files().is_pattern(path)
