"""The one table of benchmark rows: :data:`ROWS`, filled by the :func:`register` decorator
when a module of ``benchmarks/rows/`` is imported, and :func:`in_order`, the table in the order
``run_all.py`` runs and prints it (``rows.ORDER``); the sizes of the rows that take one
(:data:`SIZES`, :func:`row_size`, set with ``run_all.py --size NAME=N``).

Imports the standard library and :mod:`runner.measure` only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass

from runner.measure import Row


@dataclass(frozen=True)
class RowSpec:
    name: str
    measure: Callable[[bool], Row]  # runs in the child: times everything side by side
    subject: Callable[[bool], object]  # runs alone in a second child: its peak memory


ROWS: dict[str, RowSpec] = {}
#: Rows that take a size: name -> (full size, ``--quick`` size).
SIZES: dict[str, tuple[int, int]] = {}
#: The environment variable that carries ``run_all.py --size`` to the row's processes (JSON).
SIZES_ENV = "RUN_ALL_SIZES"
#: The environment variable that carries ``run_all.py --data`` (the real data copies) to them.
DATA_ENV = "RUN_ALL_DATA"


def register(name: str, subject: Callable[[bool], object], *, size: tuple[int, int] | None = None):
    """Decorator: add ``row_fn`` to :data:`ROWS` under ``name`` with its memory ``subject``;
    ``size`` = (full, quick) for a row whose size ``--size name=N`` sets (:func:`row_size`)."""

    def wrap(row_fn: Callable[[bool], Row]) -> Callable[[bool], Row]:
        if name in ROWS:
            raise ValueError(f"benchmark row {name!r} registered twice")
        ROWS[name] = RowSpec(name, row_fn, subject)
        if size is not None:
            SIZES[name] = size
        return row_fn

    return wrap


def row_size(name: str, quick: bool) -> int:
    """The size of row ``name``: ``--size name=N`` when given (with ``--quick`` too), else its
    registered quick or full size."""
    chosen = json.loads(os.environ.get(SIZES_ENV, "{}"))
    if name in chosen:
        return int(chosen[name])
    full, small = SIZES[name]
    return small if quick else full


def in_own_processes(quick: bool) -> object:
    """The memory probe of a row whose steps each run, and are measured, in processes of their
    own (the Avazu and pipeline rows): nothing to run alone."""
    return None


def in_order(names: tuple[str, ...]) -> dict[str, RowSpec]:
    """:data:`ROWS` in the order of ``names``, which must name every registered row once."""
    missing = [name for name in ROWS if name not in names]
    unknown = [name for name in names if name not in ROWS]
    if missing or unknown or len(set(names)) != len(names):
        raise ValueError(
            f"row order {names!r} does not match the registered rows: not in the order "
            f"{missing!r}, not registered {unknown!r}"
        )
    return {name: ROWS[name] for name in names}
