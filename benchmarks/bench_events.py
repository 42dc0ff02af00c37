"""Benchmark of the events stage on an Avazu-shaped table (the path the pipeline's Avazu and
MovieLens stages run); prints a markdown table of time and peak memory per step.

Steps, each in its own process so that its peak resident memory (``ru_maxrss``) is its own:

1. ``generate`` + ``convert``: an Avazu-shaped ``train.gz`` (:func:`generate_avazu_like`) converted
   once to parquet (:func:`convert_avazu_to_parquet`), as the pipeline's cached Avazu parquet;
2. ``events histograms <attr>``: :func:`ldpsample.events.build_event_histograms` with the
   published Avazu settings as events keys, one attribute per job (the ``events_histograms``
   jobs; ``--one-job`` runs all 9 attributes in one, for comparison);
3. ``events metrics <attr>``: :func:`ldpsample.events.evaluate_attribute` per attribute, every ε
   in-process, minimax and mollifier_tv, with the release and the kernel audit
   (the ``events_metrics`` and ``avazu_metrics`` jobs).

(``--compare`` timed the former Avazu implementation beside it; since the Avazu stage runs these
jobs, that implementation is gone, and so is the option.)

The stage's wall time on 2 cores is estimated as max(longest job, total / 2) for the histogram
jobs plus the same for the metrics jobs (the jobs of a step are independent).

Run: ``.venv/bin/python benchmarks/bench_events.py [--rows 4000000] [--full] [--one-job]``
(``--full`` uses the official size, 40,428,967 rows). Files go to ``--workdir``
(default ``benchmarks/results/events/``) and are deleted unless ``--keep``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import resource
import shutil
import time
from pathlib import Path
from typing import Any

from bench_avazu import AVAZU_EVENTS, OFFICIAL_ROWS

from ldpsample.datasets.registry import AVAZU_ATTRIBUTES as ATTRIBUTES

EPSILONS = (8.0, 12.0, 16.0)
# The pipeline's Avazu settings as events options, one definition (bench_avazu.py), all attributes.
EVENTS_AVAZU = {**AVAZU_EVENTS, "attributes": list(ATTRIBUTES)}


def _step(kind: str, args: dict[str, Any], queue: Any) -> None:
    start = time.perf_counter()
    info = ""
    if kind == "generate":
        from ldpsample.experiments.avazu.synthetic import generate_avazu_like

        generate_avazu_like(args["src"], rows=args["rows"], seed=args["seed"])
        info = f"{os.path.getsize(args['src']) / 2**20:,.0f} MiB gz"
    elif kind == "convert":
        from ldpsample.experiments.avazu.data import convert_avazu_to_parquet

        stats = convert_avazu_to_parquet(args["src"], args["parquet"])
        info = f"{stats.rows:,} rows"
    elif kind == "events histograms":
        from ldpsample.events import build_event_histograms
        from ldpsample.pipeline.io import write_parquet

        options = dict(EVENTS_AVAZU)
        if args.get("attribute"):
            options["attributes"] = [args["attribute"]]
        result = build_event_histograms(args["parquet"], key="events.avazu", **options)
        write_parquet(result.histograms, args["histograms"])
        kept = (result.subcategories["status"] == "kept").sum()
        info = f"{kept} kept subcategories, {result.histograms.height:,} rows"
    elif kind == "events metrics":
        import polars as pl

        from ldpsample.events import evaluate_attribute

        hist = (
            pl.scan_parquet(args["histograms"])
            .filter(pl.col("attribute") == args["attribute"])
            .collect()
        )
        result = evaluate_attribute(
            hist,
            None,
            name="avazu",
            attribute=args["attribute"],
            prior="user_mean",
            epsilons=EPSILONS,
            methods=["minimax", "mollifier_tv"],
        )
        info = f"{result.per_user.height:,} per-user rows, {result.audit.height} kernels audited"
    elapsed = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    queue.put((elapsed, peak_mib, info))


def run(kind: str, **args: Any) -> tuple[float, float, str]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(target=_step, args=(kind, args, queue))
    process.start()
    result = queue.get()
    process.join()
    if process.exitcode != 0:
        raise RuntimeError(f"step {kind} failed with exit code {process.exitcode}")
    return result


def _wall(first: float, jobs: list[float], cores: int = 2) -> float:
    return first + max(max(jobs, default=0.0), sum(jobs) / cores)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--full", action="store_true", help="official size (40,428,967 rows)")
    parser.add_argument("--workdir", type=Path, default=Path("benchmarks/results/events"))
    parser.add_argument("--keep", action="store_true")
    parser.add_argument(
        "--one-job", action="store_true", help="all attributes in one histogram job"
    )
    parser.add_argument("--seed", type=int, default=2025)
    args = parser.parse_args()
    rows = OFFICIAL_ROWS if args.full else args.rows
    work = args.workdir / f"rows~{rows}"
    work.mkdir(parents=True, exist_ok=True)
    src, parquet = work / "train.gz", work / "train.parquet"
    histograms = work / "events_histograms.parquet"
    table = []
    if not src.exists() and not parquet.exists():
        table.append(("generate", *run("generate", src=str(src), rows=rows, seed=args.seed)))
    if not parquet.exists():
        table.append(("convert", *run("convert", src=str(src), parquet=str(parquet))))
    hist_jobs, jobs = [], []
    if args.one_job:
        first = run("events histograms", parquet=str(parquet), histograms=str(histograms))
        table.append(("events histograms (9 attributes, one job)", *first))
        hist_jobs.append(first[0])
    for attribute in ATTRIBUTES:
        out = work / f"events_histograms_{attribute}.parquet"
        if not args.one_job:
            result = run(
                "events histograms", parquet=str(parquet), histograms=str(out), attribute=attribute
            )
            table.append((f"events histograms {attribute}", *result))
            hist_jobs.append(result[0])
        result = run(
            "events metrics",
            histograms=str(histograms if args.one_job else out),
            attribute=attribute,
        )
        table.append((f"events metrics {attribute} ({len(EPSILONS)} ε + release + audit)", *result))
        jobs.append(result[0])
    summary = [
        ("events stage, est. wall on 2 cores", _wall(0.0, hist_jobs) + _wall(0.0, jobs), 0.0, "")
    ]
    print(
        f"\n{rows:,} rows; {platform.processor() or platform.machine()}, {os.cpu_count()} cores\n"
    )
    print("| step | seconds | peak MiB | notes |\n|---|---:|---:|---|")
    for name, seconds, peak, info in table + summary:
        print(f"| {name} | {seconds:,.1f} | {peak:,.0f} | {info} |")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
