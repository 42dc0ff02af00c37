"""The static import closure the workflow lists as rule inputs (ldpsample.pipeline.import_graph)
against what Python really imports: it must never miss a module a script's imports execute."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ldpsample.pipeline.import_graph import library_closure

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "src" / "ldpsample"
SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))


def _import_lines(script: Path) -> str:
    """The script's top-level import statements (the rest needs Snakemake's ``snakemake``)."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    return "\n".join(
        ast.unparse(node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
    )


def _really_imported(code: str) -> set[Path]:
    """The ldpsample files a fresh interpreter has loaded after running ``code``."""
    probe = (
        f"{code}\nimport json, sys\n"
        "print(json.dumps(sorted(m.__file__ for n, m in list(sys.modules.items())"
        " if n.split('.')[0] == 'ldpsample' and getattr(m, '__file__', None))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    return {Path(path).resolve() for path in json.loads(out.splitlines()[-1])}


def test_there_are_scripts():
    assert len(SCRIPTS) > 20


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_the_closure_holds_every_module_a_script_imports(script):
    closure = set(library_closure(LIBRARY, [script]))
    missed = _really_imported(_import_lines(script)) - closure
    assert not missed, f"{script.name}: the static closure misses {sorted(map(str, missed))}"


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
