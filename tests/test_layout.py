"""The library's layout: every module says what it holds, and the config check the workflow loads
by path at parse time stays light (its modules load by path too, without ldpsample's
dependencies)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_import_graph import import_lines

from ldpsample.pipeline import config_check

LIBRARY = Path(__file__).resolve().parents[1] / "src" / "ldpsample"
MODULES = sorted(LIBRARY.rglob("*.py"))


def test_the_library_has_modules():
    assert len(MODULES) > 50 and LIBRARY / "pipeline" / "config_check" / "__init__.py" in MODULES


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.relative_to(LIBRARY).as_posix())
def test_every_module_opens_with_a_docstring(path):
    """What a module holds (and what it may use) is its docstring's opening: it must exist."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert docstring and docstring.strip(), f"{path} has no module docstring"


# What the workflow's load_library_module("ldpsample_config_check", "pipeline/config_check/")
# does (workflow/rules/common.smk), in a fresh interpreter: the package by path, its modules
# through its relative imports.
LOAD_BY_PATH = """
import importlib.util, json, sys
folder = sys.argv[1]
spec = importlib.util.spec_from_file_location(
    "ldpsample_config_check", folder + "/__init__.py", submodule_search_locations=[folder]
)
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
spec.loader.exec_module(module)
error = module.config_error(["events", "x", "path"], "file not found")
print(json.dumps({
    "modules": sorted(sys.modules),
    "names": sorted(name for name in module.__all__ if hasattr(module, name)),
    "error": [type(error).__module__, str(error)],
}))
"""


def test_config_check_loads_by_path_without_ldpsample():
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", LOAD_BY_PATH, str(LIBRARY / "pipeline" / "config_check")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    modules = set(loaded["modules"])
    # no ldpsample package (its lazy exports would pull numpy and scipy), no heavy dependency
    assert not {m for m in modules if m.split(".")[0] == "ldpsample"}
    assert not modules & {"polars", "scipy", "pyarrow"}
    # every module of the package, under a stable name of its own
    package = LIBRARY / "pipeline" / "config_check"
    expected = {f"ldpsample_config_check.{p.stem}" for p in package.glob("*.py")} - {
        "ldpsample_config_check.__init__"
    }
    assert expected <= modules
    assert loaded["names"] == sorted(config_check.__all__)
    assert loaded["error"] == [
        "ldpsample_config_check.errors",
        "config error at events.x.path: file not found",
    ]


def test_every_folder_of_the_library_has_a_line_in_the_readmes_layout_map():
    """The README's Layout block names each package folder of src/ on a line of its own."""
    readme = (LIBRARY.parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Layout", 1)[1].split("```", 2)[1]
    lines = [line.split()[0] for line in block.splitlines() if line.strip()]
    folders = sorted(
        f"src/ldpsample/{init.parent.relative_to(LIBRARY).as_posix()}/".replace("/./", "/")
        for init in LIBRARY.rglob("__init__.py")
    )
    missing = [folder for folder in folders if folder not in lines]
    assert not missing, f"README layout map lacks {missing}"


ROOT = LIBRARY.parents[1]


def ldpsample_imports_in_functions(source: str) -> list[int]:
    """The lines of ``import ldpsample...``/``from ldpsample... import`` statements (or relative
    ones) inside a function of ``source``."""
    lines = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = ["ldpsample"] if node.level else [node.module or ""]
            else:
                continue
            if any(name.split(".")[0] == "ldpsample" for name in names):
                lines.append(node.lineno)
    return sorted(set(lines))


def test_the_in_function_import_finder_finds_one():
    source = 'def f():\n    """x"""\n    from ldpsample.minimax import apply_minimax\n'
    assert ldpsample_imports_in_functions(source) == [3]
    assert ldpsample_imports_in_functions("from ldpsample import minimax\n") == []
    assert ldpsample_imports_in_functions("def f():\n    from . import errors\n") == [2]


def test_no_ldpsample_import_inside_a_function():
    """Every ``ldpsample`` import of the library and the scripts is at module level, where the
    reader and the import graph (pipeline/import_graph.py) see it."""
    files = sorted(LIBRARY.rglob("*.py")) + sorted((ROOT / "scripts").glob("*.py"))
    found = {
        f"{path.relative_to(ROOT).as_posix()}:{line}"
        for path in files
        for line in ldpsample_imports_in_functions(path.read_text(encoding="utf-8"))
    }
    assert not found, f"ldpsample imported inside a function: {sorted(found)}"


#: A "Uses:" line (a list of imports); an issue or pull request number (history).
IMPORT_LIST = re.compile(r"^\s*Uses:", re.MULTILINE)
ISSUE_NUMBER = re.compile(r"\bissues?\s+#?\d+|\(#\d+\)|\bPR\s*#?\d+", re.IGNORECASE)


def docstring_faults(source: str) -> list[str]:
    """Each module, class or function docstring of ``source`` that lists imports (a ``Uses:``
    line) or cites an issue number, as ``line: text``; and each such comment line."""
    faults = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        docstring = ast.get_docstring(node, clean=False)
        if docstring and (IMPORT_LIST.search(docstring) or ISSUE_NUMBER.search(docstring)):
            faults.append(f"{getattr(node, 'lineno', 1)}: {docstring.strip().splitlines()[0]}")
    for number, line in enumerate(source.splitlines(), 1):
        comment = line.partition("#")[2] if line.lstrip().startswith("#") else ""
        if comment and ISSUE_NUMBER.search(comment):
            faults.append(f"{number}: {line.strip()}")
    return faults


def test_the_docstring_check_finds_import_lists_and_issue_numbers():
    assert docstring_faults('"""What it holds.\n\nUses: numpy."""\n')
    assert docstring_faults('def f():\n    """Fixed (issue 11)."""\n')
    assert docstring_faults("x = 1  # see\n# issue #24 split the file\n")
    assert docstring_faults('"""Fixed (#31)."""\n')
    clean = '"""What it holds; it uses numpy."""\nCOLOUR = "#000000"\n# Row #4\n'
    assert not docstring_faults(clean)


PYTHON_FILES = sorted(
    path
    for folder in ("src", "scripts", "tests", "benchmarks")
    for path in (ROOT / folder).rglob("*.py")
    if ".venv" not in path.parts
)


def test_no_docstring_lists_imports_or_cites_an_issue():
    """Docstrings state contracts: no ``Uses:`` line repeating the imports and no issue
    number (git and docs/performance.md hold the history). The workflow's comments too."""
    faults = [
        f"{path.relative_to(ROOT).as_posix()}:{fault}"
        for path in PYTHON_FILES
        for fault in docstring_faults(path.read_text(encoding="utf-8"))
    ]
    for path in [*sorted((ROOT / "workflow").rglob("*.smk")), ROOT / "Snakefile"]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "#" in line and ISSUE_NUMBER.search(line.partition("#")[2]):
                faults.append(f"{path.relative_to(ROOT).as_posix()}:{number}: {line.strip()}")
    assert not faults, "\n".join(faults)


def test_contributing_maps_every_package_and_events_step():
    """CONTRIBUTING.md's module map names every package of the library and every step of
    ``events/`` (as ``name/``), so a new package gets its sentence."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8").split("## Module map", 1)[1]
    text = text.split("\n## ", 1)[0]
    packages = sorted(
        init.parent.relative_to(LIBRARY).as_posix() + "/"
        for init in LIBRARY.rglob("__init__.py")
        if init.parent.parent in (LIBRARY, LIBRARY / "events", LIBRARY / "experiments")
    )
    missing = [package for package in packages if f"`{package}" not in text]
    assert packages and not missing, f"CONTRIBUTING.md's module map lacks {missing}"


# Jobs that count, sample, publish or combine start without scipy (its import is most of such a
# job's start-up): the sparse mechanisms' KL terms import scipy.special where they are computed
# (ldpsample.divergences.rel_entr_terms), so only a job that scores a KL risk loads it.
SCIPY_FREE_SCRIPTS = (
    "avazu_aggregate",
    "events_bucket_histograms",
    "events_bucket_ranks",
    "events_budget",
    "events_buckets",
    "events_combine",
    "events_histograms",
    "events_metrics",
    "events_priors",
    "events_roster",
    "events_spec",
    "events_split",
    "events_tops",
    "movielens_aggregate",
    "movielens_data",
)
SCRIPTS = LIBRARY.parents[1] / "scripts"


def _imports_scipy(scripts: list[str]) -> bool:
    """Whether running the import statements of ``scripts`` in one fresh interpreter loads scipy."""
    lines = [import_lines(SCRIPTS / f"{name}.py") for name in scripts]
    code = "\n".join([*lines, "import sys", "print('scipy' in sys.modules)"])
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return run.stdout.strip() == "True"


def test_counting_and_publishing_jobs_start_without_scipy():
    if _imports_scipy(list(SCIPY_FREE_SCRIPTS)):
        culprits = [name for name in SCIPY_FREE_SCRIPTS if _imports_scipy([name])]
        pytest.fail(f"these scripts' imports load scipy: {culprits}")
    # the check sees scipy where a script does load it
    assert _imports_scipy(["events_estimate_errors"])
