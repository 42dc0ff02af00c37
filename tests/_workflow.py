"""Helpers for tests that run the Snakemake workflow in a temporary copy of the project."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import snakemake_fork
import yaml

from ldpsample.pipeline import checkout
from ldpsample.publish.ledger import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


def shared_data_skip_reason(*parts: str) -> str | None:
    """Why a test that reads ``../shared/data`` (or the ``parts`` inside it) cannot run, or None.

    The one wording of every such skip: which paths are missing and where the copies come from.
    """
    wanted = [SHARED_DATA / part for part in parts] or [SHARED_DATA]
    missing = [str(path) for path in wanted if not path.exists()]
    if not missing:
        return None
    return (
        f"needs the shared data copies (../shared/data, see its README.md): missing "
        f"{', '.join(missing)}"
    )


def requires_shared_data(*parts: str) -> pytest.MarkDecorator:
    """Mark (a test or a module's ``pytestmark``) that skips, with the reason, when
    :func:`shared_data_skip_reason` finds ``parts`` of ``../shared/data`` missing."""
    reason = shared_data_skip_reason(*parts)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def need_shared_data(*parts: str) -> Path:
    """Skip the calling test or fixture, with the reason, unless ``parts`` of
    ``../shared/data`` exist; return the folder."""
    reason = shared_data_skip_reason(*parts)
    if reason is not None:
        pytest.skip(reason)
    return SHARED_DATA


#: Every experiment toggle of config/config.yaml.
EXPERIMENTS = (
    "synthetic",
    "theory",
    "movielens",
    "avazu",
    "wpm_ring",
    "wpm_movielens",
    "wpm_gowalla",
)
#: Config changes that turn every experiment off (an events-only run).
OTHERS_OFF = {"experiments": dict.fromkeys(EXPERIMENTS, False)}


def events_entry(path, **changes) -> dict:
    """An events entry over the columns of the tests' generated tables (``user_id``,
    ``item_id``, count ``n``, attributes ``country`` and ``device``, ``user_mean`` prior), with
    ``changes`` on top."""
    return {
        "path": path,
        "user": "user_id",
        "item": "item_id",
        "count": "n",
        "attributes": ["country", "device"],
        "prior": "user_mean",
        **changes,
    }


def copy_workflow(dest: Path) -> Path:
    """Copy what a clone holds of the workflow into ``dest`` (no results, logs or Snakemake
    state; :func:`ldpsample.pipeline.checkout.copy_workflow`). The library's byte code comes
    along (conftest.compile_library): copied with their sources' times, the .pyc files stay
    valid until a test edits a source."""
    return checkout.copy_workflow(ROOT, dest)


def continue_in_copy(workdir: Path, dest: Path) -> Path:
    """A copy of the project ``workdir`` as it stands (results, logs, the ledger and Snakemake's
    state in .snakemake/, with their times), for an operator sequence that goes on from a shared
    run without touching it. The project's list of ledgers (``privacy/ledgers.json``, absolute
    paths) names the copy's own ledger, as if the releases had been made in the copy (a plain
    copy refuses every release: its users' spend sits in the original's ledger)."""
    shutil.copytree(workdir, dest, symlinks=True)
    registry = dest / REGISTRY
    if registry.is_file():
        text = registry.read_text(encoding="utf-8")
        registry.write_text(text.replace(str(workdir.resolve()), str(dest.resolve())), "utf-8")
    return dest


def snakemake(workdir: Path, *args: str, check: bool = True, timeout: float = 1200):
    """Run Snakemake's command line with ``args`` in ``workdir`` (``python -m snakemake``, as
    a fork of a process that has imported Snakemake: tests/snakemake_fork.py); return the
    CompletedProcess."""
    proc = snakemake_fork.run(args, cwd=workdir, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def job_stats(console: str) -> dict[str, int]:
    """The jobs a dry run's console says it would execute, by rule (from Snakemake's
    "Job stats" table); empty when it says "Nothing to be done"."""
    if "Nothing to be done" in console:
        return {}
    jobs = {}
    for line in console.split("Job stats:", 1)[1].splitlines()[3:]:
        match = re.match(r"^(\S+)\s+(\d+)$", line.strip())
        if not match:
            break
        if match.group(1) != "total":
            jobs[match.group(1)] = int(match.group(2))
    return jobs


def dry_run(workdir: Path, *args: str) -> tuple[dict[str, int], str]:
    """One dry run: the jobs it would execute, by rule (:func:`job_stats`), and its whole
    console output."""
    proc = snakemake(workdir, "--dry-run", *args)
    text = proc.stdout + proc.stderr
    return job_stats(text), text


def planned_jobs(workdir: Path, *args: str) -> dict[str, int]:
    """Jobs a dry run would execute, by rule (:func:`dry_run`)."""
    return dry_run(workdir, *args)[0]


def write_config(workdir: Path, name: str, changes: dict) -> str:
    """Write config/<name>.yaml: the default config with nested ``changes`` applied."""
    config = yaml.safe_load((workdir / "config" / "config.yaml").read_text())

    def merge(base: dict, update: dict) -> None:
        for key, value in update.items():
            if isinstance(value, dict) and isinstance(base.get(key), dict):
                merge(base[key], value)
            else:
                base[key] = value

    merge(config, changes)
    path = workdir / "config" / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return str(path.relative_to(workdir))


def result_files(workdir: Path) -> dict[str, Path]:
    """Every file under ``workdir/results``, keyed by its path relative to ``workdir``."""
    results = workdir / "results"
    return {
        str(path.relative_to(workdir)): path
        for path in sorted(results.rglob("*"))
        if path.is_file()
    }


def result_differences(first: Path, second: Path) -> list[str]:
    """How the results/ trees of two runs differ (empty if they hold the same results).

    Parquet files are compared by content (polars ``DataFrame.equals``: schema, row order and
    exact values), PNG figures only by presence and non-zero size (rendering details such as
    font caching are not results), every other file (csv, tsv, json, ...) byte for byte.
    """
    import polars as pl

    a, b = result_files(first), result_files(second)
    problems = [f"only in {first}: {name}" for name in sorted(a.keys() - b.keys())]
    problems += [f"only in {second}: {name}" for name in sorted(b.keys() - a.keys())]
    for name in sorted(a.keys() & b.keys()):
        if name.endswith(".parquet"):
            left, right = pl.read_parquet(a[name]), pl.read_parquet(b[name])
            if not left.equals(right):
                problems.append(f"{name}: contents differ\n{left}\n{right}")
        elif name.endswith(".png"):
            if a[name].stat().st_size == 0 or b[name].stat().st_size == 0:
                problems.append(f"{name}: empty figure")
        elif a[name].read_bytes() != b[name].read_bytes():
            problems.append(f"{name}: contents differ")
    return problems
