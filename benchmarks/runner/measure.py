"""What a benchmark row measures and how: the records a row returns (:class:`Row`,
:class:`Measure`), :func:`best_time` (and :func:`best_times`, with the CPU time),
:func:`one_thread`, and :func:`timed_run` (a command in a process of its own, its peak resident
memory read from the kernel through ``os.wait4``) with :func:`copy_project` (a clone's workflow
in a folder of its own), :func:`benchmark_peaks` and :func:`job_stats` (each Snakemake rule's
jobs from their benchmark files).

Imports the standard library only.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ldpsample.pipeline.checkout import copy_workflow

#: How many calls :func:`best_time` makes by default (``run_all.py --repeats`` sets it).
REPEATS = 5
#: The project's root (this file is ``benchmarks/runner/measure.py``).
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Measure:
    """One timed call of a row. ``ratio_of`` names another measure of the same row: the ratio
    reported is ``that.seconds / self.seconds`` (``speed-up``) unless ``slowdown`` is set
    (``self.seconds / that.seconds``)."""

    label: str
    seconds: float
    note: str = ""
    ratio_of: str | None = None
    slowdown: bool = False
    target: float | None = None  # >= target for a speed-up, <= target for a slowdown
    limit: float | None = None  # a target on the time itself: < limit seconds


@dataclass
class Row:
    name: str
    title: str
    measures: list[Measure] = field(default_factory=list)
    info: str = ""


def best_time(fn: Callable[[], object], repeats: int | None = None) -> float:
    """Best wall-clock time of ``repeats`` calls (stops early once a call takes over 20 s)."""
    best = float("inf")
    for _ in range(repeats or REPEATS):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
        if best > 20.0:
            break
    return best


def best_times(fn: Callable[[], object], repeats: int | None = None) -> tuple[float, float]:
    """Best wall-clock and best process CPU time of ``repeats`` calls (stops early once a call
    takes over 20 s). CPU time is less sensitive to other processes on the cores, and exceeds
    the wall time where BLAS runs threads."""
    walls, cpus = [], []
    for _ in range(repeats or REPEATS):
        start, cpu_start = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu_start)
        if min(walls) > 20.0:
            break
    return min(walls), min(cpus)


def one_thread(row: Row, call: Callable[[], object]) -> Measure:
    """The row's subject again with ``threads=1`` (no thread pool), its ratios to the row's
    references in the note: on a machine loaded by other jobs the default threads may not help."""
    seconds = best_time(call)
    subject = row.measures[0]
    ratios = []
    for m in row.measures[1:]:
        if m.ratio_of == subject.label:
            value = seconds / m.seconds if m.slowdown else m.seconds / seconds
            ratios.append(f"{m.label}: {value:,.2f}x {'its time' if m.slowdown else 'faster'}")
    return Measure("same, threads=1 (one core, no thread pool)", seconds, "; ".join(ratios))


def local_snakemake_env() -> dict[str, str]:
    """This process's environment with ``SLURM_CONF=/dev/null``, for a pipeline row's local
    ``snakemake --cores 2``: where the SLURM client is installed and no controller answers,
    the SLURM executor plugin's ``scontrol`` probe costs every snakemake command ~9 s before it
    starts (docs/cluster.md, "Local runs on such a machine"), which is not the pipeline's time;
    a local run is otherwise unchanged."""
    return {**os.environ, "SLURM_CONF": "/dev/null"}


def timed_run(
    cmd: list[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    *,
    stderr: int | None = subprocess.STDOUT,
):
    """Run ``cmd`` in ``cwd``; return (seconds, peak MiB of its largest process, output). The
    peak is ``ru_maxrss`` from ``wait4``: the largest of the process and the descendants it
    waited for, each measured by the kernel. The output is stdout, with stderr unless
    ``stderr=None`` (then it goes to this process's stderr)."""
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=stderr)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        out.seek(0)
        text = out.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed in {cwd}:\n{text[-4000:]}")
    return seconds, usage.ru_maxrss / 1024, text


def copy_project(dest: Path) -> Path:
    """A copy of what a clone holds of the workflow in ``dest``: no results or state
    (:func:`ldpsample.pipeline.checkout.copy_workflow`)."""
    return copy_workflow(ROOT, dest)


def job_stats(
    workdir: Path, prefix: str = "events_"
) -> tuple[dict[str, float], dict[str, float], dict[str, int]]:
    """Per rule named ``prefix*``, from the run's ``logs/benchmarks/`` files: the largest job's
    max_rss (MB), the jobs' summed wall seconds and their count."""
    peaks: dict[str, float] = {}
    seconds: dict[str, float] = {}
    jobs: dict[str, int] = {}
    for path in sorted((workdir / "logs" / "benchmarks").glob(f"{prefix}*/**/*.tsv")):
        rule = path.relative_to(workdir / "logs" / "benchmarks").parts[0]
        header, values = path.read_text().splitlines()[:2]
        record = dict(zip(header.split("\t"), values.split("\t"), strict=True))
        peaks[rule] = max(peaks.get(rule, 0.0), float(record["max_rss"]))
        seconds[rule] = seconds.get(rule, 0.0) + float(record["s"])
        jobs[rule] = jobs.get(rule, 0) + 1
    return peaks, seconds, jobs


def benchmark_peaks(workdir: Path, prefix: str, skip: tuple[str, ...] = ()) -> str:
    """Each rule's largest job (rules named ``prefix*`` but not in ``skip``, MB), from
    :func:`job_stats`: Snakemake samples each job's memory, so a job of less than a second may
    show a few MB."""
    peaks, _, _ = job_stats(workdir, prefix)
    return ", ".join(
        f"{rule} {mib:,.0f}" for rule, mib in sorted(peaks.items()) if rule not in skip
    )
