"""The privacy ledger: every user's spent ε across every release, kept outside ``results/``.

Uses: polars and the standard library (sqlite3); no other ldpsample module.

A ledger is one SQLite file (``events.<name>.ledger``, by default ``privacy/<name>.ledger.sqlite``;
several tables may share one, and then one budget). Every publication appends, in the same
transaction that checked the budget, one row per (user, ε) with the number of draws the user
made at that ε, under a release id and the spec's sha256. Deleting ``results/`` leaves it
as it is, so a re-run spends again and the spend is remembered (as budget-keeping systems such as
Tumult's and Snowflake's refuse a query that would exceed a cumulative budget).

The budget check depends on the ledger and the spec only, never on any user's data: a user may
release if what the ledger holds for it plus the spec's bound (subcategories × Σε × samples)
stays within the budget. ``BEGIN IMMEDIATE`` holds SQLite's write lock from the check to the
commit, so two runs against one ledger cannot both pass the check on the same spend. SQLite's
locks need a local file system: keep the ledger off NFS (the pipeline's publish job runs on
the submitting host).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import polars as pl

__all__ = ["TOTALS_SCHEMA", "BudgetExceededError", "Ledger", "LedgerTransaction"]

PathLike = str | os.PathLike[str]

#: Rounding allowed when comparing sums of ε with a budget (relative to max(1, budget)).
BUDGET_TOLERANCE = 1e-9

#: One row per user: releases it took part in, draws it made and the ε they cost in total.
TOTALS_SCHEMA: dict[str, pl.DataType] = {
    "user": pl.String(),
    "releases": pl.Int64(),
    "draws": pl.Int64(),
    "total_epsilon": pl.Float64(),
}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS releases (
    release_id TEXT PRIMARY KEY,
    table_name TEXT NOT NULL,
    spec_sha256 TEXT NOT NULL,
    seeded INTEGER NOT NULL,
    created_utc TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS draws (
    user_id TEXT NOT NULL,
    release_id TEXT NOT NULL REFERENCES releases (release_id),
    epsilon REAL NOT NULL,
    samples INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS draws_user ON draws (user_id);
"""


class BudgetExceededError(RuntimeError):
    """A release would take a user past its budget: nothing is drawn or written."""


class LedgerTransaction:
    """Reads and appends inside one write transaction of a :class:`Ledger`."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._connection = connection
        self.path = path

    def spent(self, users: Sequence[str]) -> pl.DataFrame:
        """``user, total_epsilon`` of each of ``users`` (0 for a user never released)."""
        conn = self._connection
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS roster (user_id TEXT PRIMARY KEY)")
        conn.execute("DELETE FROM roster")
        conn.executemany("INSERT OR IGNORE INTO roster VALUES (?)", ((str(u),) for u in users))
        rows = conn.execute(
            "SELECT r.user_id, COALESCE(SUM(d.epsilon * d.samples), 0.0) FROM roster r "
            "LEFT JOIN draws d ON d.user_id = r.user_id GROUP BY r.user_id ORDER BY r.user_id"
        ).fetchall()
        return pl.DataFrame(
            rows, schema={"user": pl.String(), "total_epsilon": pl.Float64()}, orient="row"
        )

    def check_budget(
        self, users: Sequence[str], *, add: float, budget: float | None, key: str, detail: str = ""
    ) -> float:
        """Raise :class:`BudgetExceededError` unless every user's spend plus ``add`` stays
        within ``budget`` (None: no cap); return the largest projected total.

        ``key`` (e.g. ``events.<name>.budget``) and ``detail`` (how ``add`` was computed) are
        named in the message.
        """
        spent = self.spent(users)
        worst = spent.sort("total_epsilon", "user", descending=[True, False]).head(1)
        before = float(worst["total_epsilon"][0]) if worst.height else 0.0
        projected = before + float(add)
        if budget is not None and projected > budget + BUDGET_TOLERANCE * max(1.0, budget):
            over = spent.filter(
                pl.col("total_epsilon") + add > budget + BUDGET_TOLERANCE * max(1.0, budget)
            ).height
            raise BudgetExceededError(
                f"config key {key}: {budget!r} would be exceeded: user "
                f"{worst['user'][0]!r} has spent {before!r} (ledger {self.path}) and this "
                f"release adds {add!r}{detail}, a projected total of {projected!r} "
                f"({over} of {spent.height} users over); nothing was drawn or written. Raise "
                "the budget, or release fewer ε values, subcategories or samples"
            )
        return projected

    def record(
        self,
        *,
        release_id: str,
        table: str,
        spec_sha256: str,
        seeded: bool,
        spend: pl.DataFrame,
    ) -> None:
        """Append one release: ``spend`` holds ``user, epsilon, samples`` (draws at that ε)."""
        created = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self._connection.execute(
            "INSERT INTO releases VALUES (?, ?, ?, ?, ?)",
            (release_id, table, spec_sha256, int(seeded), created),
        )
        self._connection.executemany(
            "INSERT INTO draws VALUES (?, ?, ?, ?)",
            (
                (user, release_id, float(eps), int(samples))
                for user, eps, samples in spend.select("user", "epsilon", "samples").iter_rows()
            ),
        )


class Ledger:
    """A persistent, append-only record of every user's spent ε (see the module docstring).

    Parameters
    ----------
    path
        The SQLite file; created (with its folder) on first use.
    timeout
        Seconds to wait for another run's write lock.
    """

    def __init__(self, path: PathLike, *, timeout: float = 600.0) -> None:
        self.path = Path(path)
        self.timeout = float(timeout)

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        connection.executescript(_SCHEMA)
        return connection

    @contextlib.contextmanager
    def transaction(self) -> Iterator[LedgerTransaction]:
        """A write transaction (SQLite ``BEGIN IMMEDIATE``): committed if the block ends
        normally, rolled back if it raises."""
        connection = self._connect()
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield LedgerTransaction(connection, self.path)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        finally:
            connection.close()

    def totals(self) -> pl.DataFrame:
        """:data:`TOTALS_SCHEMA`: every user the ledger holds, sorted by user."""
        if not self.path.exists():
            return pl.DataFrame(schema=TOTALS_SCHEMA)
        connection = self._connect()
        try:
            rows = connection.execute(
                "SELECT user_id, COUNT(DISTINCT release_id), SUM(samples), "
                "SUM(epsilon * samples) FROM draws GROUP BY user_id ORDER BY user_id"
            ).fetchall()
        finally:
            connection.close()
        return pl.DataFrame(rows, schema=TOTALS_SCHEMA, orient="row")

    def releases(self) -> pl.DataFrame:
        """Every recorded release: ``release_id, table, spec_sha256, seeded, created_utc``."""
        schema = {
            "release_id": pl.String(),
            "table": pl.String(),
            "spec_sha256": pl.String(),
            "seeded": pl.Boolean(),
            "created_utc": pl.String(),
        }
        if not self.path.exists():
            return pl.DataFrame(schema=schema)
        connection = self._connect()
        try:
            rows = connection.execute(
                "SELECT release_id, table_name, spec_sha256, seeded, created_utc FROM releases "
                "ORDER BY created_utc, release_id"
            ).fetchall()
        finally:
            connection.close()
        return pl.DataFrame(
            [(r, t, s, bool(d), c) for r, t, s, d, c in rows], schema=schema, orient="row"
        )
