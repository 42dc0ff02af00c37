"""Partitioned events tables and the map/reduce rules through Snakemake, in a temporary
copy of the project: the same rows as one file (one histogram and metrics job per attribute)
and as a folder of parquet files, a glob of CSV files or a hive dataset evaluated in buckets
give byte-identical tables (per_user.parquet equal in content), also where the ranking needs
each user's activity first and for a release with a fixed seed; the DAG has one split job per
file and one histogram job per bucket; a folder without table files or a glob matching none
stops the run before any job, naming the key."""

from __future__ import annotations

import re
import stat

import numpy as np
import polars as pl
import pytest
from _workflow import OTHERS_OFF, copy_workflow, events_entry, planned_jobs, snakemake, write_config

pytestmark = pytest.mark.workflow

COUNTRIES = ["de", "fr", "it"]
TABLES = ("max_tv.csv", "max_kl.csv", "summary.csv", "subcategories.csv", "tradeoff.csv")


def events_frame(seed=0, rows=4000, users=240) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "user_id": [f"u{x:03d}" for x in rng.integers(0, users, rows)],
            "item_id": [f"i{x}" for x in rng.zipf(1.4, rows) % 12],
            "n": rng.integers(1, 4, rows).astype(float),
            "clicks": rng.integers(0, 3, rows),
            "country": rng.choice(COUNTRIES, rows).tolist(),
            "device": rng.choice(["phone", "tablet"], rows).tolist(),
        }
    )


def entry(path, buckets, **changes):
    return events_entry(
        path,
        **{
            "top_items": 5,
            "min_user_count": 3,
            "min_users": 5,
            "epsilons": [1, 4],
            "methods": ["minimax", "mollifier_tv", "mollifier_kl", "randomized_response"],
            "buckets": buckets,
            **changes,
        },
    )


# The global activity filter with a ranking by clicks and a pooled prior, and a seeded release
# with a public table's prior: one attribute each (the default options' pair has two).
GLOBAL = dict(
    attributes=["country"],
    activity_scope="global",
    rank_items_by="clicks",
    min_user_count=12,
    prior="pooled",
)
PUBLIC = dict(
    path="data/public.parquet",
    user="user_id",
    item="item_id",
    count="n",
    attributes=["country"],
)
RELEASE = dict(
    attributes=["country"],
    prior=PUBLIC,
    top_items=None,
    min_user_count=0,
    min_users=1,
    methods=["minimax"],
    release=True,
    release_seed=3,
)
# Each partitioned layout in buckets (fewer than its files) beside the one-job reference of
# its options: a hive dataset, a CSV glob, a folder of parquet files; and a glob of parquet
# files read whole by the one-job rules.
ENTRIES = {
    # the references: one file, one histogram and one metrics job per attribute
    "one": entry("data/events.parquet", 1),
    "hive": entry("data/hive", 2),
    "global-one": entry("data/events.parquet", 1, **GLOBAL),
    # the one-job rules read every file
    "global-glob-one-job": entry("data/parts/part-*.parquet", 1, **GLOBAL),
    "global-csv-glob": entry("data/csv/part-*.csv", 2, **GLOBAL),
    "release-one": entry("data/events.parquet", 1, **RELEASE),
    "release-parts": entry("data/parts", 2, **RELEASE),
}
PARTS = 3  # files of data/parts and data/csv (4000 rows by 1500), of data/hive (countries)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    wd = copy_workflow(tmp_path_factory.mktemp("buckets") / "wf")
    data = wd / "data"
    (data / "parts").mkdir(parents=True)
    (data / "csv").mkdir()
    frame = events_frame()
    frame.write_parquet(data / "events.parquet")
    events_frame(seed=1, rows=600).write_parquet(data / "public.parquet")
    for index, part in enumerate(frame.iter_slices(1500)):
        part.write_parquet(data / "parts" / f"part-{index}.parquet")
        part.write_csv(data / "csv" / f"part-{index}.csv")
    # a hive dataset: the country is the folder, not a column (rows in another order)
    for country in COUNTRIES:
        folder = data / "hive" / f"country={country}"
        folder.mkdir(parents=True)
        frame.filter(pl.col("country") == country).drop("country").write_parquet(
            folder / "part-0.parquet"
        )
    config = write_config(wd, "buckets", {**OTHERS_OFF, "events": ENTRIES})
    targets = [
        f"results/events/{name}/{table}"
        for name in ENTRIES
        for table in (*TABLES, "per_user.parquet", "audit.csv")
    ]
    targets += [
        f"results/events/{name}/{table}"
        for name in ("release-one", "release-parts")
        for table in ("work/release.json", "release_report.csv")
    ]
    proc = snakemake(wd, "-c2", *targets, "--configfile", config)
    return wd, proc.stdout + proc.stderr, config


def results(wd, name):
    return wd / "results" / "events" / name


@pytest.mark.parametrize(
    ("name", "reference"),
    [
        ("hive", "one"),
        ("global-glob-one-job", "global-one"),
        ("global-csv-glob", "global-one"),
        ("release-parts", "release-one"),
    ],
)
def test_partitions_and_buckets_give_the_one_jobs_tables(run, name, reference):
    wd, _, _ = run
    for table in (*TABLES, "audit.csv"):
        expected = (results(wd, reference) / table).read_bytes()
        assert (results(wd, name) / table).read_bytes() == expected, table
    per_user = pl.read_parquet(results(wd, name) / "per_user.parquet")
    assert per_user.equals(pl.read_parquet(results(wd, reference) / "per_user.parquet"))
    assert per_user.height > 100
    for folder in (results(wd, name), results(wd, reference)):  # users' values: private
        assert stat.S_IMODE((folder / "per_user.parquet").stat().st_mode) == 0o600


def test_a_seeded_release_in_buckets_draws_what_the_one_job_draws(run):
    wd, _, _ = run
    for eps in (1, 4):
        name = f"reproducible_not_for_publication/released/eps~{eps}.parquet"
        released = pl.read_parquet(results(wd, "release-parts") / name)
        assert released.equals(pl.read_parquet(results(wd, "release-one") / name))
        assert released.height > 100
    report = "release_report.csv"
    assert (results(wd, "release-parts") / report).read_bytes() == (
        results(wd, "release-one") / report
    ).read_bytes()


def test_one_split_job_per_file_and_one_histogram_job_per_bucket(run):
    wd, output, _ = run
    logs = wd / "logs"
    for name in ("global-csv-glob", "hive", "release-parts"):
        files, buckets = PARTS, ENTRIES[name]["buckets"]
        assert len(list((logs / "events_split" / name).glob("part~*.log"))) == files
        histograms = list((logs / "events_bucket_histograms" / name).glob("bucket~*.log"))
        assert len(histograms) == buckets
        metrics = list((logs / "events_bucket_metrics" / name).glob("*/bucket~*.log"))
        # per attribute and bucket
        assert len(metrics) == len(ENTRIES[name]["attributes"]) * buckets
        assert not (logs / "events_histograms" / name).exists()
    # the activity filter first: each bucket sums its kept users' ranking
    assert len(list((logs / "events_bucket_ranks" / "global-csv-glob").glob("*.log"))) == 2
    assert not (logs / "events_bucket_ranks" / "hive").exists()
    assert len(list((logs / "events_histograms" / "one").glob("*.log"))) == 2
    # the split rows are temporary
    assert not list((wd / "results/events").glob("*/work/split/*"))
    assert re.search(r"events_split\s+\d+", output)


def test_auto_buckets_keep_a_small_table_in_one_job_per_attribute(run):
    wd, _, _ = run
    config = write_config(
        wd, "auto", {**OTHERS_OFF, "events": {"auto": entry("data/parts", "auto")}}
    )
    jobs = planned_jobs(wd, "-c2", "--configfile", config)
    assert jobs["events_histograms"] == 2 and "events_split" not in jobs


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("data/nothing-*.parquet", "no file matches this pattern"),
        ("data/empty", "the folder holds no table file"),
    ],
)
def test_a_table_path_matching_no_file_stops_before_any_job(run, path, message):
    wd, _, _ = run
    (wd / "data" / "empty").mkdir(exist_ok=True)
    config = write_config(wd, "missing", {**OTHERS_OFF, "events": {"bad": entry(path, 2)}})
    proc = snakemake(wd, "-c2", "--configfile", config, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"config error at events.bad.path: {path}: {message}" in output, output
    assert "rule " not in output
