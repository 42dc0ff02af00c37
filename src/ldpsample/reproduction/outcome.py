"""What a claim's check returns, and the verdict that follows from it.

A check returns an :class:`Outcome` (this run's value, whether it is within the claim's
tolerance, and the reason when it is not) or raises :class:`Missing` when what it needs is not
in this run's results. :func:`verdict` turns that into the table's ``verdict`` cell, one of
:data:`VERDICTS`:

* ``reproduced`` -- within the tolerance;
* ``differs: <reason> (<doc section>)`` -- outside it, with why;
* ``not run: <why>`` -- the experiment was off, its output is absent, or the paper's value is
  not available to compare with;
* ``extra: <what it is>`` -- a row that is not a claim of the paper (e.g. the KL win shares,
  which the paper states for TV only), shown beside a claim for comparison; it never counts as
  reproduced or differs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "VERDICTS",
    "Missing",
    "Outcome",
    "count_verdicts",
    "rounds_to",
    "truncates_to",
    "verdict",
    "verdict_kind",
    "within",
]

#: Verdict kinds, in the order the counts are reported.
VERDICTS = ("reproduced", "differs", "not run", "extra")


class Missing(Exception):
    """What a claim needs is absent from this run (or from the paper): the row is ``not run``."""


@dataclass(frozen=True)
class Outcome:
    """A check's result: ``run_value`` (text for the table), ``ok`` (within the tolerance) and
    ``reason`` (why it differs; shown only when ``ok`` is False)."""

    run_value: str
    ok: bool
    reason: str = ""


def within(run: float, paper: float, tol: float) -> bool:
    """``|run - paper| <= tol`` (NaN never matches)."""
    return bool(abs(run - paper) <= tol)


def verdict(outcome: Outcome, *, kind: str = "claim", extra_note: str = "") -> str:
    """The ``verdict`` cell for a computed ``outcome``.

    Parameters
    ----------
    outcome
        The check's result.
    kind
        ``"claim"`` (a number or ordering the paper states) or ``"extra"`` (not a claim of the
        paper: the verdict is ``extra`` whatever the value).
    extra_note
        What an ``extra`` row is (required for ``kind="extra"``).
    """
    if kind == "extra":
        if not extra_note:
            raise ValueError("an extra row needs a note saying what it is")
        return f"extra: {extra_note}"
    if kind != "claim":
        raise ValueError(f"kind must be 'claim' or 'extra', got {kind!r}")
    if outcome.ok:
        return "reproduced"
    if not outcome.reason:
        raise ValueError(f"a differing outcome needs a reason: {outcome!r}")
    return f"differs: {outcome.reason}"


def verdict_kind(cell: str) -> str:
    """The kind of a ``verdict`` cell (one of :data:`VERDICTS`)."""
    kind = cell.split(":", 1)[0].strip()
    if kind not in VERDICTS:
        raise ValueError(f"not a verdict: {cell!r}")
    return kind


def count_verdicts(cells: Iterable[str]) -> dict[str, int]:
    """Rows per verdict kind, every kind present (zeros included), in :data:`VERDICTS` order."""
    counts = dict.fromkeys(VERDICTS, 0)
    for cell in cells:
        counts[verdict_kind(cell)] += 1
    return counts


def rounds_to(value: float, printed: str) -> bool:
    """Whether ``value`` rounds to the number ``printed`` at its printed decimals: ``0.03``
    takes ``[0.025, 0.035]``, ``0.1`` takes ``[0.05, 0.15]`` (NaN never does)."""
    decimals = len(printed.split(".", 1)[1]) if "." in printed else 0
    return bool(abs(value - float(printed)) <= 0.5 * 10.0**-decimals)


def truncates_to(value: float, printed: str) -> bool:
    """Whether ``value`` cut (not rounded) at the printed decimals gives ``printed``: ``0.03``
    takes ``[0.03, 0.04)``, ``0.1`` takes ``[0.1, 0.2)``, ``54.1`` takes ``[54.1, 54.2)``. The
    AISTATS paper's digits follow this rule (26/48 = 54.17 % printed 54.1 %, 20/48 = 41.67 %
    printed 41.6 %; NaN never matches)."""
    decimals = len(printed.split(".", 1)[1]) if "." in printed else 0
    low = float(printed)
    return bool(low - 1e-12 <= value < low + 10.0**-decimals - 1e-12)
