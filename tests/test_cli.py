"""The ``ldpsample`` command line as a user runs it: the venv's console script and
``python -m ldpsample`` in subprocesses. ``evaluate`` gives the results of the pipeline run
with the same events entry, byte for byte; ``publish`` runs the pipeline's publish target with
its ledger and budget; ``show`` prints a spec and a ledger; user errors are one line, status 2."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from _publication import make_publication
from _workflow import (
    OTHERS_OFF,
    copy_workflow,
    result_differences,
    result_files,
    snakemake,
    write_config,
)

from ldpsample.cli import SUBCOMMANDS, load_command
from ldpsample.publish import read_spec

SCRIPT = Path(sys.executable).with_name("ldpsample")


def ldpsample(*args: str, cwd: Path | None = None, module: bool = False):
    """Run the console script (or ``python -m ldpsample``) with ``args``."""
    command = [sys.executable, "-m", "ldpsample"] if module else [str(SCRIPT)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [*command, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=1200
    )


def events_table(users: int = 30, seed: int = 0) -> pl.DataFrame:
    """Users with a country, weighted events on six items."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(users):
        for _ in range(rng.integers(2, 9)):
            rows.append(
                (
                    f"u{u:03d}",
                    f"i{rng.integers(0, 6)}",
                    float(rng.integers(1, 4)),
                    ["de", "fr"][u % 2],
                )
            )
    return pl.DataFrame(rows, schema=["user_id", "item_id", "n", "country"], orient="row")


@pytest.mark.parametrize("module", [False, True], ids=["console-script", "python-m"])
def test_help_lists_every_command_with_examples(module):
    top = ldpsample("--help", module=module)
    assert top.returncode == 0, top.stderr
    for name in ("evaluate", "publish", "show"):
        assert name in SUBCOMMANDS and f"\n    {name}" in top.stdout
    for name in ("evaluate", "publish", "show"):
        proc = ldpsample(name, "--help", module=module)
        assert proc.returncode == 0, proc.stderr
        assert "examples:\n  ldpsample " + name in proc.stdout


def test_no_command_prints_the_help_and_an_unknown_one_fails():
    assert ldpsample().returncode == 0
    proc = ldpsample("frobnicate")
    assert proc.returncode == 2 and "invalid choice: 'frobnicate'" in proc.stderr


def test_user_errors_are_one_line_with_status_2(tmp_path):
    missing = ldpsample("evaluate", str(tmp_path / "nope.csv"), "--user", "u", "--item", "i")
    assert missing.returncode == 2
    assert missing.stderr.strip() == (
        f"ldpsample evaluate: error: {tmp_path / 'nope.csv'}: no such file or folder "
        "(the events table)"
    )
    table = tmp_path / "t.csv"
    table.write_text("u,i\n1,a\n")
    no_prior = ldpsample("publish", str(table), "--user", "u", "--item", "i")
    assert no_prior.returncode == 2 and no_prior.stderr.startswith(
        "ldpsample publish: error: --prior is required"
    )
    bad_name = ldpsample("evaluate", str(table), "--user", "u", "--item", "i", "--name", "A B")
    assert bad_name.returncode == 2 and "--name 'A B'" in bad_name.stderr
    nowhere = ldpsample(
        "evaluate", str(table), "--user", "u", "--item", "i", "--workflow", str(tmp_path)
    )
    assert nowhere.returncode == 2 and nowhere.stderr.startswith(
        f"ldpsample evaluate: error: {tmp_path}: no ldpsample workflow here"
    )
    shown = ldpsample("show", str(table))
    assert shown.returncode == 2 and "neither a release spec" in shown.stderr
    assert "Traceback" not in missing.stderr + no_prior.stderr + shown.stderr


#: ``ldpsample <arguments>`` in a fresh interpreter where the packages named (comma-separated) in
#: the first argument cannot be imported, as in an install that lacks them; its last line of
#: stdout is the exit status and the command modules the run imported, as JSON.
WITHOUT_PACKAGES = """
import json, sys
absent = set(sys.argv[1].split(","))


class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in absent:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, Absent())
from ldpsample.cli import main

try:
    status = main(sys.argv[2:])
except SystemExit as done:
    status = done.code
loaded = sorted(m for m in sys.modules if m.startswith("ldpsample.cli.commands."))
extras = sorted(m for m in sys.modules if m.split(".")[0] in {"polars", "matplotlib"})
print(json.dumps({"status": status, "commands": loaded, "extras": extras}))
"""


def ldpsample_without(packages: str, *args: str):
    """Run ``ldpsample args`` without ``packages``; return (process, its JSON summary)."""
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_PACKAGES, packages, *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    return proc, summary


def test_every_sub_command_has_a_parser_module_and_a_command_module():
    for name in SUBCOMMANDS:
        parser = importlib.import_module(f"ldpsample.cli.{name}")
        assert callable(parser.add_parser) and not hasattr(parser, "run"), name
        assert callable(load_command(name).run), name


def test_help_imports_no_command_module_and_no_extra():
    """``--help`` of the command and of each sub-command builds every parser without importing
    a command module, so it runs where polars and matplotlib are absent, and imports neither
    where they are present (a run that does import them: the ``show`` and ``estimate`` tests
    below)."""
    for absent in ("polars,matplotlib,pyarrow,pandas", "ldpsample_none"):
        for args in (["--help"], *([name, "--help"] for name in SUBCOMMANDS)):
            proc, summary = ldpsample_without(absent, *args)
            assert summary == {"status": 0, "commands": [], "extras": []}, (args, proc.stderr)
            assert "usage: ldpsample" in proc.stdout


@pytest.fixture(scope="module")
def publication(tmp_path_factory):
    """A publish/ folder (spec and draws) and the project's ledger that recorded it."""
    folder = tmp_path_factory.mktemp("cli-publication")
    publish, _, roster = make_publication(folder, users=40)
    return publish, folder / "privacy" / "ledger.sqlite", roster


def test_show_runs_a_spec_without_the_extras_and_a_ledger_needs_the_events_extra(publication):
    """The core install's ``show``: a spec imports only the spec view and no extra; a ledger's
    view needs polars, so without it the command says which extra in one line (status 2), and
    with it prints the ledger."""
    publish, ledger, roster = publication
    spec, summary = ldpsample_without(
        "polars,matplotlib,pyarrow,pandas", "show", str(publish / "spec")
    )
    assert summary == {"status": 0, "commands": ["ldpsample.cli.commands.show"], "extras": []}
    assert "release spec 't'" in spec.stdout and "country=de (8 items)" in spec.stdout

    core, summary = ldpsample_without("polars", "show", str(ledger))
    assert summary == {"status": 2, "commands": ["ldpsample.cli.commands.show"], "extras": []}
    assert core.stderr.splitlines() == [
        f"ldpsample show: error: {ledger}: showing a ledger needs the events extra "
        "(pip install 'ldpsample[events]'): No module named 'polars'"
    ]

    full, summary = ldpsample_without("ldpsample_none", "show", str(ledger), "--top", "2")
    assert summary["status"] == 0 and summary["commands"] == [
        "ldpsample.cli.commands.show",
        "ldpsample.cli.commands.show_ledger",
    ]
    assert "1 releases" in full.stdout and f"{len(roster)} users" in full.stdout
    assert "the 2 users with the most epsilon spent:" in full.stdout


def test_estimate_without_a_figure_needs_no_matplotlib(publication, tmp_path):
    """``estimate`` imports the figure's module (matplotlib) only for ``--figure``: the table
    and tests are written without matplotlib, and equal the run with it."""
    publish, _, _ = publication
    plain, summary = ldpsample_without(
        "matplotlib", "estimate", str(publish), "--out", str(tmp_path / "a.csv")
    )
    assert summary["status"] == 0, plain.stderr
    assert summary["commands"] == ["ldpsample.cli.commands.estimate"]
    assert "polars" in summary["extras"]  # the summary sees what a run imports
    drawn, summary = ldpsample_without(
        "ldpsample_none", "estimate", str(publish), "--out", str(tmp_path / "b.csv"),
        "--figure", str(tmp_path / "b.png"),
    )  # fmt: skip
    assert summary["status"] == 0, drawn.stderr
    assert summary["commands"] == [
        "ldpsample.cli.commands.estimate",
        "ldpsample.cli.commands.estimate_figure",
    ]
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert (tmp_path / "b.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_print_config_is_the_overlay_a_user_would_write(tmp_path):
    """Only the keys given, the name from the file's name, the path made absolute, 1 an
    integer as in a YAML file."""
    table = tmp_path / "My Clicks.csv"
    events_table().write_csv(table)
    proc = ldpsample(
        "evaluate", "My Clicks.csv", "--user", "user_id", "--item", "item_id", "--count", "n",
        "--attributes", "country", "--epsilons", "1", "0.5", "--top-items", "all",
        "--prior", "uniform", "--print-config", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    import yaml

    assert yaml.safe_load(proc.stdout) == {
        "events": {
            "my-clicks": {
                "path": str(table),
                "user": "user_id",
                "item": "item_id",
                "count": "n",
                "attributes": ["country"],
                "prior": "uniform",
                "top_items": None,
                "epsilons": [1, 0.5],
            }
        }
    }


@pytest.mark.workflow
def test_evaluate_equals_the_pipeline_run_with_the_same_entry(tmp_path):
    """The command's results/ equal a Snakemake run of a config file holding the entry a user
    would write (docs/own-data.md), every file byte for byte (parquet by content)."""
    table = tmp_path / "clicks.parquet"
    events_table().write_parquet(table)
    by_cli = copy_workflow(tmp_path / "cli")
    proc = ldpsample(
        "evaluate", str(table), "--user", "user_id", "--item", "item_id", "--count", "n",
        "--attributes", "country", "--prior", "user_mean", "--epsilons", "1", "4",
        "--methods", "minimax", "randomized_response", "-c", "2",
        "--workflow", str(by_cli),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"results: {by_cli / 'results/events/clicks'}" in proc.stderr
    by_config = copy_workflow(tmp_path / "config")
    entry = {
        "path": str(table),
        "user": "user_id",
        "item": "item_id",
        "count": "n",
        "attributes": ["country"],
        "prior": "user_mean",
        "epsilons": [1, 4],
        "methods": ["minimax", "randomized_response"],
    }
    config = write_config(by_config, "mine", {**OTHERS_OFF, "events": {"clicks": entry}})
    snakemake(by_config, "-c2", "--configfile", config)
    assert "results/events/clicks/summary.csv" in result_files(by_cli)
    assert result_differences(by_cli, by_config) == []
    # a second call has nothing to do (same params, same outputs)
    again = ldpsample(
        "evaluate", str(table), "--user", "user_id", "--item", "item_id", "--count", "n",
        "--attributes", "country", "--prior", "user_mean", "--epsilons", "1", "4",
        "--methods", "minimax", "randomized_response", "--dry-run", "--workflow", str(by_cli),
    )  # fmt: skip
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.workflow
def test_evaluate_reports_the_pipelines_config_error_naming_the_key(tmp_path):
    table = tmp_path / "clicks.csv"
    events_table().write_csv(table)
    wd = copy_workflow(tmp_path / "wf")
    proc = ldpsample(
        "evaluate", str(table), "--user", "user_id", "--item", "item_id", "--epsilons", "0",
        "--workflow", str(wd),
    )  # fmt: skip
    assert proc.returncode == 2
    assert "events.clicks.epsilons" in proc.stdout + proc.stderr
    assert proc.stderr.rstrip().endswith(
        "ldpsample evaluate: error: Snakemake failed (exit status 1): its log is above"
    )


@pytest.mark.workflow
def test_publish_runs_the_pipelines_target_with_ledger_and_budget_then_show(tmp_path):
    """A release through the command: the publish target's files, a ledger that refuses a
    second run past the budget, and ``show`` on the spec and the ledger."""
    table = tmp_path / "clicks.csv"
    events = events_table(users=12, seed=3)
    events.write_csv(table)
    wd = copy_workflow(tmp_path / "wf")
    publish = (
        "publish", str(table), "--user", "user_id", "--item", "item_id", "--count", "n",
        "--attributes", "country", "--subcategories", "country=de,fr", "--prior", "uniform",
        "--items", "i0", "i1", "i2", "i3", "i4", "i5", "--epsilons", "1", "2", "--budget", "7",
        "--workflow", str(wd),
    )  # fmt: skip
    first = ldpsample(*publish)
    assert first.returncode == 0, first.stdout + first.stderr
    base = wd / "results/events/clicks"
    released = json.loads((base / "publish/release.json").read_text())
    assert released["spec"]["sha256"] and released["publishable"]
    draws = pl.concat(
        pl.read_parquet(p) for p in sorted((base / "publish/released").glob("*.parquet"))
    )
    # hidden membership: every user in both countries at both ε
    assert draws.height == events["user_id"].n_unique() * 2 * 2
    spec = read_spec(base / "publish/spec")
    assert spec.budget_bound == 2 * (1 + 2)  # subcategories x Σε x samples
    ledger = pl.read_csv(base / "ledger.csv")
    assert ledger["total_epsilon"].to_list() == [6.0] * events["user_id"].n_unique()

    # the same command again has nothing to do (no second spend)
    again = ldpsample(*publish)
    assert again.returncode == 0, again.stdout + again.stderr
    assert (
        pl.read_csv(base / "ledger.csv")["total_epsilon"].to_list()
        == ledger["total_epsilon"].to_list()
    )
    # a changed budget re-runs the release: the same users would spend 12 > 8, refused before
    # any draw, and the published folder is the first release's
    (base / "publish").rename(base / "publish.first")
    second = ldpsample(*publish[:-4], "--budget", "8", *publish[-2:])
    assert second.returncode == 2
    assert "budget" in second.stdout + second.stderr
    assert "nothing new was published" in second.stderr
    assert not (base / "publish").exists()

    shown = ldpsample("show", str(base / "publish.first/spec"), "--items", "2")
    assert shown.returncode == 0, shown.stderr
    assert "release spec 'clicks'" in shown.stdout
    assert "cost per run:   6.0 epsilon per user" in shown.stdout
    assert "country=de (6 items)" in shown.stdout and "... and 4 more items" in shown.stdout
    ledger_file = wd / "privacy/ledger.sqlite"
    shown = ldpsample("show", str(ledger_file), "--top", "3")
    assert shown.returncode == 0, shown.stderr
    assert "1 releases" in shown.stdout and released["release_id"] in shown.stdout
    assert f"{events['user_id'].n_unique()} users" in shown.stdout
    assert "total epsilon per user: min 6.0, max 6.0" in shown.stdout


def test_the_release_mode_flags_reach_the_overlay(tmp_path):
    """--release-mode and --subcategory-shares write the config keys a user would write; a
    malformed weight is a usage error naming it."""
    table = tmp_path / "clicks.csv"
    events_table().write_csv(table)
    base = ("publish", str(table), "--user", "user_id", "--item", "item_id", "--prior", "uniform")
    proc = ldpsample(
        *base, "--release-mode", "joint", "--subcategory-shares", "country=de:1,fr:3",
        "--print-config",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    import yaml

    entry = yaml.safe_load(proc.stdout)["events"]["clicks"]
    assert entry["release_mode"] == "joint"
    assert entry["subcategory_shares"] == {"country": {"de": 1.0, "fr": 3.0}}
    uniform = ldpsample(*base, "--subcategory-shares", "uniform", "--print-config")
    assert yaml.safe_load(uniform.stdout)["events"]["clicks"]["subcategory_shares"] == "uniform"
    bad = ldpsample(*base, "--subcategory-shares", "country=de", "--print-config")
    assert bad.returncode == 2
    assert "'de' in 'country=de' is not SUBCATEGORY:WEIGHT" in bad.stderr


@pytest.mark.workflow
def test_publish_a_joint_release_through_the_command(tmp_path):
    """``--release-mode joint``: one draw per user and ε on the (country, item) domain under
    the listed shares, the spec recording both, the ledger charging Σε per attribute (not per
    subcategory)."""
    table = tmp_path / "clicks.csv"
    events = events_table(users=12, seed=3)
    events.write_csv(table)
    wd = copy_workflow(tmp_path / "wf")
    proc = ldpsample(
        "publish", str(table), "--user", "user_id", "--item", "item_id", "--count", "n",
        "--attributes", "country", "--subcategories", "country=de,fr", "--prior", "uniform",
        "--items", "i0", "i1", "i2", "i3", "i4", "i5", "--epsilons", "1", "2", "--budget", "3",
        "--release-mode", "joint", "--subcategory-shares", "country=de:1,fr:3",
        "--workflow", str(wd),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    base = wd / "results/events/clicks"
    spec = read_spec(base / "publish/spec")
    assert spec.release_mode == "joint"
    assert spec.shares == {"country": {"de": 0.25, "fr": 0.75}}
    assert spec.budget_bound == 1 + 2  # attributes x Σε x samples
    draws = pl.concat(
        pl.read_parquet(p) for p in sorted((base / "publish/released").glob("*.parquet"))
    )
    users = events["user_id"].n_unique()
    assert draws.height == users * 2  # one (country, item) per user and ε
    assert set(draws["subcategory"]) <= {"de", "fr"}
    assert pl.read_csv(base / "ledger.csv")["total_epsilon"].to_list() == [3.0] * users
