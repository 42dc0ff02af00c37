"""MovieLens and Avazu as configurations of the events stage: in one Snakemake run on
../shared/data for both option sets (the published code's and the paper text's; the text's
Avazu options as an avazu.variants entry of the published section),

* the published MovieLens and Avazu tables (results/movielens/..., results/avazu/... and its
  avazu.variants folders) equal the values recomputed by the real-data implementation the
  pipeline ran before it moved onto the events code (tests/real_data_oracle.py, fed by the old
  readers build_movielens_data / build_avazu_histograms, which now live there too): Avazu bit
  for bit, MovieLens within 1e-12 (genres summed in another order);
* equivalent `events:` entries give the same worst cases, user counts and win summaries
  (the option mapping of docs/own-data.md, "MovieLens and Avazu as events configurations").

Before the old Avazu rules were deleted, their outputs (max_tv.csv/.parquet, summary.csv,
subcategories.csv, the figures) were also compared byte for byte with the new path's on both
option sets below."""

from __future__ import annotations

import polars as pl
import pytest
import real_data_oracle as oracle
from _workflow import SHARED_DATA, copy_workflow, snakemake, write_config

from ldpsample.datasets.download import locate_dataset_files
from ldpsample.experiments.movielens.tables import movielens_events
from ldpsample.pipeline.config_check import AVAZU_VARIANT_KEYS, avazu_variant_name

pytestmark = [
    pytest.mark.workflow,
    pytest.mark.data,
    pytest.mark.skipif(
        not all((SHARED_DATA / d).is_dir() for d in ("ml-1m", "ml-100k", "avazu")),
        reason=f"the shared MovieLens/Avazu copies are not in {SHARED_DATA}",
    ),
]

OFF = {k: False for k in ("synthetic", "theory", "wpm_ring", "wpm_movielens", "wpm_gowalla")}
ML_EPSILONS = [2, 5]
AVAZU_ATTRIBUTES = ["C1", "C21"]  # one attribute with few subcategories, one with many
AVAZU_EPSILONS = [4, 8]
PLACEHOLDER = "a99f214a"


def movielens_entry(weight: str, prior_source: str) -> dict:
    """events keys equal to movielens.weight / movielens.prior_source."""
    count = {"count": "ratings", "rating": "rating_sum"}[weight]
    prior = (
        "pooled"
        if prior_source == "ml-1m"
        else {
            "path": "data/ml100k_events.parquet",
            "user": "user_id",
            "item": "genre",
            "count": count,
            "attributes": ["age_group"],
        }
    )
    return dict(
        path="data/ml1m_events.parquet",
        user="user_id",
        item="genre",
        count=count,
        attributes=["age_group"],
        prior=prior,
        items=None,
        top_items=None,
        rank_items_by=None,
        activity_by=None,
        min_user_count=0,
        activity_scope="top_items",
        min_users=1,
        exclude_users=[],
        on_null="error",
        epsilons=ML_EPSILONS,
        methods=["minimax", "mollifier_tv", "mollifier_kl"],
    )


def avazu_entry(avazu: dict) -> dict:
    """events keys equal to the avazu section (its converted parquet is the events table)."""
    return dict(
        path="results/avazu/cache/kaggle/train.parquet",
        user="device_id",
        item="site_id",
        count=None,
        attributes=avazu["attributes"],
        prior="user_mean",
        items=None,
        top_items=avazu["top_sites"],
        rank_items_by="click" if avazu["site_rank_by"] == "clicks" else None,
        activity_by="click" if avazu["user_activity"] == "clicks" else None,
        min_user_count=avazu["min_rows"],
        activity_scope={"global": "global", "top_sites": "top_items"}[avazu["activity_scope"]],
        min_users=avazu["min_users"],
        exclude_users=[PLACEHOLDER] if avazu["exclude_placeholder_device"] else [],
        on_null="error",
        epsilons=avazu["epsilons"],
        methods=["minimax", "mollifier_tv"],
    )


AVAZU_VARIANTS = {
    "published": dict(
        site_rank_by="clicks",
        user_activity="impressions",
        activity_scope="global",
        exclude_placeholder_device=False,
        min_rows=3,
        min_users=10,
        top_sites=25,
    ),
    "text": dict(
        site_rank_by="impressions",
        user_activity="clicks",
        activity_scope="top_sites",
        exclude_placeholder_device=True,
        min_rows=1,
        min_users=5,
        top_sites=10,
    ),
}
ML_VARIANTS = {"published": ("count", "ml-100k"), "text": ("rating", "ml-1m")}
# The avazu section holds the published options; the text's options are an avazu.variants
# entry (every key that differs), beside a second published run with another threshold.
AVAZU_TEXT = {
    k: v for k, v in AVAZU_VARIANTS["text"].items() if v != AVAZU_VARIANTS["published"][k]
}
PUBLISHED_EXTRA = {"min_users": 5}
# each option set's avazu runs: results folder -> overrides of the option set (its own run first)
AVAZU_RUNS = {
    "published": {
        "results/avazu": {},
        f"results/avazu/{avazu_variant_name(PUBLISHED_EXTRA)}": PUBLISHED_EXTRA,
    },
    "text": {f"results/avazu/{avazu_variant_name(AVAZU_TEXT)}": {}},
}
AVAZU_OUTPUTS = ("max_tv.csv", "max_tv.parquet", "summary.csv", "subcategories.csv", "audit.csv")


def movielens_folder(variant: str) -> str:
    weight, prior_source = ML_VARIANTS[variant]
    return f"results/movielens/prior~{prior_source}_weight~{weight}"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One run of the MovieLens stage (both option sets' folders), the Avazu stage (the
    published options in the section, the text's as a variant) and their events
    configurations (one entry per stage and option set); only the files the tests read."""
    wd = copy_workflow(tmp_path_factory.mktemp("equivalence") / "wf")
    (wd / "data").mkdir()
    ml1m, ml100k, _ = movielens_events(
        locate_dataset_files(SHARED_DATA, "ml-1m"), locate_dataset_files(SHARED_DATA, "ml-100k")
    )
    ml1m.write_parquet(wd / "data/ml1m_events.parquet")
    ml100k.write_parquet(wd / "data/ml100k_events.parquet")
    weight, prior_source = ML_VARIANTS["published"]
    avazu = {
        "source": "kaggle",
        "attributes": AVAZU_ATTRIBUTES,
        "epsilons": AVAZU_EPSILONS,
        **AVAZU_VARIANTS["published"],
        "variants": [PUBLISHED_EXTRA, AVAZU_TEXT],
    }
    events = {}
    for variant in sorted(AVAZU_VARIANTS):
        events[f"movielens-{variant}"] = movielens_entry(*ML_VARIANTS[variant])
        events[f"avazu-{variant}"] = avazu_entry({**avazu, **AVAZU_VARIANTS[variant]})
    config = write_config(
        wd,
        "both",
        {
            "data_dir": str(SHARED_DATA),
            "experiments": {**OFF, "movielens": True, "avazu": True},
            "movielens": {"weight": weight, "prior_source": prior_source, "epsilons": ML_EPSILONS},
            "avazu": avazu,
            "events": events,
        },
    )
    targets = [
        f"{movielens_folder(variant)}/{table}.csv"
        for variant in ML_VARIANTS
        for table in ("max_tv", "max_kl", "summary")
    ]
    for folder in (folder for runs in AVAZU_RUNS.values() for folder in runs):
        targets += [f"{folder}/{name}" for name in AVAZU_OUTPUTS]
        targets += [f"{folder}/figures/attribute~{a}.png" for a in AVAZU_ATTRIBUTES]
    targets += [
        f"results/events/{name}/{table}.csv"
        for name in events
        for table in ("max_tv", "max_kl", "summary", "subcategories")
    ]
    snakemake(wd, "-c2", *targets, "--configfile", config)
    return wd


@pytest.fixture(params=sorted(AVAZU_VARIANTS))
def both(request, run):
    """The shared run, seen from one option set: the project, its MovieLens folder, its name."""
    return run, movielens_folder(request.param), request.param


def _read(path, **overrides):
    return pl.read_csv(path, schema_overrides={"subcategory": pl.String, **overrides})


def test_movielens_events_reproduce_the_movielens_stage(both):
    wd, folder, variant = both
    events = wd / f"results/events/movielens-{variant}"
    for table, value, methods in (
        ("max_tv", "max_tv", {"minimax": "minimax", "mollifier_tv": "mollifier_tv"}),
        ("max_kl", "max_kl", {"minimax": "minimax_kl", "mollifier_kl": "mollifier_kl"}),
    ):
        old = pl.read_csv(wd / folder / f"{table}.csv").sort("epsilon", "group", "method")
        new = (
            _read(events / f"{table}.csv")
            .select(
                "epsilon",
                pl.col("subcategory").alias("group"),
                pl.col("method").replace_strict(methods),
                value,
                "n_users",
            )
            .sort("epsilon", "group", "method")
        )
        assert old.select("epsilon", "group", "method", "n_users").equals(
            new.select("epsilon", "group", "method", "n_users")
        )
        # same numbers up to the order of floating-point sums (genres in another order)
        diff = (old[value] - new[value]).abs().max()
        assert diff <= 1e-12, f"{table}: max |old - new| = {diff}"
    old = pl.read_csv(wd / folder / "summary.csv")
    new = (
        pl.read_csv(events / "summary.csv")
        .filter(pl.col("epsilon").is_null())  # the rows pooled over every attribute and ε
        .with_columns(
            pl.col("method").replace({"mollifier_tv": "mollifier", "mollifier_kl": "mollifier"})
        )
    )
    assert old.select("divergence", "method", "wins", "ties", "cases").equals(
        new.select("divergence", "method", "wins", "ties", "cases")
    )


def test_avazu_events_reproduce_the_avazu_stage_exactly(both):
    wd, _, variant = both
    own = next(iter(AVAZU_RUNS[variant]))
    stage, events = wd / own, wd / f"results/events/avazu-{variant}"
    old = pl.read_csv(stage / "max_tv.csv").with_columns(pl.col("subcategory").cast(pl.String))
    new = _read(events / "max_tv.csv")
    assert old.height > 0
    key = ["epsilon", "attribute", "subcategory", "method"]
    assert old.sort(key).equals(new.select(old.columns).sort(key))  # bit for bit
    old_summary = pl.read_csv(stage / "summary.csv")
    new_summary = pl.read_csv(events / "summary.csv").with_columns(
        pl.col("method").replace({"mollifier_tv": "mollifier"})
    )
    pooled = new_summary.filter((pl.col("divergence") == "tv") & pl.col("epsilon").is_null())
    assert old_summary.equals(pooled.select(old_summary.columns))
    counts = pl.read_csv(stage / "subcategories.csv")
    subcategories = (
        pl.read_csv(events / "subcategories.csv")
        .group_by("attribute")
        .agg(pl.len().alias("subcategories"), (pl.col("status") == "kept").sum().alias("kept"))
    )
    joined = counts.join(subcategories, on="attribute", suffix="_events")
    assert (joined["kept"] == joined["kept_events"]).all()
    assert (joined["subcategories"] == joined["subcategories_events"]).all()


def test_avazu_tables_equal_the_old_implementation(both):
    """Every Avazu folder (the section and its variants): max_tv (csv and parquet) bit for bit,
    the summary and the subcategory counts exactly, against the old implementation."""
    wd, _, variant = both
    parquet = wd / "results/avazu/cache/kaggle/train.parquet"
    section = AVAZU_VARIANTS[variant]
    runs = {folder: {**section, **extra} for folder, extra in AVAZU_RUNS[variant].items()}
    for folder, filters in runs.items():
        options = {k: filters[k] for k in AVAZU_VARIANT_KEYS}
        parts, counts = [], []
        for attribute in AVAZU_ATTRIBUTES:
            histograms = oracle.build_avazu_histograms(parquet, attribute, **options)
            parts.append(oracle.avazu_metrics(histograms, epsilons=AVAZU_EPSILONS))
            counts.append(
                oracle.avazu_subcategory_counts(
                    parquet,
                    attribute,
                    histograms,
                    exclude_placeholder_device=options["exclude_placeholder_device"],
                )
            )
        want = pl.concat(parts).sort("epsilon", "attribute", "subcategory", "method")
        assert want.height > 0, folder
        got = pl.read_parquet(wd / folder / "max_tv.parquet")
        assert got.equals(want), folder  # bit for bit, same dtypes
        assert pl.read_csv(wd / folder / "max_tv.csv").equals(want), folder
        assert pl.read_csv(wd / folder / "summary.csv").equals(oracle.avazu_summary(want))
        assert pl.read_csv(wd / folder / "subcategories.csv").to_dicts() == counts, folder
        for attribute in AVAZU_ATTRIBUTES:
            png = wd / folder / f"figures/attribute~{attribute}.png"
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
        audit = pl.read_csv(wd / folder / "audit.csv")
        assert audit.height == want.height // 2  # one minimax kernel per (ε, subcategory)
        assert (audit["realized_epsilon"] <= audit["epsilon"] * (1 + 1e-9)).all()


def test_movielens_tables_equal_the_old_implementation(both):
    """max_tv/max_kl within 1e-12 (same keys, user counts and methods) and the summary's counts
    against the old implementation on the old reader's p and q."""
    wd, folder, variant = both
    weight, prior_source = ML_VARIANTS[variant]
    data = oracle.build_movielens_data(
        locate_dataset_files(SHARED_DATA, "ml-1m"),
        locate_dataset_files(SHARED_DATA, "ml-100k"),
        weight=weight,
        prior_source=prior_source,
    )
    want_tv, want_kl = oracle.movielens_metrics(data.users, data.priors, epsilons=ML_EPSILONS)
    for table, want in (("max_tv", want_tv), ("max_kl", want_kl)):
        got = pl.read_csv(wd / folder / f"{table}.csv")
        assert got.columns == want.columns
        keys = ["epsilon", "group", "method", "n_users"]
        assert got.select(keys).equals(want.select(keys)), table
        diff = (got[table] - want[table]).abs().max()
        assert diff <= 1e-12, f"{table}: max |old - new| = {diff}"
    summary = pl.read_csv(wd / folder / "summary.csv")
    counts = ["divergence", "method", "wins", "ties", "cases"]
    assert summary.select(counts).equals(oracle.movielens_summary(want_tv, want_kl).select(counts))
