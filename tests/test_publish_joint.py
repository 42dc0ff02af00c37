"""The joint release mode (release_mode: joint) of ldpsample.publish: the spec records the mode
and the public subcategory shares π, a reused spec keeps them; one draw per (user, attribute, ε,
sample) from the minimax kernel of q(s, i) = π(s) q_s(i) on the joint domain (the same items as
the dense inverse CDF of p K), audited and bounded by the sampling floor on the joint domain;
the ledger charges attributes × Σε × samples; and the one-sided privacy test passes the real
joint release at ε and fails a release at 3ε and one that leaks the subcategory."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from test_publish import histograms
from test_publish_device import release_on_devices

from ldpsample import (
    apply_minimax,
    epsilon_lower_bound,
    inverse_cdf_sorted,
    minimax_coefficients,
    minimax_kernel,
)
from ldpsample.estimate import accuracy_plan
from ldpsample.events import PrivacyAuditError
from ldpsample.events.scoring import release_kernel
from ldpsample.pipeline.config_check.release import events_release_problems
from ldpsample.publish import (
    Ledger,
    SeededUniforms,
    SpecError,
    build_spec,
    publish_release,
    read_device_spec,
    read_spec,
    release_items,
    release_on_device,
    write_spec,
)
from ldpsample.publish.client import audit_spec
from ldpsample.publish.spec import JOINT_LABEL


def public_table(path, masses=None):
    """A public prior table, attribute ``grp``: per subcategory its items' public counts."""
    masses = masses or {"s1": {"a": 1.0, "b": 3.0, "c": 6.0}, "s2": {"a": 5.0, "b": 3.0, "c": 2.0}}
    rows = [
        (f"p{k}{item}", item, count, sub)
        for k, (sub, items) in enumerate(masses.items())
        for item, count in items.items()
    ]
    pl.DataFrame(rows, schema=["user", "item", "n", "grp"], orient="row").write_parquet(path)
    return {"path": str(path), "user": "user", "item": "item", "count": "n", "attributes": ["grp"]}


def joint_spec(prior, **changes):
    options = dict(
        name="t",
        key="events.t",
        attributes=["grp"],
        prior=prior,
        epsilons=[1.0, 2.0],
        release_mode="joint",
    )
    options.update(changes)
    return build_spec(**options)


# ---- the spec ------------------------------------------------------------------------------------


def test_the_spec_records_the_mode_and_the_public_shares_of_each_source(tmp_path):
    prior = public_table(
        tmp_path / "public.parquet", {"s1": {"a": 1.0, "b": 3.0}, "s2": {"a": 6.0}}
    )
    spec = joint_spec(prior)
    assert spec.release_mode == "joint" and spec.shares == {"grp": {"s1": 0.4, "s2": 0.6}}
    assert spec.provenance["subcategory_shares"]["kind"] == "public table"
    joint = spec.joint_domain().sort("subcategory", "item")
    assert joint["q"].to_list() == pytest.approx([0.4 * 0.25, 0.4 * 0.75, 0.6])
    write_spec(spec, tmp_path / "spec")
    manifest = json.loads((tmp_path / "spec/manifest.json").read_text())
    assert manifest["release_mode"] == "joint"
    assert manifest["subcategory_shares"] == {"grp": {"s1": 0.4, "s2": 0.6}}
    assert manifest["epsilon_per_user_per_release"] == 3.0  # one attribute × Σε × 1 sample
    back = read_spec(tmp_path / "spec")
    assert back.release_mode == "joint" and back.shares == spec.shares
    assert spec.budget_bound == back.budget_bound == 3.0
    uniform = joint_spec(prior, subcategory_shares="uniform")
    assert uniform.shares == {"grp": {"s1": 0.5, "s2": 0.5}}
    given = joint_spec(prior, subcategory_shares={"grp": {"s1": 1, "s2": 3}})
    assert given.shares == {"grp": {"s1": 0.25, "s2": 0.75}}
    assert given.provenance["subcategory_shares"] == {"kind": "config"}
    listed = build_spec(
        name="t",
        key="events.t",
        attributes=["grp"],
        prior="uniform",
        items=["a", "b"],
        subcategories={"grp": ["s1", "s2", "s3"]},
        epsilons=[1.0],
        release_mode="joint",
    )
    assert listed.shares == {"grp": {"s1": 1 / 3, "s2": 1 / 3, "s3": 1 / 3}}
    per_sub = joint_spec(prior, release_mode=None)
    assert per_sub.release_mode == "per_subcategory" and per_sub.shares is None
    assert per_sub.budget_bound == 2 * 3.0


def test_a_reused_spec_keeps_its_mode_and_shares(tmp_path):
    prior = public_table(tmp_path / "public.parquet")
    write_spec(joint_spec(prior, subcategory_shares={"grp": {"s1": 1, "s2": 4}}), tmp_path / "j")
    reused = joint_spec({"spec": str(tmp_path / "j")}, release_mode=None)
    assert reused.release_mode == "joint" and reused.shares == {"grp": {"s1": 0.2, "s2": 0.8}}
    assert reused.provenance["subcategory_shares"] == {"kind": "spec"}
    with pytest.raises(SpecError, match=r"^config key events.t.release_mode: 'per_subcategory'"):
        joint_spec({"spec": str(tmp_path / "j")}, release_mode="per_subcategory")
    with pytest.raises(SpecError, match=r"^config key events.t.subcategory_shares: a reused"):
        joint_spec({"spec": str(tmp_path / "j")}, subcategory_shares="uniform")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"release_mode": None, "subcategory_shares": "uniform"},
            "subcategory_shares: only a joint",
        ),
        ({"attributes_public": True}, "release_mode: a joint release keeps membership hidden"),
        ({"subcategory_shares": {"grp": {"s1": 1}}}, r"subcategory_shares: list a share.*'s2'"),
        ({"subcategory_shares": {"grp": {"s1": 1, "s2": 0}}}, "'s2' has share 0"),
        ({"release_mode": "both"}, "release_mode: 'both' is not one of"),
        (
            {"epsilons": [30.0], "subcategory_shares": {"grp": {"s1": 1, "s2": 1e-13}}},
            "below the sampling floor.*subcategory_shares can raise the smallest",
        ),
    ],
)
def test_joint_spec_errors_name_their_key(tmp_path, changes, message):
    with pytest.raises(SpecError, match=f"^config key events.t.*{message}"):
        joint_spec(public_table(tmp_path / "public.parquet"), **changes)


def two_attribute_spec(**changes):
    """A uniform-prior joint spec of two attributes (3 and 2 subcategories), π listed."""
    options = dict(
        name="t",
        key="events.t",
        attributes=["country", "device"],
        prior="uniform",
        items=["a", "b", "c"],
        subcategories={"country": ["de", "fr", "it"], "device": ["phone", "tablet"]},
        epsilons=[1.0, 4.0],
        samples=2,
        release_mode="joint",
        subcategory_shares={
            "country": {"de": 1, "fr": 2, "it": 5},
            "device": {"phone": 3, "tablet": 1},
        },
    )
    options.update(changes)
    return build_spec(**options)


@pytest.mark.parametrize("kind", ["public table", "two attributes"])
def test_each_users_joint_draws_on_device_equal_release_items(tmp_path, kind):
    """The core-install client draws a joint spec as release_items does: for the same uniforms
    every user's rows are the same (one per attribute, ε and sample, naming the drawn
    subcategory and item), with users without data (p := q) and counts outside the domain;
    ``ldpsample show`` prints the mode and its cost."""
    if kind == "public table":
        spec = joint_spec(
            public_table(tmp_path / "public.parquet"),
            samples=2,
            subcategory_shares={"grp": {"s1": 1, "s2": 3}},
        )
    else:
        spec = two_attribute_spec()
    write_spec(spec, tmp_path / "spec")
    joint = spec.joint_domain()
    keys = list(joint.select("attribute", "subcategory", "item").iter_rows())
    rng = np.random.default_rng(6)
    rows = [
        (f"u{u:02d}", attribute, sub, item, float(rng.integers(1, 4)))
        for u in range(30)
        for attribute, sub, item in keys
        if rng.random() < 0.25
    ]
    attribute = keys[0][0]
    rows += [("u03", attribute, keys[0][1], "zz", 2.0), ("u90", attribute, "s9", "a", 1.0)]
    users = sorted({r[0] for r in rows} | {"u95"})  # u90: only outside; u95: no data at all
    hist = histograms(rows)
    want = release_items(
        read_spec(tmp_path / "spec"), hist, uniforms=SeededUniforms(8), users=users
    ).released
    device = read_device_spec(tmp_path / "spec")
    assert device.release_mode == "joint" and device.budget_bound == spec.budget_bound
    frame = release_on_devices(device, hist, users=users, seed=8)
    attributes = len({k[0] for k in keys})
    assert frame.height == want.height == len(users) * attributes * 2 * 2
    assert frame.equals(want)
    shown = subprocess.run(
        [sys.executable, "-m", "ldpsample", "show", str(tmp_path / "spec")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "joint" in shown and f"{spec.budget_bound} epsilon per user (attributes x" in shown


def test_the_device_client_audits_the_joint_kernel_it_draws_from(tmp_path, monkeypatch):
    """A leaky joint kernel (the minimax kernel at 2ε) releases nothing on the device either."""
    write_spec(two_attribute_spec(), tmp_path / "spec")
    device = read_device_spec(tmp_path / "spec")
    assert len(release_on_device(device, {}, user="u", uniforms=SeededUniforms(1))) == 8

    def leaky(q, *, epsilon):
        return minimax_coefficients(q, epsilon=2 * epsilon)

    monkeypatch.setattr(release_kernel, "minimax_release_kernel", leaky)
    with pytest.raises(PrivacyAuditError, match=r"release of t, country='\(joint\)'.*exceeds"):
        release_on_device(device, {}, user="u", uniforms=SeededUniforms(1))


# ---- the draws, the audit and the ledger -------------------------------------------------------


def test_every_user_draws_once_per_attribute_from_the_dense_inverse_cdf_of_the_joint_pK(tmp_path):
    """Same uniforms, same items: the joint release is the inverse CDF of p K_{q,ε} with
    q = π(s) q_s(i) on the joint domain and p the user's own (subcategory, item) histogram."""
    spec = joint_spec(public_table(tmp_path / "public.parquet"), samples=2)
    rng = np.random.default_rng(4)
    joint = spec.joint_domain()
    keys = list(joint.select("subcategory", "item").iter_rows())
    rows = [
        (f"u{u:02d}", "grp", sub, item, float(rng.integers(1, 4)))
        for u in range(25)
        for sub, item in keys
        if rng.random() < 0.3
    ]
    rows.append(("u90", "grp", "s9", "a", 1.0))  # only outside the domain
    users = sorted({r[0] for r in rows} | {"u95"})  # u95: no data at all
    result = release_items(spec, histograms(rows), uniforms=SeededUniforms(8), users=users)
    assert result.rows_outside_domain == 1
    per = result.released.group_by("user", "epsilon", "attribute").len()
    assert per.height == len(users) * 2 and set(per["len"]) == {2}  # samples, not × subcategories
    q = joint["q"].to_numpy()
    P = np.tile(q, (len(users), 1))
    hist = histograms(rows)
    for i, user in enumerate(users):
        counts = np.array(
            [
                hist.filter(
                    (pl.col("user") == user) & (pl.col("subcategory") == s) & (pl.col("item") == it)
                )["count"].sum()
                for s, it in keys
            ],
            float,
        )
        if counts.sum():
            P[i] = counts / counts.sum()
    for eps in spec.epsilons:
        K = minimax_coefficients(q, epsilon=eps)
        for sample in range(2):
            u = SeededUniforms(8).uniforms(
                users, attribute="grp", subcategory=JOINT_LABEL, epsilon=eps, sample=sample
            )
            want = [keys[j] for j in inverse_cdf_sorted(apply_minimax(P, K), K, uniforms=u)]
            got = result.released.filter(
                (pl.col("epsilon") == eps) & (pl.col("sample") == sample)
            ).sort("user")
            assert got["user"].to_list() == users
            assert list(got.select("subcategory", "item").iter_rows()) == want
    report = result.report.filter(pl.col("epsilon") == 1.0)
    assert report["subcategory"].to_list() == [JOINT_LABEL]
    assert report["n_items"].to_list() == [6]
    assert report["users_without_data"].to_list() == [2]  # u90 and u95


def test_every_joint_kernel_is_audited_and_a_broken_one_stops_the_release(tmp_path, monkeypatch):
    spec = joint_spec(public_table(tmp_path / "public.parquet"))
    audit = audit_spec(spec)
    assert audit.select("subcategory", "epsilon").rows() == [(JOINT_LABEL, 1.0), (JOINT_LABEL, 2.0)]
    assert audit["realized_epsilon"].to_list() == pytest.approx([1.0, 2.0], rel=1e-9)

    def leaky(q, *, epsilon):
        return minimax_coefficients(q, epsilon=2 * epsilon)

    monkeypatch.setattr(release_kernel, "minimax_release_kernel", leaky)
    with pytest.raises(PrivacyAuditError, match=r"grp='\(joint\)'.*exceeds the claimed epsilon"):
        audit_spec(spec)
    with pytest.raises(PrivacyAuditError, match="exceeds the claimed epsilon"):
        release_items(
            spec,
            histograms([("u1", "grp", "s1", "a", 1.0)]),
            uniforms=SeededUniforms(0),
        )


def test_the_ledger_charges_sum_of_epsilon_times_samples_per_attribute_and_user(tmp_path):
    spec = joint_spec(public_table(tmp_path / "public.parquet"), samples=3)
    write_spec(spec, tmp_path / "spec")
    hist = histograms([("u1", "grp", "s1", "a", 1.0), ("u1", "grp", "s2", "c", 2.0)])
    published = publish_release(
        spec,
        hist,
        spec_folder=tmp_path / "spec",
        uniforms=SeededUniforms(1),
        ledger=tmp_path / "privacy/ledger.sqlite",
        budget=None,
        key="events.t.budget",
        folder=tmp_path / "publish",
        users=["u1", "u2"],
        project=tmp_path,
    )
    totals = Ledger(tmp_path / "privacy/ledger.sqlite").totals().sort("user")
    assert totals["total_epsilon"].to_list() == [9.0, 9.0]  # (1 + 2) × 3 samples, 1 attribute
    assert totals["draws"].to_list() == [6, 6]
    released = pl.read_parquet(tmp_path / "publish/released/eps~1.parquet")
    assert released.columns == ["epsilon", "user", "attribute", "subcategory", "sample", "item"]
    assert released.height == 2 * 3
    assert published.release.released.height == 2 * 3 * 2
    text = (tmp_path / "publish/README.md").read_text()
    assert "attributes × Σε × samples" in text and "subcategory_shares" in text


# ---- the privacy test, both ways ----------------------------------------------------------------


def point_masses(users=2000):
    """A: all data on (s1, a), the joint item of smallest q = π(s1) q_s1(a); B: on (s2, b), another
    subcategory (so a leak of the subcategory shows too)."""
    rows = [(f"A{k:04d}", "grp", "s1", "a", 1.0) for k in range(users)]
    rows += [(f"B{k:04d}", "grp", "s2", "b", 1.0) for k in range(users)]
    return histograms(rows)


def lower_bound(released, hit):
    a = released.filter(pl.col("user").str.starts_with("A"))
    b = released.filter(pl.col("user").str.starts_with("B"))
    return epsilon_lower_bound(
        int(a.select(hit.sum()).item()),
        a.height,
        int(b.select(hit.sum()).item()),
        b.height,
        alpha=1e-6,
    )


def test_the_one_sided_test_passes_the_joint_release_and_fails_3_epsilon_and_a_subcategory_leak(
    tmp_path,
):
    prior = public_table(tmp_path / "public.parquet")
    hist = point_masses()
    is_a = (pl.col("subcategory") == "s1") & (pl.col("item") == "a")
    in_s1 = pl.col("subcategory") == "s1"
    for seed in range(2):
        real = release_items(
            joint_spec(prior, epsilons=[1.0], samples=2), hist, uniforms=SeededUniforms(seed)
        ).released
        assert lower_bound(real, is_a) <= 1.0
        assert lower_bound(real, in_s1) <= 1.0
        wide = release_items(
            joint_spec(prior, epsilons=[3.0], samples=2), hist, uniforms=SeededUniforms(seed)
        ).released
        assert lower_bound(wide, is_a) > 1.0
        # a draw that leaks the subcategory: each user draws only in its own subcategory
        leak = release_items(
            joint_spec(prior, epsilons=[1.0], samples=2, release_mode=None, attributes_public=True),
            hist,
            uniforms=SeededUniforms(seed),
        ).released
        assert lower_bound(leak, in_s1) > 1.0


def test_the_accuracy_plan_of_a_joint_spec_is_one_cell_per_attribute_on_the_joint_domain(tmp_path):
    """Predicted SEs from public inputs only: sqrt((Σ_j q_j (K^{-1})_{ji}^2 - q_i^2) / N) with
    the dense inverse of the joint kernel, q = π(s) q_s(i)."""
    spec = joint_spec(public_table(tmp_path / "public.parquet"), samples=2)
    plan = accuracy_plan(spec, users=500)
    assert plan.cells.select("subcategory", "epsilon", "items", "draws").rows() == [
        (JOINT_LABEL, 1.0, 6, 1000),
        (JOINT_LABEL, 2.0, 6, 1000),
    ]
    joint = spec.joint_domain()
    q = joint["q"].to_numpy()
    inverse = np.linalg.inv(minimax_kernel(q, epsilon=2.0))
    want = np.sqrt((q @ inverse**2 - q**2) / 1000)
    got = plan.items.filter(pl.col("epsilon") == 2.0)
    assert got.select("subcategory", "item").rows() == joint.select("subcategory", "item").rows()
    assert np.allclose(got["predicted_se"].to_numpy(), want, rtol=1e-9)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"release_mode": "joint", "attributes_public": True},
            "config error at events.t.release_mode: 'joint' keeps membership hidden",
        ),
        (
            {"subcategory_shares": "uniform"},
            "config error at events.t.subcategory_shares: 'uniform': only a joint release",
        ),
    ],
)
def test_joint_key_conflicts_are_refused_before_any_job(changes, message):
    entry = {
        "release": True,
        "prior": {"path": "public.parquet"},
        "attributes": ["grp"],
        "items": None,
        "subcategories": None,
        "top_items": "auto",
        "rank_items_by": None,
        "min_users": 1,
        "min_user_count": 0,
        "attributes_public": False,
        "release_mode": None,
        "subcategory_shares": None,
    }
    assert events_release_problems("events.t", entry) == []
    (problem,) = events_release_problems("events.t", {**entry, **changes})
    assert problem.startswith(message)


def test_with_two_attributes_the_charge_is_per_attribute_not_per_subcategory(tmp_path):
    spec = two_attribute_spec(subcategory_shares=None)
    assert spec.budget_bound == 2 * 5.0 * 2  # attributes × Σε × samples (not 5 subcategories)
    write_spec(spec, tmp_path / "spec")
    hist = histograms([("u1", "country", "fr", "b", 1.0), ("u1", "device", "phone", "a", 2.0)])
    publish_release(
        spec,
        hist,
        spec_folder=tmp_path / "spec",
        uniforms=SeededUniforms(3),
        ledger=tmp_path / "privacy/ledger.sqlite",
        budget=20.0,
        key="events.t.budget",
        folder=tmp_path / "publish",
        users=["u1", "u2"],
        project=tmp_path,
    )
    totals = Ledger(tmp_path / "privacy/ledger.sqlite").totals().sort("user")
    assert totals["total_epsilon"].to_list() == [20.0, 20.0]
    released = pl.read_parquet(tmp_path / "publish/released/eps~4.parquet")
    assert released.group_by("user", "attribute").len()["len"].to_list() == [2] * 4
