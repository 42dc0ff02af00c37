"""``--baseline <git revision>``: the library's modules as they were at that revision, loaded
under another name beside the current ones, so that a row times the old and the current code
in the same process on the same inputs ("before" lines).

Imports the standard library only (``tests/test_benchmarks.py`` loads it by its path).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

#: The project's root (this file is ``benchmarks/runner/baseline.py``).
ROOT = Path(__file__).resolve().parents[2]


def baseline_revision() -> str | None:
    """The revision given to ``run_all.py --baseline`` (None without one)."""
    return os.environ.get("RUN_ALL_BASELINE") or None


def baseline(module: str):
    """``ldpsample.<module>`` as it was at ``--baseline <git revision>`` (None without one).

    The module's file ``<module>.py``, or every ``.py`` file of its package folder ``<module>/``
    (the mollifier is one), is read with ``git show`` and imported under another
    name, ``baseline_<module>``, so the old and the current code are timed side by side in the
    same process on the same inputs. A package's imports of its own modules
    (``ldpsample.<module>.x``) are renamed with it, so they load the old copies too.
    """
    rev = baseline_revision()
    if not rev:
        return None
    name = f"baseline_{module}"
    folder = Path(tempfile.mkdtemp(prefix="run_all_baseline_"))
    library = _git_tree(rev, "src/ldpsample")
    if library.get(f"{module}.py") == "blob":
        path = folder / f"{name}.py"
        path.write_text(_git("show", f"{rev}:src/ldpsample/{module}.py"))
        spec = importlib.util.spec_from_file_location(name, path)
    elif library.get(module) == "tree":
        package = folder / name
        package.mkdir()
        for file, kind in _git_tree(rev, f"src/ldpsample/{module}").items():
            if kind == "blob" and file.endswith(".py"):
                source = _git("show", f"{rev}:src/ldpsample/{module}/{file}")
                (package / file).write_text(re.sub(rf"\bldpsample\.{module}\b", name, source))
        spec = importlib.util.spec_from_file_location(
            name, package / "__init__.py", submodule_search_locations=[str(package)]
        )
    else:
        raise SystemExit(f"--baseline {rev}: no src/ldpsample/{module}.py or {module}/ there")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _git(*args: str) -> str:
    """Standard output of ``git <args>`` in the project."""
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def _git_tree(rev: str, folder: str) -> dict[str, str]:
    """``{name: "blob" or "tree"}`` of ``folder``'s entries at ``rev``."""
    entries = {}
    for line in _git("ls-tree", f"{rev}:{folder}").splitlines():
        info, entry = line.split("\t", 1)
        entries[entry] = info.split()[1]
    return entries
