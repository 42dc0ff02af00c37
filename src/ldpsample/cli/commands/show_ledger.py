"""``ldpsample show <ledger>``: a privacy ledger as plain text. It needs the ``events`` extra
(polars), so :mod:`ldpsample.cli.commands.show` imports it only when the path is a ledger."""

from __future__ import annotations

from pathlib import Path

from ldpsample.cli._text import text_table
from ldpsample.publish.ledger import Ledger

__all__ = ["ledger_text"]


def ledger_text(path: Path, *, top: int) -> str:
    """The ledger at ``path``: every recorded release, the number of users, the least and most
    epsilon spent per user, and the ``top`` users by epsilon spent (ties by user id)."""
    ledger = Ledger(path)
    releases = ledger.releases()
    totals = ledger.totals().sort(["total_epsilon", "user"], descending=[True, False])
    lines = [f"privacy ledger {path}", "", f"{releases.height} releases"]
    if releases.height:
        lines.append(text_table(releases.columns, releases.rows()))
    lines += ["", f"{totals.height} users"]
    if totals.height:
        spent = totals["total_epsilon"]
        lines.append(f"total epsilon per user: min {spent.min()!r}, max {spent.max()!r}")
        lines.append(f"the {min(top, totals.height)} users with the most epsilon spent:")
        lines.append(text_table(totals.columns, totals.head(top).rows()))
    return "\n".join(lines)
