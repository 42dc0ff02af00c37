"""The Avazu rows, each step in processes of their own (measured from outside by ``wait4``):

* ``avazu``: Avazu-shaped log (``--size avazu=N``, default 10^6; the README quotes 10^7 and the
  full 40.4M): gzip CSV -> parquet, the 9 attribute histograms and each attribute's metrics at
  ε = 1, through :func:`rows.steps.run` (each step in its own process; its own peak memory);
* ``avazu-stage``: the pipeline's Avazu stage through Snakemake (``snakemake --cores 2``) in a
  temporary copy of the project, on the generated log (``avazu.source: synthetic``,
  ``--size avazu-stage=N``, default the official 40,428,967 rows): a first run generates and
  converts the log (reported, not the target), the timed run is the stage with the parquet
  present; peak memory is the largest process of that run (``ru_maxrss`` of the Snakemake
  process's waited-for descendants, from ``wait4``), and the note names each rule's largest
  job (its ``logs/benchmarks/`` files). Target < 60 s and < 2 GB per job on 2 cores.

Imports the standard library, :mod:`runner` and :mod:`rows.steps` at the top; ``ldpsample``
and ``yaml`` inside each function, so that a row's processes load only what it uses (see
:mod:`rows`).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from runner.measure import (
    Measure,
    Row,
    benchmark_peaks,
    copy_project,
    local_snakemake_env,
    timed_run,
)
from runner.registry import in_own_processes, register, row_size

from rows.steps import OFFICIAL_ROWS, run

#: The ε of the ``avazu`` row's metrics steps.
METRICS_EPSILON = 1.0


@register("avazu", in_own_processes, size=(1_000_000, 200_000))
def row_avazu(quick: bool) -> Row:
    from ldpsample.experiments.avazu.data import AVAZU_ATTRIBUTES

    rows = row_size("avazu", quick)
    row = Row("avazu", f"Avazu-shaped log, {rows:,} rows (each step its own process)")
    work = Path(tempfile.mkdtemp(prefix="run_all_avazu_"))
    try:
        src, parquet = work / "train.gz", work / "train.parquet"
        t, peak, info = run("generate", src=str(src), rows=rows, seed=2025)
        row.measures.append(
            Measure(
                "generate train.gz (input, not timed in README)", t, f"{info}; peak {peak:,.0f} MiB"
            )
        )
        t, peak, info = run("convert", src=str(src), parquet=str(parquet))
        row.measures.append(Measure("CSV.gz -> parquet", t, f"{info}; peak {peak:,.0f} MiB"))
        steps = {"histograms": [], "metrics": []}
        for attribute in AVAZU_ATTRIBUTES:
            out = str(work / f"histograms-{attribute}.parquet")
            steps["histograms"].append(
                (
                    attribute,
                    *run(
                        "histograms",
                        parquet=str(parquet),
                        attributes=[attribute],
                        key="avazu",
                        out=out,
                    ),
                )
            )
            steps["metrics"].append(
                (
                    attribute,
                    *run(
                        "metrics", histograms=out, attribute=attribute, epsilons=[METRICS_EPSILON]
                    ),
                )
            )
        labels = {
            "histograms": f"{len(AVAZU_ATTRIBUTES)} attribute histograms",
            "metrics": f"{len(AVAZU_ATTRIBUTES)} attribute metrics (ε = {METRICS_EPSILON:g}, "
            "minimax and mollifier_tv, release and audit)",
        }
        for kind, done in steps.items():
            worst = max(peak for _, _, peak, _ in done)
            each = "; ".join(f"{a} {t:,.1f} s ({info})" for a, t, _, info in done)
            row.measures.append(
                Measure(
                    labels[kind], sum(t for _, t, _, _ in done), f"peak <= {worst:,.0f} MiB; {each}"
                )
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return row


@register("avazu-stage", in_own_processes, size=(OFFICIAL_ROWS, 100_000))
def row_avazu_stage(quick: bool) -> Row:
    import yaml

    rows = row_size("avazu-stage", quick)
    row = Row(
        "avazu-stage",
        f"Avazu stage through Snakemake, generated log of {rows:,} rows, parquet present, "
        "`--cores 2`",
    )
    work = Path(tempfile.mkdtemp(prefix="run_all_avazu_stage_"))
    try:
        copy_project(work)
        off = ("synthetic", "theory", "movielens", "wpm_ring", "wpm_movielens", "wpm_gowalla")
        overlay = {
            "experiments": {**{name: False for name in off}, "avazu": True},
            "avazu": {"source": "synthetic", "synthetic": {"rows": rows}},
        }
        (work / "config" / "run_all.yaml").write_text(yaml.safe_dump(overlay))
        snakemake = [sys.executable, "-m", "snakemake", "--configfile", "config/run_all.yaml"]
        prepare = [*snakemake, "--cores", "2", "--until", "avazu_convert"]
        seconds, peak, _ = timed_run(prepare, work, local_snakemake_env())
        row.measures.append(
            Measure(
                "generate and convert the log (input, not the target)",
                seconds,
                f"peak {peak:,.0f} MiB",
            )
        )
        seconds, peak, _ = timed_run([*snakemake, "--cores", "2"], work, local_snakemake_env())
        row.measures.append(
            Measure(
                "the stage (9 histogram, 9 metrics, aggregate, figure and reproduction-table jobs)",
                seconds,
                f"largest process {peak:,.0f} MiB (target < 2 GB per job); largest "
                f"job by rule (Snakemake's benchmark files, MB): "
                f"{benchmark_peaks(work, 'avazu_', skip=('avazu_generate', 'avazu_convert'))}",
                limit=60,
            )
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return row
