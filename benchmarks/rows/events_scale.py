"""The events stage at scale, on the generated table of :mod:`rows.scale_table`:

* ``events-scale-1e7``, ``events-scale-1e8``, ``events-scale-4e8``: the events stage through
  Snakemake (``--cores 2``, ``buckets: auto``) on the generated table at 10^7, 10^8 and
  4 x 10^8 rows (N/50 users, 10^4 items with Zipf popularity, one
  attribute of 20 subcategories, zstd parquet files of 10^7 rows), ε 1 and 4, minimax and
  mollifier_tv: the whole stage and its histogram phase (target >= 0.9 M rows/s), each run's
  largest process (target < 4 GiB per job); the larger sizes run the 10^7-row table again for
  the ratio to linear time (target <= 1.2x);
* ``events-metrics-threads``: :func:`ldpsample.events.evaluate_attribute` on one bucket of the
  10^8-row table with ``threads=2`` and ``threads=1`` (target >= 1.8x).

``--size events-scale-1e7=N`` runs the first row (and the others' linear-time reference) on a
table of N rows.

Imports the standard library, :mod:`runner` and :mod:`rows.scale_table` at the top;
``ldpsample`` and ``polars`` inside each function, so that a row's processes load only what it
uses (see :mod:`rows`).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from runner.measure import Measure, Row, best_time
from runner.registry import in_own_processes, register, row_size

from rows import scale_table


def _scale_rows(size: str, quick: bool) -> int:
    if size == "1e7":
        return row_size("events-scale-1e7", quick)
    rows = {"1e8": 100_000_000, "4e8": 400_000_000}[size]
    return rows // 100 if quick else rows


def _scale_note(run) -> str:
    """A scale_table run's layout, phases, rates, each rule's largest job and each rule's jobs
    with their summed seconds (what a projection to more nodes divides)."""
    largest = ", ".join(f"{rule} {mb:,.0f}" for rule, mb in sorted(run.job_peaks_mb.items()))
    per_rule = ", ".join(
        f"{rule} {run.jobs[rule]} x, {seconds:,.1f} s"
        for rule, seconds in sorted(run.job_seconds.items())
    )
    jobs = sum(run.jobs.values())
    return (
        f"{run.files} files, {run.buckets} buckets, {jobs} jobs; histogram phase "
        f"{run.histogram_seconds:,.1f} s ({run.rows_per_second / 1e6:.2f} M rows/s, largest "
        f"process {run.histogram_peak_mib:,.0f} MiB), metrics and tables {run.rest_seconds:,.1f} s "
        f"(largest process {run.rest_peak_mib:,.0f} MiB); largest job by rule (MB): {largest}; "
        f"jobs and their summed seconds by rule: {per_rule}"
    )


def _scale_row(size: str, quick: bool) -> Row:
    """The generated events table (:mod:`rows.scale_table`), partitioned, through Snakemake
    on 2 cores with ``buckets: auto``; beside a larger size, the 10^7-row table again in the
    same process, for the ratio to linear time."""

    rows = _scale_rows(size, quick)
    row = Row(
        f"events-scale-{size}",
        f"events stage through Snakemake, generated table of {rows:,} rows (N/50 users, 10^4 "
        "items, 20 subcategories; zstd parquet files), `buckets: auto`, `--cores 2`",
    )
    start = time.perf_counter()
    scale_table.generate(rows)
    generated = time.perf_counter() - start
    run = scale_table.run(rows)
    subject = "the events stage (histograms, metrics at ε 1 and 4, tables)"
    largest = max(run.histogram_peak_mib, run.rest_peak_mib)
    row.measures.append(
        Measure(
            subject,
            run.seconds,
            f"{_scale_note(run)}; largest process {largest:,.0f} MiB (target < 4 GiB per job)",
        )
    )
    row.measures.append(
        Measure(
            "its histogram phase (split, buckets, merges, bucket histograms, priors)",
            run.histogram_seconds,
            f"{run.rows_per_second / 1e6:.2f} M rows/s (target >= 0.9 M rows/s on 2 cores)",
            limit=rows / 0.9e6,
        )
    )
    if size != "1e7":
        base_rows = _scale_rows("1e7", quick)
        scale_table.generate(base_rows)
        base = scale_table.run(base_rows)
        factor = rows // base_rows
        row.measures.append(
            Measure(
                f"{factor} x the {base_rows:,}-row table's stage (linear time)",
                factor * base.seconds,
                f"that run: {base.seconds:,.1f} s; {_scale_note(base)}",
                ratio_of=subject,
                slowdown=True,
                target=1.2,
            )
        )
    row.measures.append(
        Measure("generating the table (input, not timed above)", generated, "once per size")
    )
    return row


@register("events-scale-1e7", in_own_processes, size=(10_000_000, 100_000))
def row_events_scale_1e7(quick: bool) -> Row:
    return _scale_row("1e7", quick)


@register("events-scale-1e8", in_own_processes)
def row_events_scale_1e8(quick: bool) -> Row:
    return _scale_row("1e8", quick)


@register("events-scale-4e8", in_own_processes)
def row_events_scale_4e8(quick: bool) -> Row:
    return _scale_row("4e8", quick)


#: The events entry's keys that the histogram steps take (``_metrics_threads_input``).
_HIST = ("user", "item", "attributes", "top_items")
#: The metrics job that ``events-metrics-threads`` times (``evaluate_attribute``'s options).
_METRICS = dict(
    name="scale",
    attribute="category",
    prior="given",
    epsilons=[1, 4],
    methods=["minimax", "mollifier_tv"],
)


def _metrics_threads_input(quick: bool):
    """One bucket's histograms of the generated table (its first of 8 buckets at 10^8 rows:
    about 12.5 million rows, as a bucket of ``buckets: auto``), built once."""
    import polars as pl

    rows = _scale_rows("1e8", quick)
    path = scale_table.DATA / f"metrics_bucket_{rows}.parquet"
    if not path.exists():
        from ldpsample.events.bucketed.steps import histograms_in_buckets

        folder = scale_table.generate(rows)
        options = {
            "key": "events.scale",
            **{k: v for k, v in scale_table.events_entry(str(folder)).items() if k in _HIST},
            "min_user_count": 0,
            "min_users": 1,
        }
        work = Path(tempfile.mkdtemp(prefix="run_all_metrics_"))
        try:
            got = histograms_in_buckets(folder, buckets=8, workdir=work, options=options)
            hist = pl.read_parquet(got.histograms[0])
            got.priors.write_parquet(path.with_suffix(".priors.parquet"))
            hist.write_parquet(path)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return pl.read_parquet(path), pl.read_parquet(path.with_suffix(".priors.parquet"))


def _metrics_threads_subject(quick: bool) -> object:
    from ldpsample.events import evaluate_attribute

    hist, priors = _metrics_threads_input(quick)
    return evaluate_attribute(hist, priors, threads=2, **_METRICS)


@register("events-metrics-threads", _metrics_threads_subject)
def row_events_metrics_threads(quick: bool) -> Row:
    from ldpsample.events import evaluate_attribute

    hist, priors = _metrics_threads_input(quick)
    users = hist.select("subcategory", "user").unique().height
    row = Row(
        "events-metrics-threads",
        f"evaluate_attribute on one bucket of the generated 10^8-row table: {hist.height:,} "
        f"histogram rows, {users:,} (subcategory, user) pairs, 20 subcategories x 100 items; ε 1 "
        "and 4, minimax and mollifier_tv",
    )
    two = evaluate_attribute(hist, priors, threads=2, **_METRICS)
    one = evaluate_attribute(hist, priors, threads=1, **_METRICS)
    same = two.per_user.equals(one.per_user) and two.audit.equals(one.audit)
    row.measures = [
        Measure(
            "threads=2 (users in chunks on 2 threads)",
            best_time(lambda: evaluate_attribute(hist, priors, threads=2, **_METRICS), 3),
            f"best of 3; results equal to threads=1: {'yes' if same else 'NO'}",
        ),
        Measure(
            "threads=1",
            best_time(lambda: evaluate_attribute(hist, priors, threads=1, **_METRICS), 3),
            "best of 3",
            ratio_of="threads=2 (users in chunks on 2 threads)",
            target=1.8,
        ),
    ]
    return row
