"""The events stage at scale: a generated events table, partitioned, through Snakemake.

The table: one row per event with ``user`` (``rows / 50`` users, uniform), ``item``
(10^4 items, Zipf(1) popularity) and one attribute ``category`` of 20 subcategories (uniform),
written as zstd parquet files of at most :data:`ROWS_PER_FILE` rows (at least 4 files), integer
columns (about 6.4 bytes per row). Generated once per size into ``--data`` (default
``benchmarks/results/scale/``, git-ignored) and reused.

:func:`run` copies the workflow into a temporary folder and runs the table's events entry
(:func:`events_entry`: ε 1 and 4, minimax and the TV mollifier, pooled prior, top 100 items)
with ``snakemake --cores 2`` in two timed steps: the histogram phase (every job up to the
priors: split, buckets, merges, bucket histograms) and the rest (metrics, combine, figure).
Each step's peak is the largest process of its run (``ru_maxrss`` from ``wait4``); each rule's
largest job comes from Snakemake's benchmark files.

Run alone: ``.venv/bin/python benchmarks/bench_scale.py --rows 10000000 [--buckets auto]``;
``benchmarks/run_all.py --only events-scale-1e7 events-scale-1e8 events-scale-4e8`` runs the
rows of the performance table.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from runner.measure import local_snakemake_env, timed_run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "results" / "scale"
#: Rows per generated parquet file (a partition of the table; at least 4 files per table).
ROWS_PER_FILE = 10_000_000
ITEMS = 10_000
SUBCATEGORIES = 20
ROWS_PER_USER = 50
WORKFLOW_PARTS = (
    "Snakefile",
    "environment.yml",
    "workflow",
    "scripts",
    "config",
    "profiles",
    "src",
)


def table_folder(rows: int, data: Path = DATA) -> Path:
    return data / f"rows~{rows}"


def generate(rows: int, *, data: Path = DATA, seed: int = 22) -> Path:
    """The generated table of ``rows`` rows in ``data/rows~<rows>/part-<i>.parquet`` (made
    once: a complete folder holds ``done.json``). Returns the folder."""
    import polars as pl

    folder = table_folder(rows, data)
    if (folder / "done.json").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    files = max(4, -(-rows // ROWS_PER_FILE))
    users = max(1, rows // ROWS_PER_USER)
    weights = 1.0 / np.arange(1, ITEMS + 1)
    cumulative = np.cumsum(weights)
    cumulative /= cumulative[-1]
    bounds = np.linspace(0, rows, files + 1).astype(np.int64)
    for index in range(files):
        size = int(bounds[index + 1] - bounds[index])
        rng = np.random.default_rng([seed, index])
        frame = pl.DataFrame(
            {
                "user": rng.integers(0, users, size),
                "item": np.searchsorted(cumulative, rng.random(size), side="right").astype(
                    np.int32
                ),
                "category": rng.integers(0, SUBCATEGORIES, size).astype(np.int8),
            }
        )
        frame.write_parquet(folder / f"part-{index:04d}.parquet", compression="zstd")
    size = sum(p.stat().st_size for p in folder.glob("*.parquet"))
    (folder / "done.json").write_text(json.dumps({"rows": rows, "files": files, "bytes": size}))
    return folder


def events_entry(path: str, buckets: int | str = "auto") -> dict:
    """The benchmark's events entry (the issue's metrics: ε 1 and 4, minimax and mollifier_tv)."""
    return {
        "path": path,
        "user": "user",
        "item": "item",
        "attributes": ["category"],
        "prior": "pooled",
        "top_items": 100,
        "epsilons": [1, 4],
        "methods": ["minimax", "mollifier_tv"],
        "buckets": buckets,
    }


@dataclass
class ScaleRun:
    rows: int
    buckets: int
    files: int
    histogram_seconds: float
    histogram_peak_mib: float
    rest_seconds: float
    rest_peak_mib: float
    job_peaks_mb: dict[str, float]
    job_seconds: dict[str, float]
    jobs: dict[str, int]

    @property
    def seconds(self) -> float:
        return self.histogram_seconds + self.rest_seconds

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.histogram_seconds


def copy_project(dest: Path) -> Path:
    """A copy of what a clone holds of the workflow in ``dest`` (no results or state)."""
    for part in WORKFLOW_PARTS:
        source = ROOT / part
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, dest / part)
    return dest


def _job_stats(workdir: Path) -> tuple[dict[str, float], dict[str, float], dict[str, int]]:
    """Per rule: the largest job's max_rss (MB), the jobs' summed wall seconds and count."""
    peaks: dict[str, float] = {}
    seconds: dict[str, float] = {}
    jobs: dict[str, int] = {}
    for path in sorted((workdir / "logs" / "benchmarks").glob("events_*/**/*.tsv")):
        rule = path.relative_to(workdir / "logs" / "benchmarks").parts[0]
        header, values = path.read_text().splitlines()[:2]
        record = dict(zip(header.split("\t"), values.split("\t"), strict=True))
        peaks[rule] = max(peaks.get(rule, 0.0), float(record["max_rss"]))
        seconds[rule] = seconds.get(rule, 0.0) + float(record["s"])
        jobs[rule] = jobs.get(rule, 0) + 1
    return peaks, seconds, jobs


def run(
    rows: int, *, data: Path = DATA, buckets: int | str = "auto", keep: bool = False
) -> ScaleRun:
    """The generated table of ``rows`` rows through Snakemake on 2 cores (see the module)."""
    import yaml

    folder = generate(rows, data=data)
    work = Path(tempfile.mkdtemp(prefix="bench_scale_"))
    try:
        copy_project(work)
        overlay = {"events": {"scale": events_entry(str(folder), buckets)}}
        (work / "config" / "scale.yaml").write_text(yaml.safe_dump(overlay))
        snakemake = [sys.executable, "-m", "snakemake", "--configfile", "config/scale.yaml"]
        # the histogram phase: every job up to the priors of each attribute
        first, first_peak, _ = timed_run(
            [*snakemake, "--cores", "2", "--until", "events_priors", "events_histograms"],
            work,
            local_snakemake_env(),
        )
        rest, rest_peak, _ = timed_run([*snakemake, "--cores", "2"], work, local_snakemake_env())
        peaks, seconds, jobs = _job_stats(work)
        layout = json.loads((folder / "done.json").read_text())
        used = buckets
        if (work / "results/events/scale/work/buckets.json").exists():
            used = json.loads((work / "results/events/scale/work/buckets.json").read_text())[
                "buckets"
            ]
        return ScaleRun(
            rows=rows,
            buckets=1 if used == "auto" else int(used),
            files=layout["files"],
            histogram_seconds=first,
            histogram_peak_mib=first_peak,
            rest_seconds=rest,
            rest_peak_mib=rest_peak,
            job_peaks_mb=peaks,
            job_seconds=seconds,
            jobs=jobs,
        )
    finally:
        if keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--buckets", default="auto")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--keep", action="store_true", help="keep the run's folder")
    args = parser.parse_args(argv)
    buckets = args.buckets if args.buckets == "auto" else int(args.buckets)
    result = run(int(args.rows), data=args.data, buckets=buckets, keep=args.keep)
    print(json.dumps({**asdict(result), "seconds": result.seconds}, indent=1))


if __name__ == "__main__":
    main()
