"""One entry point for every performance figure of the project, measured side by side in one run.

Each row of ``rows.ORDER`` runs in a fresh Python process (``run_all.py --child <row>``), which
times the row's subject and its references in that one process (best of ``--repeats``) and
prints the results as JSON. A second fresh process runs the subject alone once, and its peak
resident memory is read from the kernel (``os.wait4`` returns the child's own ``ru_maxrss``):
measured, not estimated. The parent prints the ratios and writes a markdown table with the
machine (nproc, CPU model, RAM) and the date.

This file is the command line only. The rows are the modules of ``benchmarks/rows/`` (each
module's docstring says what its rows time), registered in one table
(:data:`runner.registry.ROWS`) when :func:`row_table` imports them, and listed once, in the
order they run, in ``rows.ORDER`` (``--list`` prints them); the records, timing and timed
processes are in ``runner/measure.py``, the ``--baseline`` loader in ``runner/baseline.py`` and
the markdown in ``runner/report.py``. It imports the standard library, :mod:`runner` and
:mod:`rows`, never ``ldpsample``.

``--only`` takes row names (several allowed); ``--quick`` shrinks every size (for a smoke test;
the ratios are then not the targets' sizes) and leaves out ``rows.NOT_QUICK`` unless named;
``--size NAME=N`` sets the size of a row that takes one (``--list`` names them with their
default); ``--data`` is the folder of the real data copies the rows that read them use.
``--baseline <git revision>`` adds "before" lines: the library's ``minimax.py`` and mollifier
(``mollifier.py``, or the package ``mollifier/``) as of that revision, timed in the same process
on the same inputs. To add a row, write a function ``row_<name>(quick) -> Row`` that returns
:class:`runner.measure.Measure` entries in a module of ``benchmarks/rows/``, register it with
``@runner.registry.register(name, subject)`` (``subject`` is the callable the memory probe runs
alone; ``size=(full, quick)`` for a row ``--size`` sets) and add its name to ``rows.ORDER``.

The table replaces the part of ``--output`` between the lines ``runner.report.BEGIN`` and
``runner.report.END`` (the whole file when it has no such part), so the hand-written notes below
it are kept.

Usage: ``.venv/bin/python benchmarks/run_all.py [--quick] [--only apply-4000 kl-brentq]
[--size avazu=10000000] [--repeats 5] [--output benchmarks/results.md] [--list]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import pkgutil
import sys
import time
from dataclasses import asdict
from pathlib import Path

import rows as row_modules
from runner import measure
from runner.measure import timed_run
from runner.registry import DATA_ENV, SIZES, SIZES_ENV, RowSpec, in_order
from runner.report import machine, ratio, read_table, report, updated_table, write_table

HERE = Path(__file__).resolve().parent


def row_table() -> dict[str, RowSpec]:
    """Import every module of ``benchmarks/rows/`` (each registers its rows) and return the
    registry in the order of ``rows.ORDER``, which must name every registered row once."""
    for module in pkgutil.iter_modules(row_modules.__path__):
        importlib.import_module(f"rows.{module.name}")
    return in_order(row_modules.ORDER)


def _sizes(pairs: list[str], parser: argparse.ArgumentParser) -> dict[str, int]:
    """``--size NAME=N`` pairs as {name: N}; an unknown name or a bad N is a usage error."""
    sizes = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in SIZES:
            parser.error(f"--size {pair}: {name!r} takes no size; rows that do: {sorted(SIZES)}")
        try:
            sizes[name] = int(float(value))
        except ValueError:
            parser.error(f"--size {pair}: {value!r} is not a number")
        if sizes[name] < 1:
            parser.error(f"--size {pair}: the size must be at least 1")
    return sizes


def _listing(rows: dict[str, RowSpec]) -> str:
    """One line per row, in order: its name, module and default size (full / --quick)."""
    lines = []
    for name, spec in rows.items():
        size = f"  size {SIZES[name][0]:,} (--quick {SIZES[name][1]:,})" if name in SIZES else ""
        quick = "  (not in --quick)" if name in row_modules.NOT_QUICK else ""
        lines.append(f"{name:26} {spec.measure.__module__}{size}{quick}")
    return "\n".join(lines)


def _child(spec: RowSpec, quick: bool, memory: bool) -> None:
    if memory:
        spec.subject(quick)
        print(json.dumps({"ok": True}))
    else:
        print(json.dumps(asdict(spec.measure(quick))))


def _spawn(name: str, quick: bool, memory: bool) -> tuple[dict, float]:
    """Run one child; return its JSON output and its own peak RSS in MiB (from ``wait4``)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name]
    if quick:
        cmd.append("--quick")
    if memory:
        cmd.append("--memory")
    cmd += ["--repeats", str(measure.REPEATS)]
    _, peak, text = timed_run(cmd, stderr=None)  # the row's progress stays on the terminal
    return json.loads(text.strip().splitlines()[-1]), peak


def main(argv: list[str] | None = None) -> None:
    rows = row_table()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--only", nargs="+", choices=sorted(rows), help="rows to run")
    parser.add_argument("--repeats", type=int, default=measure.REPEATS, help="best of this many")
    parser.add_argument("--output", type=Path, default=HERE / "results.md")
    parser.add_argument(
        "--update",
        action="store_true",
        help="replace only the rows run in --output's table; keep the others, marked by run",
    )
    parser.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="NAME=N",
        help="the size of a row that takes one (rows, users); --list names them",
    )
    parser.add_argument(
        "--data",
        type=Path,
        help="folder of the real data copies (ml-100k/ ...) of the rows that read them "
        "(default: ../shared/data beside the project)",
    )
    parser.add_argument("--list", action="store_true", help="print the rows and exit")
    parser.add_argument(
        "--baseline",
        metavar="GIT_REV",
        help="also time the library's minimax.py / mollifier/ as of this revision ('before')",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = _sizes(args.size, parser)
    if args.list:
        print(_listing(rows))
        return
    measure.REPEATS = args.repeats
    if sizes:
        os.environ[SIZES_ENV] = json.dumps(sizes)
    if args.data:
        os.environ[DATA_ENV] = str(args.data.resolve())
    if args.baseline:
        os.environ["RUN_ALL_BASELINE"] = args.baseline
    if args.child:
        _child(rows[args.child], args.quick, args.memory)
        return
    names = args.only or [n for n in rows if not (args.quick and n in row_modules.NOT_QUICK)]
    if args.quick and not args.only:
        left_out = ", ".join(row_modules.NOT_QUICK)
        print(f"[run_all] --quick leaves out {left_out} (name them with --only)", file=sys.stderr)
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    host = machine()
    start = time.perf_counter()
    results = []
    for name in names:
        print(f"[run_all] {name} ...", file=sys.stderr, flush=True)
        row, peak_row = _spawn(name, args.quick, memory=False)
        _, peak_subject = _spawn(name, args.quick, memory=True)
        results.append((row, peak_subject, peak_row))
        for m in row["measures"]:
            text, target = ratio(row, m)
            print(f"  {m['label']}: {m['seconds']:.4f} s {text} {target}", file=sys.stderr)
    elapsed = time.perf_counter() - start
    text = report(results, args.quick, elapsed, started, host, repeats=measure.REPEATS)
    if args.update:
        text = updated_table(read_table(args.output), text, list(rows))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    write_table(args.output, text)
    print(text)
    print(f"written to {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
