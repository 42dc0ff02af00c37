"""Benchmark of the Avazu data path; prints a markdown table of time and peak memory per step.

Steps, each in its own process so that its peak resident memory (``ru_maxrss``) is its own:

1. ``generate``: an Avazu-shaped ``train.gz`` (:func:`generate_avazu_like`, gzip level 6);
2. ``convert``: gzip CSV → parquet (:func:`convert_avazu_to_parquet`);
3. ``histograms <attr>``: :func:`ldpsample.events.build_event_histograms` with the
   published-code Avazu settings for each of the 9 attributes, written to parquet (the
   pipeline's ``avazu_histograms`` jobs);
4. with ``--metrics``: :func:`ldpsample.events.evaluate_attribute` (minimax and mollifier TV,
   release and audit, at one ε) per attribute (the ``avazu_metrics`` jobs loop over every ε).

Run: ``.venv/bin/python benchmarks/bench_avazu.py [--rows 10000000] [--full] [--metrics]``
(``--full`` uses the official size, 40,428,967 rows). Files go to ``--workdir``
(default ``benchmarks/results/avazu/``, git-ignored) and are deleted unless ``--keep``.
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

from ldpsample.datasets.registry import OFFICIAL_ROW_COUNTS

OFFICIAL_ROWS = OFFICIAL_ROW_COUNTS[("avazu", "train")]
#: The published code's Avazu settings as events options (what the pipeline's avazu_histograms
#: jobs pass to build_event_histograms for the default config; workflow/rules/avazu_common.smk).
AVAZU_EVENTS = dict(
    user="device_id",
    item="site_id",
    count=None,
    prior="user_mean",
    top_items=100,
    rank_items_by="click",
    activity_by=None,
    min_user_count=20,
    activity_scope="global",
    min_users=100,
    exclude_users=[],
    on_null="error",
)


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
        info = f"{stats.rows:,} rows, {os.path.getsize(args['parquet']) / 2**20:,.0f} MiB parquet"
    elif kind == "histograms":
        from ldpsample.events import build_event_histograms
        from ldpsample.pipeline.io import write_parquet

        result = build_event_histograms(
            args["parquet"], key="avazu", **{**AVAZU_EVENTS, "attributes": [args["attribute"]]}
        )
        frame = result.histograms
        write_parquet(frame, args["out"])
        info = (
            f"{frame['subcategory'].n_unique()} subcategories, "
            f"{frame.select('subcategory', 'user').n_unique():,} (subcategory, device) "
            f"pairs, {frame.height:,} rows"
        )
    elif kind == "metrics":
        import polars as pl

        from ldpsample.events import evaluate_attribute

        frame = pl.read_parquet(args["out"])
        result = evaluate_attribute(
            frame,
            None,
            name="avazu",
            attribute=args["attribute"],
            prior="user_mean",
            epsilons=[args["epsilon"]],
            methods=["minimax", "mollifier_tv"],
        )
        info = f"{result.per_user.height:,} per-device rows, {result.audit.height} kernels"
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


def main() -> None:
    from ldpsample.experiments.avazu.data import AVAZU_ATTRIBUTES

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--full", action="store_true", help=f"{OFFICIAL_ROWS:,} rows")
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--workdir", type=Path, default=Path("benchmarks/results/avazu"))
    parser.add_argument("--attributes", nargs="+", default=list(AVAZU_ATTRIBUTES))
    parser.add_argument("--metrics", action="store_true", help="also time the metrics")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    args = parser.parse_args()
    rows = OFFICIAL_ROWS if args.full else args.rows
    work = args.workdir / f"rows-{rows}"
    work.mkdir(parents=True, exist_ok=True)
    src, parquet = work / "train.gz", work / "train.parquet"

    table = []
    total = 0.0
    t, m, info = run("generate", src=str(src), rows=rows, seed=args.seed)
    table.append(("generate train.gz", t, m, info))
    t, m, info = run("convert", src=str(src), parquet=str(parquet))
    table.append(("convert → parquet", t, m, info))
    total += t
    for attribute in args.attributes:
        out = work / f"histograms-{attribute}.parquet"
        t, m, info = run("histograms", parquet=str(parquet), attribute=attribute, out=str(out))
        table.append((f"histograms {attribute}", t, m, info))
        total += t
        if args.metrics:
            t, m, info = run("metrics", out=str(out), attribute=attribute, epsilon=args.epsilon)
            table.append((f"metrics {attribute} (ε={args.epsilon:g})", t, m, info))

    import polars as pl
    import pyarrow as pa

    print(
        f"Avazu-shaped data, {rows:,} rows; {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, polars {pl.__version__}, pyarrow {pa.__version__}\n"
    )
    print("| step | time (s) | peak RSS (MiB) | output |")
    print("|---|---:|---:|---|")
    for name, t, m, info in table:
        print(f"| {name} | {t:,.1f} | {m:,.0f} | {info} |")
    print(f"\nconvert + all histograms: {total:,.1f} s")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
