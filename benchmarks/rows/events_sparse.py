"""The evaluation of a sparse catalogue as a metrics job does it:

* ``events-sparse-1e6x1e5``: ``sparse-1e6x1e5``'s users (:mod:`rows.sparse_catalogue`) as
  events histograms through :func:`ldpsample.events.evaluate_attribute` (the sparse path: no
  users x items matrix), target < 30 s;
* ``events-sparse-workflow``: the same catalogue as an events table (one parquet file, integer
  ids, no attributes, ``top_items: null``, prior ``user_mean``, ε 1 and 4, all four methods)
  through Snakemake on 2 cores with ``buckets: 4`` and with ``buckets: auto`` (2 buckets here:
  the file's footer records 2*10^7 rows), target < 120 s with every job < 4 GiB; the metrics
  jobs' seconds summed over the buckets, target < 30 s.

Imports numpy, :mod:`runner` and :mod:`rows.sparse_catalogue` at the top; ``ldpsample`` and
``polars`` inside each function, so that a row's processes load only what it uses (see
:mod:`rows`).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from runner.measure import (
    Measure,
    Row,
    best_time,
    copy_project,
    job_stats,
    local_snakemake_env,
    timed_run,
)
from runner.registry import in_own_processes, register

from rows.sparse_catalogue import SPARSE_EPSILONS, sparse_sizes, sparse_users


def _sparse_evaluation_input(quick: bool):
    """The sparse-catalogue row's users (``sparse_users``) as events histograms: one
    attribute, 4 subcategories, text ids."""
    import polars as pl

    indptr, indices, counts, bounds = sparse_users(quick)
    users = indptr.size - 1
    user_index = np.repeat(np.arange(users), np.diff(indptr))
    subcategory = np.searchsorted(bounds, user_index, side="right") - 1
    return pl.DataFrame(
        {
            "attribute": "a",
            "subcategory": pl.Series(subcategory).cast(pl.String),
            "user": pl.Series(user_index).cast(pl.String).str.zfill(7),
            "item": pl.Series(indices).cast(pl.String).str.zfill(6),
            "count": counts,
        }
    )


def _sparse_evaluation(hist) -> object:
    from ldpsample.events import evaluate_attribute

    return evaluate_attribute(
        hist,
        None,
        name="sparse",
        attribute="a",
        prior="pooled",
        epsilons=list(SPARSE_EPSILONS),
        methods=["minimax"],
        threads=2,
    )


def _sparse_evaluation_subject(quick: bool) -> object:
    return _sparse_evaluation(_sparse_evaluation_input(quick))


@register("events-sparse-1e6x1e5", _sparse_evaluation_subject)
def row_events_sparse(quick: bool) -> Row:
    users, n = sparse_sizes(quick)
    start = time.perf_counter()
    hist = _sparse_evaluation_input(quick)
    generated = time.perf_counter() - start
    result = _sparse_evaluation(hist)
    tv, kl = result.per_user["tv_minimax"].max(), result.per_user["kl_minimax"].max()
    row = Row(
        "events-sparse-1e6x1e5",
        f"the evaluation of a sparse catalogue (evaluate_attribute, as a metrics job): {users:,} "
        f"users, {n:,} items, {hist.height:,} histogram rows (sparse-1e6x1e5's users), 4 "
        "subcategories, pooled prior, minimax TV and KL per user, ε 1 and 4, 2 threads",
    )
    row.measures = [
        Measure(
            "evaluate_attribute (sparse: no users x items matrix)",
            best_time(lambda: _sparse_evaluation(hist), 3),
            f"best of 3; {result.audit.height} kernels audited; largest TV {tv:.4f}, KL {kl:.3f}",
            limit=30,
        ),
        Measure("building the histograms (input, not timed above)", generated),
    ]
    return row


#: Every method of the metrics job (``events-sparse-workflow``).
ALL_METHODS = ["minimax", "mollifier_tv", "mollifier_kl", "randomized_response"]


def _sparse_table(quick: bool) -> Path:
    """The sparse catalogue as one parquet events table (``user``, ``item``, ``count``), written
    once per size under ``benchmarks/results/sparse/`` (git-ignored)."""
    import polars as pl

    users, n = sparse_sizes(quick)
    path = (
        Path(__file__).resolve().parents[1] / "results" / "sparse" / f"events-{users}x{n}.parquet"
    )
    if not path.exists():
        indptr, indices, counts, _ = sparse_users(quick)
        path.parent.mkdir(parents=True, exist_ok=True)
        pl.DataFrame(
            {
                "user": np.repeat(np.arange(indptr.size - 1), np.diff(indptr)),
                "item": indices,
                "count": counts,
            }
        ).write_parquet(path.with_suffix(".tmp"), compression="zstd")
        path.with_suffix(".tmp").rename(path)
    return path


def _workflow_run(quick: bool, buckets: int | str) -> tuple[float, float, dict, dict]:
    """The sparse table's events entry through ``snakemake --cores 2``: (seconds, largest
    process MiB, each rule's largest job MB, each rule's summed job seconds)."""
    import yaml

    table = _sparse_table(quick)
    work = Path(tempfile.mkdtemp(prefix="run_all_sparse_"))
    try:
        copy_project(work)
        entry = {
            "path": str(table),
            "user": "user",
            "item": "item",
            "count": "count",
            "attributes": [],
            "prior": "user_mean",
            "top_items": None,
            "epsilons": list(SPARSE_EPSILONS),
            "methods": ALL_METHODS,
            "buckets": buckets,
        }
        (work / "config" / "sparse.yaml").write_text(yaml.safe_dump({"events": {"sparse": entry}}))
        command = [sys.executable, "-m", "snakemake", "--configfile", "config/sparse.yaml"]
        seconds, peak, _ = timed_run([*command, "--cores", "2"], work, local_snakemake_env())
        peaks, job_seconds, _ = job_stats(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return seconds, peak, peaks, job_seconds


def _jobs_note(peak: float, peaks: dict, job_seconds: dict) -> str:
    largest = ", ".join(f"{rule} {mb:,.0f}" for rule, mb in sorted(peaks.items()))
    per_rule = ", ".join(f"{rule} {s:,.1f} s" for rule, s in sorted(job_seconds.items()))
    over = [rule for rule, mb in peaks.items() if mb >= 4096 * 1.048576]
    verdict = f"NO ({', '.join(sorted(over))})" if over else "yes"
    return (
        f"largest job per rule (MB): {largest}; largest process {peak:,.0f} MiB; every job "
        f"< 4 GiB: {verdict}; jobs' seconds: {per_rule}"
    )


@register("events-sparse-workflow", in_own_processes)
def row_events_sparse_workflow(quick: bool) -> Row:
    users, n = sparse_sizes(quick)
    row = Row(
        "events-sparse-workflow",
        f"the sparse catalogue through Snakemake (`--cores 2`): {users:,} users, {n:,} items "
        "(sparse-1e6x1e5's users) as one events table, no attributes, `top_items: null`, prior "
        "`user_mean`, ε 1 and 4, methods minimax, mollifier_tv, mollifier_kl, "
        "randomized_response",
    )
    seconds, peak, peaks, job_seconds = _workflow_run(quick, 4)
    row.measures.append(
        Measure(
            "the events stage, `buckets: 4` (split, bucket histograms and metrics, combine)",
            seconds,
            _jobs_note(peak, peaks, job_seconds),
            limit=120,
        )
    )
    seconds, peak, peaks, job_seconds = _workflow_run(quick, "auto")
    row.measures.append(
        Measure(
            "the events stage, `buckets: auto` (2 buckets, from the parquet footer's row count)",
            seconds,
            _jobs_note(peak, peaks, job_seconds),
            limit=120,
        )
    )
    row.measures.append(
        Measure(
            "its metrics jobs (every method, every ε; summed over the buckets)",
            job_seconds.get("events_bucket_metrics", job_seconds.get("events_metrics", 0.0)),
            "from the jobs' benchmark files",
            limit=30,
        )
    )
    return row
