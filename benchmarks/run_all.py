"""One entry point for every performance figure of the project, measured side by side in one run.

Each row of :data:`ORDER` runs in a fresh Python process (``run_all.py --child <row>``), which
times the row's subject and its references in that one process (best of ``--repeats``) and
prints the results as JSON. A second fresh process runs the subject alone once, and its peak
resident memory is read from the kernel (``os.wait4`` returns the child's own ``ru_maxrss``):
measured, not estimated. The parent prints the ratios and writes a markdown table with the
machine (nproc, CPU model, RAM) and the date.

This file is the command line only. The rows are the modules of ``benchmarks/rows/`` (each
module's docstring says what its rows time), registered in one table
(:data:`runner.registry.ROWS`) when :func:`row_table` imports them; the records, timing and
timed processes are in ``runner/measure.py``, the ``--baseline`` loader in
``runner/baseline.py`` and the markdown in ``runner/report.py``. It imports the standard
library and :mod:`runner` (``rows`` through :data:`ORDER`), never ``ldpsample``.

Rows (``--only`` takes any of these names, several allowed), in the order of :data:`ORDER`:
``apply-4000``, ``kl-brentq``, ``dense-2000``, ``dense-10000``, ``kernel-lp``, ``apply-1e6x100``,
``audit-1e6``, ``sparse-1e6x1e5``, ``sparse-baselines-1e6x1e5``, ``mollifier-1e5x100``,
``avazu``, ``wpm-exact``, ``avazu-stage``, ``events-scale-1e7``, ``events-scale-1e8``,
``events-scale-4e8``, ``events-metrics-threads``, ``events-sparse-1e6x1e5``,
``events-sparse-workflow``, ``estimate-1e6x1e5``, ``publish-joint-20x1e4``, ``test-command``
(not run with
``--quick``: it has no small size).

``--baseline <git revision>`` adds "before" lines: the library's ``minimax.py`` and
mollifier (``mollifier.py``, a package ``mollifier/`` since issue 24) as of that revision, timed
in the same process on the same inputs.
``--quick`` shrinks every size (for a smoke test; the ratios are then not the targets' sizes).
To add a row, write a function ``row_<name>(quick) -> Row`` that returns
:class:`runner.measure.Measure` entries in a module of ``benchmarks/rows/``, register it with
``@runner.registry.register(name, subject)`` (``subject`` is the callable the memory probe runs
alone), and add ``(name, module)`` to :data:`ORDER`.

The table replaces the part of ``--output`` between the lines ``runner.report.BEGIN`` and
``runner.report.END`` (the whole file when it has no such part), so the hand-written notes below
it are kept.

Usage: ``.venv/bin/python benchmarks/run_all.py [--quick] [--only apply-4000 kl-brentq]
[--repeats 5] [--output benchmarks/results.md]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

from runner import measure
from runner.measure import timed_run
from runner.registry import RowSpec, in_order
from runner.report import machine, ratio, read_table, report, updated_table, write_table

HERE = Path(__file__).resolve().parent

#: Every row, in the order the table runs and prints them, with its module in ``rows/``.
ORDER: tuple[tuple[str, str], ...] = (
    ("apply-4000", "kernels"),
    ("kl-brentq", "mollifier"),
    ("dense-2000", "kernels"),
    ("dense-10000", "kernels"),
    ("kernel-lp", "kernel_lp"),
    ("apply-1e6x100", "kernels"),
    ("audit-1e6", "kernels"),
    ("sparse-1e6x1e5", "sparse_catalogue"),
    ("sparse-baselines-1e6x1e5", "sparse_baselines"),
    ("mollifier-1e5x100", "mollifier"),
    ("avazu", "avazu"),
    ("wpm-exact", "wpm"),
    ("avazu-stage", "avazu"),
    ("events-scale-1e7", "events_scale"),
    ("events-scale-1e8", "events_scale"),
    ("events-scale-4e8", "events_scale"),
    ("events-metrics-threads", "events_scale"),
    ("events-sparse-1e6x1e5", "events_sparse"),
    ("estimate-1e6x1e5", "estimate"),
    ("publish-joint-20x1e4", "publish_joint"),
    ("events-sparse-workflow", "events_sparse"),
    ("test-command", "test_command"),
)
#: Rows with no small size: left out of a ``--quick`` run unless named with ``--only``.
NOT_QUICK = ("test-command",)


def row_table() -> dict[str, RowSpec]:
    """Import the row modules of :data:`ORDER` (each registers its rows) and return the
    registry in that order; a row registered but not in :data:`ORDER`, or in another module
    than :data:`ORDER` says, is an error."""
    for module in dict.fromkeys(module for _, module in ORDER):
        importlib.import_module(f"rows.{module}")
    table = in_order(tuple(name for name, _ in ORDER))
    for name, module in ORDER:
        defined = table[name].measure.__module__
        if defined != f"rows.{module}":
            raise ValueError(f"row {name!r} is defined in {defined}, ORDER says rows.{module}")
    return table


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
    parser.add_argument("--avazu-rows", type=int, default=1_000_000)
    parser.add_argument(
        "--avazu-stage-rows",
        type=int,
        default=40_428_967,
        help="rows of the generated log of the avazu-stage row (default: the official size)",
    )
    parser.add_argument(
        "--baseline",
        metavar="GIT_REV",
        help="also time the library's minimax.py / mollifier/ as of this revision ('before')",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    measure.REPEATS = args.repeats
    os.environ["RUN_ALL_AVAZU_ROWS"] = str(args.avazu_rows)
    os.environ["RUN_ALL_AVAZU_STAGE_ROWS"] = str(args.avazu_stage_rows)
    if args.baseline:
        os.environ["RUN_ALL_BASELINE"] = args.baseline
    if args.child:
        _child(rows[args.child], args.quick, args.memory)
        return
    names = args.only or [n for n in rows if not (args.quick and n in NOT_QUICK)]
    if args.quick and not args.only:
        left_out = ", ".join(NOT_QUICK)
        print(f"[run_all] --quick leaves out {left_out} (no small size)", file=sys.stderr)
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
