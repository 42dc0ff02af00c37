"""Which experiments a run runs and where it reads each dataset from
(ldpsample.pipeline.experiment_toggles, ldpsample.datasets.registry.DataLocations): the
helpers workflow/rules/common.smk calls at parse time, on folders made here, and loaded by path
as the workflow loads them (standard library only)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import yaml

from ldpsample.datasets.registry import DATASETS, DataLocations
from ldpsample.pipeline import experiment_toggles as toggles
from ldpsample.pipeline.import_graph import library_closure, script_inputs

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


def _config(data_dir: Path, **experiments) -> dict:
    config = copy.deepcopy(CONFIG)
    config["data_dir"] = str(data_dir)
    config["experiments"] = {**config["experiments"], **experiments}
    return config


def _place(folder: Path, dataset: str) -> list[str]:
    """Every role's first official name of ``dataset`` in ``folder``; their paths, sorted."""
    name, roles = DATASETS[dataset]
    (folder / name).mkdir(parents=True, exist_ok=True)
    paths = []
    for names in roles.values():
        (folder / name / names[0]).write_text("x\n")
        paths.append(str(folder / name / names[0]))
    return sorted(paths)


def test_a_placed_copy_is_read_in_place_and_a_missing_one_from_the_download(tmp_path):
    data = tmp_path / "data"
    placed = _place(data, "ml-100k")
    locations = DataLocations(data, "resources")
    assert locations.dataset_inputs("ml-100k") == placed
    assert sorted(locations.dataset_paths("ml-100k").values()) == placed
    assert locations.data_dir_files("ml-100k") == placed
    # not placed: the download's files and marker stand for it; data_dir's names are waited for
    assert locations.dataset_inputs("ml-1m") == ["resources/ml-1m/download.done"]
    assert locations.dataset_paths("ml-1m") == {
        "ratings": "resources/ml-1m/ratings.dat",
        "movies": "resources/ml-1m/movies.dat",
        "users": "resources/ml-1m/users.dat",
    }
    assert locations.data_dir_files("ml-1m") == [
        str(data / "ml-1m" / name) for name in ("ratings.dat", "movies.dat", "users.dat")
    ]


def test_the_pipelines_own_download_is_not_data_placed_in_data_dir(tmp_path, monkeypatch):
    """data_dir = the download folder: once the download's marker exists, the marker (not the
    files) stands for the dataset, and "auto" does not switch on an experiment reading it."""
    monkeypatch.chdir(tmp_path)
    files = _place(Path("resources"), "ml-100k")
    locations = DataLocations("resources", "resources")
    config = _config(Path("resources"), wpm_movielens="auto")
    assert not locations.is_own_download("ml-100k")
    assert locations.dataset_inputs("ml-100k") == files
    assert toggles.is_enabled(config, "wpm_movielens", locations)
    Path("resources/ml-100k/download.done").write_text("done\n")
    assert locations.is_own_download("ml-100k")
    assert locations.dataset_inputs("ml-100k") == ["resources/ml-100k/download.done"]
    assert not toggles.is_enabled(config, "wpm_movielens", locations)
    assert toggles.auto_off_reason(config, "wpm_movielens", locations) == (
        "resources/ml-100k/download.done marks the pipeline's own download, not data placed "
        "in data_dir: set experiments.wpm_movielens: true to use it"
    )


def test_auto_runs_offline_experiments_and_placed_data_and_says_why_the_others_are_off(tmp_path):
    data = tmp_path / "data"
    _place(data, "ml-100k")
    locations = DataLocations(data, "resources")
    auto = dict.fromkeys(
        ("synthetic", "theory", "movielens", "wpm_ring", "wpm_movielens", "wpm_gowalla"), "auto"
    )
    config = _config(data, **auto, avazu=False)
    config["wpm"]["gowalla"]["source"] = "snap"
    enabled = {name: toggles.is_enabled(config, name, locations) for name in config["experiments"]}
    assert enabled == {
        "synthetic": True,
        "theory": True,
        "wpm_ring": True,
        "wpm_movielens": True,  # its ml-100k is placed
        "movielens": False,  # ml-1m is not
        "wpm_gowalla": False,
        "avazu": False,
    }
    assert toggles.auto_toggles_message(config, locations) == (
        f"data_dir={data}: experiments on auto that are off: movielens (missing "
        f"{data / 'ml-1m' / 'ratings.dat'}), wpm_gowalla (missing "
        f"{data / 'gowalla' / 'loc-gowalla_totalCheckins.txt.gz'})"
    )
    # the derived Gowalla file is waited for in data_dir, never downloaded
    config["wpm"]["gowalla"]["source"] = "derived"
    derived = toggles.gowalla_derived_file(config)
    assert derived == str(data / config["wpm"]["gowalla"]["derived_file"])
    assert toggles.raw_files(config, "wpm_gowalla", locations) == [derived]
    assert toggles.auto_off_reason(config, "synthetic", locations) == (
        "no raw files to wait for (set it to true)"
    )


def test_an_own_data_run_turns_every_auto_experiment_off(tmp_path):
    data = tmp_path / "data"
    _place(data, "ml-100k")
    locations = DataLocations(data, "resources")
    config = _config(data, synthetic="auto", wpm_movielens="auto", theory=True)
    config["experiments"] = {
        name: toggle
        for name, toggle in config["experiments"].items()
        if name in ("synthetic", "wpm_movielens", "theory")
    }
    config["events"] = {"b": {"path": "x"}, "a": {"path": "y", "enabled": False}}
    assert toggles.is_own_data_run(config)
    assert not toggles.is_enabled(config, "synthetic", locations)
    assert not toggles.is_enabled(config, "wpm_movielens", locations)
    assert toggles.is_enabled(config, "theory", locations)  # true stays true
    assert toggles.auto_toggles_message(config, locations) == (
        "own-data run (events: a, b): the experiments on auto are off (synthetic, "
        "wpm_movielens); set one to true to run it too"
    )
    config["events"]["b"]["enabled"] = False
    assert not toggles.is_own_data_run(config)
    assert toggles.is_enabled(config, "synthetic", locations)


LOAD_BY_PATH = """
import importlib.util, json, sys
loaded = []
for name, path in (("t_registry", sys.argv[1]), ("t_toggles", sys.argv[2])):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    loaded.append(module)
registry, toggles = loaded
config = json.loads(sys.argv[3])
locations = registry.DataLocations(config["data_dir"], "resources")
print(json.dumps({
    "enabled": toggles.is_enabled(config, "wpm_movielens", locations),
    "modules": sorted(sys.modules),
}))
"""


def test_the_workflow_loads_both_by_path_without_ldpsample_or_heavy_dependencies(tmp_path):
    data = tmp_path / "data"
    _place(data, "ml-100k")
    library = ROOT / "src" / "ldpsample"
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            LOAD_BY_PATH,
            str(library / "datasets" / "registry.py"),
            str(library / "pipeline" / "experiment_toggles.py"),
            json.dumps(_config(data, wpm_movielens="auto")),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result = json.loads(out)
    assert result["enabled"] is True
    modules = set(result["modules"])
    assert not {m for m in modules if m.split(".")[0] == "ldpsample"}
    assert not modules & {"numpy", "polars", "scipy", "pyarrow", "yaml"}


def test_script_inputs_are_the_import_closure_plus_extra_folders_relative_to_cwd(tmp_path):
    """ldpsample.pipeline.import_graph.script_inputs, what get_script_sources returns: the
    script's library closure, an extra folder's .py and .toml files with their own imports,
    relative to cwd when the library is inside it and absolute otherwise."""
    library = ROOT / "src" / "ldpsample"
    script = ROOT / "scripts" / "theory_risk.py"
    closure = library_closure(library, [script])
    inside = script_inputs(library, script, cwd=ROOT)
    assert inside == sorted(str(path.relative_to(ROOT)) for path in closure)
    assert "src/ldpsample/minimax.py" in inside
    assert script_inputs(library, script, cwd=tmp_path) == sorted(str(p) for p in closure)
    folder = library / "reproduction"
    with_extra = script_inputs(library, script, ("reproduction/",), cwd=ROOT)
    own = sorted(p for p in folder.iterdir() if p.suffix in (".py", ".toml"))
    assert any(p.suffix == ".toml" for p in own)
    expected = {*closure, *own, *library_closure(library, [p for p in own if p.suffix == ".py"])}
    assert with_extra == sorted(str(p.relative_to(ROOT)) for p in expected)
