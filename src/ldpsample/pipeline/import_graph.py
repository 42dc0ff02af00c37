"""The library files a Python file runs when imported: the closure of its ``ldpsample`` imports.

The workflow lists these files as a rule's inputs, so that editing any library module a job
imports re-runs the job (a ``script:`` rule's code trigger sees only the script). Standard library
only (``ast``): the workflow loads this module by path at parse time.

Contract of :func:`library_closure`: for every start file, every ``ldpsample`` module that
importing it can execute is in the result, found statically:

* ``import ldpsample.a.b`` and ``from ldpsample.a import b`` (a module or a name), absolute or
  relative, anywhere in the file (also inside functions: an over-approximation, never a miss),
  except in ``if TYPE_CHECKING:`` blocks, which never run;
* each package ``__init__.py`` on the way (Python executes it before the module);
* the names a package exports lazily through an ``_EXPORTS`` table (``ldpsample._lazy``):
  ``from ldpsample import apply_minimax`` runs ``ldpsample.minimax``;
* sibling modules a package loads by path with ``spec_from_file_location`` are not seen: such a
  package must be started from as a folder (``"pipeline/config_check/"``).

Every Snakemake start (dry runs included) computes the closure of each script, so a file's
imports are kept in a cache keyed by its bytes, its package and the Python version:
``$XDG_CACHE_HOME/ldpsample/import-graph/`` (default ``~/.cache``), one small JSON file per key,
written atomically. An edited file has a new key; an entry that cannot be read or written is
computed again, and the result never depends on the cache.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from functools import cache
from pathlib import Path

PACKAGE = "ldpsample"
#: Changes whenever what :func:`_imported` returns for a file would (its entries in the cache).
CACHE_FORMAT = 1


@cache
def _module_file(library: Path, parts: tuple[str, ...]) -> Path | None:
    """The file of module ``ldpsample.<parts>`` under ``library`` (its ``__init__.py`` for a
    package), or None when there is none."""
    base = library.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if parts and candidate.is_file():
            return candidate
    return library / "__init__.py" if not parts else None


@cache
def _lazy_exports(init: Path) -> dict[str, str]:
    """A package's ``_EXPORTS`` table (public name -> defining module), read from its source."""
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == "_EXPORTS" and node.value is not None:
            return ast.literal_eval(node.value)
    return {}


def _package_of(library: Path, path: Path) -> tuple[str, ...]:
    """The dotted package (as parts after ``ldpsample``) that the file ``path`` belongs to."""
    parts = path.relative_to(library).with_suffix("").parts
    return parts[:-1]  # a/b.py and a/__init__.py both belong to package a


#: Node fields that hold statements: an import is a statement, so only these are walked.
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _is_type_checking(test: ast.expr) -> bool:
    """Whether an ``if`` test is ``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return (
        isinstance(test, ast.Attribute)
        and test.attr == "TYPE_CHECKING"
        and isinstance(test.value, ast.Name)
        and test.value.id == "typing"
    )


def _runtime_nodes(tree: ast.AST) -> Iterable[ast.AST]:
    """Every statement of ``tree`` (at any depth: in functions, classes, branches, handlers)
    except those under an ``if TYPE_CHECKING:`` test. Expressions are not entered: no import
    statement can sit inside one."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        for field in _BODIES:
            stack.extend(getattr(node, field, ()))


@cache
def _imported(library: Path, path: Path) -> frozenset[tuple[str, ...]]:
    """The ``ldpsample`` modules (as parts after ``ldpsample``) that ``path`` imports, each with
    the names imported from it resolved to submodules or lazily exported modules (from the
    cache when a file with the same bytes in the same package was read before)."""
    source = path.read_bytes()
    package = _package_of(library, path) if path.is_relative_to(library) else None
    key = hashlib.sha256(
        json.dumps([CACHE_FORMAT, sys.version_info[:2], package]).encode() + b"\0" + source
    ).hexdigest()
    cached = _cache_read(key)
    if cached is not None:
        return cached
    modules = _parse_imports(source.decode("utf-8"), package)
    _cache_write(key, modules)
    return modules


def _parse_imports(source: str, package: tuple[str, ...] | None) -> frozenset[tuple[str, ...]]:
    """What :func:`_imported` returns for a file with ``source`` in ``package`` (None: a file
    outside the library, whose relative imports are not the library's)."""
    modules: set[tuple[str, ...]] = set()
    for node in _runtime_nodes(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                dotted = alias.name.split(".")
                if dotted[0] == PACKAGE:
                    modules.add(tuple(dotted[1:]))
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            if package is None:
                continue
            anchor = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            base = (*anchor, *(node.module.split(".") if node.module else ()))
        elif node.module and node.module.split(".")[0] == PACKAGE:
            base = tuple(node.module.split(".")[1:])
        else:
            continue
        modules.add(base)
        for alias in node.names:
            modules.add((*base, alias.name))
    return frozenset(modules)


def _cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, PACKAGE, "import-graph")


def _cache_read(key: str) -> frozenset[tuple[str, ...]] | None:
    try:
        entries = json.loads((_cache_folder() / f"{key}.json").read_text(encoding="utf-8"))
        return frozenset(tuple(str(part) for part in entry) for entry in entries)
    except (OSError, ValueError, TypeError):
        return None


def _cache_write(key: str, modules: frozenset[tuple[str, ...]]) -> None:
    folder = _cache_folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, part = tempfile.mkstemp(dir=folder, suffix=".part")
    except OSError:
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(sorted(modules), out)
        os.replace(part, folder / f"{key}.json")
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(part)


@cache
def _with_packages(library: Path, parts: tuple[str, ...]) -> tuple[Path, ...]:
    """The file of ``ldpsample.<parts>`` and every package ``__init__.py`` above it, or only
    the packages when ``parts`` names no module (a plain name imported from a package)."""
    files = [_module_file(library, parts[:depth]) for depth in range(len(parts) + 1)]
    return tuple(file for file in files if file is not None)


def library_closure(library: Path, starts: Iterable[Path]) -> list[Path]:
    """Every library file (under ``library``, the ``ldpsample`` package folder) that importing
    the files ``starts`` can execute, the starts themselves included when they are library files;
    sorted."""
    library = library.resolve()
    seen: set[Path] = set()
    queue = [Path(start).resolve() for start in starts]
    while queue:
        path = queue.pop()
        if path in seen:
            continue
        seen.add(path)
        for parts in _imported(library, path):
            for file in _with_packages(library, parts):
                if file not in seen:
                    queue.append(file)
            init = _module_file(library, parts)
            if init is not None and init.name == "__init__.py":
                continue
            package_init = _module_file(library, parts[:-1]) if parts else None
            if package_init is not None and package_init.name == "__init__.py":
                lazy = _lazy_exports(package_init).get(parts[-1])
                if lazy is not None and lazy.split(".")[0] == PACKAGE:
                    for file in _with_packages(library, tuple(lazy.split(".")[1:])):
                        if file not in seen:
                            queue.append(file)
    return sorted(path for path in seen if path.is_relative_to(library))


def script_inputs(
    library: Path, script: Path, extra: Iterable[str] = (), *, cwd: Path | None = None
) -> list[str]:
    """The library files a workflow script runs, as a rule's input paths (sorted): the
    :func:`library_closure` of ``script``, plus the ``extra`` library files its imports cannot
    show. An ``extra`` name ending in ``/`` is a folder of ``library`` and stands for its
    ``.py`` and ``.toml`` files (the reproduction checks, which ``claims.toml`` names and the
    package imports by name), whose imports are followed too; another name is one file.

    Paths under ``cwd`` (default: the working directory) are relative to it: Snakemake records
    each job's set of input paths, so absolute ones would re-run every job of a project folder
    that was moved, renamed or restored elsewhere.
    """
    files = []
    for name in extra:
        if name.endswith("/"):
            folder = library / name
            files += sorted(p for p in folder.iterdir() if p.suffix in (".py", ".toml"))
        else:
            files.append(library / name)
    starts = [script, *(path for path in files if path.suffix == ".py")]
    paths = {*library_closure(library, starts), *files}
    base = Path.cwd() if cwd is None else cwd
    return sorted(
        os.path.relpath(path, base) if path.is_relative_to(base) else str(path) for path in paths
    )
