"""Steps of the Avazu-shaped rows (``avazu``, ``events-avazu``), each run in a spawned process
of its own so that its peak resident memory (``ru_maxrss``) is its own (no rows of its own).

:func:`run` takes a step's kind and its arguments and returns (seconds, peak MiB, info):

* ``generate``: an Avazu-shaped ``train.gz`` (``generate_avazu_like``, gzip level 6);
* ``convert``: gzip CSV -> parquet (``convert_avazu_to_parquet``), the pipeline's cached parquet;
* ``histograms``: :func:`ldpsample.events.build_event_histograms` with the published-code Avazu
  settings (:data:`AVAZU_EVENTS`) for the attributes given, written to parquet (the pipeline's
  ``avazu_histograms`` and ``events_histograms`` jobs);
* ``metrics``: :func:`ldpsample.events.evaluate_attribute` of one attribute's histograms,
  minimax and mollifier_tv, every ε given in-process, with the release and the kernel audit
  (the ``avazu_metrics`` and ``events_metrics`` jobs).

Imports the standard library at the top; ``ldpsample`` and ``polars`` inside the step.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import resource
import time
from typing import Any

#: Rows of the official Avazu ``train.gz`` (``ldpsample.datasets.registry.OFFICIAL_ROW_COUNTS``,
#: not imported at the top: see :mod:`rows`).
OFFICIAL_ROWS = 40_428_967
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
        from ldpsample.events.options import EventsOptions
        from ldpsample.pipeline.io import write_parquet

        options = {**AVAZU_EVENTS, "attributes": list(args["attributes"])}
        result = build_event_histograms(
            EventsOptions(path=args["parquet"], key=args["key"], **options)
        )
        frame = result.histograms
        write_parquet(frame, args["out"])
        kept = (result.subcategories["status"] == "kept").sum()
        info = (
            f"{kept} kept subcategories, {frame.select('subcategory', 'user').n_unique():,} "
            f"(subcategory, user) pairs, {frame.height:,} rows"
        )
    elif kind == "metrics":
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
            epsilons=args["epsilons"],
            methods=["minimax", "mollifier_tv"],
        )
        info = f"{result.per_user.height:,} per-user rows, {result.audit.height} kernels audited"
    else:
        raise ValueError(f"unknown step {kind!r}")
    elapsed = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    queue.put((elapsed, peak_mib, info))


def run(kind: str, **args: Any) -> tuple[float, float, str]:
    """Step ``kind`` with ``args`` in a spawned process: (seconds, its peak MiB, info)."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(target=_step, args=(kind, args, queue))
    process.start()
    result = queue.get()
    process.join()
    if process.exitcode != 0:
        raise RuntimeError(f"step {kind} failed with exit code {process.exitcode}")
    return result
