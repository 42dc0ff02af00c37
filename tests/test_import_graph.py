"""The static import closure the workflow lists as rule inputs (ldpsample.pipeline.import_graph)
against what Python really imports: it must never miss a module a script's imports execute."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ldpsample.pipeline import import_graph
from ldpsample.pipeline.import_graph import library_closure

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "src" / "ldpsample"
SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))


def import_lines(script: Path) -> str:
    """The script's top-level import statements (the rest needs Snakemake's ``snakemake``),
    without ``from __future__`` ones (they import nothing, and several scripts' lines may be
    joined into one program)."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    return "\n".join(
        ast.unparse(node)
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
    )


# Runs each script's import statements in turn in one interpreter, with every ldpsample module
# dropped from sys.modules before each (so each script's imports execute the library afresh, as in
# a job of its own; the third-party modules stay loaded, and no third-party module imports
# ldpsample), and prints the ldpsample files loaded after each.
PROBE = """
import json, sys
results = {}
for name, code in json.loads(sys.stdin.read()).items():
    for module in [m for m in sys.modules if m.split(".")[0] == "ldpsample"]:
        del sys.modules[module]
    exec(compile(code, name, "exec"), {"__name__": "__probe__"})
    results[name] = sorted(
        m.__file__ for n, m in list(sys.modules.items())
        if n.split(".")[0] == "ldpsample" and getattr(m, "__file__", None)
    )
print(json.dumps(results))
"""


def _really_imported(codes: dict[str, str]) -> dict[str, set[Path]]:
    """The ldpsample files that running each of ``codes`` (name -> code) loads, each run
    after the library was dropped from ``sys.modules`` (:data:`PROBE`)."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        input=json.dumps(codes),
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    loaded = json.loads(out.splitlines()[-1])
    return {name: {Path(path).resolve() for path in files} for name, files in loaded.items()}


@pytest.fixture(scope="module")
def really_imported() -> dict[str, set[Path]]:
    """What each script's imports load, by script name (one interpreter for all scripts)."""
    return _really_imported({script.name: import_lines(script) for script in SCRIPTS})


def test_there_are_scripts():
    assert len(SCRIPTS) > 20


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_the_closure_holds_every_module_a_script_imports(script, really_imported):
    closure = set(library_closure(LIBRARY, [script]))
    missed = really_imported[script.name] - closure
    assert not missed, f"{script.name}: the static closure misses {sorted(map(str, missed))}"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["theory_risk.py", "events_metrics.py", "wpm_figure.py"])
def test_the_shared_probe_sees_what_a_fresh_interpreter_sees(name, really_imported):
    """A script's imports run alone in a fresh interpreter load the same library files as in
    the shared probe, after the scripts before it (lazy exports, the events and figure stacks)."""
    assert list(really_imported).index(name) > 0
    fresh = _really_imported({name: import_lines(ROOT / "scripts" / name)})
    assert fresh[name] == really_imported[name]


def test_names_exported_lazily_resolve_to_their_modules():
    """``from ldpsample import apply_minimax`` runs ldpsample.minimax on first use."""
    closure = library_closure(LIBRARY, [ROOT / "scripts" / "theory_risk.py"])
    assert LIBRARY / "minimax.py" in closure
    assert LIBRARY / "__init__.py" in closure


def test_the_metrics_jobs_depend_on_the_helpers_they_import():
    """Helpers the metrics script reaches only through other modules are in its closure (an
    edit of one must re-run the metrics jobs)."""
    closure = library_closure(LIBRARY, [ROOT / "scripts" / "events_metrics.py"])
    for module in (
        "_validation.py",
        "_threads.py",
        "pipeline/progress.py",
        "events/scoring/metrics.py",
    ):
        assert LIBRARY / module in closure


def test_type_checking_imports_do_not_count(tmp_path):
    start = tmp_path / "start.py"
    start.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ldpsample.wasserstein import projection\n"
        "from ldpsample.minimax import minimax_kernel\n"
    )
    closure = library_closure(LIBRARY, [start])
    assert LIBRARY / "minimax.py" in closure
    assert not any("wasserstein" in str(path) for path in closure)


def test_relative_imports_resolve_inside_their_package():
    closure = library_closure(LIBRARY, [LIBRARY / "pipeline" / "config_check" / "__init__.py"])
    assert LIBRARY / "pipeline" / "config_check" / "errors.py" in closure
    assert LIBRARY / "pipeline" / "config_check" / "events.py" in closure


def test_modules_imported_by_name_are_only_the_known_ones():
    """The static closure cannot see ``importlib.import_module``: the lazy export tables
    (_lazy.py, resolved statically), the command line's sub-commands (no rule runs them) and
    the reproduction checks (the reproduction rule lists its package folder) are the only
    places that import by name."""
    callers = sorted(
        path.relative_to(LIBRARY).as_posix()
        for path in LIBRARY.rglob("*.py")
        if "import_module(" in path.read_text(encoding="utf-8")
    )
    assert callers == ["_lazy.py", "cli/__init__.py", "reproduction/claims.py"]
    rules = (ROOT / "workflow" / "rules" / "reproduction.smk").read_text(encoding="utf-8")
    assert 'get_script_sources("reproduction.py", "reproduction/")' in rules


def test_no_rule_keeps_a_hand_list_of_library_files():
    for path in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        text = path.read_text(encoding="utf-8")
        assert "get_library_sources" not in text and "_CODE = (" not in text, path.name
        for line in text.splitlines():
            if "code=" in line:
                assert "get_script_sources(" in line, (path.name, line)


@pytest.fixture
def cold_cache(tmp_path, monkeypatch):
    """An empty cache folder for the parsed imports, and no parse remembered in this process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    import_graph._imported.cache_clear()
    yield tmp_path / "cache" / "ldpsample" / "import-graph"
    import_graph._imported.cache_clear()


def test_the_cached_imports_are_the_parsed_ones_and_an_edit_is_parsed_afresh(tmp_path, cold_cache):
    start = tmp_path / "start.py"
    start.write_text("from ldpsample.minimax import minimax_kernel\n")
    first = library_closure(LIBRARY, [start])
    assert LIBRARY / "minimax.py" in first
    assert LIBRARY / "wasserstein" / "projection.py" not in first
    parsed = library_closure(LIBRARY, [start, *SCRIPTS])
    entries = sorted(cold_cache.glob("*.json"))
    assert len(entries) > 50 and not list(cold_cache.glob("*.part"))
    import_graph._imported.cache_clear()
    assert library_closure(LIBRARY, [start, *SCRIPTS]) == parsed  # read from the cache
    start.write_text("from ldpsample.wasserstein import projection\n")
    import_graph._imported.cache_clear()
    edited = library_closure(LIBRARY, [start])
    assert LIBRARY / "wasserstein" / "projection.py" in edited


def test_a_damaged_or_unwritable_cache_gives_the_same_closure(tmp_path, cold_cache):
    parsed = library_closure(LIBRARY, SCRIPTS)
    for entry in cold_cache.glob("*.json"):
        entry.write_text("[[1, 2], {")
    import_graph._imported.cache_clear()
    assert library_closure(LIBRARY, SCRIPTS) == parsed
    for entry in cold_cache.glob("*.json"):
        entry.unlink()
    cold_cache.rmdir()
    cold_cache.write_text("a file where the folder should be")
    import_graph._imported.cache_clear()
    assert library_closure(LIBRARY, SCRIPTS) == parsed
