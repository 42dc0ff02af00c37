"""What ``ldpsample evaluate`` and ``ldpsample publish`` share: an events table's arguments,
the config overlay they become (``events: {<name>: {...}}``, docs/own-data.md), finding the
workflow and running Snakemake on its targets.

Standard library only (Snakemake runs in a subprocess; it needs the ``workflow`` extra). The
pipeline's own config check validates every value and names the key (``config error at
events.<name>.<key>``), so these commands never re-implement it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import ldpsample
from ldpsample.cli import CommandError

__all__ = [
    "EVENTS_RESULTS",
    "add_run_arguments",
    "add_table_arguments",
    "events_entry",
    "find_workflow",
    "print_overlay",
    "require_snakemake",
    "run_snakemake",
    "write_overlay",
]

#: Where the pipeline writes an events table's results (workflow/rules/events_common.smk).
EVENTS_RESULTS = "results/events"
#: Named priors of the events schema; anything else is a public table's path or spec:<folder>.
NAMED_PRIORS = ("user_mean", "pooled", "uniform")
METHODS = ("minimax", "mollifier_tv", "mollifier_kl", "randomized_response")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def add_table_arguments(parser: argparse.ArgumentParser, *, prior_default: str | None) -> None:
    """The events table's arguments (each becomes the ``events.<name>`` key of its name)."""
    table = parser.add_argument_group("the events table (docs/own-data.md)")
    table.add_argument(
        "path",
        help="the table: a .csv/.tsv/.parquet file, a folder, a glob or a hive dataset",
    )
    table.add_argument(
        "--name",
        help="the table's name: results/events/<name>/ (default: the file's name, lowercased)",
    )
    table.add_argument("--user", required=True, help="column naming the user")
    table.add_argument("--item", required=True, help="column naming the item")
    table.add_argument("--count", help="column of non-negative weights (default: 1 per row)")
    table.add_argument(
        "--attributes",
        nargs="+",
        default=None,
        metavar="COLUMN",
        help="columns whose values are subcategories (default: one subcategory 'all')",
    )
    table.add_argument(
        "--prior",
        default=prior_default,
        metavar="PRIOR",
        help=(
            "each subcategory's prior q: user_mean, pooled or uniform; a public table's path "
            "(same columns); or spec:<folder> to reuse an earlier release spec"
            + (f" (default {prior_default})" if prior_default else "")
        ),
    )
    table.add_argument(
        "--items",
        nargs="+",
        default=None,
        metavar="ITEM",
        help="use only these items (with a uniform prior: the released domain in full)",
    )
    table.add_argument(
        "--top-items",
        default=None,
        metavar="N",
        help="items per subcategory: the N most frequent, 'all', or 'auto' (the default)",
    )
    table.add_argument(
        "--epsilons",
        nargs="+",
        type=_number,
        default=None,
        metavar="EPS",
        help="privacy levels (default 0.5 1 2 4 8)",
    )


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """How Snakemake runs: cores, the workflow checkout, dry run, the overlay only."""
    run = parser.add_argument_group("running the pipeline")
    run.add_argument(
        "--cores", "-c", type=int, default=1, help="cores Snakemake may use (default 1)"
    )
    run.add_argument(
        "--workflow",
        type=Path,
        default=None,
        metavar="DIR",
        help=(
            "the ldpsample checkout whose Snakefile runs (default: the current folder if it "
            "holds one, else the checkout this ldpsample is installed from)"
        ),
    )
    run.add_argument(
        "--dry-run", "-n", action="store_true", help="show the jobs Snakemake would run"
    )
    run.add_argument(
        "--print-config",
        action="store_true",
        help="print the config overlay (the YAML you would otherwise write) and stop",
    )


def _number(text: str) -> int | float:
    """A number as a config file would hold it: 1 stays an integer, 0.5 a float."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def _absolute(path: str) -> str:
    return str(Path(path).expanduser().absolute())


def _table_name(args: argparse.Namespace) -> str:
    if args.name is not None:
        name = args.name
        if not _NAME.match(name):
            raise CommandError(
                f"--name {name!r}: a name is lowercase letters, digits, - and _ (it names "
                "results/events/<name>/)"
            )
        return name
    stem = Path(args.path.rstrip("/")).name.split(".")[0].lower()
    name = re.sub(r"[^a-z0-9_-]+", "-", stem).strip("-_")
    if not name or not _NAME.match(name):
        raise CommandError(f"{args.path}: cannot derive a table name from it; pass --name")
    return name


def _prior(value: str) -> str | dict[str, str]:
    if value in NAMED_PRIORS:
        return value
    if value.startswith("spec:"):
        folder = value.removeprefix("spec:")
        if not Path(folder).exists():
            raise CommandError(f"--prior {value}: no spec at {folder}")
        return {"spec": _absolute(folder)}
    if not Path(value).exists() and not any(c in value for c in "*?["):
        raise CommandError(
            f"--prior {value!r}: neither {', '.join(NAMED_PRIORS)}, spec:<folder>, nor an "
            "existing public table"
        )
    return {"path": _absolute(value)}


def _top_items(value: str) -> int | str | None:
    if value == "auto":
        return "auto"
    if value == "all":
        return None
    try:
        return int(value)
    except ValueError:
        raise CommandError(f"--top-items {value!r}: an integer, 'all' or 'auto'") from None


def events_entry(args: argparse.Namespace, **keys: Any) -> tuple[str, dict[str, Any]]:
    """The table's name and its ``events.<name>`` entry from the parsed arguments, with
    ``keys`` on top. Keys the user did not give are left to the schema's defaults."""
    if not Path(args.path).exists() and not any(c in args.path for c in "*?["):
        raise CommandError(f"{args.path}: no such file or folder (the events table)")
    entry: dict[str, Any] = {"path": _absolute(args.path), "user": args.user, "item": args.item}
    if args.count is not None:
        entry["count"] = args.count
    if args.attributes is not None:
        entry["attributes"] = args.attributes
    if args.prior is not None:
        entry["prior"] = _prior(args.prior)
    if args.items is not None:
        entry["items"] = args.items
    if args.top_items is not None:
        entry["top_items"] = _top_items(args.top_items)
    if args.epsilons is not None:
        entry["epsilons"] = args.epsilons
    entry.update({key: value for key, value in keys.items() if value is not None})
    return _table_name(args), entry


def require_snakemake() -> None:
    """Raise :class:`CommandError` unless Snakemake (the ``workflow`` extra) is installed."""
    if importlib.util.find_spec("snakemake") is None:
        raise CommandError(
            "running the pipeline needs Snakemake: pip install 'ldpsample[workflow]'"
        )


def find_workflow(option: Path | None) -> Path:
    """The checkout whose ``Snakefile`` runs: ``option``, else the current folder, else the
    checkout holding this ldpsample's ``src/``."""
    if option is not None:
        candidates = [option]
    else:
        candidates = [Path.cwd(), Path(ldpsample.__file__).resolve().parents[2]]
    for folder in candidates:
        if (folder / "Snakefile").is_file() and (folder / "workflow" / "rules").is_dir():
            return folder.resolve()
    where = option if option is not None else "the current folder"
    raise CommandError(
        f"{where}: no ldpsample workflow here (a checkout with Snakefile and workflow/); run "
        "in the checkout or pass --workflow <checkout>"
    )


def print_overlay(name: str, entry: dict[str, Any]) -> None:
    """Print the overlay as YAML (with PyYAML, which Snakemake installs) or else as JSON."""
    overlay = {"events": {name: entry}}
    try:
        import yaml
    except ImportError:
        print(json.dumps(overlay, indent=2))
    else:
        print(yaml.safe_dump(overlay, sort_keys=False), end="")


def write_overlay(workflow: Path, command: str, name: str, entry: dict[str, Any]) -> Path:
    """Write the config overlay ``events: {name: entry}`` (JSON, which Snakemake reads as
    YAML) to ``logs/cli/<command>-<name>.json`` in ``workflow``, atomically; return its path."""
    folder = workflow / "logs" / "cli"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{command}-{name}.json"
    text = json.dumps({"events": {name: entry}}, indent=2) + "\n"
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)
    return path


def run_snakemake(
    workflow: Path, overlay: Path, targets: list[str], *, cores: int, dry_run: bool
) -> int:
    """Run the workflow's Snakemake on ``targets`` with the overlay over config/config.yaml;
    return its exit status (its log streams to the console)."""
    require_snakemake()
    # the targets come before --configfile, which takes every path after it
    command = [sys.executable, "-m", "snakemake", "--cores", str(cores), *targets]
    command += ["--dry-run"] if dry_run else []
    command += ["--configfile", str(overlay)]
    print(f"ldpsample: in {workflow}: {shlex.join(command[1:])}", file=sys.stderr, flush=True)
    return subprocess.run(command, cwd=workflow, check=False).returncode
