# Helpers every stage needs: the library's light modules, the one config check, ε folder names,
# the library sources of a rule, experiment toggles, data locations and the final targets. Each
# stage's own helpers live beside its rules in <stage>_common.smk, included by <stage>.smk
# (snakemake --lint flags rules and functions in one file).
import functools
import importlib.util
import os
import re
import zlib
from pathlib import Path

import numpy as np
from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

SOURCE = Path(workflow.basedir) / "src"
LIBRARY = SOURCE / "ldpsample"
CONDA_ENV = "../../environment.yml"

# Jobs import this checkout's library (also inside a `--sdm conda` env, which holds only the
# dependencies); a pip-installed ldpsample is not needed to run the workflow.
os.environ.update(
    PYTHONPATH=os.pathsep.join(
        [str(SOURCE), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
)

# A job's polars thread pool is its `threads:`. Snakemake exports OMP_NUM_THREADS (and the BLAS
# variables) = threads to every job's shell and script, but polars reads only
# POLARS_MAX_THREADS, once, at import; without it each job starts one thread per core, and two
# 1-thread Avazu histogram jobs side by side took 8.5 s instead of 6.8 s (16.6 s of CPU instead
# of 13.2 s: threads competing for two cores). The prefix is Snakemake's default plus the export.
shell.prefix("set -euo pipefail; export POLARS_MAX_THREADS=$OMP_NUM_THREADS; ")


def load_library_module(name, relative_path):
    """Load one light library module by path (standard library + what Snakemake imports).

    Importing it through the package would be the same code, but the package's heavy
    dependencies (scipy, polars, pyarrow) would then load at every Snakemake invocation and
    in every cluster job, which re-parses the workflow.
    """
    spec = importlib.util.spec_from_file_location(name, LIBRARY / relative_path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


REGISTRY = load_library_module("ldpsample_registry", "datasets/registry.py")
CONFIG_CHECK = load_library_module("ldpsample_config_check", "pipeline/config_check.py")
DOWNLOAD_DIR = "resources"


def check_config():
    """The one config check, before anything reads the config: finite numbers, the JSON
    schema, then the cross-field checks (ldpsample.pipeline.config_check.check_consistency).
    A WorkflowError whose first line names the key path and the value.
    """
    try:
        CONFIG_CHECK.check_config(
            config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
        )
        CONFIG_CHECK.check_consistency(config, download_dir=DOWNLOAD_DIR)
    except CONFIG_CHECK.ConfigError as exc:
        raise WorkflowError(str(exc)) from None


check_config()


wildcard_constraints:
    n=r"[0-9]+",
    eps=CONFIG_CHECK.EPSILON_FOLDER_PATTERN,


def format_epsilon(value):
    """Folder-safe, reversible plain decimal for an epsilon: 8.0 -> "8", 1e-05 -> "0.00001"."""
    return CONFIG_CHECK.epsilon_folder_name(value)


def get_epsilon_folders(epsilons):
    """Folder names (format_epsilon) of a list of epsilons, sorted by value."""
    return [format_epsilon(e) for e in sorted(epsilons)]


def get_library_sources(*modules):
    """Library modules a rule's result depends on, as inputs: editing one re-runs the rule.

    (A script rule's code trigger sees only the script, not the library it imports.) Relative
    to the working directory when the library is inside it (running from the project root):
    Snakemake records each job's set of input paths, so absolute ones re-ran every job of a
    project folder that was moved, renamed or restored elsewhere.
    """
    paths = [LIBRARY / module for module in modules]
    cwd = Path.cwd()
    return sorted(
        os.path.relpath(path, cwd) if path.is_relative_to(cwd) else str(path)
        for path in paths
    )


#: Experiments that need no raw data: "auto" runs them unless the run is an own-data one.
OFFLINE_EXPERIMENTS = ("synthetic", "theory", "wpm_ring")


def is_own_data_run():
    """Whether the config has enabled events tables: then the experiments left on "auto" are
    off, so that an overlay adding only `events:` runs only those tables."""
    entries = config.get("events") or {}
    return any(entry.get("enabled", True) for entry in entries.values())


def is_enabled(experiment):
    """Whether an experiment runs: true/false from config; "auto" unless this is an own-data
    run, and for a real-data experiment only if its raw data is present."""
    toggle = config["experiments"].get(experiment, False)
    if toggle == "auto":
        if is_own_data_run():
            return False
        return experiment in OFFLINE_EXPERIMENTS or not get_missing_raw_files(
            experiment
        )
    return bool(toggle)


def get_raw_files(experiment):
    """Raw files an experiment needs inside data_dir (what its "auto" toggle waits for)."""
    if experiment == "movielens":
        return get_data_dir_files("ml-1m") + get_data_dir_files("ml-100k")
    if experiment == "avazu" and config["avazu"]["source"] == "kaggle":
        return get_data_dir_files("avazu")
    if experiment == "wpm_movielens":
        return get_data_dir_files("ml-100k")
    if experiment == "wpm_gowalla":
        if config["wpm"]["gowalla"]["source"] == "derived":
            return [get_wpm_gowalla_derived_file()]
        return get_data_dir_files("gowalla")
    return []


def get_missing_raw_files(experiment):
    files = get_raw_files(experiment)
    return [path for path in files if not Path(path).exists()] if files else ["(none)"]


def log_auto_toggles():
    """One line at start-up naming the "auto" experiments that are off, and why."""
    auto = [name for name, toggle in config["experiments"].items() if toggle == "auto"]
    if is_own_data_run():
        if auto and workflow.is_main_process:
            logger.info(
                f"own-data run (events: {', '.join(sorted(config['events']))}): the experiments "
                f"on auto are off ({', '.join(auto)}); set one to true to run it too"
            )
        return
    off = [
        f"{name} (missing {get_missing_raw_files(name)[0]})"
        for name, toggle in config["experiments"].items()
        if toggle == "auto"
        and name not in OFFLINE_EXPERIMENTS
        and get_missing_raw_files(name)
    ]
    if off and workflow.is_main_process:
        logger.info(
            f"data_dir={config['data_dir']}: experiments on auto that are off, their files "
            f"being absent: {', '.join(off)}"
        )


def writes_reproduction_table():
    """Whether the run writes results/reproduction.csv: always, except in an own-data run
    (enabled events tables) that runs no paper experiment, where every row would be 'not
    run'."""
    return not is_own_data_run() or any(
        is_enabled(name) for name in config["experiments"]
    )


def get_final_outputs():
    """Everything `rule all` builds, per enabled experiment (the stages' get_*_outputs are
    defined in their *_common.smk, included after this file)."""
    outputs = []
    if is_enabled("synthetic"):
        outputs += ["results/synthetic/values.parquet", "results/synthetic/figure.png"]
    if is_enabled("theory"):
        outputs += [
            "results/theory/risk.csv",
            "results/theory/risk.png",
            "results/theory/example_1.csv",
        ]
    outputs += get_movielens_outputs()
    outputs += get_avazu_outputs()
    outputs += get_wpm_outputs()
    return outputs


# ---- data locations ------------------------------------------------------------------------
# A dataset's files are read from data_dir when it holds them (read only), else from
# resources/, where the download rule puts them and then writes its marker download.done.
# Paths reach scripts through params, so pointing data_dir elsewhere re-runs what reads them.


def get_download_marker(dataset):
    return f"{DOWNLOAD_DIR}/{REGISTRY.dataset_folder(dataset)}/download.done"


@functools.cache
def _scan_data_dir(dataset):
    """Role -> path of a dataset's files in data_dir, None if any is missing: the one scan of
    data_dir per dataset and parse (_located and get_data_dir_files read it)."""
    try:
        found = REGISTRY.locate_dataset_files(config["data_dir"], dataset)
    except FileNotFoundError:
        return None
    return {role: str(path) for role, path in found.items()}


def _located(dataset):
    """Role -> path of a dataset's files pre-placed in data_dir; None if absent, or if
    data_dir is the download folder and a download finished (its marker stands for them).
    """
    data_dir = Path(config["data_dir"])
    if (
        data_dir.resolve() == Path(DOWNLOAD_DIR).resolve()
        and Path(get_download_marker(dataset)).exists()
    ):
        return None
    found = _scan_data_dir(dataset)
    return None if found is None else dict(found)


def get_dataset_paths(dataset):
    """Role -> path of a dataset's raw files (pre-placed copy, or where the download puts them)."""
    located = _located(dataset)
    if located is not None:
        return located
    folder, roles = REGISTRY.DATASETS[dataset]
    return {
        role: f"{DOWNLOAD_DIR}/{folder}/{names[0]}" for role, names in roles.items()
    }


def get_data_dir_files(dataset):
    """A dataset's files inside data_dir (never resources/): what an "auto" toggle waits for."""
    found = _scan_data_dir(dataset)
    if found is None:
        folder, roles = REGISTRY.DATASETS[dataset]
        return [
            os.path.join(config["data_dir"], folder, names[0])
            for names in roles.values()
        ]
    return sorted(found.values())


def get_dataset_inputs(dataset):
    """Inputs standing for a dataset: its files if pre-placed, else the download's marker.

    The choice must not flip between runs: once downloaded, the marker keeps standing for the
    files (else the input trigger would re-run every job reading them).
    """
    located = _located(dataset)
    if located is not None:
        return sorted(located.values())
    return [get_download_marker(dataset)]


def get_download_source(dataset):
    """url and checksum of a download (config downloads.<dataset>; Avazu: Kaggle CLI)."""
    return dict(sorted(config["downloads"].get(dataset, {}).items()))


def get_wpm_gowalla_derived_file():
    """The derived Gowalla check-ins (wpm.gowalla.derived_file) in data_dir; never downloaded."""
    return os.path.join(config["data_dir"], config["wpm"]["gowalla"]["derived_file"])


log_auto_toggles()
