"""Names of a package loaded on first use (PEP 562), the one mechanism of :mod:`ldpsample`,
:mod:`ldpsample.datasets` and :mod:`ldpsample.events`: importing a light submodule (as the
workflow does at parse time, or a histogram job) does not import the heavy ones.

Uses: the standard library only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: a name of ``exports`` (name -> defining
    module) is imported on first access and kept in ``namespace`` (the package's globals)."""

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(importlib.import_module(exports[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
