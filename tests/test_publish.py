"""The publication library (ldpsample.publish): the spec from public inputs only, the
client-side draws with secret or per-user seeded randomness, the ledger and its budget, the
order of a publication (nothing drawn or written on a refusal), and the black-box privacy test
(ldpsample.empirical) passing the real mechanism and failing one built for 3ε."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpsample import (
    apply_minimax,
    epsilon_lower_bound,
    inverse_cdf,
    inverse_cdf_sorted,
    minimax_coefficients,
    minimax_kernel,
    sample_categorical,
    tv_distance,
)
from ldpsample.events import PrivacyAuditError
from ldpsample.pipeline import config_check
from ldpsample.publish import (
    BudgetExceededError,
    Ledger,
    SecureUniforms,
    SeededUniforms,
    SpecError,
    build_spec,
    check_release_budget,
    publish_release,
    read_spec,
    release_items,
    spec_sha256,
    write_spec,
)
from ldpsample.publish.client import RELEASED_SCHEMA

ROOT = Path(__file__).resolve().parents[1]


def public_table(path: Path) -> dict:
    """A public prior table: countries de, fr (it has no public rows), items a-d."""
    rows = [("p1", "a", 1.0, "de"), ("p2", "b", 3.0, "de"), ("p3", "c", 6.0, "de")]
    rows += [("p4", "a", 5.0, "fr"), ("p5", "b", 5.0, "fr"), ("p6", "d", 0.0, "fr")]
    pl.DataFrame(rows, schema=["user", "item", "n", "country"], orient="row").write_parquet(path)
    return {
        "path": str(path),
        "user": "user",
        "item": "item",
        "count": "n",
        "attributes": ["country"],
    }


def spec_of(prior, **changes):
    options = dict(name="t", key="events.t", attributes=["country"], prior=prior, epsilons=[1, 2])
    options.update(changes)
    return build_spec(**options)


def histograms(rows):
    return pl.DataFrame(
        rows, schema=["user", "attribute", "subcategory", "item", "count"], orient="row"
    )


# ---- the spec ---------------------------------------------------------------------------------


def test_spec_from_a_public_table_orders_items_by_q_and_records_provenance(tmp_path):
    prior = public_table(tmp_path / "public.parquet")
    spec = spec_of(prior)
    de = spec.domain.filter(pl.col("subcategory") == "de")
    assert de["item"].to_list() == ["a", "b", "c"] and de["position"].to_list() == [0, 1, 2]
    assert np.allclose(de["q"], [0.1, 0.3, 0.6])
    fr = spec.domain.filter(pl.col("subcategory") == "fr")
    assert fr["item"].to_list() == ["a", "b"]  # d has no public mass: not in the domain
    assert spec.subcategories == [("country", "de"), ("country", "fr")]
    assert spec.budget_bound == 2 * 3.0 * 1
    provenance = spec.manifest()["provenance"]["prior"]
    assert provenance["kind"] == "public table" and len(provenance["sha256"]) == 64
    top = spec_of(prior, top_items=2).domain.filter(pl.col("subcategory") == "de")
    assert top["item"].to_list() == ["b", "c"]  # the two most frequent public items


def test_spec_with_listed_items_keeps_the_whole_domain_and_smooths(tmp_path):
    prior = public_table(tmp_path / "public.parquet")
    spec = spec_of(prior, items=["a", "b", "c", "d"])
    fr = spec.domain.filter(pl.col("subcategory") == "fr")
    assert sorted(fr["item"]) == ["a", "b", "c", "d"]
    assert fr.filter(pl.col("q") == 0)["item"].sort().to_list() == ["c", "d"]
    smoothed = spec_of(prior, items=["a", "b", "c", "d"], prior_smoothing=0.2)
    q = smoothed.domain.filter(pl.col("subcategory") == "fr").sort("item")["q"].to_numpy()
    assert np.allclose(q, 0.8 * np.array([0.5, 0.5, 0, 0]) + 0.2 / 4)
    assert smoothed.domain.group_by("subcategory").agg(pl.col("q").sum())["q"].to_list() == (
        pytest.approx([1.0, 1.0])
    )


@pytest.mark.parametrize(
    ("prior", "changes", "message"),
    [
        ("pooled", {}, "config key events.t.prior: 'pooled' is computed from the users"),
        ("uniform", {}, "config key events.t.items: the item domain of a release must be public"),
        ("uniform", {"items": ["a"]}, "config key events.t.subcategories: the released"),
        (
            "uniform",
            {"items": ["a"], "subcategories": {"device": ["x"]}},
            "['device'] are not attributes",
        ),
    ],
)
def test_spec_refuses_what_is_not_public(prior, changes, message):
    with pytest.raises(SpecError) as error:
        spec_of(prior, **changes)
    assert str(error.value).startswith("config key events.t.")
    assert message in str(error.value)


def test_spec_errors_name_listed_subcategories_and_empty_mass(tmp_path):
    prior = public_table(tmp_path / "public.parquet")
    with pytest.raises(SpecError, match=r"events.t.subcategories.country: \['it'\] not in"):
        spec_of(prior, subcategories={"country": ["de", "it"]})
    with pytest.raises(SpecError, match=r"country='fr' has no public mass on its items"):
        spec_of(prior, items=["c", "d"])
    restricted = spec_of(prior, subcategories={"country": ["fr"]})
    assert restricted.subcategories == [("country", "fr")]


def test_spec_files_round_trip_byte_identically_and_detect_tampering(tmp_path):
    prior = public_table(tmp_path / "public.parquet")
    spec = spec_of(prior, items=["a", "b", "c", "d"], prior_smoothing=0.1, samples=3)
    first = write_spec(spec, tmp_path / "one")
    second = write_spec(
        spec_of(prior, items=["d", "c", "b", "a"], prior_smoothing=0.1, samples=3), tmp_path / "two"
    )
    assert first == second == spec_sha256(tmp_path / "one/manifest.json")
    for name in ("domain.csv", "manifest.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    back = read_spec(tmp_path / "one")
    assert back.domain.equals(spec.domain) and back.epsilons == (1.0, 2.0) and back.samples == 3
    domain = tmp_path / "one/domain.csv"
    domain.write_text(domain.read_text().replace("0.", "0.0", 1))
    with pytest.raises(SpecError, match="sha256 differs"):
        read_spec(tmp_path / "one")


def test_a_reused_spec_gives_the_same_domain_and_q(tmp_path):
    spec = spec_of(public_table(tmp_path / "public.parquet"))
    write_spec(spec, tmp_path / "old")
    again = spec_of({"spec": str(tmp_path / "old")}, epsilons=[4])
    assert again.domain.equals(spec.domain)
    assert again.manifest()["provenance"]["prior"]["kind"] == "spec"
    with pytest.raises(SpecError, match="is for attributes"):
        build_spec(
            name="t",
            key="events.t",
            attributes=["device"],
            prior={"spec": str(tmp_path / "old")},
            epsilons=[1],
        )


def test_the_manifest_says_how_the_randomness_is_made(tmp_path):
    prior = public_table(tmp_path / "public.parquet")
    assert spec_of(prior).manifest()["randomness"]["publishable"] is True
    seeded = spec_of(prior, seeded=True).manifest()["randomness"]
    assert seeded["publishable"] is False and "not for publication" in seeded["note"]
    assert "hidden" in spec_of(prior).manifest()["membership"]
    assert "public" in spec_of(prior, attributes_public=True).manifest()["membership"]


# ---- randomness ---------------------------------------------------------------------------------


def test_seeded_uniforms_depend_on_the_user_and_the_draw_only():
    source = SeededUniforms(11)
    keys = dict(attribute="country", subcategory="de", epsilon=1.0, sample=0)
    many = source.uniforms([f"u{i}" for i in range(1000)], **keys)
    alone = source.uniforms(["u7"], **keys)
    assert alone[0] == many[7] and ((many >= 0) & (many < 1)).all()
    assert len(set(many.tolist())) == 1000
    for change in ({"sample": 1}, {"epsilon": 2.0}, {"subcategory": "fr"}, {"attribute": "a"}):
        assert source.uniforms(["u7"], **{**keys, **change})[0] != alone[0], change
    assert SeededUniforms(12).uniforms(["u7"], **keys)[0] != alone[0]
    # uniform on [0, 1): 20 bins of 1000 draws, chi-square far below its 1e-6 quantile
    counts = np.bincount((many * 20).astype(int), minlength=20)
    assert ((counts - 50) ** 2 / 50).sum() < 60
    with pytest.raises(TypeError):
        SeededUniforms("7")
    with pytest.raises(ValueError):
        SeededUniforms(-1)


def test_secure_uniforms_are_fresh_at_every_call():
    keys = dict(attribute="a", subcategory="s", epsilon=1.0, sample=0)
    first = SecureUniforms().uniforms(["u"] * 5000, **keys)
    second = SecureUniforms().uniforms(["u"] * 5000, **keys)
    assert ((first >= 0) & (first < 1)).all() and not np.array_equal(first, second)
    assert abs(first.mean() - 0.5) < 0.03  # sd of the mean is 0.004


def test_inverse_cdf_is_sample_categoricals_draw():
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(7), size=500)
    P[:, 2] = 0
    P /= P.sum(axis=1, keepdims=True)
    want = sample_categorical(P, rng=np.random.default_rng(9))
    assert np.array_equal(inverse_cdf(P, np.random.default_rng(9).random(500)), want)
    with pytest.raises(ValueError, match="uniforms must lie in"):
        inverse_cdf(P[:2], [0.5, 1.0])


# ---- client-side release ---------------------------------------------------------------------


def test_every_user_releases_in_every_subcategory_unless_attributes_are_public(tmp_path):
    prior = public_table(tmp_path / "public.parquet")
    rows = [("u1", "country", "de", "a", 2.0), ("u2", "country", "fr", "b", 1.0)]
    rows += [("u3", "country", "de", "zz", 1.0)]  # only outside the domain
    hist = histograms(rows)
    spec = spec_of(prior, samples=2)
    result = release_items(spec, hist, uniforms=SeededUniforms(1))
    assert result.rows_outside_domain == 1
    per_user = result.released.group_by("user").len().sort("user")
    assert per_user["len"].to_list() == [2 * 2 * 2] * 3  # subcategories x ε x samples
    report = result.report.filter(pl.col("epsilon") == 1.0).sort("subcategory")
    assert report["users_with_data"].to_list() == [1, 1]
    assert report["users_without_data"].to_list() == [2, 2]
    public = release_items(spec_of(prior, attributes_public=True), hist, uniforms=SeededUniforms(1))
    assert sorted(public.released.select("user", "subcategory").unique().iter_rows()) == [
        ("u1", "de"),
        ("u2", "fr"),
    ]
    with pytest.raises(ValueError, match="users with data are not in users"):
        release_items(spec, hist, uniforms=SeededUniforms(1), users=["u1", "u3"])
    listed = release_items(spec, hist, uniforms=SeededUniforms(1), users=["u1", "u2", "u3", "u9"])
    assert sorted(set(listed.released["user"])) == ["u1", "u2", "u3", "u9"]


def test_a_spec_without_samples_releases_no_row(tmp_path):
    """The release's rows are assembled per subcategory and ε from all samples at once; with
    ``samples=0`` that is no row (and the report still lists every subcategory and ε)."""
    prior = public_table(tmp_path / "public.parquet")
    hist = histograms([("u1", "country", "de", "a", 2.0), ("u2", "country", "fr", "b", 1.0)])
    result = release_items(spec_of(prior, samples=0), hist, uniforms=SeededUniforms(1))
    assert result.released.height == 0 and result.released.schema == RELEASED_SCHEMA
    assert result.report.height == 2 * 2  # subcategories x ε


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    drop=st.sets(st.integers(0, 19), max_size=15),
    eps=st.sampled_from([0.5, 1.0, 4.0]),
)
def test_a_users_seeded_draws_do_not_depend_on_other_users(seed, drop, eps):
    rng = np.random.default_rng(seed)
    items = [f"i{k}" for k in range(6)]
    spec = build_spec(
        name="t",
        key="events.t",
        attributes=[],
        prior="uniform",
        items=items,
        epsilons=[eps],
        samples=2,
    )
    rows = [
        (f"u{u:02d}", "all", "all", items[k], float(rng.integers(1, 5)))
        for u in range(20)
        for k in range(6)
        if rng.random() < 0.4
    ]
    hist = histograms(rows)
    users = [f"u{u:02d}" for u in range(20)]
    full = release_items(spec, hist, uniforms=SeededUniforms(seed), users=users).released
    kept = [u for i, u in enumerate(users) if i not in drop]
    part = release_items(
        spec, hist.filter(pl.col("user").is_in(kept)), uniforms=SeededUniforms(seed), users=kept
    ).released
    assert part.equals(full.filter(pl.col("user").is_in(kept)))


def test_the_clients_sparse_draws_are_the_dense_inverse_cdf_of_pK(tmp_path):
    """release_items draws in O(k log n) (sample_minimax_sparse); the same uniforms on the dense
    p K (apply_minimax) in the kernel's sorted order give the same items, users without data
    drawing from q."""
    spec = spec_of(
        public_table(tmp_path / "public.parquet"), items=["a", "b", "c", "d"], prior_smoothing=0.1
    )
    rng = np.random.default_rng(5)
    rows = [
        (f"u{u}", "country", sub, item, float(rng.integers(1, 4)))
        for u in range(30)
        for sub in ("de", "fr")
        for item in "abcd"
        if rng.random() < 0.3
    ]
    users = sorted(f"u{u}" for u in range(35))  # five without any data
    result = release_items(spec, histograms(rows), uniforms=SeededUniforms(8), users=users)
    hist = histograms(rows)
    for (attribute, sub), eps in ((("country", "de"), 1.0), (("country", "fr"), 2.0)):
        items, q = spec.prior_of(attribute, sub)
        P = np.tile(q, (35, 1))
        for i, user in enumerate(users):
            mine = hist.filter((pl.col("user") == user) & (pl.col("subcategory") == sub))
            if mine.height:
                counts = np.array(
                    [mine.filter(pl.col("item") == it)["count"].sum() for it in items], float
                )
                P[i] = counts / counts.sum()
        K = minimax_coefficients(q, epsilon=eps)
        u = SeededUniforms(8).uniforms(
            users, attribute=attribute, subcategory=sub, epsilon=eps, sample=0
        )
        want = items.gather(inverse_cdf_sorted(apply_minimax(P, K), K, uniforms=u)).to_list()
        got = result.released.filter((pl.col("subcategory") == sub) & (pl.col("epsilon") == eps))
        assert got["user"].to_list() == users and got["item"].to_list() == want


@pytest.mark.slow
def test_the_release_distribution_is_pK_of_the_specs_prior_not_p(tmp_path):
    """The one-user attack of the issue: one user, a public prior; its 20,000 draws follow
    p K_{q,ε} (chi-square goodness of fit), not p (item b has p = 0 and is drawn)."""
    prior = public_table(tmp_path / "public.parquet")
    spec = spec_of(prior, subcategories={"country": ["de"]}, epsilons=[1.0], samples=20_000)
    hist = histograms([("solo", "country", "de", "a", 1.0), ("solo", "country", "de", "c", 9.0)])
    released = release_items(spec, hist, uniforms=SeededUniforms(2)).released
    items, q = spec.prior_of("country", "de")
    p = np.array([0.1, 0.0, 0.9])
    pK = p @ minimax_kernel(q, epsilon=1.0)
    counts = np.array([(released["item"] == i).sum() for i in items.to_list()])
    chi2 = ((counts - 20_000 * pK) ** 2 / (20_000 * pK)).sum()
    assert chi2 < 27.6  # the 1e-6 quantile of chi-square with 2 degrees of freedom
    assert tv_distance(counts / 20_000, p) > 0.1 and counts[1] > 1000


def test_a_broken_kernel_is_caught_before_anything_is_returned(tmp_path, monkeypatch):
    """The same spec and users pass with the release's kernel and fail, in the audit of
    :func:`audit_spec` and of :func:`release_items` alike, once the kernel the release code
    builds is replaced by one built for 3ε."""
    from ldpsample.events.scoring import release_kernel as release_module
    from ldpsample.publish.client import audit_spec

    spec = spec_of(public_table(tmp_path / "public.parquet"))
    hist = histograms([("u1", "country", "de", "a", 1.0)])
    audit = audit_spec(spec)
    assert audit.height == len(spec.subcategories) * len(spec.epsilons)
    assert (audit["realized_epsilon"] <= audit["epsilon"] * (1 + 1e-9)).all()
    assert release_items(spec, hist, uniforms=SeededUniforms(0)).released.height > 0

    def leaky(q, *, epsilon):
        return minimax_coefficients(q, epsilon=3 * epsilon)

    monkeypatch.setattr(release_module, "minimax_release_kernel", leaky)
    with pytest.raises(PrivacyAuditError, match="exceeds the claimed epsilon"):
        audit_spec(spec)
    with pytest.raises(PrivacyAuditError, match="exceeds the claimed epsilon"):
        release_items(spec, hist, uniforms=SeededUniforms(0))


# ---- the privacy test ---------------------------------------------------------------------------


def worst_pair_counts(eps_built, draws, seed):
    """Draws of the minimax kernel built for eps_built from the worst pair of point masses: the
    item of smallest prior mass (a) and another (b); hits = output a."""
    q = np.array([0.2, 0.3, 0.5])
    K = apply_minimax(np.eye(3), q, epsilon=eps_built)
    rng = np.random.default_rng(seed)
    a = (inverse_cdf(np.tile(K[0], (draws, 1)), rng.random(draws)) == 0).sum()
    b = (inverse_cdf(np.tile(K[1], (draws, 1)), rng.random(draws)) == 0).sum()
    return int(a), draws, int(b), draws


def test_the_privacy_test_passes_the_mechanism_and_fails_one_built_for_3_epsilon():
    for seed in range(3):
        assert epsilon_lower_bound(*worst_pair_counts(1.0, 4000, seed), alpha=1e-6) <= 1.0
        assert epsilon_lower_bound(*worst_pair_counts(3.0, 4000, seed), alpha=1e-6) > 1.0


def test_epsilon_lower_bound_values():
    # with huge counts the bound approaches the true log ratio from below
    bound = epsilon_lower_bound(4_000_000, 10_000_000, 1_000_000, 10_000_000, alpha=0.01)
    assert np.log(4) - 0.01 < bound < np.log(4)
    assert epsilon_lower_bound(0, 10, 5, 10, alpha=0.05) == -np.inf
    with pytest.raises(ValueError):
        epsilon_lower_bound(11, 10, 5, 10, alpha=0.05)
    with pytest.raises(ValueError):
        epsilon_lower_bound(1, 10, 5, 10, alpha=1.5)
    with pytest.raises(TypeError):
        epsilon_lower_bound(1.5, 10, 5, 10, alpha=0.1)


# ---- the ledger and a publication ---------------------------------------------------------------


def publication(tmp_path, spec, hist, *, budget, folder="out", **kwargs):
    spec_folder = tmp_path / "spec"
    write_spec(spec, spec_folder)
    options = dict(ledger=tmp_path / "privacy/t.ledger.sqlite", project=tmp_path)
    options.update(kwargs)
    return publish_release(
        spec,
        hist,
        spec_folder=spec_folder,
        uniforms=SeededUniforms(4),
        budget=budget,
        key="events.t.budget",
        folder=tmp_path / folder,
        **options,
    )


def test_the_ledger_adds_up_every_draw_and_refuses_past_the_budget(tmp_path):
    spec = spec_of(public_table(tmp_path / "public.parquet"), samples=2)  # bound 2 x 3 x 2 = 12
    hist = histograms([("u1", "country", "de", "a", 1.0), ("u2", "country", "fr", "b", 2.0)])
    first = publication(tmp_path, spec, hist, budget=30)
    assert json.loads((tmp_path / "out/release.json").read_text())["release_id"] == first.release_id
    publication(tmp_path, spec, hist, budget=30, folder="again")
    ledger = Ledger(tmp_path / "privacy/t.ledger.sqlite")
    totals = ledger.totals()
    assert totals["total_epsilon"].to_list() == [24.0, 24.0]
    assert totals["releases"].to_list() == [2, 2] and totals["draws"].to_list() == [16, 16]
    drawn = sum(
        pl.read_parquet(tmp_path / f"{f}/released/eps~{e:g}.parquet")
        .filter(pl.col("user") == "u1")
        .height
        * e
        for f in ("out", "again")
        for e in spec.epsilons
    )
    assert drawn == 24.0
    with pytest.raises(BudgetExceededError) as refused:
        publication(tmp_path, spec, hist, budget=30, folder="third")
    message = str(refused.value)
    assert message.startswith("config key events.t.budget: 30 would be exceeded")
    assert (
        "projected total of 36.0" in message and "(2 subcategories × Σε 3.0 × 2 samples)" in message
    )
    assert not (tmp_path / "third").exists() or not list((tmp_path / "third").iterdir())
    assert ledger.totals().equals(totals) and ledger.releases().height == 2
    with pytest.raises(BudgetExceededError):
        check_release_budget(spec, ["u1"], ledger=ledger, budget=30, key="events.t.budget")
    assert check_release_budget(spec, ["new"], ledger=ledger, budget=30, key="k") == 12.0


def test_a_failed_publication_records_and_writes_nothing(tmp_path):
    spec = spec_of(public_table(tmp_path / "public.parquet"))
    hist = histograms([("u1", "country", "de", "a", 1.0)])

    def leaky(q, *, epsilon):
        return minimax_coefficients(q, epsilon=3 * epsilon)

    import ldpsample.events.scoring.release_kernel as release_module

    original = release_module.minimax_release_kernel
    release_module.minimax_release_kernel = leaky
    try:
        with pytest.raises(PrivacyAuditError):
            publication(tmp_path, spec, hist, budget=None)
    finally:
        release_module.minimax_release_kernel = original
    assert not list((tmp_path / "out").glob("*")) if (tmp_path / "out").exists() else True
    # the audit runs before the ledger is opened: not even an empty ledger was made
    assert not (tmp_path / "privacy/t.ledger.sqlite").exists()


# ---- config ---------------------------------------------------------------------------------


def test_release_key_defaults_match_the_schema():
    defaults = config_check.events_defaults(ROOT / "workflow/schemas/events.schema.yaml")
    for key, value in config_check.RELEASE_KEYS.items():
        assert defaults[key] == value, key
    assert defaults["release"] is False
    schema = yaml.safe_load((ROOT / "workflow/schemas/events.schema.yaml").read_text())
    assert "release_seed" in schema["$defs"]["dataset"]["properties"]


def test_the_python_example_of_publishing_md_runs(capsys):
    """docs/publishing.md's client-side example, executed as printed."""
    text = (ROOT / "docs/publishing.md").read_text()
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(block, "docs/publishing.md", "exec"), namespace)
    released = namespace["release"].released
    assert released.height == 1 and released["item"][0] in {"news", "sports", "music"}
    assert "epsilon" in capsys.readouterr().out
