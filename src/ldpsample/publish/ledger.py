"""The privacy ledger: every user's spent ε across every release, kept outside ``results/``.

A ledger is one SQLite file (``events.<name>.ledger``; by default the project's one ledger
``privacy/ledger.sqlite``, shared by every table). Its key is ``(population, user)``: the
population is the operator's name for a set of people (``events.<name>.population``, default
``"default"``), so spend follows users across entry names, renames and reused specs, and two
tables of different people whose ids collide can be kept apart by naming their populations.
User ids are normalised (:func:`canonical_user_ids`) so one user is one key. Every publication
appends, in the transaction that checked the budget and *before any draw exists*, one row per
(user, ε) with the number of draws the user makes at that ε, under a release id and the spec's
sha256. Deleting ``results/`` leaves it as it is, so a re-run spends again and the spend is
remembered (as budget-keeping systems such as Tumult's and Snowflake's refuse a query that
would exceed a cumulative budget). :func:`other_ledger_spend` finds spend of the same users in
the other ledgers the project knows of (a changed ``ledger:``), which the publication refuses.

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
import json
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import polars as pl

__all__ = [
    "DEFAULT_POPULATION",
    "TOTALS_SCHEMA",
    "BudgetExceededError",
    "Ledger",
    "LedgerConflictError",
    "LedgerTransaction",
    "canonical_user_ids",
    "known_ledgers",
    "other_ledger_spend",
    "register_ledger",
]

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

#: The population of a table that names none (``events.<name>.population: null``).
DEFAULT_POPULATION = "default"
#: The project's list of every ledger a publication used (absolute paths, one JSON list).
REGISTRY = "privacy/ledgers.json"
#: An id that spells an integer (leading zeros, a sign, a ``.0`` tail allowed).
_INTEGER_SPELLING = re.compile(r"^[+-]?[0-9]+(\.0*)?$")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS releases (
    release_id TEXT PRIMARY KEY,
    table_name TEXT NOT NULL,
    spec_sha256 TEXT NOT NULL,
    seeded INTEGER NOT NULL,
    created_utc TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS draws (
    population TEXT NOT NULL DEFAULT 'default',
    user_id TEXT NOT NULL,
    release_id TEXT NOT NULL REFERENCES releases (release_id),
    epsilon REAL NOT NULL,
    samples INTEGER NOT NULL
);
"""
#: Ledgers written before populations existed get the column (their spend is "default").
_MIGRATE = "ALTER TABLE draws ADD COLUMN population TEXT NOT NULL DEFAULT 'default'"
_INDEX = "CREATE INDEX IF NOT EXISTS draws_population_user ON draws (population, user_id)"


class BudgetExceededError(RuntimeError):
    """A release would take a user past its budget: nothing is drawn or written."""


class LedgerConflictError(RuntimeError):
    """The releasing users hold spend in another ledger the project knows of: nothing is
    drawn or written (the budget would be checked against less spend than they have)."""


def canonical_user_ids(users: Iterable[object], *, key: str) -> list[str]:
    """One ledger key per user: an id that spells an integer (``1``, ``1.0``, ``001``,
    ``+1``) becomes its decimal (``"1"``), any other id its text.

    Raises
    ------
    ValueError
        Naming ``key`` and the ids, when two different ids of the same table would be one key
        (e.g. ``"1"`` and ``"001"``): ambiguous, since the ledger could not tell them apart.
    """
    if isinstance(users, pl.Series):
        texts = users.cast(pl.String).rename("id")
    else:
        texts = pl.Series("id", [str(u) for u in users], dtype=pl.String)
    digits = texts.str.replace(r"^[+-]", "").str.replace(r"\.0*$", "").str.strip_chars_start("0")
    digits = pl.select(pl.when(digits == "").then(pl.lit("0")).otherwise(digits)).to_series()
    negative = texts.str.starts_with("-") & (digits != "0")
    integer = texts.str.contains(_INTEGER_SPELLING.pattern)
    canonical = pl.select(
        pl.when(integer)
        .then(pl.when(negative).then(pl.lit("-") + digits).otherwise(digits))
        .otherwise(texts)
    ).to_series()
    frame = pl.DataFrame({"id": texts, "key": canonical}).unique()
    clash = frame.filter(pl.len().over("key") > 1).sort("key", "id")
    if clash.height:
        ids = clash.filter(pl.col("key") == clash["key"][0])["id"].to_list()
        raise ValueError(
            f"config key {key}: user ids {ids} are one user for the ledger (ids that spell an "
            f"integer are keyed by its decimal {clash['key'][0]!r}); {clash.height} ids are "
            "ambiguous. Give the users distinct ids (e.g. a string prefix) before releasing"
        )
    return canonical.to_list()


class LedgerTransaction:
    """Reads and appends inside one write transaction of a :class:`Ledger`."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._connection = connection
        self.path = path

    def spent(self, users: Sequence[str], *, population: str = DEFAULT_POPULATION) -> pl.DataFrame:
        """``user, total_epsilon`` of each of ``users`` of ``population`` (0 for a user never
        released)."""
        return _spent(self._connection, users, population)

    def check_budget(
        self,
        users: Sequence[str],
        *,
        add: float,
        budget: float | None,
        key: str,
        detail: str = "",
        population: str = DEFAULT_POPULATION,
    ) -> float:
        """Raise :class:`BudgetExceededError` unless every user's spend plus ``add`` stays
        within ``budget`` (None: no cap); return the largest projected total.

        ``key`` (e.g. ``events.<name>.budget``) and ``detail`` (how ``add`` was computed) are
        named in the message.
        """
        spent = self.spent(users, population=population)
        worst = spent.sort("total_epsilon", "user", descending=[True, False]).head(1)
        before = float(worst["total_epsilon"][0]) if worst.height else 0.0
        projected = before + float(add)
        if budget is not None and projected > budget + BUDGET_TOLERANCE * max(1.0, budget):
            over = spent.filter(
                pl.col("total_epsilon") + add > budget + BUDGET_TOLERANCE * max(1.0, budget)
            ).height
            raise BudgetExceededError(
                f"config key {key}: {budget!r} would be exceeded: user "
                f"{worst['user'][0]!r} of population {population!r} has spent {before!r} "
                f"(ledger {self.path}) and this release adds {add!r}{detail}, a projected "
                f"total of {projected!r} ({over} of {spent.height} users over); nothing was "
                "drawn or written. Raise the budget, or release fewer ε values, subcategories "
                "or samples"
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
        population: str = DEFAULT_POPULATION,
    ) -> None:
        """Append one release: ``spend`` holds ``user, epsilon, samples`` (draws at that ε)."""
        created = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self._connection.execute(
            "INSERT INTO releases VALUES (?, ?, ?, ?, ?)",
            (release_id, table, spec_sha256, int(seeded), created),
        )
        self._connection.executemany(
            "INSERT INTO draws (population, user_id, release_id, epsilon, samples) "
            "VALUES (?, ?, ?, ?, ?)",
            (
                (population, user, release_id, float(eps), int(samples))
                for user, eps, samples in spend.select("user", "epsilon", "samples").iter_rows()
            ),
        )


def _spent(connection: sqlite3.Connection, users: Sequence[str], population: str) -> pl.DataFrame:
    """``user, total_epsilon`` of ``users`` of ``population`` in one open ledger."""
    connection.execute("CREATE TEMP TABLE IF NOT EXISTS roster (user_id TEXT PRIMARY KEY)")
    connection.execute("DELETE FROM roster")
    connection.executemany("INSERT OR IGNORE INTO roster VALUES (?)", ((str(u),) for u in users))
    rows = connection.execute(
        "SELECT r.user_id, COALESCE(SUM(d.epsilon * d.samples), 0.0) FROM roster r "
        "LEFT JOIN draws d ON d.user_id = r.user_id AND d.population = ? "
        "GROUP BY r.user_id ORDER BY r.user_id",
        (population,),
    ).fetchall()
    return pl.DataFrame(
        rows, schema={"user": pl.String(), "total_epsilon": pl.Float64()}, orient="row"
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
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not self.path.exists():  # private to the operator: 0600 from the first byte
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        connection = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        connection.executescript(_SCHEMA)
        columns = {row[1] for row in connection.execute("PRAGMA table_info(draws)")}
        if "population" not in columns:
            connection.execute(_MIGRATE)
        connection.execute(_INDEX)
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

    def spent(self, users: Sequence[str], *, population: str = DEFAULT_POPULATION) -> pl.DataFrame:
        """``user, total_epsilon`` of ``users`` of ``population`` (read without the write
        lock; an absent ledger holds nothing)."""
        if not self.path.exists():
            return pl.DataFrame(
                {"user": sorted({str(u) for u in users}), "total_epsilon": 0.0},
                schema={"user": pl.String(), "total_epsilon": pl.Float64()},
            )
        connection = self._connect()
        try:
            return _spent(connection, users, population)
        finally:
            connection.close()

    def totals(self, *, population: str | None = None) -> pl.DataFrame:
        """:data:`TOTALS_SCHEMA`: every user the ledger holds (of ``population``, or of every
        population summed), sorted by user."""
        if not self.path.exists():
            return pl.DataFrame(schema=TOTALS_SCHEMA)
        connection = self._connect()
        where = "" if population is None else "WHERE population = ? "
        try:
            rows = connection.execute(
                "SELECT user_id, COUNT(DISTINCT release_id), SUM(samples), "
                f"SUM(epsilon * samples) FROM draws {where}GROUP BY user_id ORDER BY user_id",
                () if population is None else (population,),
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


def known_ledgers(project: PathLike = ".") -> list[Path]:
    """Every ledger the project knows of: those :func:`register_ledger` listed in
    ``privacy/ledgers.json`` and every ``*.sqlite`` file in ``privacy/`` (absolute paths)."""
    root = Path(project).resolve()
    registry = root / REGISTRY
    listed = json.loads(registry.read_text(encoding="utf-8")) if registry.is_file() else []
    found = {Path(p) for p in listed} | set((root / "privacy").glob("*.sqlite"))
    return sorted(p.resolve() for p in found)


def register_ledger(ledger: PathLike, project: PathLike = ".") -> None:
    """Add ``ledger`` to the project's ``privacy/ledgers.json`` (0600, written atomically)."""
    root = Path(project).resolve()
    registry = root / REGISTRY
    known = {str(p) for p in known_ledgers(root)} | {str(Path(ledger).resolve())}
    registry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = registry.with_name(f".{registry.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(sorted(known), indent=2) + "\n")
    os.replace(tmp, registry)


def other_ledger_spend(
    ledger: PathLike, users: Sequence[str], *, population: str, project: PathLike = "."
) -> list[tuple[Path, int, float]]:
    """``(ledger, users with spend, largest spend)`` of every known ledger other than
    ``ledger`` in which some of ``users`` of ``population`` have spent ε."""
    this = Path(ledger).resolve()
    found = []
    for other in known_ledgers(project):
        if other == this or not other.is_file():
            continue
        spent = Ledger(other).spent(users, population=population)
        held = spent.filter(pl.col("total_epsilon") > 0)
        if held.height:
            found.append((other, held.height, float(held["total_epsilon"].max())))
    return found
