"""The markdown that ``run_all.py`` writes: the machine line (:func:`machine`), each measure's
ratio and target (:func:`ratio`), the table (:func:`report`) and its place in the output file
between the lines :data:`BEGIN` and :data:`END` (:func:`write_table`; the text around them,
such as the hand-written notes of ``benchmarks/results.md``, is kept).

Imports the standard library and numpy (for its version) only. The rows reach it as the JSON
dicts the child processes printed (``dataclasses.asdict`` of :class:`runner.measure.Row`).
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

import numpy as np

#: Lines around the generated table in ``--output`` (text outside them is kept).
BEGIN = "<!-- run_all.py: generated table begins -->"
END = "<!-- run_all.py: generated table ends -->"
#: The table's column header (:func:`report` writes it, :func:`updated_table` finds it).
COLUMNS = (
    "| row | method | time (s) | ratio vs subject | target | note | peak MiB (subject / row) |"
)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} CPUs (nproc), {cpu}, {ram} RAM; Python {platform.python_version()}, "
        f"numpy {np.__version__}; load average at start {load}"
    )


def ratio(row: dict, m: dict) -> tuple[str, str]:
    """The measure ``m``'s ratio to the measure it names in ``row`` and its target, as text."""
    if m.get("limit") is not None:
        return "", f"< {m['limit']:g} s {'yes' if m['seconds'] < m['limit'] else 'NO'}"
    if not m["ratio_of"]:
        return "", ""
    base = next(x for x in row["measures"] if x["label"] == m["ratio_of"])
    if m["slowdown"]:
        value = base["seconds"] / m["seconds"]
        text = f"{value:,.2f}x its time"
        met = "" if m["target"] is None else ("yes" if value <= m["target"] else "NO")
        target = "" if m["target"] is None else f"<= {m['target']:g}x"
    else:
        value = m["seconds"] / base["seconds"]
        text = f"{value:,.1f}x faster"
        met = "" if m["target"] is None else ("yes" if value >= m["target"] else "NO")
        target = "" if m["target"] is None else f">= {m['target']:g}x"
    return text, f"{target} {met}".strip()


def report(
    results: list[tuple[dict, float, float]],
    quick: bool,
    elapsed: float,
    started: str,
    host: str,
    *,
    repeats: int,
) -> str:
    """The markdown table; ``started`` and ``host`` (:func:`machine`) are taken when the run
    starts (the load average before the rows, not after them)."""
    lines = [
        "# Benchmarks (benchmarks/run_all.py)",
        "",
        f"Date: {started}. Machine: {host}. Best of {repeats} repeats unless noted; "
        f"{'QUICK sizes (smoke test, not the targets)' if quick else 'full sizes'}; "
        f"total {elapsed:,.0f} s.",
        "",
        "Ratios compare the row's subject (first line of the row) with the line's method, "
        "timed in the same process. Peak MiB: `ru_maxrss` of a fresh process that runs the "
        "subject alone once (interpreter and imports included), then of the process that "
        "timed the whole row.",
        "",
        COLUMNS,
        "|---|---|---:|---|---|---|---:|",
    ]
    for row, peak_subject, peak_row in results:
        for i, m in enumerate(row["measures"]):
            text, target = ratio(row, m)
            peak = f"{peak_subject:,.0f} / {peak_row:,.0f}" if i == 0 else ""
            title = f"**{row['name']}**: {row['title']}" if i == 0 else ""
            lines.append(
                f"| {title} | {m['label']} | {m['seconds']:,.4f} | {text} | {target} | "
                f"{m['note']} | {peak} |"
            )
    return "\n".join(lines) + "\n"


def _rows_of(table: str) -> dict[str, list[str]]:
    """The lines of each row of a generated table, by row name (a row starts with a line
    ``| **name**: ...`` and goes on with the lines whose first cell is empty)."""
    rows: dict[str, list[str]] = {}
    name = None
    for line in table.splitlines():
        if line.startswith("| **"):
            name = line[4:].split("**", 1)[0]
            rows[name] = [line]
        elif name and line.startswith("|  |"):
            rows[name].append(line)
        else:
            name = None
    return rows


def updated_table(old: str, new: str, order: list[str]) -> str:
    """``new`` (a run of some rows) with every other row of ``old`` kept, in ``order``; a kept
    row's title says the run it comes from, ``(run of <date>)``, and the header names the
    earlier run's date line."""
    old_rows, new_rows = _rows_of(old), _rows_of(new)
    old_date = next((ln for ln in old.splitlines() if ln.startswith("Date: ")), "Date: ?")
    when = old_date.removeprefix("Date: ").split(".", 1)[0]
    head = [
        ln for ln in new.splitlines() if not ln.startswith("| **") and not ln.startswith("|  |")
    ]
    at = head.index(COLUMNS)
    head[at:at] = [
        f"Rows this run did not measure are kept from the table it updated (`--update`), each "
        f"marked with its run; that table's header: {old_date.removeprefix('Date: ')}",
        "",
    ]
    lines = head[: at + 4]  # through the two lines inserted, the column header and its rule
    for name in order:
        if name in new_rows:
            lines += new_rows[name]
        elif name in old_rows:
            first, *rest = old_rows[name]
            if "(run of " not in first:
                title, tail = first[2:].split(" | ", 1)
                first = f"| {title} (run of {when}) | {tail}"
            lines += [first, *rest]
    return "\n".join(lines) + "\n"


def read_table(path: Path) -> str:
    """The generated table of ``path`` (between :data:`BEGIN` and :data:`END`), or ``""``."""
    old = path.read_text() if path.exists() else ""
    if BEGIN in old and END in old:
        return old.split(BEGIN, 1)[1].split(END, 1)[0]
    return ""


def write_table(path: Path, table: str) -> None:
    """Put ``table`` between :data:`BEGIN` and :data:`END` in ``path``, keeping the text before
    and after them; a file without them (or no file) becomes the table alone. Written to a
    temporary file beside ``path``, then renamed over it."""
    block = f"{BEGIN}\n{table}{END}\n"
    old = path.read_text() if path.exists() else ""
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1].removeprefix("\n")
    else:
        text = block
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    partial.replace(path)
