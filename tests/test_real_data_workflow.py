"""The MovieLens and Avazu stages through Snakemake, in a temporary copy of the project:
on the partial copies in ../shared/data (values recomputed here from the raw files with plain
Python and numpy, the output contracts, the empty Avazu result with the default thresholds), on
a small generated Avazu-shaped file (``avazu.source: synthetic``, checked against an
independent re-implementation of the published code's filters), on a malformed Avazu file, and
a dry run of ``config/paper.yaml``."""

from __future__ import annotations

import csv
import gzip
import json
from collections import Counter, defaultdict

import numpy as np
import polars as pl
import pytest
from _workflow import (
    ROOT,
    SHARED_DATA,
    copy_workflow,
    dry_run,
    planned_jobs,
    snakemake,
    write_config,
)
from oracle import oracle_kernel
from scipy.special import rel_entr

pytestmark = [
    pytest.mark.workflow,
    pytest.mark.data,
    pytest.mark.skipif(
        not (SHARED_DATA / "ml-1m").is_dir() or not (SHARED_DATA / "avazu").is_dir(),
        reason=f"the shared data copies are not in {SHARED_DATA}",
    ),
]

OTHERS_OFF = {
    "synthetic": False,
    "theory": False,
    "wpm_ring": False,
    "wpm_movielens": False,
    "wpm_gowalla": False,
}
ML_EPSILONS = [2, 5]
AVAZU_ATTRIBUTES = ["C1", "C18"]
VARIANT = "results/movielens/prior~ml-100k_weight~count"
GENRES = (
    "Action",
    "Adventure",
    "Animation",
    "Children's",
    "Comedy",
    "Crime",
    "Documentary",
    "Drama",
    "Fantasy",
    "Film-Noir",
    "Horror",
    "Musical",
    "Mystery",
    "Romance",
    "Sci-Fi",
    "Thriller",
    "War",
    "Western",
)
MAX_TV_COLUMNS = ["epsilon", "group", "method", "max_tv", "n_users"]
AVAZU_COLUMNS = ["epsilon", "attribute", "subcategory", "method", "max_tv", "n_users"]
SUMMARY_COLUMNS = [
    "divergence",
    "method",
    "wins",
    "ties",
    "cases",
    "win_share",
    "mean_improvement",
]


# --------------------------------------------------------------------------------------------
# independent references (plain Python and numpy)
# --------------------------------------------------------------------------------------------


def _mollifier_tv(p: np.ndarray, q: np.ndarray, epsilon: float) -> float:
    """Optimal TV of the projection onto the relative mollifier: max(excess, deficit)."""
    lower, upper = np.exp(-epsilon / 2) * q, np.exp(epsilon / 2) * q
    return max(np.clip(p - upper, 0, None).sum(), np.clip(lower - p, 0, None).sum())


def _ml100k_prior(group_ages: range) -> np.ndarray:
    """Pooled genre counts of the ML-100K users whose age is in ``group_ages``, normalised."""
    folder = SHARED_DATA / "ml-100k"
    names = [line.split("|")[0] for line in (folder / "u.genre").read_text().splitlines() if line]
    movie_genres = {}
    for line in (folder / "u.item").read_text(encoding="latin-1").splitlines():
        fields = line.split("|")
        movie_genres[int(fields[0])] = [
            g for g, f in zip(names, fields[5:], strict=True) if f == "1"
        ]
    ages = {}
    for line in (folder / "u.user").read_text().splitlines():
        fields = line.split("|")
        ages[int(fields[0])] = int(fields[1])
    mass = Counter()
    for line in (folder / "u.data").read_text().splitlines():
        user, movie = map(int, line.split("\t")[:2])
        if ages[user] in group_ages:
            mass.update(g for g in movie_genres[movie] if g in GENRES)
    q = np.array([mass[g] for g in GENRES], dtype=float)
    return q / q.sum()


def _ml1m_histograms(age_codes: set[int]) -> dict[int, np.ndarray]:
    """Normalised genre counts of the ML-1M users with one of ``age_codes``."""
    folder = SHARED_DATA / "ml-1m"
    movie_genres = {}
    for line in (folder / "movies.dat").read_text(encoding="latin-1").splitlines():
        movie, _, genres = line.split("::")
        movie_genres[int(movie)] = genres.split("|")
    codes = {}
    for line in (folder / "users.dat").read_text().splitlines():
        fields = line.split("::")
        codes[int(fields[0])] = int(fields[2])
    counts: dict[int, Counter] = defaultdict(Counter)
    with gzip.open(folder / "ratings.dat.gz", "rt") as handle:
        for line in handle:
            user, movie = map(int, line.split("::")[:2])
            if codes[user] in age_codes:
                counts[user].update(g for g in movie_genres[movie] if g in GENRES)
    out = {}
    for user, c in counts.items():
        p = np.array([c[g] for g in GENRES], dtype=float)
        out[user] = p / p.sum()
    return out


def _avazu_reference(path, attribute, *, min_rows, top_sites, min_users):
    """The published code's filters, re-implemented on the raw CSV: devices with >= min_rows
    rows in the whole file; per subcategory, the top_sites websites by clicks of those devices'
    rows (ties by site_id); a device's p = its impressions on them; subcategories with at least
    min_users devices. Returns {subcategory: (P, q)}."""
    with gzip.open(path, "rt", newline="") as handle:
        rows = [
            (r["device_id"], r["site_id"], int(r["click"]), int(r[attribute]))
            for r in csv.DictReader(handle)
        ]
    activity = Counter(device for device, *_ in rows)
    rows = [r for r in rows if activity[r[0]] >= min_rows]
    clicks: dict[int, Counter] = defaultdict(Counter)
    for _, site, click, sub in rows:
        clicks[sub][site] += click
    out = {}
    for sub, site_clicks in clicks.items():
        top = sorted(site_clicks, key=lambda s: (-site_clicks[s], s))[:top_sites]
        top_set = set(top)
        counts: dict[str, Counter] = defaultdict(Counter)
        for device, site, _, s in rows:
            if s == sub and site in top_set:
                counts[device][site] += 1
        if len(counts) < min_users:
            continue
        sites = sorted({site for c in counts.values() for site in c})
        P = np.array([[counts[d][s] for s in sites] for d in sorted(counts)], dtype=float)
        P /= P.sum(axis=1, keepdims=True)
        q = P.mean(axis=0)
        out[sub] = (P, q / q.sum())
    return out


# --------------------------------------------------------------------------------------------
# runs
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_run(tmp_path_factory):
    """MovieLens and Avazu on the shared partial copies, switched on by the auto toggles."""
    workdir = copy_workflow(tmp_path_factory.mktemp("real_data_shared"))
    config = write_config(
        workdir,
        "shared",
        {
            "data_dir": str(SHARED_DATA),
            "experiments": {**OTHERS_OFF, "movielens": "auto", "avazu": "auto"},
            "movielens": {"epsilons": ML_EPSILONS},
            "avazu": {"attributes": AVAZU_ATTRIBUTES, "epsilons": [8]},
        },
    )
    snakemake(workdir, "--cores", "2", "--configfile", config)
    return workdir


SYNTHETIC = {
    "source": "synthetic",
    "synthetic": {"rows": 12_000, "users": 300, "sites": 40},
    "attributes": ["C18", "C21"],
    "epsilons": [4, 8],
    "top_sites": 25,
    "min_rows": 10,
    "min_users": 15,
}


@pytest.fixture(scope="module")
def synthetic_run(tmp_path_factory):
    """Avazu on a small generated file, with thresholds that keep some subcategories."""
    workdir = copy_workflow(tmp_path_factory.mktemp("real_data_synthetic"))
    config = write_config(
        workdir,
        "synthetic",
        {
            "experiments": {**OTHERS_OFF, "movielens": False, "avazu": True},
            "avazu": SYNTHETIC,
        },
    )
    snakemake(workdir, "--cores", "2", "--configfile", config)
    return workdir


@pytest.fixture(scope="module")
def fresh_copy(tmp_path_factory):
    """A copy of the project that only dry runs use (each with its own config file)."""
    return copy_workflow(tmp_path_factory.mktemp("real_data_fresh"))


# --------------------------------------------------------------------------------------------
# MovieLens on the shared copies
# --------------------------------------------------------------------------------------------


def test_movielens_prior_matches_a_hand_built_one(shared_run):
    priors = pl.read_parquet(shared_run / VARIANT / "work/priors.parquet")
    q = dict(priors.filter(pl.col("subcategory") == "25-34").select("item", "q").iter_rows())
    np.testing.assert_allclose([q[g] for g in GENRES], _ml100k_prior(range(25, 35)))
    assert sorted(set(priors["subcategory"])) == ["0-24", "25-34", "35-44", "45-49", "50-54", "55+"]


def test_movielens_worst_cases_match_an_independent_computation(shared_run):
    """Age group 45-49 (ML-1M code 45): p from the raw ratings, q from the raw ML-100K files, the
    kernel by the paper's recursion, the mollifier's TV in closed form."""
    histograms = _ml1m_histograms({45})
    P = np.array([histograms[u] for u in sorted(histograms)])
    q = _ml100k_prior(range(45, 50))
    max_tv = pl.read_csv(shared_run / VARIANT / "max_tv.csv")
    max_kl = pl.read_csv(shared_run / VARIANT / "max_kl.csv")
    for eps in ML_EPSILONS:
        released = P @ oracle_kernel(q, eps)
        expected = {
            ("tv", "minimax"): (0.5 * np.abs(P - released).sum(axis=1)).max(),
            ("tv", "mollifier_tv"): max(_mollifier_tv(p, q, eps) for p in P),
            ("kl", "minimax_kl"): rel_entr(P, released).sum(axis=1).max(),
        }
        for (divergence, method), want in expected.items():
            table = max_tv if divergence == "tv" else max_kl
            got = table.filter(
                pl.col("epsilon") == eps, pl.col("group") == "45-49", pl.col("method") == method
            )
            assert got["n_users"].to_list() == [P.shape[0]]
            assert got[f"max_{divergence}"][0] == pytest.approx(want, rel=1e-9), (eps, method)


def test_movielens_output_contract(shared_run):
    base = shared_run / VARIANT
    max_tv, max_kl = pl.read_csv(base / "max_tv.csv"), pl.read_csv(base / "max_kl.csv")
    assert max_tv.columns == MAX_TV_COLUMNS
    assert max_kl.columns == [*MAX_TV_COLUMNS[:3], "max_kl", "n_users"]
    assert set(max_tv["method"]) == {"minimax", "mollifier_tv"}
    assert set(max_kl["method"]) == {"minimax_kl", "mollifier_kl"}
    assert sorted(set(max_tv["epsilon"])) == ML_EPSILONS
    assert max_tv.height == max_kl.height == len(ML_EPSILONS) * 6 * 2
    # Per-user values: one row per (ε, user), and the tables are their maxima.
    per_user = pl.read_parquet(base / "per_user.parquet")
    users = pl.read_parquet(shared_run / "results/movielens/events/ml-1m.parquet")["user_id"]
    assert per_user.height == len(ML_EPSILONS) * users.n_unique() == len(ML_EPSILONS) * 2999
    assert per_user.columns == [
        "epsilon",
        "group",
        "user_id",
        "minimax",
        "mollifier_tv",
        "minimax_kl",
        "mollifier_kl",
    ]
    worst = per_user.group_by("epsilon", "group").agg(pl.col("minimax").max(), pl.len())
    joined = max_tv.filter(pl.col("method") == "minimax").join(worst, on=["epsilon", "group"])
    np.testing.assert_allclose(joined["max_tv"], joined["minimax"], rtol=1e-12)
    assert (joined["n_users"] == joined["len"]).all()
    for name in [f"eps~{e}.png" for e in ML_EPSILONS] + ["all_epsilons.png"]:
        assert (base / "figures" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name


def test_movielens_summary_shares_add_up(shared_run):
    summary = pl.read_csv(shared_run / VARIANT / "summary.csv")
    assert summary.columns == SUMMARY_COLUMNS
    cases = {"tv": 2 * 6, "kl": 2 * 6, "tv+kl": 4 * 6}
    for divergence, n in cases.items():
        rows = summary.filter(pl.col("divergence") == divergence)
        assert rows["method"].to_list() == ["minimax", "mollifier"]
        assert (rows["cases"] == n).all()
        wins, ties = rows["wins"].sum(), rows["ties"][0]
        assert wins + ties == n
        assert rows["win_share"].sum() == pytest.approx(wins / n)
        assert (rows.filter(pl.col("wins") > 0)["mean_improvement"] > 0).all()
    pooled = summary.filter(pl.col("divergence") == "tv+kl")["wins"].to_list()
    separate = [
        summary.filter(pl.col("divergence") != "tv+kl", pl.col("method") == m)["wins"].sum()
        for m in ("minimax", "mollifier")
    ]
    assert pooled == separate


# --------------------------------------------------------------------------------------------
# Avazu on the shared prefix: empty with the default thresholds
# --------------------------------------------------------------------------------------------


def test_avazu_on_the_prefix_is_an_empty_well_formed_result(shared_run):
    results = shared_run / "results" / "avazu"
    max_tv = pl.read_csv(results / "max_tv.csv")
    assert max_tv.columns == AVAZU_COLUMNS and max_tv.height == 0
    assert pl.read_parquet(results / "max_tv.parquet").schema == {
        "epsilon": pl.Float64,
        "attribute": pl.String,
        "subcategory": pl.Int64,
        "method": pl.String,
        "max_tv": pl.Float64,
        "n_users": pl.Int64,
    }
    summary = pl.read_csv(results / "summary.csv")
    assert summary.columns == SUMMARY_COLUMNS
    assert summary["cases"].to_list() == [0, 0] and summary["win_share"].null_count() == 2
    counts = pl.read_csv(results / "subcategories.csv")
    assert counts["attribute"].to_list() == AVAZU_ATTRIBUTES
    assert (counts["kept"] == 0).all() and (counts["skipped"] == counts["subcategories"]).all()
    assert counts.filter(pl.col("attribute") == "C18")["subcategories"].item() == 4
    for attribute in AVAZU_ATTRIBUTES:
        log = (shared_run / f"logs/avazu_histograms/avazu/attribute~{attribute}.log").read_text()
        assert "no subcategory of any attribute was kept" in log
        figure = results / "figures" / f"attribute~{attribute}.png"
        assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pl.read_csv(results / "audit.csv").height == 0
    # evaluation only (a data-derived prior): nothing is drawn or released
    assert not (results / "released").exists() and not (results / "audit_users.csv").exists()
    log = (shared_run / "logs/avazu_aggregate/avazu.log").read_text()
    assert "Avazu result is EMPTY" in log and "PARTIAL" in log
    stats = json.loads((results / "cache/kaggle/train.json").read_text())
    assert stats["rows"] == 9999 and stats["partial"] is True


def test_another_variant_gets_its_own_folder(shared_run):
    """weight: rating (the paper's text) is a new folder: only its MovieLens jobs run (the
    events tables of the data job serve every variant)."""
    config = write_config(
        shared_run,
        "rating",
        {
            "data_dir": str(SHARED_DATA),
            "experiments": {**OTHERS_OFF, "movielens": "auto", "avazu": "auto"},
            "movielens": {"epsilons": ML_EPSILONS, "weight": "rating"},
            "avazu": {"attributes": AVAZU_ATTRIBUTES, "epsilons": [8]},
        },
    )
    assert planned_jobs(shared_run, "--configfile", config) == {
        "all": 1,
        "movielens_histograms": 1,
        "movielens_metrics": 1,
        "movielens_aggregate": 1,
        "movielens_figure": len(ML_EPSILONS),
        "movielens_overview_figure": 1,
        "reproduction": 1,
    }


def test_default_data_dir_plans_no_real_data_job(shared_run):
    jobs = planned_jobs(shared_run)  # config.yaml: data_dir resources/ holds no data
    assert not [rule for rule in jobs if rule.startswith(("movielens", "avazu"))], jobs


# --------------------------------------------------------------------------------------------
# Avazu on a generated file
# --------------------------------------------------------------------------------------------


def test_avazu_synthetic_matches_the_published_filters(synthetic_run):
    path = synthetic_run / "resources/avazu-synthetic/train.gz"
    max_tv = pl.read_csv(synthetic_run / "results/avazu/max_tv.csv")
    assert max_tv.columns == AVAZU_COLUMNS and max_tv.height > 0
    options = {k: SYNTHETIC[k] for k in ("min_rows", "top_sites", "min_users")}
    for attribute in SYNTHETIC["attributes"]:
        reference = _avazu_reference(path, attribute, **options)
        table = max_tv.filter(pl.col("attribute") == attribute)
        assert sorted(set(table["subcategory"])) == sorted(reference), attribute
        for sub, (P, q) in reference.items():
            for eps in SYNTHETIC["epsilons"]:
                rows = table.filter(pl.col("subcategory") == sub, pl.col("epsilon") == eps)
                got = dict(zip(rows["method"], rows["max_tv"], strict=True))
                released = P @ oracle_kernel(q, eps)
                want_minimax = (0.5 * np.abs(P - released).sum(axis=1)).max()
                want_mollifier = max(_mollifier_tv(p, q, eps) for p in P)
                assert got["minimax"] == pytest.approx(want_minimax, rel=1e-9, abs=1e-12)
                assert got["mollifier_tv"] == pytest.approx(want_mollifier, rel=1e-9, abs=1e-12)
                assert rows["n_users"].to_list() == [P.shape[0]] * 2


def test_avazu_synthetic_tables(synthetic_run):
    results = synthetic_run / "results" / "avazu"
    max_tv = pl.read_csv(results / "max_tv.csv")
    cases = max_tv.height // 2
    summary = pl.read_csv(results / "summary.csv")
    assert summary["method"].to_list() == ["minimax", "mollifier"]
    assert summary["wins"].sum() + summary["ties"][0] == cases == summary["cases"][0]
    counts = pl.read_csv(results / "subcategories.csv")
    assert counts["kept"].sum() * len(SYNTHETIC["epsilons"]) == cases
    assert (counts["kept"] + counts["skipped"] == counts["subcategories"]).all()
    per_user = pl.read_parquet(results / "per_user.parquet")
    for attribute in SYNTHETIC["attributes"]:
        for eps in SYNTHETIC["epsilons"]:
            n_users = max_tv.filter(
                pl.col("attribute") == attribute,
                pl.col("epsilon") == eps,
                pl.col("method") == "minimax",
            )["n_users"].sum()
            rows = per_user.filter(pl.col("attribute") == attribute, pl.col("epsilon") == eps)
            assert rows.height == n_users
        for stage in ("histograms", "metrics"):
            benchmark = f"logs/benchmarks/avazu_{stage}/avazu/attribute~{attribute}.tsv"
            assert (synthetic_run / benchmark).is_file()
    audit = pl.read_csv(results / "audit.csv")
    assert audit.height == cases
    assert (audit["realized_epsilon"] <= audit["epsilon"] * (1 + 1e-9)).all()
    assert not (results / "released").exists() and not (results / "audit_users.csv").exists()


def test_outputs_page_names_the_avazu_figures_as_written(synthetic_run):
    """docs/outputs.md's table names each attribute's figure as the run writes it (it said
    figures/<attribute>.png; the files are attribute~C1.png, ...)."""
    row = "`results/avazu/subcategories.csv`, `figures/attribute~<attribute>.png`"
    assert row in (ROOT / "docs" / "outputs.md").read_text()
    figures = synthetic_run / "results" / "avazu" / "figures"
    assert sorted(p.name for p in figures.glob("*.png")) == sorted(
        f"attribute~{attribute}.png" for attribute in SYNTHETIC["attributes"]
    )


# --------------------------------------------------------------------------------------------
# malformed input, and the paper's configuration
# --------------------------------------------------------------------------------------------


def test_malformed_avazu_file_fails_naming_file_and_line(tmp_path):
    data_dir = tmp_path / "data"
    (data_dir / "avazu").mkdir(parents=True)
    with gzip.open(SHARED_DATA / "avazu" / "train.gz", "rt") as handle:
        lines = handle.read().splitlines()[:200]
    lines[149] = ",".join(lines[149].split(",")[:20])  # line 150: 20 fields instead of 24
    bad = data_dir / "avazu" / "train.gz"
    with gzip.open(bad, "wt") as handle:
        handle.write("\n".join(lines) + "\n")
    workdir = copy_workflow(tmp_path / "work")
    config = write_config(
        workdir,
        "bad",
        {"data_dir": str(data_dir), "experiments": {**OTHERS_OFF, "avazu": "auto"}},
    )
    proc = snakemake(workdir, "--cores", "1", "--configfile", config, check=False)
    assert proc.returncode != 0
    assert "avazu_convert" in proc.stdout + proc.stderr
    log = (workdir / "logs/avazu_convert/kaggle.log").read_text()
    assert f"{bad}, line 150: expected 24 fields, got 20" in log, log
    assert not (workdir / "results/avazu/cache/kaggle/train.parquet").exists()


def test_paper_config_builds_a_dag_on_the_shared_data(fresh_copy):
    jobs = planned_jobs(
        fresh_copy, "--configfile", "config/paper.yaml", "--config", f"data_dir={SHARED_DATA}"
    )
    # one data job (events tables); per prior one histogram and one metrics job (every ε)
    assert jobs["movielens_data"] == 1 and jobs["movielens_metrics"] == 2
    assert jobs["movielens_histograms"] == 2 and jobs["movielens_figure"] == 16
    # results/avazu/ (min_users 100) and the arXiv variant results/avazu/min_users~1000/: per
    # run one histogram and one metrics job per attribute (every ε in-process)
    assert jobs["avazu_convert"] == 1 and jobs["avazu_histograms"] == 2 * 9
    assert jobs["avazu_metrics"] == 2 * 9 and jobs["avazu_figure"] == 2
    assert jobs["avazu_aggregate"] == 2 and "avazu_release" not in jobs  # evaluation only
    assert "avazu_generate" not in jobs and "download_dataset" not in jobs
    assert jobs["synthetic_part"] >= 1 and jobs["theory_risk"] == 1


@pytest.mark.parametrize(
    ("variants", "message"),
    [
        ([{"min_users": 100}], "equals the avazu section itself"),
        ([{"min_users": 1000}, {"min_users": 1000}], "repeats the variant"),
    ],
)
def test_bad_avazu_variants_name_the_key(fresh_copy, variants, message):
    workdir = fresh_copy
    config = write_config(
        workdir,
        "bad_variants",
        {
            "data_dir": str(SHARED_DATA),
            "experiments": {**OTHERS_OFF, "movielens": False, "avazu": True},
            "avazu": {"variants": variants},
        },
    )
    proc = snakemake(workdir, "--dry-run", "--configfile", config, check=False)
    assert proc.returncode != 0
    assert "avazu.variants[" in proc.stdout + proc.stderr and message in proc.stdout + proc.stderr


def test_avazu_variant_folders_are_planned(fresh_copy):
    """avazu.variants: one more folder per entry (keys sorted), the conversion shared."""
    workdir = fresh_copy
    config = write_config(
        workdir,
        "variants",
        {
            "data_dir": str(SHARED_DATA),
            "experiments": {**OTHERS_OFF, "movielens": False, "avazu": True},
            "avazu": {
                "attributes": AVAZU_ATTRIBUTES,
                "epsilons": [8],
                "variants": [{"min_users": 1000}, {"min_users": 5, "min_rows": 2}],
            },
        },
    )
    jobs, text = dry_run(workdir, "--configfile", config)
    assert jobs["avazu_convert"] == 1 and jobs["avazu_aggregate"] == 3
    assert jobs["avazu_histograms"] == jobs["avazu_metrics"] == 3 * len(AVAZU_ATTRIBUTES)
    for folder in ("avazu", "avazu/min_users~1000", "avazu/min_rows~2_min_users~5"):
        assert f"results/{folder}/max_tv.csv" in text, folder
