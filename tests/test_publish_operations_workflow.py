"""What an operator does cannot break a publication, run through Snakemake on copies of the
project: a seeded release then a secure one (publish/ holds only the secure one, whole),
a renamed entry and a changed ``ledger:`` (the spend follows the users), ``--rerun-triggers
mtime`` after a library edit (the budget is read live), kill -9 of the publish job at several
points (the ledger counts every draw on disk after each, the next run cleans up), the events
table as its own prior (refused), a spec reused without its old entry and from another folder,
and private files 0600.

Each run asks for what ``ldpsample publish`` asks for (the publish job's outputs). The tests that
go on from one secure release of entry ``t`` (rename, mtime, kill, reused spec) continue in their
own copy of one finished project, Snakemake's state ``.snakemake/`` included, as an operator
continues in theirs; the file-mode test reads that project itself."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import textwrap
from pathlib import Path

import polars as pl
import pytest
from _workflow import OTHERS_OFF, continue_in_copy, copy_workflow, snakemake, write_config
from test_publish_workflow import PUBLIC_PRIOR, entry, events_table, public_table

from ldpsample.cli.commands.publish import publish_targets
from ldpsample.publish import Ledger
from ldpsample.publish.ledger import REGISTRY

pytestmark = pytest.mark.workflow

#: One release of entry() costs every user 5 subcategories × (1 + 4) = 25.
COST = 25.0


def new_project(folder):
    """A fresh copy of the project with the tests' events and public tables in data/."""
    wd = copy_workflow(folder / "wf")
    (wd / "data").mkdir()
    events_table().write_parquet(wd / "data/events.parquet")
    public_table().write_parquet(wd / "data/public.parquet")
    return wd


@pytest.fixture
def wd(tmp_path):
    return new_project(tmp_path)


def run(wd, events, *args, check=True, name="run", also=()):
    """Run Snakemake with the entries ``events`` for every entry's publish outputs (the targets
    of ``ldpsample publish``) and the files ``also``."""
    targets = [path for key in events for path in publish_targets(wd, key, None)]
    config = write_config(wd, name, {**OTHERS_OFF, "events": events})
    return snakemake(wd, "-c2", *targets, *also, "--configfile", config, *args, check=check)


def secure(**changes):
    return entry(release_seed=None, **changes)


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """A project after one secure release of entry ``t`` (no budget), with its evaluation's
    per-user table: read it, never change it (continue in :func:`continued`)."""
    wd = new_project(tmp_path_factory.mktemp("released"))
    run(wd, {"t": secure()}, also=["results/events/t/per_user.parquet"])
    return wd


@pytest.fixture
def continued(released, tmp_path):
    """A copy of :func:`released` to go on from: results, ledger and ``.snakemake/`` with
    their times, and the project's list of ledgers (``privacy/ledgers.json``, absolute paths)
    naming the copy's own ledger, as if the release had been made in the copy."""
    wd = continue_in_copy(released, tmp_path / "wf")
    assert Path(json.loads((wd / REGISTRY).read_text())[0]).is_relative_to(wd.resolve())
    return wd


def spent(wd, ledger="privacy/ledger.sqlite", population="default"):
    """Every user's total ε in the ledger (sorted by user)."""
    return Ledger(wd / ledger).totals(population=population)["total_epsilon"].to_list()


def check_whole(folder):
    """The published folder is one release: exactly the files release.json lists (and the
    README), each with its sha256."""
    index = json.loads((folder / "release.json").read_text())
    files = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
    listed = set(index["files"]) | set(index["spec"]["files"])
    assert files == listed | {"release.json", "README.md"}, files
    for path, sha in {**{k: v["sha256"] for k, v in index["files"].items()}}.items():
        assert hashlib.sha256((folder / path).read_bytes()).hexdigest() == sha
    return index


def test_a_seeded_release_then_a_secure_one_leaves_publish_holding_only_the_secure_one(wd):
    run(wd, {"t": entry(epsilons=[1, 4])})
    base = wd / "results/events/t"
    assert not (base / "publish").exists()
    seeded = check_whole(base / "reproducible_not_for_publication")
    assert seeded["publishable"] is False
    run(wd, {"t": secure(epsilons=[1, 2])})
    index = check_whole(base / "publish")
    assert index["publishable"] is True
    assert sorted(index["files"]) == ["released/eps~1.parquet", "released/eps~2.parquet"]
    assert not (base / "publish/released/eps~4.parquet").exists()
    manifest = json.loads((base / "publish/spec/manifest.json").read_text())
    assert manifest["randomness"]["publishable"] is True


def test_renaming_the_entry_or_changing_the_ledger_does_not_reset_the_spend(continued):
    wd = continued
    assert set(spent(wd)) == {COST}  # entry t released once
    # the same users under a new name (now with a budget): the project ledger still holds their 25
    proc = run(wd, {"renamed": secure(budget=30)}, check=False)
    assert proc.returncode != 0
    log = (wd / "logs/events_budget/renamed.log").read_text()
    assert "config key events.renamed.budget: 30 would be exceeded" in log
    assert "has spent 25.0" in log and set(spent(wd)) == {COST}
    # another ledger file: refused, since the users hold spend in the project's ledger
    proc = run(wd, {"moved": secure(budget=60, ledger="elsewhere/other.sqlite")}, check=False)
    assert proc.returncode != 0
    log = (wd / "logs/events_publish/moved.log").read_text()
    assert "config key events.moved.ledger: 40 of the 40 users of population 'default'" in log
    assert "privacy/ledger.sqlite" in log and set(spent(wd)) == {COST}
    assert not (wd / "results/events/moved/publish").exists()


def test_with_mtime_triggers_a_rerun_after_a_library_edit_checks_the_current_budget(continued):
    wd = continued  # entry t released once, with no budget
    assert set(spent(wd)) == {COST}
    before = (wd / "results/events/t/publish/release.json").read_text()
    # a module the publish job imports and the budget gate does not (the accuracy plan): the
    # gate stays as it was, and only the publish job's own check can refuse
    library = wd / "src/ldpsample/estimate/plan.py"
    library.write_text(library.read_text() + "\n# an edit\n")
    proc = run(wd, {"t": secure(budget=30)}, "--rerun-triggers", "mtime", check=False)
    assert proc.returncode != 0
    log = (wd / "logs/events_publish/t.log").read_text()
    assert "config key events.t.budget: 30 would be exceeded" in log
    assert set(spent(wd)) == {COST}
    assert (wd / "results/events/t/publish/release.json").read_text() == before


KILLER = """
import os, signal
point = os.environ.get("LDPSAMPLE_TEST_KILL_AT")
if point:
    import ldpsample.publish.publication as publication

    def _kill(name, _point=point):
        if name == _point:
            os.kill(os.getpid(), signal.SIGKILL)

    publication._checkpoint = _kill
"""


def test_kill_9_of_the_publish_job_at_each_point_leaves_every_draw_on_disk_counted(
    continued, tmp_path, monkeypatch
):
    wd = continued  # entry t released once
    base = wd / "results/events/t"
    first = check_whole(base / "publish")
    assert set(spent(wd)) == {COST}
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(textwrap.dedent(KILLER))
    monkeypatch.setenv("PYTHONPATH", str(hooks))
    points = ["recorded", "drawn", "staged", "swapping"]
    for k, point in enumerate(points, start=2):
        monkeypatch.setenv("LDPSAMPLE_TEST_KILL_AT", point)
        proc = run(wd, {"t": secure()}, "-R", "events_publish", check=False)
        assert proc.returncode != 0, point
        # the killed release is counted, whatever it left on disk
        assert set(spent(wd)) == {k * COST}, point
        releases = Ledger(wd / "privacy/ledger.sqlite").releases()
        assert releases.height == k
        # publish/ is the first release whole, or (killed between the two renames) absent
        if (base / "publish").exists():
            assert check_whole(base / "publish")["release_id"] == first["release_id"]
        else:
            assert point == "swapping"
        # the new release's files exist only beside publish/ (from "staged" on): counted above
        leftovers = list(base.glob(".publish.*"))
        assert bool(leftovers) == (point in ("staged", "swapping")), point
    monkeypatch.delenv("LDPSAMPLE_TEST_KILL_AT")
    run(wd, {"t": secure()}, "-R", "events_publish")
    assert not list(base.glob(".publish.*"))  # the next run cleans up
    last = check_whole(base / "publish")
    assert set(spent(wd)) == {(len(points) + 2) * COST}
    releases = Ledger(wd / "privacy/ledger.sqlite").releases()
    assert releases.height == len(points) + 2 and last["release_id"] in releases["release_id"]


@pytest.fixture(scope="module")
def unreleased(tmp_path_factory):
    """A project in which nothing is ever released (the refusals' tests share it)."""
    return new_project(tmp_path_factory.mktemp("unreleased"))


@pytest.mark.parametrize("how", ["same path", "a copy"])
def test_the_events_table_as_its_own_prior_is_refused(unreleased, how):
    wd = unreleased
    path = "data/events.parquet"
    if how == "a copy":
        (wd / "data/copy.parquet").write_bytes((wd / path).read_bytes())
        path = "data/copy.parquet"
    proc = run(wd, {"t": secure(prior={**PUBLIC_PRIOR, "path": path})}, check=False)
    assert proc.returncode != 0
    log = (wd / "logs/events_spec/t.log").read_text()
    assert "config key events.t.prior.path:" in log and "events table's file" in log
    assert not (wd / "privacy/ledger.sqlite").exists()
    assert not (wd / "results/events/t/publish").exists()


def test_a_reused_spec_runs_without_the_old_entry_from_any_folder_and_shares_the_ledger(
    continued, tmp_path
):
    wd = continued  # entry t released once: every old user has spent 25
    spec = "results/events/t/publish/spec"
    # a month later: only new entries in the config, new users, the old spec from the project
    # and (copied outside the project) from an operator's folder
    later = events_table(users=10, seed=5).with_columns(pl.col("user_id").str.replace("u", "v"))
    later.write_parquet(wd / "data/later.parquet")
    outside = tmp_path / "operator-home/specs/ml1m"
    outside.mkdir(parents=True)
    for name in ("domain.csv", "manifest.json"):
        (outside / name).write_bytes((wd / spec / name).read_bytes())
    reuse = dict(path="data/later.parquet")
    run(
        wd,
        {
            "later": secure(prior={"spec": spec}, **reuse),
            "copied": secure(prior={"spec": str(outside)}, **reuse),
        },
    )
    base = wd / "results/events/later/publish"
    assert (base / "spec/domain.csv").read_bytes() == (wd / spec / "domain.csv").read_bytes()
    manifest = json.loads((base / "spec/manifest.json").read_text())
    assert manifest["population"] == "default" and manifest["provenance"]["prior"]["path"] == spec
    # the spec copied outside the project: no operator path in the manifest
    text = (wd / "results/events/copied/publish/spec/manifest.json").read_text()
    assert str(tmp_path) not in text and '"path": "specs/ml1m"' in text
    # the same old users again under the reused spec share the old entry's spend: 25 + 25 > 30
    proc = run(wd, {"again": secure(prior={"spec": spec}, budget=30)}, check=False)
    assert proc.returncode != 0
    assert "would be exceeded" in (wd / "logs/events_budget/again.log").read_text()


def test_private_files_are_0600_in_0700_folders(released):
    wd = released
    base = wd / "results/events/t"
    mode = lambda p: stat.S_IMODE(os.stat(p).st_mode)  # noqa: E731
    for private in (
        wd / "privacy/ledger.sqlite",
        base / "ledger.csv",
        base / "release_report.csv",
        base / "per_user.parquet",
        base / "work/roster.parquet",
        *base.glob("work/attribute~*/histograms.parquet"),
    ):
        assert mode(private) == 0o600, private
    assert mode(wd / "privacy") == 0o700 and mode(base / "work") == 0o700
    assert all(mode(p) == 0o700 for p in base.glob("work/attribute~*"))
    assert mode(base / "publish/released/eps~1.parquet") & 0o044  # the publication is readable
