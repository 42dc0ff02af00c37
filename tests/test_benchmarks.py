"""benchmarks/run_all.py, the one entry point of the README's performance table: a quick run of
one row from the command line writes its table between the markers of an existing results file
and keeps the hand-written text around them (the README's table and benchmarks/results.md's
notes live in one file)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _workflow import ROOT

RUN_ALL = ROOT / "benchmarks" / "run_all.py"
#: The ``--baseline`` loader that run_all.py's rows use.
BASELINE = ROOT / "benchmarks" / "runner" / "baseline.py"
BEGIN = "<!-- run_all.py: generated table begins -->"
END = "<!-- run_all.py: generated table ends -->"


def _run_all(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RUN_ALL), *args], capture_output=True, text=True, timeout=300
    )


def test_a_quick_row_replaces_only_the_generated_table(tmp_path):
    output = tmp_path / "results.md"
    notes = "\n## Before and after (by hand)\n\nkept as written\n"
    output.write_text(f"intro by hand\n\n{BEGIN}\nan older table\n{END}\n{notes}")
    proc = _run_all("--quick", "--only", "dense-2000", "--output", str(output))
    assert proc.returncode == 0, proc.stderr
    text = output.read_text()
    assert text.startswith(f"intro by hand\n\n{BEGIN}\n# Benchmarks (benchmarks/run_all.py)\n")
    assert text.endswith(f"{END}\n{notes}")
    assert "an older table" not in text
    (row,) = [line for line in text.splitlines() if line.startswith("| **dense-2000**")]
    assert "minimax_kernel (closed form)" in row
    assert "| paper's recursion, Algorithm 1 (O(n^3)) |" in text
    assert not list(tmp_path.glob(".*partial"))  # written through a renamed temporary file


@pytest.mark.slow
def test_update_replaces_the_rows_run_and_keeps_the_others_marked_with_their_run(tmp_path):
    """``--update`` re-measures some rows: they replace their old lines, every other row of the
    table stays as it was, in the table's order, its title naming the run it comes from."""
    output = tmp_path / "results.md"
    notes = "\n## by hand\n\nkept\n"
    output.write_text(f"{BEGIN}\n{END}\n{notes}")
    first = _run_all("--quick", "--only", "dense-2000", "audit-1e6", "--output", str(output))
    assert first.returncode == 0, first.stderr
    old = output.read_text()
    (old_date,) = re.findall(r"^Date: (\d{4}-\d\d-\d\d \d\d:\d\d UTC)", old, re.M)
    old_audit = [ln for ln in old.splitlines() if "minimax_realized_epsilon" in ln]
    second = _run_all("--quick", "--only", "dense-2000", "--update", "--output", str(output))
    assert second.returncode == 0, second.stderr
    text = output.read_text()
    assert text.endswith(f"{END}\n{notes}")
    titles = [ln.split(" | ")[0] for ln in text.splitlines() if ln.startswith("| **")]
    assert [t.split("**")[1] for t in titles] == ["dense-2000", "audit-1e6"]  # ORDER's order
    assert "(run of" not in titles[0] and titles[1].endswith(f"(run of {old_date})")
    kept = [ln for ln in text.splitlines() if "minimax_realized_epsilon" in ln]
    assert [ln.split(" | ", 1)[1] for ln in kept] == [ln.split(" | ", 1)[1] for ln in old_audit]
    assert f"that table's header: {old_date}" in text
    assert text.count("| paper's recursion, Algorithm 1 (O(n^3)) |") == 1


def test_a_file_without_markers_becomes_the_table(tmp_path):
    output = tmp_path / "new.md"
    proc = _run_all("--quick", "--only", "dense-2000", "--output", str(output))
    assert proc.returncode == 0, proc.stderr
    text = output.read_text()
    assert text.startswith(f"{BEGIN}\n# Benchmarks") and text.endswith(f"{END}\n")


def _generated_rows() -> dict[str, str]:
    """benchmarks/results.md's generated table: each row's name -> its lines, joined."""
    results = (ROOT / "benchmarks" / "results.md").read_text()
    assert results.count(BEGIN) == 1 and results.count(END) == 1
    table = results.split(BEGIN, 1)[1].split(END, 1)[0]
    rows: dict[str, str] = {}
    name = None
    for line in table.splitlines():
        if line.startswith("| **"):
            name = line.split("**")[1]
        if name and line.startswith("|"):
            rows[name] = rows.get(name, "") + line + "\n"
    return rows


def test_the_readmes_headline_numbers_are_in_the_generated_table():
    """benchmarks/results.md has the markers (a run keeps its notes); each line of the README's
    Performance table names a row of it and quotes only numbers that row holds (times, ratios,
    rates: every number written with a decimal point or as a ratio)."""
    rows = _generated_rows()
    assert set(rows) >= {"apply-4000", "kl-brentq", "avazu-stage", "test-command"}
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Performance", 1)[1].split("\n## ", 1)[0]
    quoted = [line for line in section.splitlines() if line.startswith("| `")]
    assert len(quoted) >= 5, section
    for line in quoted:
        name = line.split("`")[1]
        assert name in rows, f"{name}: not a row of benchmarks/results.md"
        numbers = re.findall(r"\d[\d,]*\.\d+x?|\d[\d,]*x\b", line.split("|")[2])
        assert numbers, line
        for number in numbers:
            assert number in rows[name], f"{name}: {number} is not in its row"


@pytest.mark.slow
def test_a_baseline_revision_loads_the_mollifier_package_as_it_was(tmp_path, monkeypatch):
    """``--baseline <rev>`` times the mollifier as of ``<rev>``: a package whose
    modules import each other, so each must run from ``<rev>``'s copy, none from the current
    package (HEAD's copy is the same code, so the "before" line differs by nothing)."""
    output = tmp_path / "results.md"
    proc = _run_all("--quick", "--only", "kl-brentq", "--baseline", "HEAD", "--output", str(output))
    assert proc.returncode == 0, proc.stderr
    (before,) = [line for line in output.read_text().splitlines() if "before: " in line]
    assert "relative_mollifier_kl at HEAD" in before and "diff vs now: 0.0e+00" in before

    spec = importlib.util.spec_from_file_location("run_all_baseline_under_test", BASELINE)
    loader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loader)  # the standard library only: nothing else to set up
    monkeypatch.setenv("RUN_ALL_BASELINE", "HEAD")
    old = loader.baseline("mollifier")
    loaded = {
        name: sys.modules.pop(name)
        for name in list(sys.modules)
        if name.split(".")[0] == "baseline_mollifier"
    }
    package = ROOT / "src" / "ldpsample" / "mollifier"
    modules = {path.stem for path in package.glob("*.py")} - {"__init__"}
    assert set(loaded) == {"baseline_mollifier", *(f"baseline_mollifier.{m}" for m in modules)}
    assert not any(Path(m.__file__).is_relative_to(ROOT) for m in loaded.values())
    prepare = old.relative_mollifier_kl.__globals__["_prepare"]
    assert prepare is loaded["baseline_mollifier.bounds"]._prepare
    assert prepare.__module__ == "baseline_mollifier.bounds"


def test_run_all_is_the_one_benchmark_command_and_lists_every_row_once():
    """No standalone benchmark script beside run_all.py; ``--list`` prints each row of the one
    list (``rows.ORDER``) once, in its order, with its module, and the rows ``--size`` sets
    with their default sizes."""
    assert sorted(p.name for p in (ROOT / "benchmarks").glob("*.py")) == ["run_all.py"]
    proc = _run_all("--list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    names = [line.split()[0] for line in lines]
    assert len(names) == len(set(names)) > 20
    assert names[:3] == ["apply-4000", "kl-brentq", "dense-2000"] and names[-1] == "test-command"
    listed = {line.split()[0]: line for line in lines}
    assert listed["avazu"].split()[1:] == [
        "rows.avazu",
        "size",
        "1,000,000",
        "(--quick",
        "200,000)",
    ]
    assert listed["avazu-stage"].split()[3] == "40,428,967"
    assert listed["dense-sizes"].split()[1:] == ["rows.minimax_sizes"]
    assert "(not in --quick)" in listed["wpm-small-epsilon"]
    # the folded scripts' measurements are rows of it
    assert {
        "dense-sizes",
        "apply-methods-1e6x100",
        "wpm-solvers",
        "wpm-base-measure",
        "events-avazu",
        "wpm-small-epsilon",
        "wpm-small-epsilon-limit",
    } <= set(names)


def test_a_bad_size_is_a_usage_error_naming_it():
    unknown = _run_all("--size", "dense-2000=5", "--list")
    assert unknown.returncode == 2
    assert "--size dense-2000=5: 'dense-2000' takes no size; rows that do: [" in unknown.stderr
    bad = _run_all("--size", "avazu=many", "--list")
    assert bad.returncode == 2 and "--size avazu=many: 'many' is not a number" in bad.stderr


def test_a_size_reaches_the_row_in_its_own_process(monkeypatch):
    """``--size NAME=N`` travels to the row's processes in one environment variable; without
    it a row takes its registered full or quick size."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    try:
        from runner import registry

        monkeypatch.setitem(registry.SIZES, "a-row", (1000, 10))
        monkeypatch.delenv(registry.SIZES_ENV, raising=False)
        assert [registry.row_size("a-row", quick) for quick in (False, True)] == [1000, 10]
        monkeypatch.setenv(registry.SIZES_ENV, '{"a-row": 77}')
        assert [registry.row_size("a-row", quick) for quick in (False, True)] == [77, 77]
    finally:  # the benchmarks' package names are not the tests'
        for name in [m for m in sys.modules if m.split(".")[0] == "runner"]:
            del sys.modules[name]


def test_the_dense_sizes_row_times_the_closed_form_beside_the_recursion(tmp_path):
    """A folded row from the command line: each size's closed form, then the recursion with its
    ratio and its largest difference from the closed form (a rounding error)."""
    output = tmp_path / "results.md"
    proc = _run_all("--quick", "--only", "dense-sizes", "--output", str(output))
    assert proc.returncode == 0, proc.stderr
    text = output.read_text().splitlines()
    lines = [line for line in text if line.startswith(("| **dense-sizes**", "|  |"))]
    labels = [line.split(" | ")[1] for line in lines]
    assert labels == [
        "minimax_kernel (closed form), n = 100",
        "paper's recursion, Algorithm 1, n = 100",
        "minimax_kernel (closed form), n = 300",
        "paper's recursion, Algorithm 1, n = 300",
    ]
    for line in lines[1::2]:
        diff = float(re.search(r"max abs diff vs closed form: (\S+) \|", line).group(1))
        assert diff < 1e-12 and "x faster" in line
