"""A joint release (events.<name>.release_mode: joint) through Snakemake on a fresh copy of the
project, as a user runs it: the spec records the mode and the public shares, each user releases
one (subcategory, item) per sample and ε, the ledger charges Σε × samples per attribute, the
one-sided privacy test passes the run at ε and rejects the same run at 3ε, and the estimate
rules read the joint publication; the mode's keys without release: true are refused. The tests
share one Snakemake run, which asks only for the files they read."""

from __future__ import annotations

import json

import polars as pl
import pytest
from _workflow import copy_workflow
from test_publish_workflow import SEEDED, entry, release_targets, run

from ldpsample import epsilon_lower_bound

pytestmark = pytest.mark.workflow

GROUPS = 2000


def point_mass_tables(wd):
    """A: all data on (s1, a), the joint item of smallest public mass; B: on (s2, b). Public
    shares 1/2 each, q_s1 = (0.1, 0.3, 0.6), q_s2 = (0.5, 0.3, 0.2)."""
    users = [(f"A{k:04d}", "a", 1.0, "s1") for k in range(GROUPS)]
    users += [(f"B{k:04d}", "b", 1.0, "s2") for k in range(GROUPS)]
    schema = ["user_id", "item_id", "n", "grp"]
    pl.DataFrame(users, schema=schema, orient="row").write_parquet(wd / "data/joint.parquet")
    public = [("p1", "a", 1.0, "s1"), ("p2", "b", 3.0, "s1"), ("p3", "c", 6.0, "s1")]
    public += [("p4", "a", 5.0, "s2"), ("p5", "b", 3.0, "s2"), ("p6", "c", 2.0, "s2")]
    pl.DataFrame(public, schema=schema, orient="row").write_parquet(
        wd / "data/joint-public.parquet"
    )


def joint_entry(eps, **changes):
    options = dict(
        attributes=["grp"],
        prior=dict(
            path="data/joint-public.parquet",
            user="user_id",
            item="item_id",
            count="n",
            attributes=["grp"],
        ),
        epsilons=[eps],
        samples=2,
        release_seed=17,
        release_mode="joint",
    )
    return entry("data/joint.parquet", **{**options, **changes})


#: The joint publication's subcategory_shares as attribute -> subcategory -> weight.
LISTED_SHARES = {"grp": {"s2": 3, "s1": 1}}
#: The spec of the entry with LISTED_SHARES (the one file its test reads).
LISTED_MANIFEST = "results/events/joint-shares/work/spec/manifest.json"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A fresh copy of the project with the point-mass tables in data/ (nothing run yet)."""
    wd = copy_workflow(tmp_path_factory.mktemp("joint") / "wf")
    (wd / "data").mkdir()
    point_mass_tables(wd)
    return wd


@pytest.fixture(scope="module")
def wd(workdir):
    """One Snakemake run: the joint releases at ε 1 and 3, the estimate tables of the one at 3,
    and the spec of a third entry with listed shares. Tests read it and never change it."""
    targets = [
        *release_targets("joint-1"),
        *(f"results/events/joint-3/estimate/{table}.csv" for table in ("estimates", "errors")),
        LISTED_MANIFEST,
    ]
    events = {
        "joint-1": joint_entry(1),
        "joint-3": joint_entry(3),
        "joint-shares": joint_entry(1, subcategory_shares=LISTED_SHARES),
    }
    run(workdir, "joint", events, *targets)
    return workdir


def folder(wd, name):
    return wd / "results/events" / name / SEEDED


def test_the_joint_spec_draws_and_ledger(wd):
    manifest = json.loads((folder(wd, "joint-1") / "spec/manifest.json").read_text())
    assert manifest["release_mode"] == "joint"
    assert manifest["subcategory_shares"] == {"grp": {"s1": 0.5, "s2": 0.5}}
    assert manifest["epsilon_per_user_per_release"] == 2.0  # 1 attribute × ε 1 × 2 samples
    released = pl.read_parquet(folder(wd, "joint-1") / "released/eps~1.parquet")
    assert released.columns == ["epsilon", "user", "attribute", "subcategory", "sample", "item"]
    per_user = released.group_by("user").len()
    assert per_user.height == 2 * GROUPS and set(per_user["len"]) == {2}
    assert set(released["subcategory"]) == {"s1", "s2"}
    index = json.loads((folder(wd, "joint-1") / "release.json").read_text())
    cells = index["accuracy_plan"]["cells"]
    assert [(c["subcategory"], c["items"], c["draws"]) for c in cells] == [
        ("(joint)", 6, 2 * 2 * GROUPS)
    ]
    for name, total in (("joint-1", 2.0), ("joint-3", 6.0)):
        ledger = pl.read_csv(wd / f"results/events/{name}/ledger.csv")
        assert ledger.height == 2 * GROUPS and set(ledger["total_epsilon"]) == {total}


def test_the_privacy_test_passes_the_joint_run_at_epsilon_and_rejects_it_at_3(wd):
    bounds = {}
    for eps in (1, 3):
        released = pl.read_parquet(folder(wd, f"joint-{eps}") / f"released/eps~{eps}.parquet")
        hit = (pl.col("subcategory") == "s1") & (pl.col("item") == "a")
        a = released.filter(pl.col("user").str.starts_with("A"))
        b = released.filter(pl.col("user").str.starts_with("B"))
        bounds[eps] = epsilon_lower_bound(
            int(a.select(hit.sum()).item()),
            a.height,
            int(b.select(hit.sum()).item()),
            b.height,
            alpha=1e-6,
        )
    assert bounds[1] <= 1.0, bounds
    assert bounds[3] > 1.0, bounds


def test_the_estimate_rules_report_shares_and_conditionals_of_a_joint_release(wd):
    base = wd / "results/events/joint-3/estimate"
    table = pl.read_csv(base / "estimates.csv", schema_overrides={"item": pl.String})
    shares = table.filter((pl.col("quantity") == "share") & (pl.col("method") == "inversion")).sort(
        "subcategory"
    )
    assert shares["subcategory"].to_list() == ["s1", "s2"]
    assert shares["estimate"].sum() == pytest.approx(1.0)
    # the truth: half the users in each subcategory; the 95 % intervals hold it
    assert (shares["lower"] <= 0.5).all() and (shares["upper"] >= 0.5).all()
    errors = pl.read_csv(base / "errors.csv")
    assert set(errors["quantity"]) == {"share", "conditional"}
    em = errors.filter((pl.col("method") == "em") & (pl.col("quantity") == "conditional"))
    assert em.height == 2 and (em["tv_error"] < 0.1).all()


def test_the_joint_keys_without_release_are_refused(workdir):
    result = run(
        workdir,
        "bad",
        {"bad": joint_entry(1, release=False, release_seed=None)},
        "-n",
        check=False,
    )
    assert result.returncode != 0
    message = "config error at events.bad.release_mode: 'joint' is only used by a publication"
    assert message in result.stdout + result.stderr


def test_listed_shares_reach_the_spec_through_the_config(wd):
    """subcategory_shares as attribute -> subcategory -> weight: normalised into the manifest."""
    manifest = json.loads((wd / LISTED_MANIFEST).read_text())
    assert manifest["subcategory_shares"] == {"grp": {"s1": 0.25, "s2": 0.75}}
    assert manifest["provenance"]["subcategory_shares"] == {"kind": "config"}
