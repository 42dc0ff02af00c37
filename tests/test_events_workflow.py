"""The events stage through Snakemake in a temporary copy of the project: small
events tables written here in every supported format, the output contracts and values (checked
against the dense kernels of the library, an independent route), the privacy audit failing a
run whose kernel is not private, bad input failing with a message that names the key, file or
value and leaving nothing in results/, and MovieLens-100K from ../shared/data as an events
table. Evaluation only: publishing a release is tests/test_publish_workflow.py's.

The tests share a few runs in one workflow copy (module fixtures): every entry the default
target's tests read in one run, every other entry (each bad input among them) in one
``--keep-going`` run asking for the files its tests read, and each kind of config error in one
start; a test that edits the library gets a copy of its own."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import NamedTuple

import numpy as np
import polars as pl
import pytest
from _workflow import (
    OTHERS_OFF,
    ROOT,
    SHARED_DATA,
    copy_workflow,
    events_entry,
    need_shared_data,
    result_files,
    snakemake,
    write_config,
)

from ldpsample import kl_divergence, minimax_kernel, randomized_response, tv_distance

pytestmark = pytest.mark.workflow

ALL_METHODS = ["minimax", "mollifier_tv", "mollifier_kl", "randomized_response"]


def entry(path, **changes):
    """A complete events entry (every key stated, as the schema requires)."""
    return events_entry(
        path,
        **{
            "items": None,
            "top_items": 4,
            "rank_items_by": None,
            "activity_by": None,
            "min_user_count": 3,
            "activity_scope": "top_items",
            "min_users": 5,
            "exclude_users": [],
            "on_null": "drop",
            "epsilons": [1, 4],
            "methods": ALL_METHODS,
            "release": False,
            **changes,
        },
    )


def small_events(seed=0, users=40):
    """A small events table: users with a country and a device, weighted item events."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(users):
        country = ["de", "fr", "it"][u % 3]
        for device in ("phone", "tablet"):
            for _ in range(rng.integers(2, 9)):
                rows.append(
                    (
                        f"u{u:03d}",
                        f"i{rng.integers(0, 6)}",
                        float(rng.integers(1, 4)),
                        country,
                        device,
                    )
                )
    return pl.DataFrame(rows, schema=["user_id", "item_id", "n", "country", "device"], orient="row")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    wd = copy_workflow(tmp_path_factory.mktemp("events") / "wf")
    (wd / "data").mkdir()
    events = small_events()
    events.write_parquet(wd / "data/events.parquet")
    events.write_csv(wd / "data/events.csv")
    with gzip.open(wd / "data/events.csv.gz", "wb") as handle:
        handle.write(events.write_csv().encode())
    return wd


def run(wd, name, events, *targets, check=True):
    """Snakemake on ``events`` (the other stages off): the default targets, or ``targets``."""
    config = write_config(wd, name, {**OTHERS_OFF, "events": events})
    # targets before --configfile, which takes every path after it
    return snakemake(wd, "-c2", *targets, "--configfile", config, check=check)


def expected_max(
    events: pl.DataFrame, attribute: str, subcategory: str, eps: float, top=4, min_count=3
):
    """Worst-case TV/KL of minimax and randomized response by plain numpy on dense kernels."""
    rows = events.filter(pl.col(attribute) == subcategory)
    ranks = (
        rows.group_by("item_id")
        .agg(pl.col("n").sum())
        .sort(["n", "item_id"], descending=[True, False])
    )
    top_items = ranks["item_id"][:top].to_list()
    rows = rows.filter(pl.col("item_id").is_in(top_items))
    totals = rows.group_by("user_id").agg(pl.col("n").sum()).filter(pl.col("n") >= min_count)
    rows = rows.filter(pl.col("user_id").is_in(totals["user_id"].to_list()))
    wide = rows.pivot(
        on="item_id", index="user_id", values="n", aggregate_function="sum"
    ).fill_null(0)
    items = sorted(c for c in wide.columns if c != "user_id")
    counts = wide.sort("user_id").select(items).to_numpy().astype(float)
    P = counts / counts.sum(axis=1, keepdims=True)
    q = P.mean(axis=0)
    q /= q.sum()
    K = minimax_kernel(q, epsilon=eps)
    R = randomized_response(len(items), epsilon=eps)
    return {
        ("tv", "minimax"): tv_distance(P, P @ K).max(),
        ("kl", "minimax"): kl_divergence(P, P @ K).max(),
        ("tv", "randomized_response"): tv_distance(P, P @ R).max(),
        ("n_users",): P.shape[0],
    }


FORMATS = ["parquet", "csv", "csv.gz"]


def format_entry_name(suffix: str) -> str:
    """The events entry of the table written as ``data/events.<suffix>``."""
    return f"small-{suffix.replace('.', '')}"


#: The entry of the parquet table, run with the default target (tables and figures); the
#: other formats' entries are others_run's (tables only: their figures would be drawn from the
#: same tables, test_every_format_gives_the_tables_of_the_parquet_file).
PARQUET = format_entry_name("parquet")
OTHER_FORMATS = [format_entry_name(suffix) for suffix in FORMATS if suffix != "parquet"]
#: The tables of an entry (events_combine's outputs).
TABLES = (
    "subcategories.csv",
    "per_user.parquet",
    "max_tv.csv",
    "max_kl.csv",
    "summary.csv",
    "tradeoff.csv",
    "audit.csv",
)


def default_target_events() -> dict:
    """The entries of the run with the default target: the parquet table's, and one that is
    switched off (its file does not exist: the config check passes and the default target plans
    nothing of it)."""
    return {
        PARQUET: entry("data/events.parquet"),
        "off": entry("data/missing.parquet", enabled=False),
    }


@pytest.fixture(scope="module")
def formats_run(workdir):
    """One run of the default target (tables, figures) over default_target_events()."""
    run(workdir, "formats", default_target_events())
    return workdir


@pytest.mark.parametrize("suffix", FORMATS)
def test_events_outputs_and_values(formats_run, others_run, suffix):
    workdir = formats_run
    name = format_entry_name(suffix)
    assert not others_run.failed_jobs_of(name)
    base = workdir / "results/events" / name
    max_tv = pl.read_csv(base / "max_tv.csv", schema_overrides={"subcategory": pl.String})
    max_kl = pl.read_csv(base / "max_kl.csv", schema_overrides={"subcategory": pl.String})
    assert max_tv.columns == ["epsilon", "attribute", "subcategory", "method", "max_tv", "n_users"]
    assert max_kl.columns == ["epsilon", "attribute", "subcategory", "method", "max_kl", "n_users"]
    assert set(max_tv["method"]) == {"minimax", "mollifier_tv", "randomized_response"}
    assert set(max_kl["method"]) == {"minimax", "mollifier_kl", "randomized_response"}
    events = small_events()
    for attribute, subcategory in [("country", "de"), ("device", "tablet")]:
        for eps in (1.0, 4.0):
            want = expected_max(events, attribute, subcategory, eps)
            got = max_tv.filter(
                (pl.col("attribute") == attribute)
                & (pl.col("subcategory") == subcategory)
                & (pl.col("epsilon") == eps)
            )
            assert got.filter(pl.col("method") == "minimax")["max_tv"].item() == pytest.approx(
                want[("tv", "minimax")], abs=1e-12
            )
            assert got.filter(pl.col("method") == "randomized_response")[
                "max_tv"
            ].item() == pytest.approx(want[("tv", "randomized_response")], abs=1e-12)
            assert got["n_users"].unique().to_list() == [want[("n_users",)]]
            got_kl = max_kl.filter(
                (pl.col("attribute") == attribute)
                & (pl.col("subcategory") == subcategory)
                & (pl.col("epsilon") == eps)
                & (pl.col("method") == "minimax")
            )
            assert got_kl["max_kl"].item() == pytest.approx(want[("kl", "minimax")], abs=1e-12)
    # subcategories, audit, releases, per-user cost, figures, summary
    subcategories = pl.read_csv(
        base / "subcategories.csv", schema_overrides={"subcategory": pl.String}
    )
    assert set(subcategories["status"]) <= {"kept", "skipped"}
    assert subcategories.filter(pl.col("status") == "kept").height == 5  # 3 countries + 2 devices
    audit = pl.read_csv(base / "audit.csv", schema_overrides={"subcategory": pl.String})
    assert audit.columns[:3] == ["attribute", "subcategory", "epsilon"]
    assert {"n_items", "realized_epsilon"} <= set(audit.columns)
    assert audit.height == 5 * 2 * 2  # subcategories x ε x (minimax, randomized response)
    assert (audit["realized_epsilon"] <= audit["epsilon"] * (1 + 1e-9)).all()
    assert np.allclose(
        audit["realized_epsilon"], audit["epsilon"], rtol=1e-9
    )  # both kernels are tight
    per_user = pl.read_parquet(base / "per_user.parquet")
    assert per_user.height == max_tv.filter(pl.col("method") == "minimax")["n_users"].sum()
    # evaluation draws nothing and publishes nothing
    assert not (base / "released").exists() and not (base / "publish").exists()
    assert not (base / "audit_users.csv").exists()
    summary = pl.read_csv(
        base / "summary.csv", schema_overrides={"attribute": pl.String, "reason": pl.String}
    )
    assert summary.columns == [
        "attribute",
        "epsilon",
        "divergence",
        "method",
        "wins",
        "ties",
        "cases",
        "win_share",
        "mean_improvement",
        "worst_case",
        "median",
        "best_worst_case",
        "worst_case_margin",
        "best_median",
        "median_margin",
        "keeps_prior",
        "reason",
    ]
    pooled = summary.filter(pl.col("epsilon").is_null())
    assert pooled["attribute"].null_count() == pooled.height
    assert set(pooled["divergence"]) == {"tv", "kl", "tv+kl"}
    # every evaluated method competes in every row set: none can hide a better one (the pooled
    # tv+kl rows compared minimax with the mollifier only, hiding randomized response)
    competing = {
        d: set(pooled.filter(pl.col("divergence") == d)["method"]) for d in ("tv", "kl", "tv+kl")
    }
    assert competing == {
        "tv": {"minimax", "mollifier_tv", "randomized_response"},
        "kl": {"minimax", "mollifier_kl", "randomized_response"},
        "tv+kl": {"minimax", "mollifier", "randomized_response"},
    }
    for divergence, rows in pooled.group_by("divergence"):
        cases = rows["cases"].unique().item()
        best = max_tv if divergence[0] == "tv" else max_kl
        assert cases == (best.height // best["method"].n_unique()) * (
            2 if divergence[0] == "tv+kl" else 1
        )
        assert rows["wins"].sum() <= cases
    # the recommendation: per attribute and ε, each method's worst case over the attribute's
    # users (= the largest of its subcategories' worst cases) and median (from per_user.parquet)
    scoped = summary.filter(pl.col("epsilon").is_not_null())
    assert set(scoped.select("attribute", "epsilon").unique().rows()) == {
        (a, e) for a in ("country", "device") for e in (1.0, 4.0)
    }
    for divergence, table in (("tv", max_tv), ("kl", max_kl)):
        for (attribute, eps), rows in scoped.filter(pl.col("divergence") == divergence).group_by(
            "attribute", "epsilon"
        ):
            assert set(rows["method"]) == set(table["method"])
            users = per_user.filter((pl.col("attribute") == attribute) & (pl.col("epsilon") == eps))
            for row in rows.iter_rows(named=True):
                method = row["method"]
                worst = table.filter(
                    (pl.col("attribute") == attribute)
                    & (pl.col("epsilon") == eps)
                    & (pl.col("method") == method)
                )[f"max_{divergence}"].max()
                assert row["worst_case"] == pytest.approx(worst, abs=1e-15)
                values = users[f"{divergence}_{method}"].to_numpy()
                assert row["median"] == pytest.approx(float(np.median(values)), abs=1e-15)
                assert row["keeps_prior"] == (method != "randomized_response")
                assert ("does not keep the public prior" in row["reason"]) == (
                    method == "randomized_response"
                )
            for statistic in ("worst_case", "median"):
                values = rows[statistic].to_numpy()
                best = rows.filter(pl.col(f"best_{statistic}"))
                assert best.height >= 1
                assert np.allclose(best[statistic], values.min(), rtol=0, atol=1e-12)
                for row in rows.iter_rows(named=True):
                    others = rows.filter(pl.col("method") != row["method"])[statistic].min()
                    assert row[f"{statistic}_margin"] == pytest.approx(
                        others - row[statistic], abs=1e-15
                    )
                    words = "lowest worst case" if statistic == "worst_case" else "lowest median"
                    assert (words in row["reason"]) == row[f"best_{statistic}"]
    assert scoped.filter(pl.col("divergence") == "tv+kl")["worst_case"].null_count() == (
        scoped.filter(pl.col("divergence") == "tv+kl").height
    )
    # the trade-off: worst case and median per attribute, ε and method, with its figure
    tradeoff = pl.read_csv(base / "tradeoff.csv")
    assert tradeoff.columns[:2] == ["epsilon", "attribute"]
    worst = tradeoff.filter((pl.col("statistic") == "max") & (pl.col("divergence") == "tv"))
    assert worst.height == 2 * 2 * 3  # attributes x ε x methods scored with TV
    for eps, attribute, method, value in worst.select(
        "epsilon", "attribute", "method", "value"
    ).iter_rows():
        want = max_tv.filter(
            (pl.col("epsilon") == eps)
            & (pl.col("attribute") == attribute)
            & (pl.col("method") == method)
        )["max_tv"].max()
        assert value == pytest.approx(want, abs=1e-15)
    assert not (base / "work/attribute~country/per_user.parquet").exists()  # temp part removed
    # Each job's polars pool is its `threads:` (common.smk exports POLARS_MAX_THREADS), not one
    # thread per core: histogram jobs declare 1, metrics jobs 2 (users in chunks side by side).
    logs = sorted((workdir / "logs").glob(f"events_*/{name}/*.log"))
    assert {p.parent.parent.name for p in logs} >= {"events_histograms", "events_metrics"}
    for log in logs:
        threads = 2 if log.parent.parent.name == "events_metrics" else 1
        assert f"threads {threads}; polars thread pool {threads}\n" in log.read_text(), log


def test_the_default_target_draws_each_attributes_figure_and_the_tradeoff(formats_run):
    base = formats_run / "results/events" / PARQUET
    for attribute in ("country", "device"):
        assert (base / f"figures/{attribute}.png").stat().st_size > 0
    assert (base / "tradeoff.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", OTHER_FORMATS)
def test_every_format_gives_the_tables_of_the_parquet_file(formats_run, others_run, name):
    """The same events table as CSV and gzipped CSV: every table byte for byte that of the
    parquet file (up to the entry's name), per_user.parquet equal row for row."""
    results = formats_run / "results/events"
    for table in TABLES:
        want, got = results / PARQUET / table, results / name / table
        if table.endswith(".parquet"):
            assert pl.read_parquet(got).equals(pl.read_parquet(want)), table
        else:
            assert got.read_text().replace(name, "NAME") == want.read_text().replace(
                PARQUET, "NAME"
            ), table


def test_the_choosing_a_method_snippet_runs_as_printed(formats_run):
    """docs/choosing-a-method.md's picks, on a run's summary.csv: one line per attribute, ε and
    divergence, naming the method with the lowest worst case and the one with the lowest
    median."""
    text = (ROOT / "docs/choosing-a-method.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    name = format_entry_name("parquet")
    code = code.replace("results/events/ml100k/", f"results/events/{name}/")
    assert name in code
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=formats_run, capture_output=True, text=True, check=True
    )
    assert "by_worst_case" in done.stdout and "by_median" in done.stdout
    (printed,) = re.findall(r"it prints\n\n```text\n(.*?)```", text, flags=re.S)
    assert done.stdout == printed  # the page shows what the block prints
    summary = pl.read_csv(formats_run / f"results/events/{name}/summary.csv")
    best = summary.filter(pl.col("best_worst_case"))
    lines = [line for line in done.stdout.splitlines() if re.search(r"(country|device)", line)]
    assert len(lines) == 2 * 2 * 2  # attributes x ε x (tv, kl)
    for line in lines:
        cells = [cell.strip().strip('"') for cell in line.strip("| ").split("|")]
        attribute, eps, divergence, method = cells[0], float(cells[1]), cells[2], cells[3]
        want = best.filter(
            (pl.col("attribute") == attribute)
            & (pl.col("epsilon") == eps)
            & (pl.col("divergence") == divergence)
        )["method"]
        assert method == want[0], line


def test_events_no_attributes_uniform_prior_and_disabled_entry(formats_run, others_run):
    workdir = others_run.workdir
    name = "whole"
    assert not others_run.failed_jobs_of(name)
    base = workdir / "results/events" / name
    max_tv = pl.read_csv(base / "max_tv.csv")
    assert set(max_tv["attribute"]) == {"all"} and set(max_tv["subcategory"]) == {"all"}
    # uniform prior: the minimax kernel is randomized response (Corollary 2)
    wide = max_tv.pivot(on="method", index=["epsilon"], values="max_tv")
    assert np.allclose(wide["minimax"], wide["randomized_response"], atol=1e-12)
    assert not (base / "released").exists()
    # the entry switched off beside formats_run's (default target): nothing of it ran
    assert not (workdir / "results/events/off").exists()
    assert not list((workdir / "logs").glob("*/off*"))


def test_events_audit_fails_on_a_non_private_kernel(tmp_path):
    """Inject a kernel built for 3ε while claiming ε: the metrics job fails and nothing of the
    dataset's results (tables, audit) is left."""
    wd = copy_workflow(tmp_path / "wf")
    (wd / "data").mkdir()
    small_events().write_parquet(wd / "data/events.parquet")
    module = wd / "src/ldpsample/events/scoring/release_kernel.py"
    module.write_text(
        module.read_text() + "\n\n_private_kernel = minimax_release_kernel\n\n"
        "def minimax_release_kernel(q, *, epsilon):  # injected by the test: NOT ε-LDP\n"
        "    return _private_kernel(q, epsilon=3 * epsilon)\n"
    )
    # one attribute: the audit of its metrics job is what fails
    leaky = entry("data/events.parquet", attributes=["country"])
    proc = run(wd, "leaky", {"leaky": leaky}, "results/events/leaky/max_tv.csv", check=False)
    assert proc.returncode != 0
    logs = "".join(p.read_text() for p in (wd / "logs/events_metrics/leaky").glob("*.log"))
    assert "privacy audit FAILED" in logs and "exceeds the claimed epsilon" in logs
    base = wd / "results/events/leaky"
    assert not (base / "audit.csv").exists() and not (base / "max_tv.csv").exists()
    for part in ("per_user", "audit"):  # histograms of the attributes stay
        assert not list(base.glob(f"work/attribute~*/{part}.parquet"))


BAD = {
    "missing-column": (
        dict(user="customer"),
        "column 'customer' (config key events.{name}.user) not found",
    ),
    "non-numeric": (
        dict(count="country"),
        "column 'country' (config key events.{name}.count) must hold numbers",
    ),
    "negative": (
        dict(path="data/negative.parquet"),
        "data/negative.parquet, data row 4: n='-1.0' in ",
    ),
    "null-error": (
        dict(path="data/nulls.parquet", on_null="error"),
        "data/nulls.parquet, data row 4: user_id=None in ",
    ),
    "empty": (
        dict(path="data/empty.csv"),
        "the events table is empty (config key events.{name}.path)",
    ),
    "truncated": (
        dict(path="data/truncated.parquet"),
        "cannot read the events table (config key events.{name}.path)",
    ),
    # a bad value far past the rows polars infers a CSV's types from: named by its key, not path
    "late-bad-count": (
        dict(path="data/late.csv"),
        "data/late.csv, data row 151 (line 152 of a CSV with a header): n='x' in ",
    ),
    "items-absent": (
        dict(items=["i0", "i1", "nope"]),
        "config key events.{name}.items: 1 of the 3 listed items are not in column 'item_id' of "
        "data/events.parquet: ['nope']",
    ),
    "prior-lacks": (
        dict(
            prior=dict(
                path="data/public.parquet",
                user="user_id",
                item="item_id",
                count=None,
                attributes=["country"],
            )
        ),
        "lacks subcategory 'it' of attribute 'country'",
    ),
}


def write_bad_inputs(wd) -> None:
    """The faulty tables of BAD (and the public table lacking a subcategory) under data/."""
    events = small_events()
    events.with_columns(
        pl.when(pl.int_range(pl.len()) == 3).then(-1.0).otherwise(pl.col("n")).alias("n")
    ).write_parquet(wd / "data/negative.parquet")
    events.with_columns(
        pl.when(pl.int_range(pl.len()) == 3)
        .then(None)
        .otherwise(pl.col("user_id"))
        .alias("user_id")
    ).write_parquet(wd / "data/nulls.parquet")
    (wd / "data/empty.csv").write_text("user_id,item_id,n,country,device\n")
    events.with_columns(pl.col("n").cast(pl.Int64).cast(pl.String)).with_columns(
        pl.when(pl.int_range(pl.len()) == 150).then(pl.lit("x")).otherwise(pl.col("n")).alias("n")
    ).write_csv(wd / "data/late.csv")
    truncated = (wd / "data/events.parquet").read_bytes()[:200]
    (wd / "data/truncated.parquet").write_bytes(truncated)
    events.filter(pl.col("country") != "it").write_parquet(wd / "data/public.parquet")


def bad_entries() -> dict:
    """An entry per case of BAD, named bad-<case>, over one attribute (each fault stops the scan
    of every attribute alike; 'country' is the one whose subcategory the public table lacks)."""
    entries = {}
    for case, (changes, _) in BAD.items():
        changes = {"attributes": ["country"], **changes}
        entries[f"bad-{case}"] = entry(changes.pop("path", "data/events.parquet"), **changes)
    return entries


class OthersRun(NamedTuple):
    workdir: Path
    proc: subprocess.CompletedProcess

    def failed_jobs_of(self, name: str) -> list[str]:
        """The console's lines of the entry's failed jobs (``  <rule> (<log>): <error>``)."""
        own = re.compile(rf"^  events_\w+ \(logs/[^/ ]+/{re.escape(name)}[/.]")
        return [
            line for line in (self.proc.stdout + self.proc.stderr).splitlines() if own.match(line)
        ]


@pytest.fixture(scope="module")
def others_run(workdir):
    """One --keep-going run of every entry outside formats_run: the CSV and gzipped CSV tables,
    the one without attributes, the one whose users are all excluded, the one whose public
    table has extra items, and every bad input (their jobs fail, the others' do not); each
    entry's targets are the files its test reads."""
    write_bad_inputs(workdir)
    users = small_events()["user_id"].unique().to_list()
    # a public table holding an item no kept user has
    public = small_events().with_columns(pl.lit("i-public-only").alias("item_id")).head(5)
    pl.concat([small_events(), public]).write_parquet(workdir / "data/public-extra.parquet")
    events = {
        **{format_entry_name(s): entry(f"data/events.{s}") for s in FORMATS if s != "parquet"},
        "whole": entry(
            "data/events.parquet",
            attributes=[],
            prior="uniform",
            methods=["minimax", "randomized_response"],
            min_users=1,
        ),
        "nobody": entry("data/events.parquet", exclude_users=users),
        "extra-public": entry(
            "data/events.parquet", prior=dict(path="data/public-extra.parquet"), top_items=None
        ),
        **bad_entries(),
    }
    targets = [
        *(f"results/events/{name}/{table}" for name in OTHER_FORMATS for table in TABLES),
        "results/events/whole/max_tv.csv",
        "results/events/nobody/subcategories.csv",
        "results/events/extra-public/work/attribute~country/histograms.parquet",
        *(f"results/events/{name}/max_tv.csv" for name in bad_entries()),
    ]
    config = write_config(workdir, "others", {**OTHERS_OFF, "events": events})
    proc = snakemake(workdir, "-c2", *targets, "--keep-going", "--configfile", config, check=False)
    return OthersRun(workdir, proc)


@pytest.mark.parametrize("case", sorted(BAD))
def test_events_bad_input_fails_at_its_job_naming_the_key(others_run, case):
    workdir = others_run.workdir
    name = f"bad-{case}"
    _, message = BAD[case]
    assert others_run.proc.returncode != 0
    log = "".join(
        p.read_text() for p in sorted((workdir / f"logs/events_histograms/{name}").glob("*.log"))
    )
    first = next(line for line in log.splitlines() if " ERROR " in line)
    assert message.format(name=name) in first, log
    assert others_run.failed_jobs_of(name)  # the run names it among its failed jobs
    published = [p for p in result_files_of(workdir, name) if "/work/" not in p]
    assert not published, published


def result_files_of(wd, name):
    return [p for p in result_files(wd) if p.startswith(f"results/events/{name}/")]


#: (entry name, entry, what the error says): the schema's errors are listed together, the
#: cross-field checks run once the schema passes, so each group is one Snakemake start.
CONFIG_ERRORS = {
    "schema": [
        ("Bad Name", entry("data/events.parquet"), "config error at events: 'Bad Name' does not"),
        (
            "eps",
            entry("data/events.parquet", epsilons=[0]),
            "config error at events.eps.epsilons[0]: 0 must be > 0",
        ),
        (
            "meth",
            entry("data/events.parquet", methods=["laplace"]),
            "config error at events.meth.methods[0]: 'laplace' must be one of",
        ),
    ],
    "cross-field": [
        (
            "nofile",
            entry("data/nowhere.parquet"),
            "config error at events.nofile.path: file not found: 'data/nowhere.parquet'",
        )
    ],
}


@pytest.fixture(scope="module")
def config_error_runs(workdir):
    """The Snakemake run of each group of CONFIG_ERRORS, by group."""
    runs = {}
    for group, cases in CONFIG_ERRORS.items():
        events = {name: spec for name, spec, _ in cases}
        runs[group] = run(workdir, f"bad-config-{group}", events, check=False)
    return runs


@pytest.mark.parametrize(
    ("group", "message"),
    [(group, case[2]) for group, cases in CONFIG_ERRORS.items() for case in cases],
    ids=[case[0] for cases in CONFIG_ERRORS.values() for case in cases],
)
def test_events_config_errors_stop_before_any_job(config_error_runs, group, message):
    proc = config_error_runs[group]
    assert proc.returncode != 0
    assert message in proc.stdout + proc.stderr
    assert "events_histograms" not in proc.stdout


@pytest.mark.data
@pytest.mark.skipif(
    not (SHARED_DATA / "ml-100k").is_dir(), reason=f"no ml-100k copy in {SHARED_DATA}"
)
def test_events_movielens_100k_from_shared_data(workdir):
    """u.data joined with u.user (age group, gender) as an events table, configuration only."""
    wd = workdir
    ratings = pl.read_csv(
        SHARED_DATA / "ml-100k/u.data",
        separator="\t",
        has_header=False,
        new_columns=["user_id", "item_id", "rating", "timestamp"],
    )
    users = pl.read_csv(
        SHARED_DATA / "ml-100k/u.user",
        separator="|",
        has_header=False,
        new_columns=["user_id", "age", "gender", "occupation", "zip"],
    )
    ratings.join(users, on="user_id").write_parquet(wd / "data/ml100k.parquet")
    name = "ml100k"
    run(
        wd,
        name,
        {
            name: entry(
                "data/ml100k.parquet",
                count="rating",
                attributes=["gender", "occupation"],
                top_items=50,
                min_user_count=20,
                min_users=30,
                epsilons=[1, 8],
            )
        },
        *(f"results/events/{name}/{table}" for table in ("subcategories.csv", "audit.csv")),
    )
    base = wd / "results/events" / name
    subcategories = pl.read_csv(base / "subcategories.csv")
    assert subcategories.filter(pl.col("attribute") == "gender")["status"].to_list() == [
        "kept",
        "kept",
    ]
    skipped = subcategories.filter(pl.col("status") == "skipped")
    assert skipped.height > 0 and skipped["reason"].str.contains("min_users").all()
    max_tv = pl.read_csv(base / "max_tv.csv")
    # utility improves with ε for every method and subcategory
    wide = max_tv.pivot(on="epsilon", index=["attribute", "subcategory", "method"], values="max_tv")
    assert (wide["8.0"] < wide["1.0"]).all()
    audit = pl.read_csv(base / "audit.csv")
    assert (audit["realized_epsilon"] <= audit["epsilon"] * (1 + 1e-9)).all()


def test_events_report_holds_the_tables_and_figures_with_their_captions(formats_run):
    """The report holds the events tables and figures with their captions (that the default
    config, events: {}, plans no events job is checked on test_config_errors.py's dry run of
    the default config)."""
    workdir = formats_run
    config = write_config(workdir, "formats", {**OTHERS_OFF, "events": default_target_events()})
    snakemake(workdir, "--configfile", config, "--report", "report.zip")
    with zipfile.ZipFile(workdir / "report.zip") as report:
        names = report.namelist()
    # each attribute's figure of the figures/ folder is an entry of its own
    figures = sorted(n.rsplit("/", 1)[1] for n in names if n.endswith(".png"))
    assert figures == ["country.png", "device.png", "tradeoff.png"], names
    with zipfile.ZipFile(workdir / "report.zip") as report:
        pages = "".join(
            report.read(n).decode("utf-8", "replace") for n in names if n.endswith((".html", ".js"))
        )
    # captions are plain text (the report showed `K_{q,ε}` raw), and the summary's says what
    # it answers
    assert "K_{q" not in pages and "which method at which" in pages  # ε is JSON-escaped


def test_the_readmes_own_data_example_runs_as_printed_and_only_the_events_table(workdir):
    """The README's one-line events overlay (only path, user and item required; the rest
    defaults), written as printed: it runs just that table (the experiments on auto are off in
    an own-data run), and the histogram log shows each scan's phase and elapsed time."""
    readme = (ROOT / "README.md").read_text()
    overlay = re.search(r"`(events: \{mylog: \{.*?\}\})`", " ".join(readme.split())).group(1)
    wd = workdir  # the other tests' runs leave no experiment's results
    rng = np.random.default_rng(2)
    pl.DataFrame(
        {
            "user_id": [f"u{k}" for k in rng.integers(0, 200, 4000)],
            "item_id": [f"i{k}" for k in rng.integers(0, 30, 4000)],
            "country": rng.choice(["de", "fr", "it"], 4000),
        }
    ).write_parquet(wd / "data/log.parquet")
    (wd / "config/own.yaml").write_text(overlay + "\n")
    proc = snakemake(wd, "-c2", "--configfile", "config/own.yaml")
    out = proc.stdout + proc.stderr
    assert "own-data run (events: mylog)" in out
    ran = set(re.findall(r"^(?:local)?rule (\w+):", out, re.M))
    assert ran and all(rule.startswith("events_") or rule == "all" for rule in ran), ran
    base = wd / "results/events/mylog"
    max_tv = pl.read_csv(base / "max_tv.csv")
    assert sorted(set(max_tv["epsilon"])) == [0.5, 1.0, 2.0, 4.0, 8.0]  # the default epsilons
    assert set(max_tv["subcategory"]) == {"de", "fr", "it"}
    assert (
        not (wd / "results/synthetic").exists() and not (wd / "results/reproduction.csv").exists()
    )
    log = (wd / "logs/events_histograms/mylog/attribute~country.log").read_text()
    assert "done in" in log and "scanning data/log.parquet" in log


@pytest.mark.data
def test_own_data_md_worked_example_and_notebook_run_as_printed(tmp_path):
    """docs/own-data.md: the shell line, the YAML and the command as printed, on MovieLens-100K
    (copied to resources/ml-100k/); then its Python block, whose tables equal the pipeline's."""
    shared = need_shared_data("ml-100k")
    doc = (ROOT / "docs/own-data.md").read_text()
    section = doc.split("## Worked example", 1)[1].split("## The keys", 1)[0]
    shell, command = re.findall(r"```bash\n(.*?)```", section, re.S)[:2]
    overlay = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    wd = copy_workflow(tmp_path / "wf")
    shutil.copytree(shared / "ml-100k", wd / "resources/ml-100k")
    subprocess.run(["bash", "-c", shell], cwd=wd, check=True)
    (wd / "config/my_events.yaml").write_text(overlay)
    args = command.split()
    assert args[0] == ".venv/bin/snakemake"
    snakemake(wd, *args[1:])
    base = wd / "results/events/ml100k"
    max_tv = pl.read_csv(base / "max_tv.csv", schema_overrides={"subcategory": pl.String})
    assert sorted(set(max_tv["epsilon"])) == [0.5, 1.0, 2.0, 4.0, 8.0]  # the default ε
    assert set(max_tv["method"]) == {"minimax", "mollifier_tv", "randomized_response"}
    assert not (wd / "results/synthetic").exists()
    # the notebook block, in the same folder
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    cwd = os.getcwd()
    os.chdir(wd)
    try:
        exec(compile(block, "docs/own-data.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    result = namespace["result"]
    pipeline = max_tv.filter(pl.col("epsilon").is_in([1.0, 4.0]))
    ours = result.max_tv.with_columns(pl.col("subcategory").cast(pl.String))
    assert (
        ours.select(pipeline.columns)
        .sort(pipeline.columns[:4])
        .equals(pipeline.sort(pipeline.columns[:4]))
    )
    released = namespace["release_items"](
        namespace["spec"], namespace["mine"], uniforms=namespace["SecureUniforms"]()
    ).released
    assert released.height == 1 and released["user"][0] == "1"


def test_an_empty_result_says_why_and_unused_public_items_are_logged(others_run):
    """exclude_users removing every user: the run succeeds, and subcategories.csv (one line per
    attribute) and the log say which filter left nothing; a public prior table with items the
    kept users never touched: the histogram log counts them."""
    workdir = others_run.workdir
    name = "nobody"
    assert not others_run.failed_jobs_of(name) and not others_run.failed_jobs_of("extra-public")
    subcategories = pl.read_csv(workdir / f"results/events/{name}/subcategories.csv")
    assert subcategories["attribute"].to_list() == ["country", "device"]
    assert all(r.startswith("no row left of ") for r in subcategories["reason"]), subcategories
    assert (
        f"removed by events.{name}.items, events.{name}.exclude_users" in subcategories["reason"][0]
    )
    log = (workdir / f"logs/events_histograms/{name}/attribute~country.log").read_text()
    assert "no subcategory of any attribute was kept" in log and "no row left of" in log
    name = "extra-public"
    log = (workdir / f"logs/events_histograms/{name}/attribute~country.log").read_text()
    assert "pairs of the public prior table have no kept user's data" in log
    assert "i-public-only" in log
