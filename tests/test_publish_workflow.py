"""Publishing a release through Snakemake, as a user does it (events.<name>.release: true), in a
temporary copy of the project: what publish/ holds and nothing else, a data-derived prior or
filter refused before any job, a spec that does not move when private users change, draws that
do not move when other users go, hidden membership, the persistent ledger adding up every draw
across runs and refusing past the budget (also after results/ is deleted), secret randomness,
the black-box privacy test passing at ε and failing at 3ε, the one-user attack, and refusals
that leave no release."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3

import numpy as np
import polars as pl
import pytest
import yaml
from _workflow import (
    OTHERS_OFF,
    ROOT,
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


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    wd = copy_workflow(tmp_path_factory.mktemp("publish") / "wf")
    (wd / "data").mkdir()
    events_table().write_parquet(wd / "data/events.parquet")
    public_table().write_parquet(wd / "data/public.parquet")
    return wd


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


def test_a_release_writes_the_spec_the_draws_and_the_ledger_and_publish_holds_nothing_else(
    workdir,
):
    name = "pub"
    run(workdir, name, {name: entry()})
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
    again = snakemake(workdir, "-c2", "--configfile", f"config/{name}.yaml", "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


def test_the_accuracy_plan_from_public_inputs_is_published_and_printed(workdir):
    """release.json holds the plan that the spec and the roster size alone give (recomputed
    here from the published folder), the console prints its warnings (inversion cannot beat q
    at ε = 0.5 with 40 users) and its summary, and README.md names the cells."""
    name = "planned"
    proc = run(workdir, name, {name: entry(epsilons=[0.5, 4])})
    folder = folder_of(workdir, name)
    index = json.loads((folder / "release.json").read_text())
    want = accuracy_plan(read_spec(folder / "spec"), users=40)
    assert index["accuracy_plan"] == json.loads(json.dumps(want.to_json()))
    cells = pl.DataFrame(index["accuracy_plan"]["cells"])
    assert cells.height == 5 * 2 and (cells["draws"] == 40).all()
    weak = cells.filter(~pl.col("inversion_can_beat_prior"))
    assert weak["epsilon"].to_list() == [0.5] * 5  # 6 items, 40 draws: TV error 1.6 > 0.9
    assert len(index["accuracy_plan"]["warnings"]) == 5
    console = proc.stderr
    assert console.count("accuracy plan: ") == 5 and "inversion cannot beat q" in console
    assert plan_summary(want) in console
    readme = (folder / "README.md").read_text()
    assert "5 of them cannot beat reporting q by inversion" in readme
    assert "over 10 (subcategory, ε) cells" in readme.replace("\n", " ")


@pytest.mark.parametrize(
    ("changes", "key", "hint"),
    [
        ({"prior": "pooled"}, "prior", "computed from the very users being released"),
        ({"prior": "user_mean"}, "prior", "computed from the very users being released"),
        ({"prior": "uniform"}, "items", "item domain must be public"),
        ({"prior": "uniform", "items": ITEMS}, "subcategories", "subcategories must be public"),
        (
            {
                "top_items": 3,
                "prior": "uniform",
                "items": ITEMS,
                "subcategories": {"country": COUNTRIES, "device": DEVICES},
            },
            "top_items",
            "rank the items on the private table",
        ),
        ({"rank_items_by": "n"}, "rank_items_by", "ranks the items on the private table"),
        ({"min_users": 5}, "min_users", "depend on other users' data"),
        ({"min_user_count": 3}, "min_user_count", "attributes_public: true"),
    ],
)
def test_a_release_that_would_not_be_private_stops_before_any_job(workdir, changes, key, hint):
    name = "refused"
    proc = run(workdir, name, {name: entry(**changes)}, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"config error at events.{name}.{key}:" in out and hint in out, out
    assert "events_" not in proc.stdout  # no job was planned or run
    assert not base_of(workdir, name).exists()


def test_release_keys_without_release_are_refused(workdir):
    proc = run(workdir, "evalonly", {"evalonly": entry(release=False)}, check=False)
    assert proc.returncode != 0
    assert "config error at events.evalonly.release_seed: 3 is only used by a publication" in (
        proc.stdout + proc.stderr
    )


def test_the_spec_does_not_move_with_private_users_and_draws_do_not_move_with_others(workdir):
    """Remove a third of the users, change one user's data and add one: publish/spec/ is
    byte-identical, and every untouched user's draws are identical (fixed release_seed)."""
    name = "stable"
    run(workdir, name, {name: entry()})
    base = base_of(workdir, name)
    spec = {p.name: p.read_bytes() for p in (base / SEEDED / "spec").iterdir()}
    before = released_of(workdir, name, 4)
    events = events_table()
    changed = events.filter(~pl.col("user_id").is_in([f"u{u:03d}" for u in range(0, 40, 3)]))
    changed = changed.with_columns(
        pl.when(pl.col("user_id") == "u001")
        .then(pl.lit("i5"))
        .otherwise(pl.col("item_id"))
        .alias("item_id")
    )
    extra = events.filter(pl.col("user_id") == "u002").with_columns(pl.lit("new").alias("user_id"))
    pl.concat([changed, extra]).write_parquet(workdir / "data/events-changed.parquet")
    shutil.rmtree(base)
    run(workdir, name, {name: entry("data/events-changed.parquet")})
    assert {p.name: p.read_bytes() for p in (base / SEEDED / "spec").iterdir()} == spec
    after = released_of(workdir, name, 4)
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


def test_declared_public_attributes_release_only_where_users_have_data(workdir):
    name = "public-attrs"
    run(workdir, name, {name: entry(attributes_public=True, min_user_count=4, epsilons=[2])})
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


def test_the_ledger_adds_up_every_draw_across_runs_and_refuses_past_the_budget(workdir):
    """budget 60, 25 per run: two runs (results/ deleted in between) spend 50; the third would
    reach 75 and stops at the budget gate, drawing and writing nothing, ledger unchanged."""
    name = "budgeted"
    config = {name: entry(budget=60)}
    base = base_of(workdir, name)
    drawn = {}
    for _ in range(2):
        run(workdir, name, config)
        for eps in (1, 4):
            for user, n in released_of(workdir, name, eps).group_by("user").len().iter_rows():
                drawn[user] = drawn.get(user, 0.0) + eps * n
        totals = ledger_totals(workdir, name)
        shutil.rmtree(workdir / "results")
    assert dict(zip(totals["user"], totals["total_epsilon"], strict=True)) == drawn
    assert set(drawn.values()) == {50.0} and (totals["releases"] == 2).all()
    proc = run(workdir, name, config, check=False)
    assert proc.returncode != 0
    log = (workdir / f"logs/events_budget/{name}.log").read_text()
    assert f"config key events.{name}.budget: 60 would be exceeded" in log
    assert "projected total of 75.0" in log and "(5 subcategories × Σε 5.0 × 1 samples)" in log
    leftovers = [p for p in result_files(workdir) if p.startswith(str(base.relative_to(workdir)))]
    assert all("/work/" in p for p in leftovers), leftovers  # nothing published, no tables
    assert not (base / "publish").exists() and not (base / SEEDED).exists()
    # the ledger was not touched: raising the budget lets the next run through at 75
    run(workdir, name, {name: entry(budget=75)})
    assert (ledger_totals(workdir, name)["total_epsilon"] == 75.0).all()


def test_secret_randomness_differs_between_runs_as_independent_draws_would(workdir):
    name = "secret"
    config = {name: entry(release_seed=None, samples=5, epsilons=[1])}
    run(workdir, name, config)
    manifest = (base_of(workdir, name) / "publish/spec/manifest.json").read_text()
    assert '"publishable": true' in manifest and "os.urandom" in manifest
    key = ["user", "attribute", "subcategory", "sample"]
    first = released_of(workdir, name, 1, seeded=False).sort(key)
    shutil.rmtree(base_of(workdir, name))
    run(workdir, name, config)
    second = released_of(workdir, name, 1, seeded=False).sort(key)
    assert first.select(key).equals(second.select(key))
    agree = (first["item"] == second["item"]).to_numpy()
    # the chance that two independent draws from pK agree, per row, from the spec and the data
    domain = pl.read_csv(base_of(workdir, name) / "publish/spec/domain.csv")
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
    assert (ledger_totals(workdir, name)["total_epsilon"] == 2 * 5 * 5 * 1.0).all()


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


def test_the_privacy_test_passes_at_epsilon_and_fails_the_pipeline_run_at_3(workdir):
    """One-sided test on the worst-case pair of point masses (a, the item of smallest q, and b):
    output a's frequency ratio between the two groups. The run at ε = 1 passes the ε = 1 bound;
    the same pipeline run at ε' = 3, tested against the ε = 1 bound, is rejected."""
    point_mass_tables(workdir)
    bounds = {}
    for eps in (1, 3):
        name = f"points-{eps}"
        run(workdir, name, {name: points_entry(eps)})
        released = released_of(workdir, name, eps)
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


def test_one_users_release_follows_pK_of_the_public_prior_not_its_own_histogram(workdir):
    """The attack of the issue: one private user, min_users 1. Its 20,000 released items follow
    p K_{q,ε} with the spec's q (chi-square), not p (an item it never used is drawn)."""
    pl.DataFrame(
        [("solo", "a", 1.0), ("solo", "c", 9.0)], schema=["user_id", "item_id", "n"], orient="row"
    ).write_parquet(workdir / "data/solo.parquet")
    name = "solo"
    run(workdir, name, {name: {**points_entry(1), "path": "data/solo.parquet", "samples": 20_000}})
    released = released_of(workdir, name, 1)
    counts = np.array([(released["item"] == i).sum() for i in ("a", "b", "c")])
    p = np.array([0.1, 0.0, 0.9])
    pK = p @ minimax_kernel(np.array([0.2, 0.3, 0.5]), epsilon=1.0)
    assert ((counts - 20_000 * pK) ** 2 / (20_000 * pK)).sum() < 27.6  # chi-square(2), 1e-6
    assert tv_distance(counts / 20_000, p) > 0.1 and counts[1] > 1000


def test_a_reused_spec_releases_new_users_with_the_same_domain_and_prior(workdir):
    first, second = "first-spec", "reuse"
    run(workdir, first, {first: entry(epsilons=[2])})
    spec = f"results/events/{first}/{SEEDED}/spec"
    run(
        workdir,
        second,
        {
            first: entry(epsilons=[2]),
            second: entry(
                prior={"spec": spec},
                epsilons=[2],
                path="data/events-changed.parquet"
                if (workdir / "data/events-changed.parquet").exists()
                else "data/events.parquet",
            ),
        },
    )
    old = (folder_of(workdir, first) / "spec/domain.csv").read_bytes()
    assert (folder_of(workdir, second) / "spec/domain.csv").read_bytes() == old
    assert '"kind": "spec"' in (folder_of(workdir, second) / "spec/manifest.json").read_text()


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
    # evaluation with the mollifier only, so that the publication is where the kernel is built
    proc = run(wd, name, {name: entry(methods=["mollifier_tv"])}, check=False)
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
