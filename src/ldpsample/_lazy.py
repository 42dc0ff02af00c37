"""Names of a package loaded on first use (PEP 562), the one mechanism of :mod:`ldpsample`,
:mod:`ldpsample.datasets` and :mod:`ldpsample.events`: importing a light submodule (as the
workflow does at parse time, or a histogram job) does not import the heavy ones.

A name whose module needs a package of an extra that is not installed (the core install,
``pip install ldpsample``, has numpy and scipy only) raises :class:`ModuleNotFoundError` saying
which extra to install.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["EXTRA_OF_PACKAGE", "lazy_exports"]

#: Top-level package -> the extra of pyproject.toml that installs it.
EXTRA_OF_PACKAGE: dict[str, str] = {
    "polars": "events",
    "pyarrow": "events",
    "ot": "wpm",
    "cvxpy": "reference",
    "pandas": "workflow",
    "matplotlib": "workflow",
    "seaborn": "workflow",
    "tqdm": "workflow",
    "pooch": "workflow",
    "yaml": "workflow",
}


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: a name of ``exports`` (name -> defining
    module) is imported on first access and kept in ``namespace`` (the package's globals)."""

    def __getattr__(name: str) -> Any:
        if name in exports:
            try:
                module = importlib.import_module(exports[name])
            except ModuleNotFoundError as error:
                missing = (error.name or "").split(".")[0]
                if missing not in EXTRA_OF_PACKAGE:
                    raise
                raise ModuleNotFoundError(
                    f"{package}.{name} needs {missing}, which this install lacks: pip install "
                    f"'ldpsample[{EXTRA_OF_PACKAGE[missing]}]'",
                    name=error.name,
                ) from error
            value = getattr(module, name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
