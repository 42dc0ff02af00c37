"""The ``ldpsample`` command line as a user runs it: the venv's console script and
``python -m ldpsample`` in subprocesses. ``evaluate`` gives the results of the pipeline run
with the same events entry, byte for byte; ``publish`` runs the pipeline's publish target with
its ledger and budget; ``show`` prints a spec and a ledger; user errors are one line, status 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from _workflow import (
    OTHERS_OFF,
    copy_workflow,
    result_differences,
    result_files,
    snakemake,
    write_config,
)

from ldpsample.cli import SUBCOMMANDS
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
