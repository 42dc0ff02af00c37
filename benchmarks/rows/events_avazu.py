"""The events stage's jobs on an Avazu-shaped table, each in a process of its own (the path the
pipeline's Avazu and events stages run):

* ``events-avazu``: an Avazu-shaped log (``--size events-avazu=N``, default 4 x 10^6 rows;
  ``--size events-avazu=40428967`` is the official size) generated and converted once to
  parquet (input, reported, not the subject); then per attribute one histogram job
  (:func:`ldpsample.events.build_event_histograms` with the published Avazu settings as events
  options) and one metrics job (:func:`ldpsample.events.evaluate_attribute`, ε 8, 12 and 16
  in-process, minimax and mollifier_tv, release and audit); the stage's wall time on 2 cores,
  estimated as max(longest job, total / 2) for the histogram jobs plus the same for the metrics
  jobs (the jobs of a step are independent); and the 9 attributes' histograms in one job, for
  comparison.

Each job's time, peak memory and output are in the notes. Imports the standard library,
:mod:`runner` and :mod:`rows.steps` at the top; ``ldpsample`` inside the function (see
:mod:`rows`).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from runner.measure import Measure, Row
from runner.registry import in_own_processes, register, row_size

from rows.steps import run

#: The ε of each metrics job.
EPSILONS = (8.0, 12.0, 16.0)
#: The events entry's key the histogram jobs report errors under.
KEY = "events.avazu"


def _wall(jobs: list[float], cores: int = 2) -> float:
    """A step's wall time on ``cores`` cores: its longest job, or its total over the cores."""
    return max(max(jobs, default=0.0), sum(jobs) / cores)


def _note(done: list[tuple[str, float, float, str]]) -> str:
    worst = max(peak for _, _, peak, _ in done)
    each = "; ".join(f"{name} {t:,.1f} s, {peak:,.0f} MiB ({info})" for name, t, peak, info in done)
    return f"peak <= {worst:,.0f} MiB; {each}"


@register("events-avazu", in_own_processes, size=(4_000_000, 100_000))
def row_events_avazu(quick: bool) -> Row:
    from ldpsample.datasets.registry import AVAZU_ATTRIBUTES

    rows = row_size("events-avazu", quick)
    row = Row(
        "events-avazu",
        f"events jobs on an Avazu-shaped log of {rows:,} rows, one process per job",
    )
    work = Path(tempfile.mkdtemp(prefix="run_all_events_avazu_"))
    try:
        src, parquet = work / "train.gz", work / "train.parquet"
        generated = run("generate", src=str(src), rows=rows, seed=2025)
        converted = run("convert", src=str(src), parquet=str(parquet))
        histograms, metrics = [], []
        for attribute in AVAZU_ATTRIBUTES:
            out = str(work / f"events_histograms_{attribute}.parquet")
            histograms.append(
                (
                    attribute,
                    *run(
                        "histograms", parquet=str(parquet), attributes=[attribute], key=KEY, out=out
                    ),
                )
            )
            metrics.append(
                (
                    attribute,
                    *run("metrics", histograms=out, attribute=attribute, epsilons=list(EPSILONS)),
                )
            )
        one_job = run(
            "histograms",
            parquet=str(parquet),
            attributes=list(AVAZU_ATTRIBUTES),
            key=KEY,
            out=str(work / "events_histograms.parquet"),
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    hist_times = [t for _, t, _, _ in histograms]
    metric_times = [t for _, t, _, _ in metrics]
    subject = "events stage, estimated wall on 2 cores"
    row.measures = [
        Measure(
            subject,
            _wall(hist_times) + _wall(metric_times),
            "max(longest job, total / 2) of the histogram jobs, plus the same of the metrics jobs",
        ),
        Measure(
            f"{len(histograms)} histogram jobs, one attribute each",
            sum(hist_times),
            _note(histograms),
        ),
        Measure(
            f"{len(metrics)} metrics jobs ({len(EPSILONS)} ε + release + audit each)",
            sum(metric_times),
            _note(metrics),
        ),
        Measure(
            f"histograms of the {len(AVAZU_ATTRIBUTES)} attributes in one job",
            one_job[0],
            f"peak {one_job[1]:,.0f} MiB; {one_job[2]}",
        ),
        Measure(
            "generate train.gz (input)",
            generated[0],
            f"peak {generated[1]:,.0f} MiB; {generated[2]}",
        ),
        Measure(
            "convert to parquet (input)",
            converted[0],
            f"peak {converted[1]:,.0f} MiB; {converted[2]}",
        ),
    ]
    return row
