"""What a clone of the project holds of the workflow, and a copy of it elsewhere.

:data:`WORKFLOW_PARTS` are the top-level files and folders the workflow runs from (the
``Snakefile``, its rules, scripts, configs, profiles and the library's source); results, logs,
downloaded resources and Snakemake's state are not among them. :func:`copy_workflow` copies
them into a new folder, where Snakemake then runs as in a fresh clone: the benchmarks time the
workflow there and the tests run it there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

#: The top-level entries of a checkout that the workflow runs from.
WORKFLOW_PARTS: tuple[str, ...] = (
    "Snakefile",
    "environment.yml",
    "workflow",
    "scripts",
    "config",
    "profiles",
    "src",
)


def copy_workflow(source: Path, dest: Path) -> Path:
    """Copy :data:`WORKFLOW_PARTS` of the checkout ``source`` into ``dest`` (created if needed)
    with their files' times, leaving out build metadata (``*.egg-info``) and Snakemake state
    (``.snakemake``); return ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("*.egg-info", ".snakemake")
    for part in WORKFLOW_PARTS:
        src = source / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=ignore)
        else:
            shutil.copy2(src, dest / part)
    return dest
