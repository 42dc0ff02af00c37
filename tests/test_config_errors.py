"""Every config error stops the run before any job, and its first line names the key path and
the bad value (``config error at synthetic.epsilons[0]: -1 must be > 0``). Through Snakemake on a
fresh workflow copy for a schema error and a cross-field error (the console's first line is the
error's first line, nothing is run); every other kind of error through the Snakefile's own check
(common.smk's two calls, on the config as Snakemake loads and merges it, from the workflow's
folder); for every numeric key of the shipped configs (NaN, +inf and -inf, which JSON Schema's
minimum lets through) through the same check function."""

from __future__ import annotations

import copy
import os
import re
import subprocess

import numpy as np
import polars as pl
import pytest
import snakemake_fork
import yaml
from _workflow import ROOT, copy_workflow, job_stats, snakemake, write_config
from hypothesis import example, given
from hypothesis import strategies as st
from snakemake.common.configfile import load_configfile
from snakemake.utils import update_config

from ldpsample.pipeline.config_check import (
    EPSILON_FOLDER_PATTERN,
    ConfigError,
    check_config,
    check_consistency,
    check_epsilon_folder_names,
    epsilon_folder_name,
)

SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
DEFAULT = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
PAPER = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())


def _merged(base: dict, update: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def _numeric_paths(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numeric_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _numeric_paths(item, (*path, index))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path


def _dotted(path) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _with_value(config: dict, path, value) -> dict:
    """A copy of ``config`` with ``value`` at the key ``path``."""
    config = copy.deepcopy(config)
    target = config
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return config


CONFIGS = {"default": DEFAULT, "paper": _merged(DEFAULT, PAPER)}
NUMERIC = [(name, path) for name, c in CONFIGS.items() for path in _numeric_paths(c)]


def test_the_shipped_configs_pass():
    for config in CONFIGS.values():
        check_config(copy.deepcopy(config), SCHEMA)
    check_consistency(_merged(DEFAULT, {"data_dir": str(ROOT)}), download_dir=ROOT / "resources")
    assert len(NUMERIC) > 80  # every numeric key of both configs is exercised below


@pytest.mark.slow
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")], ids=str)
def test_every_numeric_key_rejects_nan_and_inf(bad):
    for name, path in NUMERIC:
        config = _with_value(CONFIGS[name], path, bad)
        with pytest.raises(ConfigError) as info:
            check_config(config, SCHEMA)
        first = str(info.value).splitlines()[0]
        assert first == f"config error at {_dotted(path)}: {bad!r} is not a finite number"


CASES = [
    ({"synthetic": {"epsilons": [-1]}}, "synthetic.epsilons[0]: -1 must be > 0"),
    ({"synthetic": {"epsilons": [8, 0]}}, "synthetic.epsilons[1]: 0 must be > 0"),
    ({"synthetic": {"n": [1]}}, "synthetic.n[0]: 1 must be >= 2"),
    ({"synthetic": {"epsilon": [8]}}, "synthetic.epsilon: unknown key 'epsilon'"),
    ({"unknown_key": 1}, "unknown_key: unknown key 'unknown_key'"),
    ({"theory": {"q_mins": [0.001, 0.5]}}, "theory.q_mins[1]: 0.5 exceeds 1/theory.n"),
    ({"theory": {"example_1": {"epsilon": float("nan")}}}, "theory.example_1.epsilon: nan is"),
    ({"wpm": {"ring": {"alpha": float("inf")}}}, "wpm.ring.alpha: inf is not a finite number"),
    ({"theory": {"epsilon_grid": {"start": 20}}}, "theory.epsilon_grid.start: 20 must be <"),
    ({"experiments": {"movielens": "yes"}}, "experiments.movielens: 'yes' must be a boolean"),
    ({"data_dir": "no/such/folder"}, "data_dir: 'no/such/folder' is not an existing folder"),
    ({"theory": {"divergences": ["js"]}}, "theory.divergences[0]: 'js' must be one of 'tv'"),
    # ε bounds: 1e20 gave a PeriodicWildcardError and "Nothing to be done" (exit 0), 1e-300
    # "File name too long", a WPM ε above ~745 a library error naming no key
    ({"synthetic": {"epsilons": [1.0e20]}}, "synthetic.epsilons[0]: 1e+20 must be <= 700"),
    ({"synthetic": {"epsilons": [1e-300]}}, "synthetic.epsilons[0]: 1e-300 must be >= 1e-100"),
    ({"wpm": {"movielens": {"epsilons": [746]}}}, "wpm.movielens.epsilons[0]: 746 must be <= 700"),
    ({"synthetic": {"n": [10**20]}}, "synthetic.n[0]: 100000000000000000000 does not fit in a 64"),
]


#: What Snakemake prints before it reads the workflow (the profile it uses; a note that
#: --config/--configfile extend config/config.yaml).
SNAKEMAKE_NOTES = ("Using workflow specific profile", "Using profile", "Config file ")


def _console(workdir, *args: str) -> subprocess.CompletedProcess:
    """Run Snakemake as on a terminal: stdout and stderr in one stream, in the order written
    (unbuffered; Snakemake logs to stdout in a dry run, to stderr otherwise)."""
    return snakemake_fork.run(args, cwd=workdir, merge_stderr=True, timeout=600)


def _first_error_line(console: str) -> str:
    """The console's first line after Snakemake's start-up notes: the error's first line (it
    was Snakemake's `WorkflowError in file ".../common.smk", line 65:`)."""
    for line in console.splitlines():
        if line.strip() and not line.startswith(SNAKEMAKE_NOTES):
            return line
    raise AssertionError(console)


#: The CASES run through Snakemake's own start: an error of the schema and one of the
#: cross-field checks (a path read from the working directory). The others go through
#: _snakefile_check_error, the same check on the same config.
THROUGH_SNAKEMAKE = ("synthetic.epsilons[0]: -1 must be > 0", "data_dir: 'no/such/folder' is")
SNAKEMAKE_CASES = [case for case in CASES if case[1].startswith(THROUGH_SNAKEMAKE)]
CHECK_CASES = [case for case in CASES if not case[1].startswith(THROUGH_SNAKEMAKE)]


@pytest.mark.workflow
@pytest.mark.parametrize(
    ("changes", "expected"), SNAKEMAKE_CASES, ids=[c[1].split(":")[0] for c in SNAKEMAKE_CASES]
)
def test_config_error_first_line_names_key_and_value(tmp_path, changes, expected):
    workdir = copy_workflow(tmp_path / "clone")
    overlay = write_config(workdir, "bad", changes)
    proc = _console(workdir, "--cores", "1", "--configfile", overlay)
    assert proc.returncode != 0
    assert _first_error_line(proc.stdout).startswith(f"config error at {expected}")
    assert not (workdir / "results").exists() and not (workdir / "logs").exists()


COMMON_SMK = ROOT / "workflow" / "rules" / "common.smk"
#: What common.smk runs before anything reads the config (whitespace-normalised): the config
#: check package loaded from this checkout's sources, its two checks, the error logged whole.
SNAKEFILE_CHECK = (
    'CONFIG_CHECK = load_library_module("ldpsample_config_check", "pipeline/config_check/")',
    'DOWNLOAD_DIR = "resources"',
    "CONFIG_CHECK.check_config( config, "
    'Path(workflow.basedir) / "workflow/schemas/config.schema.yaml" ) '
    "CONFIG_CHECK.check_consistency(config, download_dir=DOWNLOAD_DIR) "
    "except CONFIG_CHECK.ConfigError as exc: logger.error(str(exc))",
)


def test_the_snakefile_checks_the_config_as_snakefile_check_error_does():
    """_snakefile_check_error stands for Snakemake's start only while common.smk makes the same
    calls: this fails when they change (then change both)."""
    text = " ".join(COMMON_SMK.read_text().split())
    for call in SNAKEFILE_CHECK:
        assert call in text, call


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A folder laid out as a workflow copy for the config check: config/config.yaml (overlays
    are written beside it) and no ../shared/data, as for a fresh copy in a temporary folder."""
    folder = tmp_path_factory.mktemp("config-check") / "clone"
    (folder / "config").mkdir(parents=True)
    (folder / "config" / "config.yaml").write_bytes((ROOT / "config" / "config.yaml").read_bytes())
    return folder


def _snakefile_check_error(workdir, overlay: str) -> str:
    """The error that `snakemake --configfile <overlay>` logs first in ``workdir`` (the console's
    first line is its first line): config/config.yaml then the overlay, each read and merged by
    Snakemake's own functions as Workflow.configfile does, checked by common.smk's two calls
    (SNAKEFILE_CHECK) from the workflow's folder."""
    config: dict = {}
    update_config(config, load_configfile(workdir / "config" / "config.yaml"))
    update_config(config, load_configfile(workdir / overlay))
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        check_config(config, SCHEMA)
        check_consistency(config, download_dir="resources")
    except ConfigError as exc:
        return str(exc)
    finally:
        os.chdir(cwd)
    raise AssertionError(f"{overlay}: no config error")


@pytest.mark.parametrize(
    ("changes", "expected"), CHECK_CASES, ids=[c[1].split(":")[0] for c in CHECK_CASES]
)
def test_config_error_first_line_names_key_and_value_in_the_snakefiles_check(
    project, changes, expected
):
    overlay = write_config(project, "bad", changes)
    first = _snakefile_check_error(project, overlay).splitlines()[0]
    assert first.startswith(f"config error at {expected}")


@pytest.mark.workflow
def test_nested_config_on_the_command_line_is_explained(tmp_path):
    """`--config experiments='{movielens: true}'` makes 'true' a string: the error says so."""
    workdir = copy_workflow(tmp_path / "clone")
    proc = _console(workdir, "--dry-run", "--config", "experiments={movielens: true}")
    first = _first_error_line(proc.stdout)
    assert first.startswith("config error at experiments.movielens: 'true' must be")
    assert "--configfile" in first


@pytest.mark.workflow
def test_auto_experiments_left_off_are_named_in_one_line_and_no_events_job_is_planned(tmp_path):
    """The default config without the data: the experiments on auto that lack it are named in
    one line, and its events: {} plans no events job (the others run)."""
    workdir = copy_workflow(tmp_path / "clone")
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = snakemake(workdir, "--dry-run", "--config", f"data_dir={empty}")
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if "are off" in line]
    assert len(lines) == 1, proc.stdout + proc.stderr
    for name in ("movielens", "avazu", "wpm_movielens", "wpm_gowalla"):
        assert f"{name} (missing {empty}/" in lines[0]
    rules = job_stats(proc.stdout + proc.stderr)
    assert "synthetic_figure" in rules and "all" in rules, rules
    assert not [rule for rule in rules if rule.startswith("events")], rules


EVENTS_ENTRY = {
    "path": "results/events.parquet",
    "epsilons": [1],
    "attributes": ["country"],
    "prior": "user_mean",
}

CROSS_FIELD = [
    ({"downloads": {"ml-1m": {"md5": "a", "sha256": "b"}}}, "downloads.ml-1m: give md5 or"),
    ({"theory": {"q_mins": [0.5]}}, "theory.q_mins[0]: 0.5 exceeds 1/theory.n"),
    ({"theory": {"example_1": {"p": [0.5, 0.6]}}}, "theory.example_1.p: must sum to 1"),
    (
        {"wpm": {"gowalla": {"bbox": {"lon_min": 10, "lon_max": 0}}}},
        "wpm.gowalla.bbox.lon_min: 10 must be < wpm.gowalla.bbox.lon_max (0)",
    ),
    ({"avazu": {"variants": [{"min_users": 100}]}}, "avazu.variants[0]: {'min_users': 100} eq"),
    (
        {"avazu": {"variants": [{"min_users": 7}, {"min_users": 7}]}},
        "avazu.variants[1]: {'min_users': 7} repeats the variant results/avazu/min_users~7",
    ),
    ({"avazu": {"variants": [{"seed": 1}]}}, "avazu.variants[0]: {'seed': 1}: a variant sets"),
    ({"events": {"Bad Name": EVENTS_ENTRY}}, "events.Bad Name: 'Bad Name' is not a valid"),
    (
        {"events": {"t": {**EVENTS_ENTRY, "attributes": ["a", "a"]}}},
        "events.t.attributes: ['a', 'a'] repeats a column",
    ),
    (
        {"events": {"t": {**EVENTS_ENTRY, "path": "no/such.parquet"}}},
        "events.t.path: file not found: 'no/such.parquet'",
    ),
]


@pytest.mark.parametrize(
    ("changes", "expected"), CROSS_FIELD, ids=[c[1].split(":")[0] for c in CROSS_FIELD]
)
def test_cross_field_checks_name_the_key_without_snakemake(changes, expected):
    """The checks a schema cannot express are functions of the config dict (no Snakemake)."""
    config = _merged(DEFAULT, {"data_dir": str(ROOT), **changes})
    with pytest.raises(ConfigError) as info:
        check_consistency(config, download_dir=ROOT / "resources")
    assert str(info.value).startswith(f"config error at {expected}")


#: An events entry with its required keys and an ε list (the schema's defaults fill the rest).
EVENTS_MINIMAL = {
    "path": "results/events.parquet",
    "user": "user_id",
    "item": "item_id",
    "epsilons": [1],
}
CONFIGS_WITH_EVENTS = {**CONFIGS, "events": _merged(DEFAULT, {"events": {"t": EVENTS_MINIMAL}})}


def _epsilon_keys() -> list[tuple[str, tuple]]:
    """Every ε key of the shipped configs and of an events entry (theory.epsilon_grid.num is a
    count) as (config name, key path), the first item of each list: its items share one schema
    definition."""
    keys: dict[tuple[str, str], tuple[str, tuple]] = {}
    for name, config in CONFIGS_WITH_EVENTS.items():
        for path in _numeric_paths(config):
            if "epsilon" in _dotted(path) and path[-1] != "num":
                keys.setdefault((name, re.sub(r"\[\d+\]", "[]", _dotted(path))), (name, path))
    return list(keys.values())


EPSILON_KEYS = _epsilon_keys()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (700, None),
        (1e-100, None),
        (700.5, "700.5 must be <= 700"),
        (746, "746 must be <= 700"),
        (9e-101, "9e-101 must be >= 1e-100"),
        (-1, "-1 must be > 0"),
    ],
    ids=str,
)
def test_every_epsilon_key_is_bounded(value, expected):
    """1e-100 <= ε <= 700 in every ε key (one schema definition): beyond 700, e^-ε leaves the
    normal floats (the WPM and the minimax audit fail near 745); below 1e-100, the folder name
    eps~<ε> grows past 118 characters."""
    assert len({_dotted(path).split("[")[0] for _, path in EPSILON_KEYS}) >= 12
    for name, path in EPSILON_KEYS:
        config = _with_value(CONFIGS_WITH_EVENTS[name], path, value)
        if expected is None:
            check_config(config, SCHEMA)
            continue
        with pytest.raises(ConfigError) as info:
            check_config(config, SCHEMA)
        first = str(info.value).splitlines()[0]
        assert first == f"config error at {_dotted(path)}: {expected}"


@given(st.floats(min_value=1e-100, max_value=700))
@example(1e-100)
@example(float(np.nextafter(1e-100, 1)))
@example(1.2345678901234567e-100)
@example(700.0)
@example(float(np.nextafter(700, 0)))
def test_every_accepted_epsilon_has_a_valid_folder_name(eps):
    """eps~<ε> for every ε the config check accepts: the plain decimal of the eps wildcard,
    read back to the same float, short enough for a file name with its suffixes (released
    eps~<ε>.parquet and its temporary name, 255 bytes at most) and not what Snakemake's
    periodic-wildcard check rejects (1e20's twenty zeros were)."""
    from snakemake.io import PeriodicityDetector

    text = epsilon_folder_name(eps)
    assert re.fullmatch(EPSILON_FOLDER_PATTERN, text) and float(text) == eps
    assert len(text) <= 118
    assert len(f".eps~{text}.parquet.abcdefgh.tmp.parquet".encode()) <= 255
    assert PeriodicityDetector().is_periodic(text) is None
    check_epsilon_folder_names("synthetic.epsilons", [eps])


@pytest.mark.workflow
def test_numbers_in_exponent_form_are_read_as_numbers(tmp_path):
    """YAML 1.1, with which Snakemake loads config files, reads 1e-3 and 1e1 as strings (it wants
    a dot and a signed exponent: 1.0e-3); they were rejected as strings, with a hint to put them
    in a YAML file, where they were. They are read as the numbers the schema expects."""
    workdir = copy_workflow(tmp_path / "clone")
    overlay = workdir / "config" / "exponents.yaml"
    overlay.write_text(
        "experiments: {synthetic: true, theory: false, movielens: false, avazu: false,\n"
        "  wpm_ring: false, wpm_movielens: false, wpm_gowalla: false}\n"
        "synthetic: {n: [20], epsilons: [1e-3, 2.5E1], runs: 2, grid_size: 1e1}\n"
    )
    assert yaml.safe_load(overlay.read_text())["synthetic"]["epsilons"] == ["1e-3", "2.5E1"]
    target = "results/synthetic/values.parquet"
    snakemake(workdir, target, "--cores", "2", "--configfile", "config/exponents.yaml")
    values = pl.read_parquet(workdir / target)
    assert sorted(set(values["epsilon"])) == [0.001, 25.0]
    assert values.height == 2 * 2 * 10 * 4  # ε values x runs x grid_size x (method, divergence)
    assert (workdir / "results/synthetic/parts/n~20/eps~0.001/values.parquet").is_file()


def test_exponent_form_becomes_the_type_the_schema_wants():
    """Integers where the schema wants one (1e6 -> 1000000), floats elsewhere, inside oneOf
    choices too; a string where text is allowed stays text; a quoted plain number stays a
    string, and the error says to write it without quotes."""
    config = _merged(
        DEFAULT,
        {
            "avazu": {"synthetic": {"rows": "1e6", "users": "2E3"}},
            "wpm": {"movielens": {"eta": "1e-2"}, "ring": {"convergence": {"etas": ["5e-2"]}}},
            "theory": {"epsilon_grid": {"stop": "1e1"}},
            "events": {"t": {**EVENTS_MINIMAL, "items": ["1e3", "a"], "epsilons": ["4e0"]}},
        },
    )
    check_config(config, SCHEMA)
    assert config["avazu"]["synthetic"] == {"rows": 1000000, "users": 2000, "sites": None}
    assert type(config["avazu"]["synthetic"]["rows"]) is int
    assert config["wpm"]["movielens"]["eta"] == 0.01
    assert config["wpm"]["ring"]["convergence"]["etas"] == [0.05]
    assert config["theory"]["epsilon_grid"]["stop"] == 10.0
    assert config["events"]["t"]["items"] == ["1e3", "a"]
    assert config["events"]["t"]["epsilons"] == [4.0]
    for changes, expected in [
        ({"synthetic": {"runs": "1.5e0"}}, "synthetic.runs: '1.5e0' must be of type integer"),
        ({"synthetic": {"epsilons": ["8"]}}, "synthetic.epsilons[0]: '8' must be of type number"),
        ({"synthetic": {"epsilons": ["1e999"]}}, "synthetic.epsilons[0]: inf is not a finite"),
    ]:
        with pytest.raises(ConfigError) as info:
            check_config(_merged(DEFAULT, changes), SCHEMA)
        assert str(info.value).startswith(f"config error at {expected}")
        if "type" in expected:
            assert "write the value without quotes" in str(info.value).splitlines()[0]


@pytest.mark.workflow
def test_every_problem_of_an_events_entry_is_listed_in_one_error(tmp_path):
    """An entry with a missing, an unknown and two invalid keys: one run names all four, the
    first on the console's first line (it named one per run: four runs to find them all); then,
    with the schema satisfied, every cross-field problem of a release entry at once (in the
    Snakefile's check, _snakefile_check_error)."""
    workdir = copy_workflow(tmp_path / "clone")
    (workdir / "config/bad.yaml").write_text(
        "events: {mylog: {path: data/log.parquet, item: item_id, colour: red, top_items: 0, "
        "methods: [minimax, laplace]}}\n"
    )
    proc = _console(workdir, "--cores", "1", "--configfile", "config/bad.yaml")
    assert proc.returncode != 0
    first = _first_error_line(proc.stdout)
    assert first.startswith("config error at events.mylog.colour: unknown key 'colour'")
    for line in (
        "config error at events.mylog.methods[1]: 'laplace' must be one of",
        "config error at events.mylog.top_items: 0 must be >= 1",
        "config error at events.mylog.user: missing key 'user'",
    ):
        assert line in proc.stdout, proc.stdout
    assert "... and 3 more:" in proc.stdout
    assert not (workdir / "results").exists()
    (workdir / "config/release.yaml").write_text(
        "events: {pub: {path: data/nope.parquet, user: u, item: i, release: true, "
        "prior: pooled, min_users: 3, top_items: 5}}\n"
    )
    error = _snakefile_check_error(workdir, "config/release.yaml")
    assert error.startswith("config error at events.pub.path: file not found")
    for key in ("prior", "top_items", "min_users"):
        assert f"config error at events.pub.{key}:" in error, error
