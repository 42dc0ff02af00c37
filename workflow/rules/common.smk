# Helpers shared by every stage (config access, path formatting, final targets).
import os
import sys
from pathlib import Path

import numpy as np

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


wildcard_constraints:
    n=r"[0-9]+",
    eps=r"[0-9]+(\.[0-9]+)?",


def format_epsilon(value):
    """Folder-safe, reversible text for an epsilon: 8.0 -> "8", 0.5 -> "0.5"."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def get_library_sources(*modules):
    """Library modules a rule's result depends on, as inputs: editing one re-runs the rule.

    (A script rule's code trigger sees only the script, not the library it imports.)
    """
    return sorted(str(LIBRARY / module) for module in modules)


def is_enabled(experiment):
    """Whether an experiment runs: true/false from config, "auto" if its raw data is present."""
    toggle = config["experiments"].get(experiment, False)
    if toggle == "auto":
        files = get_raw_files(experiment)
        return bool(files) and all(Path(path).exists() for path in files)
    return bool(toggle)


def get_raw_files(experiment):
    """Raw files an experiment needs inside data_dir (used by the "auto" toggle)."""
    return RAW_FILES.get(experiment, [])


# Raw files (relative to data_dir) each real-data experiment needs, for the "auto" toggle.
RAW_FILES = {}


def check_config_consistency():
    """Cross-field checks a JSON schema cannot express; each error names the key."""
    theory = config["theory"]
    grid = theory["epsilon_grid"]
    if grid["start"] >= grid["stop"]:
        raise ValueError(
            f"config key theory.epsilon_grid: start ({grid['start']!r}) must be < stop ({grid['stop']!r})"
        )
    for q_min in theory["q_mins"]:
        if q_min > 1 / theory["n"]:
            raise ValueError(
                f"config key theory.q_mins: {q_min!r} exceeds 1/theory.n = {1 / theory['n']!r}"
            )
    example = theory["example_1"]
    if len(example["q"]) != len(example["p"]):
        raise ValueError(
            "config keys theory.example_1.q and .p must have the same length"
        )
    for key in ("q", "p"):
        if abs(sum(example[key]) - 1) > 1e-9:
            raise ValueError(
                f"config key theory.example_1.{key} must sum to 1, got {sum(example[key])!r}"
            )


check_config_consistency()


def get_synthetic_parts():
    return expand(
        "results/synthetic/parts/n~{n}/eps~{eps}/values.parquet",
        n=sorted(config["synthetic"]["n"]),
        eps=sorted(format_epsilon(e) for e in config["synthetic"]["epsilons"]),
    )


def get_theory_epsilons():
    grid = config["theory"]["epsilon_grid"]
    return [float(e) for e in np.linspace(grid["start"], grid["stop"], grid["num"])]


def get_final_outputs():
    """Everything `rule all` builds, per enabled experiment."""
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


# ---- download / data_dir helpers (issue 4) -------------------------------------------------
# A dataset's files are read from data_dir when it holds them (read only), else from
# resources/ (where the download rules put them). Paths reach scripts through params, so
# pointing data_dir elsewhere re-runs what reads the data.

sys.path.insert(0, str(SOURCE))
from ldpsample.datasets.download import DATASETS, locate_dataset_files  # noqa: E402

DOWNLOAD_DIR = "resources"


def _located(dataset):
    for root in dict.fromkeys([config["data_dir"], DOWNLOAD_DIR]):
        try:
            return {
                role: str(path)
                for role, path in locate_dataset_files(root, dataset).items()
            }
        except FileNotFoundError:
            continue
    return None


def get_dataset_paths(dataset):
    """Role -> path of a dataset's raw files (pre-placed copy, or where the download puts them)."""
    located = _located(dataset)
    if located is not None:
        return located
    folder, roles = DATASETS[dataset]
    return {
        role: f"{DOWNLOAD_DIR}/{folder}/{names[0]}" for role, names in roles.items()
    }


def get_dataset_inputs(dataset):
    """Inputs standing for a dataset: its files if present, else the download rule's marker."""
    located = _located(dataset)
    if located is not None:
        return sorted(located.values())
    return [f"{DOWNLOAD_DIR}/{DATASETS[dataset][0]}/download.done"]


# ---- MovieLens helpers (issue 4) -----------------------------------------------------------


def get_movielens_outputs():
    return []


# ---- Avazu helpers (issue 4) ---------------------------------------------------------------


def get_avazu_outputs():
    return []


# ---- WPM helpers (issue 6) -----------------------------------------------------------------


def get_wpm_outputs():
    return []
