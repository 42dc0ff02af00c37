"""The library's layout: every module says what it holds, and the config check the workflow loads
by path at parse time stays light (its modules load by path too, without ldpsample's
dependencies)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

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
