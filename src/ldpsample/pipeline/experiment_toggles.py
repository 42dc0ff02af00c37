"""Which experiments a workflow run runs: the config's ``experiments:`` toggles, ``true``,
``false`` or ``"auto"``, read against the data a run finds.

An ``"auto"`` experiment runs when it needs no raw data (:data:`OFFLINE_EXPERIMENTS`), or when
the user placed its raw files in ``data_dir``, unless the run is an own-data run (an enabled
``events:`` entry), where every ``"auto"`` experiment is off so that an overlay adding only
``events:`` runs only those tables. A copy in ``data_dir`` that is the pipeline's own download
does not count as placed: a download made by an earlier run (of an experiment set to true) must
not switch an ``"auto"`` experiment on, or the same command would do new work on its second run.

``config`` is the validated workflow config; ``locations`` a
:class:`ldpsample.datasets.registry.DataLocations` for its ``data_dir``. Standard library only:
the workflow loads this module by path at parse time (``workflow/rules/common.smk``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = [
    "OFFLINE_EXPERIMENTS",
    "auto_off_reason",
    "auto_toggles_message",
    "experiment_datasets",
    "gowalla_derived_file",
    "is_enabled",
    "is_own_data_run",
    "raw_files",
]

#: Experiments that need no raw data: ``"auto"`` runs them unless the run is an own-data one.
OFFLINE_EXPERIMENTS = ("synthetic", "theory", "wpm_ring")


def is_own_data_run(config: dict[str, Any]) -> bool:
    """Whether the config has an enabled ``events:`` table (an entry's ``enabled`` defaults
    to true)."""
    entries = config.get("events") or {}
    return any(entry.get("enabled", True) for entry in entries.values())


def experiment_datasets(config: dict[str, Any], experiment: str) -> list[str]:
    """The datasets ``experiment`` reads from ``data_dir`` (or downloads)."""
    if experiment == "movielens":
        return ["ml-1m", "ml-100k"]
    if experiment == "avazu" and config["avazu"]["source"] == "kaggle":
        return ["avazu"]
    if experiment == "wpm_movielens":
        return ["ml-100k"]
    if experiment == "wpm_gowalla" and config["wpm"]["gowalla"]["source"] == "snap":
        return ["gowalla"]
    return []


def gowalla_derived_file(config: dict[str, Any]) -> str:
    """The derived Gowalla check-ins (``wpm.gowalla.derived_file``) in ``data_dir``; never
    downloaded."""
    return os.path.join(config["data_dir"], config["wpm"]["gowalla"]["derived_file"])


def raw_files(config: dict[str, Any], experiment: str, locations: Any) -> list[str]:
    """The raw files ``experiment`` needs inside ``data_dir``: what its ``"auto"`` waits for."""
    if experiment == "wpm_gowalla" and config["wpm"]["gowalla"]["source"] == "derived":
        return [gowalla_derived_file(config)]
    return [
        path
        for dataset in experiment_datasets(config, experiment)
        for path in locations.data_dir_files(dataset)
    ]


def auto_off_reason(config: dict[str, Any], experiment: str, locations: Any) -> str | None:
    """Why an ``"auto"`` experiment is off, or None if it runs (own-data runs aside): it has
    no raw files to wait for, one is missing from ``data_dir``, or ``data_dir``'s copy is the
    pipeline's own download."""
    files = raw_files(config, experiment, locations)
    if not files:
        return "no raw files to wait for (set it to true)"
    missing = [path for path in files if not Path(path).exists()]
    if missing:
        return f"missing {missing[0]}"
    for dataset in experiment_datasets(config, experiment):
        if locations.is_own_download(dataset):
            return (
                f"{locations.download_marker(dataset)} marks the pipeline's own download, not "
                f"data placed in data_dir: set experiments.{experiment}: true to use it"
            )
    return None


def is_enabled(config: dict[str, Any], experiment: str, locations: Any) -> bool:
    """Whether ``experiment`` runs: its toggle when true or false; for ``"auto"``, off in an
    own-data run, else on for an offline experiment or one whose raw files are placed."""
    toggle = config["experiments"].get(experiment, False)
    if toggle == "auto":
        if is_own_data_run(config):
            return False
        return (
            experiment in OFFLINE_EXPERIMENTS
            or auto_off_reason(config, experiment, locations) is None
        )
    return bool(toggle)


def auto_toggles_message(config: dict[str, Any], locations: Any) -> str | None:
    """The start-up line naming the ``"auto"`` experiments that are off, and why (None when
    there are none)."""
    auto = [name for name, toggle in config["experiments"].items() if toggle == "auto"]
    if is_own_data_run(config):
        if not auto:
            return None
        return (
            f"own-data run (events: {', '.join(sorted(config['events']))}): the experiments "
            f"on auto are off ({', '.join(auto)}); set one to true to run it too"
        )
    off = [
        f"{name} ({reason})"
        for name in auto
        if name not in OFFLINE_EXPERIMENTS and (reason := auto_off_reason(config, name, locations))
    ]
    if not off:
        return None
    return f"data_dir={config['data_dir']}: experiments on auto that are off: {', '.join(off)}"
