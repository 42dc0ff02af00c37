"""Publishing a release through Snakemake, as a user does it (events.<name>.release: true), in a
temporary copy of the project: what publish/ holds and nothing else, a data-derived prior or
filter refused before any job, a spec that does not move when private users change, draws that
do not move when other users go, hidden membership, the persistent ledger adding up every draw
across runs and refusing past the budget (also after results/ is deleted), secret randomness,
the black-box privacy test passing at ε and failing at 3ε, the one-user attack, and refusals
that leave no release.

The scenarios share Snakemake runs: one run of a config holding every scenario's release (each
its own entry and population) and one that adds a reused spec; the operator's next run (results/
deleted, the events table changed) in a copy of that project; one run of every refused entry.
Sequences that go on from there (the budget refusal) and the broken kernel run in copies of
their own. Each run asks for the files its tests read.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from _workflow import (
    OTHERS_OFF,
    ROOT,
    continue_in_copy,
    copy_workflow,
    events_entry,
    need_shared_data,
    result_files,
    snakemake,
    write_config,
)

from ldpsample import epsilon_lower_bound, minimax_kernel, tv_distance
from ldpsample.estimate import accuracy_plan, plan_summary
from ldpsample.publish import read_spec

pytestmark = pytest.mark.workflow

COUNTRIES, DEVICES, ITEMS = ["de", "fr", "it"], ["phone", "tablet"], [f"i{k}" for k in range(6)]
PUBLIC_PRIOR = dict(
    path="data/public.parquet",
    user="user_id",
    item="item_id",
    count="n",
    attributes=["country", "device"],
)


def events_table(users=40, seed=0):
    """Users with a country, both devices, weighted item events."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(users):
        country = COUNTRIES[u % 3]
        for device in DEVICES:
            for _ in range(rng.integers(2, 9)):
                rows.append(
                    (
                        f"u{u:03d}",
                        ITEMS[rng.integers(0, 6)],
                        float(rng.integers(1, 4)),
                        country,
                        device,
                    )
                )
    return pl.DataFrame(rows, schema=["user_id", "item_id", "n", "country", "device"], orient="row")


def public_table():
    """An independent, public sample: every item in every subcategory, with other masses."""
    rows = [
        (f"p{k}", item, float(1 + (k + j) % 5), country, device)
        for k, (country, device) in enumerate((c, d) for c in COUNTRIES for d in DEVICES)
        for j, item in enumerate(ITEMS)
    ]
    return pl.DataFrame(rows, schema=["user_id", "item_id", "n", "country", "device"], orient="row")


def entry(path="data/events.parquet", **changes):
    return events_entry(
        path,
        **{
            "prior": PUBLIC_PRIOR,
            "top_items": None,
            "epsilons": [1, 4],
            "methods": ["minimax"],
            "release": True,
            "release_seed": 3,
            **changes,
        },
    )


#: The folder a seeded (reproducible) release writes instead of publish/.
SEEDED = "reproducible_not_for_publication"


def run(wd, name, events, *targets, check=True):
    """Run the events entries ``events``; each test's entries are their own population unless
    they name one or reuse a spec, so the module's shared project ledger keeps tests apart."""
    events = {
        key: value
        if "population" in value or "spec" in (value.get("prior") or {})
        else {**value, "population": key}
        for key, value in events.items()
    }
    config = write_config(wd, name, {**OTHERS_OFF, "events": events})
    return snakemake(wd, "-c2", *targets, "--configfile", config, check=check)


def base_of(wd, name):
    return wd / "results/events" / name


def folder_of(wd, name, seeded=True):
    """The folder a release replaced: publish/, or the seeded run's own folder."""
    return base_of(wd, name) / (SEEDED if seeded else "publish")


def released_of(wd, name, eps, seeded=True):
    return pl.read_parquet(folder_of(wd, name, seeded) / f"released/eps~{eps}.parquet")


def ledger_totals(wd, name):
    return pl.read_csv(base_of(wd, name) / "ledger.csv", schema_overrides={"user": pl.String})


def release_targets(name, *tables):
    """What the tests of a release read: its publish job's outputs (the job also replaces the
    published folder) and the named evaluation ``tables`` of results/events/<name>/. Only
    these are asked for, so no figure or estimate job runs for a test that reads none."""
    base = f"results/events/{name}"
    return [f"{base}/work/release.json", f"{base}/ledger.csv", f"{base}/release_report.csv"] + [
        f"{base}/{table}" for table in tables
    ]


def changed_events_table():
    """The events table with a third of the users removed (u000, u003, ...), u001's items all
    changed to i5, and a new user "new" holding u002's events."""
    events = events_table()
    changed = events.filter(~pl.col("user_id").is_in([f"u{u:03d}" for u in range(0, 40, 3)]))
    changed = changed.with_columns(
        pl.when(pl.col("user_id") == "u001")
        .then(pl.lit("i5"))
        .otherwise(pl.col("item_id"))
        .alias("item_id")
    )
    extra = events.filter(pl.col("user_id") == "u002").with_columns(pl.lit("new").alias("user_id"))
    return pl.concat([changed, extra])


def point_mass_tables(wd):
    """2,000 users with all their data on the item of smallest public mass (a), 2,000 on b;
    the public prior q = (0.2, 0.3, 0.5) on a, b, c."""
    users = [(f"A{k:04d}", "a", 1.0) for k in range(2000)] + [
        (f"B{k:04d}", "b", 1.0) for k in range(2000)
    ]
    pl.DataFrame(users, schema=["user_id", "item_id", "n"], orient="row").write_parquet(
        wd / "data/points.parquet"
    )
    public = [("p1", "a", 2.0), ("p2", "b", 3.0), ("p3", "c", 5.0)]
    pl.DataFrame(public, schema=["user_id", "item_id", "n"], orient="row").write_parquet(
        wd / "data/points-public.parquet"
    )


def points_entry(eps):
    return entry(
        "data/points.parquet",
        attributes=[],
        prior=dict(
            path="data/points-public.parquet",
            user="user_id",
            item="item_id",
            count="n",
            attributes=[],
        ),
        epsilons=[eps],
        samples=2,
        release_seed=17,
    )


#: The releases of the module's shared run, one entry (and population) per scenario: each test
#: reads its own entries' folders. "pub" is a plain seeded release (and the first run of the
#: changed-users sequence), "planned" has a weak ε for the accuracy plan (and its spec is the
#: one reused), "budgeted" is the ledger sequence's first run, "secret" the first of two
#: secret-randomness runs, points-1/points-3 the privacy test's runs at ε and 3ε, "solo" the
#: one-user attack (one private user, min_users 1).
SHARED = {
    "pub": entry(),
    "planned": entry(epsilons=[0.5, 4]),
    "public-attrs": entry(attributes_public=True, min_user_count=4, epsilons=[2]),
    "budgeted": entry(budget=60),
    "secret": entry(release_seed=None, samples=5, epsilons=[1]),
    "points-1": points_entry(1),
    "points-3": points_entry(3),
    "solo": {**points_entry(1), "path": "data/solo.parquet", "samples": 20_000},
}
#: The evaluation tables of "pub" that the first test reads beside the release.
PUB_TABLES = ("per_user.parquet", "max_tv.csv", "subcategories.csv")
#: The reused-spec release of the project's second run (the spec of "planned").
REUSE = entry(prior={"spec": f"results/events/planned/{SEEDED}/spec"}, epsilons=[0.5, 4])


def shared_targets():
    return [
        target
        for name in SHARED
        for target in release_targets(name, *(PUB_TABLES if name == "pub" else ()))
    ]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A fresh copy of the project with the tests' tables in data/ (nothing run yet)."""
    wd = copy_workflow(tmp_path_factory.mktemp("publish") / "wf")
    (wd / "data").mkdir()
    events_table().write_parquet(wd / "data/events.parquet")
    public_table().write_parquet(wd / "data/public.parquet")
    point_mass_tables(wd)
    pl.DataFrame(
        [("solo", "a", 1.0), ("solo", "c", 9.0)], schema=["user_id", "item_id", "n"], orient="row"
    ).write_parquet(wd / "data/solo.parquet")
    return wd


@dataclass(frozen=True)
class Project:
    """The module's project after its two runs, and the console of the first."""

    wd: Path
    console: str


@pytest.fixture(scope="module")
def project(workdir):
    """One Snakemake run of every SHARED release (config/publish.yaml, the targets the tests
    read), then a second that adds a release reusing the spec of "planned"
    (config/reuse.yaml). Tests read it and never change it."""
    first = run(workdir, "publish", SHARED, *shared_targets())
    run(workdir, "reuse", {**SHARED, "reuse": REUSE}, *release_targets("reuse"))
    return Project(workdir, first.stderr)


@pytest.fixture(scope="module")
def rerun(project, tmp_path_factory):
    """The operator's next run, in a copy of the shared project: results/ deleted (the ledger
    in privacy/ stays), a third of the users removed from the events table, one user's data
    changed and one user added, and "pub" (on the changed table), "budgeted" and "secret" run
    again with the same config."""
    wd = continue_in_copy(project.wd, tmp_path_factory.mktemp("rerun") / "wf")
    changed_events_table().write_parquet(wd / "data/events-changed.parquet")
    shutil.rmtree(wd / "results")
    again = {
        "pub": entry("data/events-changed.parquet"),
        "budgeted": SHARED["budgeted"],
        "secret": SHARED["secret"],
    }
    run(wd, "rerun", again, *(t for name in again for t in release_targets(name)))
    return wd


def test_a_release_writes_the_spec_the_draws_and_the_ledger_and_publish_holds_nothing_else(
    project,
):
    name, workdir = "pub", project.wd
    base = base_of(workdir, name)
    folder = folder_of(workdir, name)
    published = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert published == [
        "README.md",
        "release.json",
        "released/eps~1.parquet",
        "released/eps~4.parquet",
        "spec/domain.csv",
        "spec/manifest.json",
    ]
    assert not (base / "publish").exists()  # a seeded run never writes publish/
    index = json.loads((folder / "release.json").read_text())
    for path, listed in index["files"].items():
        assert hashlib.sha256((folder / path).read_bytes()).hexdigest() == listed["sha256"]
    assert index["publishable"] is False and set(index["files"]) == {
        "released/eps~1.parquet",
        "released/eps~4.parquet",
    }
    readme = (folder / "README.md").read_text()
    assert "ldpsample estimate <this folder> --out <table.csv>" in readme
    assert (
        "not for publication" in readme
        and index["files"]["released/eps~4.parquet"]["sha256"] in readme
    )
    # operator-only files stay outside publish/
    for private in (
        "per_user.parquet",
        "max_tv.csv",
        "subcategories.csv",
        "ledger.csv",
        "release_report.csv",
    ):
        assert (base / private).is_file(), private
    assert (workdir / "privacy/ledger.sqlite").is_file()
    released = released_of(workdir, name, 1)
    assert released.columns == ["epsilon", "user", "attribute", "subcategory", "sample", "item"]
    assert (released["epsilon"] == 1.0).all()
    # hidden membership: every user of the table in every spec subcategory (3 countries, 2 devices)
    per_user = released.group_by("user").agg(pl.col("subcategory").n_unique(), pl.len())
    assert (
        per_user.height == 40
        and (per_user["subcategory"] == 5).all()
        and (per_user["len"] == 5).all()
    )
    totals = ledger_totals(workdir, name)
    assert totals.height == 40 and (totals["total_epsilon"] == 5 * (1 + 4)).all()
    assert (totals["releases"] == 1).all()
    manifest = (folder / "spec/manifest.json").read_text()
    assert '"publishable": false' in manifest and "not for publication" in manifest
    assert '"kind": "public table"' in manifest
    domain = pl.read_csv(folder / "spec/domain.csv")
    assert domain.group_by("subcategory").len()["len"].to_list() == [6] * 5  # every item, in full
    report = pl.read_csv(base / "release_report.csv")
    assert (report["realized_epsilon"] <= report["epsilon"] * (1 + 1e-9)).all()
    assert (report["users_released"] == 40).all()
    # the same command again: nothing to do, nothing spent
    again = snakemake(
        workdir, "-c2", *shared_targets(), "--configfile", "config/publish.yaml", "-n"
    )
    assert "Nothing to be done" in again.stdout + again.stderr


def test_the_accuracy_plan_from_public_inputs_is_published_and_printed(project):
    """release.json holds the plan that the spec and the roster size alone give (recomputed
    here from the published folder), the console prints its warnings (inversion cannot beat q
    at ε = 0.5 with 40 users) and its summary, and README.md names the cells. The console is
    the shared run's: it prints every release's warnings, each once, and nothing else."""
    name = "planned"
    folder = folder_of(project.wd, name)
    index = json.loads((folder / "release.json").read_text())
    want = accuracy_plan(read_spec(folder / "spec"), users=40)
    assert index["accuracy_plan"] == json.loads(json.dumps(want.to_json()))
    cells = pl.DataFrame(index["accuracy_plan"]["cells"])
    assert cells.height == 5 * 2 and (cells["draws"] == 40).all()
    weak = cells.filter(~pl.col("inversion_can_beat_prior"))
    assert weak["epsilon"].to_list() == [0.5] * 5  # 6 items, 40 draws: TV error 1.6 > 0.9
    assert len(index["accuracy_plan"]["warnings"]) == 5
    console = project.console
    for warning in index["accuracy_plan"]["warnings"]:
        assert console.count(f"accuracy plan: {warning}\n") == 1, warning
    # every release's warnings, from its receipt (the copy of its release.json)
    printed = sum(
        len(json.loads(receipt.read_text())["accuracy_plan"]["warnings"])
        for receipt in (base_of(project.wd, other) / "work/release.json" for other in SHARED)
    )
    assert console.count("accuracy plan: ") == printed and "inversion cannot beat q" in console
    assert plan_summary(want) in console
    readme = (folder / "README.md").read_text()
    assert "5 of them cannot beat reporting q by inversion" in readme
    assert "over 10 (subcategory, ε) cells" in readme.replace("\n", " ")


#: Releases that would not be private, each with the key its config error names and a hint of
#: why: (entry name, changes to the entry, key, hint).
REFUSED = [
    ("pooled", {"prior": "pooled"}, "prior", "computed from the very users being released"),
    ("user-mean", {"prior": "user_mean"}, "prior", "computed from the very users being released"),
    ("no-items", {"prior": "uniform"}, "items", "item domain must be public"),
    (
        "no-subcategories",
        {"prior": "uniform", "items": ITEMS},
        "subcategories",
        "subcategories must be public",
    ),
    (
        "private-top-items",
        {
            "top_items": 3,
            "prior": "uniform",
            "items": ITEMS,
            "subcategories": {"country": COUNTRIES, "device": DEVICES},
        },
        "top_items",
        "rank the items on the private table",
    ),
    ("ranked", {"rank_items_by": "n"}, "rank_items_by", "ranks the items on the private table"),
    ("min-users", {"min_users": 5}, "min_users", "depend on other users' data"),
    ("min-user-count", {"min_user_count": 3}, "min_user_count", "attributes_public: true"),
]


@pytest.fixture(scope="module")
def refused(workdir):
    """One Snakemake run of a config holding every REFUSED release and an evaluation-only
    entry with a publication key (events.evalonly): the config check lists every entry's
    problem in one error, before any job."""
    events = {name: entry(**changes) for name, changes, _, _ in REFUSED}
    events["evalonly"] = entry(release=False)
    return run(workdir, "refused", events, check=False)


def problem_line(proc, where):
    """The line of Snakemake's output that names the config error at ``where``."""
    lines = [
        line
        for line in (proc.stdout + proc.stderr).splitlines()
        if f"config error at {where}:" in line
    ]
    assert len(lines) == 1, (where, proc.stdout + proc.stderr)
    return lines[0]


@pytest.mark.parametrize(
    ("name", "key", "hint"),
    [pytest.param(name, key, hint, id=name) for name, _, key, hint in REFUSED],
)
def test_a_release_that_would_not_be_private_stops_before_any_job(
    workdir, refused, name, key, hint
):
    assert refused.returncode != 0
    assert hint in problem_line(refused, f"events.{name}.{key}")
    assert "events_" not in refused.stdout  # no job was planned or run
    assert not base_of(workdir, name).exists()


def test_release_keys_without_release_are_refused(refused):
    assert refused.returncode != 0
    line = problem_line(refused, "events.evalonly.release_seed")
    assert "config error at events.evalonly.release_seed: 3 is only used by a publication" in line


def test_the_spec_does_not_move_with_private_users_and_draws_do_not_move_with_others(
    project, rerun
):
    """Remove a third of the users, change one user's data and add one: publish/spec/ is
    byte-identical, and every untouched user's draws are identical (fixed release_seed)."""
    name = "pub"
    spec = {p.name: p.read_bytes() for p in (folder_of(project.wd, name) / "spec").iterdir()}
    before = released_of(project.wd, name, 4)
    assert {p.name: p.read_bytes() for p in (folder_of(rerun, name) / "spec").iterdir()} == spec
    after = released_of(rerun, name, 4)
    untouched = [u for u in set(after["user"]) if u not in ("u001", "new")]
    assert len(untouched) == 25
    key = ["user", "attribute", "subcategory", "sample"]
    assert (
        after.filter(pl.col("user").is_in(untouched))
        .sort(key)
        .equals(before.filter(pl.col("user").is_in(untouched)).sort(key))
    )
    assert set(after["user"]) == (set(before["user"]) - {f"u{u:03d}" for u in range(0, 40, 3)}) | {
        "new"
    }


def test_declared_public_attributes_release_only_where_users_have_data(project):
    name, workdir = "public-attrs", project.wd
    base = base_of(workdir, name)
    released = released_of(workdir, name, 2)
    # a user releases in a subcategory exactly when it has data there with activity >= 4
    events = events_table()
    want = set()
    for attribute in ("country", "device"):
        active = (
            events.group_by(attribute, "user_id").agg(pl.col("n").sum()).filter(pl.col("n") >= 4)
        )
        want |= {(u, str(s)) for s, u in active.select(attribute, "user_id").iter_rows()}
    assert set(released.select("user", "subcategory").iter_rows()) == want
    assert len(want) < 3 * 40  # the rule left some (user, subcategory) out
    manifest = (base / SEEDED / "spec/manifest.json").read_text()
    assert '"attributes_public": true' in manifest and '"min_user_count": 4' in manifest
    assert (ledger_totals(workdir, name)["total_epsilon"] <= 3 * 2).all()
    # the accuracy plan counts the users releasing in each subcategory (public in this mode)
    plan = json.loads((base / SEEDED / "release.json").read_text())["accuracy_plan"]
    draws = {(c["attribute"], c["subcategory"]): c["draws"] for c in plan["cells"]}
    counted = released.group_by("attribute", "subcategory").agg(pl.col("user").n_unique())
    assert draws == {(a, s): n for a, s, n in counted.iter_rows()}


def test_the_ledger_adds_up_every_draw_across_runs_and_refuses_past_the_budget(
    project, rerun, tmp_path
):
    """budget 60, 25 per run: two runs (results/ deleted in between) spend 50; the third would
    reach 75 and stops at the budget gate, drawing and writing nothing, ledger unchanged."""
    name = "budgeted"
    drawn = {}
    for wd in (project.wd, rerun):  # the shared run, then the operator's next
        for eps in (1, 4):
            for user, n in released_of(wd, name, eps).group_by("user").len().iter_rows():
                drawn[user] = drawn.get(user, 0.0) + eps * n
    totals = ledger_totals(rerun, name)
    assert dict(zip(totals["user"], totals["total_epsilon"], strict=True)) == drawn
    assert set(drawn.values()) == {50.0} and (totals["releases"] == 2).all()
    workdir = continue_in_copy(rerun, tmp_path / "wf")
    base = base_of(workdir, name)
    shutil.rmtree(workdir / "results")
    proc = run(workdir, name, {name: SHARED[name]}, *release_targets(name), check=False)
    assert proc.returncode != 0
    log = (workdir / f"logs/events_budget/{name}.log").read_text()
    assert f"config key events.{name}.budget: 60 would be exceeded" in log
    assert "projected total of 75.0" in log and "(5 subcategories × Σε 5.0 × 1 samples)" in log
    leftovers = [p for p in result_files(workdir) if p.startswith(str(base.relative_to(workdir)))]
    assert all("/work/" in p for p in leftovers), leftovers  # nothing published, no tables
    assert not (base / "publish").exists() and not (base / SEEDED).exists()
    # the ledger was not touched: raising the budget lets the next run through at 75
    run(workdir, name, {name: entry(budget=75)}, *release_targets(name))
    assert (ledger_totals(workdir, name)["total_epsilon"] == 75.0).all()


def test_secret_randomness_differs_between_runs_as_independent_draws_would(project, rerun):
    name = "secret"
    manifest = (base_of(project.wd, name) / "publish/spec/manifest.json").read_text()
    assert '"publishable": true' in manifest and "os.urandom" in manifest
    key = ["user", "attribute", "subcategory", "sample"]
    first = released_of(project.wd, name, 1, seeded=False).sort(key)
    second = released_of(rerun, name, 1, seeded=False).sort(key)
    assert first.select(key).equals(second.select(key))
    agree = (first["item"] == second["item"]).to_numpy()
    # the chance that two independent draws from pK agree, per row, from the spec and the data
    domain = pl.read_csv(base_of(rerun, name) / "publish/spec/domain.csv")
    events = events_table()
    chance = []
    for attribute, subcategory, user in first.select(
        "attribute", "subcategory", "user"
    ).iter_rows():
        part = domain.filter(
            (pl.col("attribute") == attribute) & (pl.col("subcategory") == subcategory)
        )
        q = part["q"].to_numpy()
        rows = events.filter((pl.col(attribute) == subcategory) & (pl.col("user_id") == user))
        counts = np.array(
            [rows.filter(pl.col("item_id") == i)["n"].sum() for i in part["item"]], float
        )
        p = counts / counts.sum() if counts.sum() else q
        pK = p @ minimax_kernel(q, epsilon=1.0)
        chance.append(float(pK @ pK))
    expected, sd = np.sum(chance), np.sqrt(np.sum(np.array(chance) * (1 - np.array(chance))))
    assert abs(agree.sum() - expected) < 5 * sd, (agree.sum(), expected, sd)
    assert agree.sum() < agree.size
    assert (ledger_totals(rerun, name)["total_epsilon"] == 2 * 5 * 5 * 1.0).all()


def test_the_privacy_test_passes_at_epsilon_and_fails_the_pipeline_run_at_3(project):
    """One-sided test on the worst-case pair of point masses (a, the item of smallest q, and b):
    output a's frequency ratio between the two groups. The run at ε = 1 passes the ε = 1 bound;
    the same pipeline run at ε' = 3, tested against the ε = 1 bound, is rejected."""
    bounds = {}
    for eps in (1, 3):
        released = released_of(project.wd, f"points-{eps}", eps)
        group_a = released.filter(pl.col("user").str.starts_with("A"))
        group_b = released.filter(pl.col("user").str.starts_with("B"))
        bounds[eps] = epsilon_lower_bound(
            int((group_a["item"] == "a").sum()),
            group_a.height,
            int((group_b["item"] == "a").sum()),
            group_b.height,
            alpha=1e-6,
        )
    assert bounds[1] <= 1.0, bounds
    assert bounds[3] > 1.0, bounds


def test_one_users_release_follows_pK_of_the_public_prior_not_its_own_histogram(project):
    """The attack of the issue: one private user, min_users 1. Its 20,000 released items follow
    p K_{q,ε} with the spec's q (chi-square), not p (an item it never used is drawn)."""
    released = released_of(project.wd, "solo", 1)
    counts = np.array([(released["item"] == i).sum() for i in ("a", "b", "c")])
    p = np.array([0.1, 0.0, 0.9])
    pK = p @ minimax_kernel(np.array([0.2, 0.3, 0.5]), epsilon=1.0)
    assert ((counts - 20_000 * pK) ** 2 / (20_000 * pK)).sum() < 27.6  # chi-square(2), 1e-6
    assert tv_distance(counts / 20_000, p) > 0.1 and counts[1] > 1000


def test_a_reused_spec_releases_new_users_with_the_same_domain_and_prior(project):
    old = (folder_of(project.wd, "planned") / "spec/domain.csv").read_bytes()
    assert (folder_of(project.wd, "reuse") / "spec/domain.csv").read_bytes() == old
    manifest = (folder_of(project.wd, "reuse") / "spec/manifest.json").read_text()
    assert '"kind": "spec"' in manifest


def test_a_broken_kernel_in_the_publication_leaves_no_release_and_no_spend(tmp_path):
    """A kernel built for 3ε while claiming ε (injected into the library of a fresh copy): the
    publish job's audit fails, nothing is published and the ledger records nothing."""
    wd = copy_workflow(tmp_path / "wf")
    (wd / "data").mkdir()
    events_table().write_parquet(wd / "data/events.parquet")
    public_table().write_parquet(wd / "data/public.parquet")
    module = wd / "src/ldpsample/events/scoring/release_kernel.py"
    module.write_text(
        module.read_text() + "\n\n_private_kernel = minimax_release_kernel\n\n"
        "def minimax_release_kernel(q, *, epsilon):  # injected by the test: NOT ε-LDP\n"
        "    return _private_kernel(q, epsilon=3 * epsilon)\n"
    )
    name = "leaky"
    # the publication's targets only, so that the publication is where the kernel is built
    # (evaluation, were it asked for, with the mollifier only)
    proc = run(
        wd, name, {name: entry(methods=["mollifier_tv"])}, *release_targets(name), check=False
    )
    assert proc.returncode != 0
    log = (wd / f"logs/events_publish/{name}.log").read_text()
    assert "privacy audit FAILED" in log and "exceeds the claimed epsilon" in log
    base = base_of(wd, name)
    assert not (base / "publish").exists() and not (base / SEEDED).exists()
    assert not (base / "ledger.csv").exists()
    with sqlite3.connect(wd / "privacy/ledger.sqlite") as connection:
        assert connection.execute("SELECT COUNT(*) FROM draws").fetchone() == (0,)


@pytest.mark.data
def test_the_worked_example_of_publishing_md_runs_as_printed(tmp_path):
    """docs/publishing.md's YAML is config/examples/publish-movielens.yaml; its command, run on
    ../shared/data, publishes ML-1M users under the ML-100K prior and refuses a second release
    of the same users past the budget of 50 (30 per run)."""
    shared = need_shared_data("ml-1m", "ml-100k")
    doc = (ROOT / "docs/publishing.md").read_text()
    example = (ROOT / "config/examples/publish-movielens.yaml").read_text()
    block = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert yaml.safe_load(block) == yaml.safe_load(example)
    command = doc.split("```bash\n", 1)[1].split("```", 1)[0].split()
    assert command[:2] == [".venv/bin/snakemake", "--cores"]
    args = [f"data_dir={shared}" if a == "data_dir=../shared/data" else a for a in command[1:]]
    wd = copy_workflow(tmp_path / "wf")
    snakemake(wd, *args)
    base = base_of(wd, "ml1m")
    domain = pl.read_csv(base / "publish/spec/domain.csv")
    assert domain.group_by("subcategory").len()["len"].to_list() == [18] * 6
    totals = ledger_totals(wd, "ml1m")
    assert (totals["total_epsilon"] == 30.0).all() and totals.height > 1000
    released = pl.read_parquet(base / "publish/released/eps~4.parquet")
    assert released.height == totals.height * 6
    shutil.rmtree(wd / "results/events")
    proc = snakemake(wd, *args, check=False)
    assert proc.returncode != 0
    log = (wd / "logs/events_budget/ml1m.log").read_text()
    assert "config key events.ml1m.budget: 50 would be exceeded" in log
    assert "projected total of 60.0" in log
