"""The reproduction table's data-size rows and the poster's Avazu click rule: each check passes on
the counts the papers print, fails on a perturbed count, and says ``not run`` with the copy's
count on a partial copy; the shared ML-100K copy (complete) is checked exactly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from ldpsample.datasets.registry import OFFICIAL_ROW_COUNTS
from ldpsample.reproduction import data_size_checks as checks
from ldpsample.reproduction.claims import load_claims
from ldpsample.reproduction.outcome import Missing

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
HERE = Path(".")


def test_rounding_at_the_last_digit() -> None:
    assert checks.rounds_at_last_digit(943, 1000)
    assert checks.rounds_at_last_digit(6040, 6000)
    assert checks.rounds_at_last_digit(40_428_967, 40_000_000)
    assert checks.rounds_at_last_digit(1_000_209, 1_000_000)
    assert not checks.rounds_at_last_digit(1500, 1000)
    assert not checks.rounds_at_last_digit(6500, 6000)
    assert not checks.rounds_at_last_digit(34_999_999, 40_000_000)


def _ratings(users: int, ratings: int) -> pl.DataFrame:
    return pl.DataFrame(
        {"user_id": np.arange(ratings) % users, "movie_id": np.arange(ratings) % 1682}
    )


def test_ml100k_size_passes_on_the_printed_counts_and_fails_on_a_perturbed_one(
    monkeypatch,
) -> None:
    ctx = {"movielens_files": {"ml-100k": {"ratings": "u.data"}}}
    monkeypatch.setattr(checks, "read_ml100k", lambda f: {"ratings": _ratings(943, 100_000)})
    outcome = checks.aistats_ml100k_size(HERE, ctx, ratings=100_000, users=1000)
    assert outcome.ok and outcome.run_value == "100,000 ratings from 943 users"
    monkeypatch.setattr(checks, "read_ml100k", lambda f: {"ratings": _ratings(943, 99_999)})
    assert not checks.aistats_ml100k_size(HERE, ctx, ratings=100_000, users=1000).ok
    monkeypatch.setattr(checks, "read_ml100k", lambda f: {"ratings": _ratings(1500, 100_000)})
    assert not checks.aistats_ml100k_size(HERE, ctx, ratings=100_000, users=1000).ok
    with pytest.raises(Missing, match="ml-100k"):
        checks.aistats_ml100k_size(HERE, {}, ratings=100_000, users=1000)


@pytest.mark.skipif(not (SHARED / "data" / "ml-100k").is_dir(), reason="no shared ML-100K")
def test_ml100k_size_on_the_complete_shared_copy() -> None:
    folder = SHARED / "data" / "ml-100k"
    files = {
        "ratings": folder / "u.data",
        "items": folder / "u.item",
        "users": folder / "u.user",
        "genres": folder / "u.genre",
    }
    outcome = checks.aistats_ml100k_size(
        HERE, {"movielens_files": {"ml-100k": files}}, ratings=100_000, users=1000
    )
    assert outcome.ok and outcome.run_value == "100,000 ratings from 943 users"


def _ml1m(monkeypatch, *, ratings: int, users: int) -> dict:
    data = {
        "ratings": pl.DataFrame({"user_id": np.arange(ratings) % users}),
        "users": pl.DataFrame({"user_id": np.arange(users)}),
    }
    monkeypatch.setattr(checks, "read_ml1m", lambda files: data)
    return {"movielens_files": {"ml-1m": {"ratings": "ratings.dat"}}}


def test_ml1m_size_checks_users_and_says_not_run_on_partial_ratings(monkeypatch) -> None:
    ctx = _ml1m(monkeypatch, ratings=1_000_209, users=6040)
    outcome = checks.aistats_ml1m_size(HERE, ctx, ratings=1_000_000, users=6000)
    assert outcome.ok and outcome.run_value == "1,000,209 ratings; 6,040 users in users.dat"
    ctx = _ml1m(monkeypatch, ratings=1_600_000, users=6040)
    assert not checks.aistats_ml1m_size(HERE, ctx, ratings=1_000_000, users=6000).ok
    # the shared copy: half the ratings, users.dat complete
    ctx = _ml1m(monkeypatch, ratings=487_650, users=6040)
    with pytest.raises(Missing, match=r"partial copy \(487,650 of the official 1,000,209.*6,040"):
        checks.aistats_ml1m_size(HERE, ctx, ratings=1_000_000, users=6000)
    # a wrong users.dat differs even when the ratings are partial
    ctx = _ml1m(monkeypatch, ratings=487_650, users=6900)
    outcome = checks.aistats_ml1m_size(HERE, ctx, ratings=1_000_000, users=6000)
    assert not outcome.ok and "6,900 users" in outcome.reason


def test_avazu_rows(tmp_path: Path) -> None:
    stats = tmp_path / "train.json"
    ctx = {"avazu_stats": str(stats)}
    stats.write_text(json.dumps({"rows": 40_428_967}))
    outcome = checks.avazu_rows(HERE, ctx, rows=40_000_000)
    assert outcome.ok and outcome.run_value == "40,428,967 rows"
    stats.write_text(json.dumps({"rows": 46_000_000}))
    assert not checks.avazu_rows(HERE, ctx, rows=40_000_000).ok
    stats.write_text(json.dumps({"rows": 9_999}))
    with pytest.raises(Missing, match=r"partial copy \(9,999 of the official 40,428,967"):
        checks.avazu_rows(HERE, ctx, rows=40_000_000)
    with pytest.raises(Missing, match=r"train\.json"):
        checks.avazu_rows(HERE, {}, rows=40_000_000)


def _checkins(path: Path, users: list[int], locations: list[int]) -> None:
    lines = [
        f"{u}\t2010-10-19T23:55:27Z\t30.2\t-97.7\t{loc}\n"
        for u, loc in zip(users, locations, strict=True)
    ]
    path.write_text("".join(lines))


def test_gowalla_size(tmp_path: Path, monkeypatch) -> None:
    """Six lines stand for the SNAP file (its official count patched to 6): exact counts pass,
    one location more fails, a shorter file and the derived sample are not run."""
    monkeypatch.setitem(OFFICIAL_ROW_COUNTS, ("gowalla", "checkins"), 6)
    path = tmp_path / "checkins.txt"
    ctx = {"wpm_gowalla_file": {"path": str(path), "source": "snap"}}
    _checkins(path, [0, 0, 1, 2, 2, 2], [7, 8, 7, 9, 9, 9])
    outcome = checks.gowalla_size(HERE, ctx, checkins=6, users=3, locations=3)
    assert outcome.ok and outcome.run_value == "6 check-ins from 3 users at 3 locations"
    _checkins(path, [0, 0, 1, 2, 2, 2], [7, 8, 7, 9, 9, 10])
    assert not checks.gowalla_size(HERE, ctx, checkins=6, users=3, locations=3).ok
    _checkins(path, [0, 0, 1], [7, 8, 7])
    with pytest.raises(Missing, match="partial copy"):
        checks.gowalla_size(HERE, ctx, checkins=6, users=3, locations=3)
    derived = {"wpm_gowalla_file": {"path": str(path), "source": "derived"}}
    with pytest.raises(Missing, match="derived sample"):
        checks.gowalla_size(HERE, derived, checkins=6, users=3, locations=3)


def _events(clicks_per_device: dict[str, int], *, sites: int = 3) -> pl.DataFrame:
    """One subcategory (C1 = 1): each device clicks round-robin over ``sites`` websites."""
    rows = [
        (device, f"s{k % sites}", 1)
        for device, clicks in clicks_per_device.items()
        for k in range(clicks)
    ]
    frame = pl.DataFrame(rows, schema=["device_id", "site_id", "click"], orient="row")
    return frame.with_columns(pl.lit(1).alias("C1"))


def test_click_rule_counts_devices_and_subcategories() -> None:
    """Three devices with 100, 50 and 20 clicks: ≥ 20 keeps 3, ≥ 100 keeps 1; a subcategory needs
    min_users devices; only clicks on the top websites count."""
    events = _events({"a": 100, "b": 50, "c": 20}).lazy()

    def kept(min_clicks: int, min_users: int, top_sites: int = 3) -> tuple[int, int]:
        row = checks.click_rule_counts(
            events,
            attributes=["C1"],
            top_sites=top_sites,
            min_clicks=min_clicks,
            min_users=min_users,
        ).row(0)
        return row[1], row[2]

    assert kept(20, 3) == (1, 3)
    assert kept(100, 1) == (1, 1)
    assert kept(100, 2) == (0, 0)
    assert kept(21, 3) == (0, 0)  # c has 20 clicks: one short
    # top 1 website (s0 has the most clicks: 34 + 17 + 7): a keeps 34, b 17, c 7
    assert kept(17, 1, top_sites=1) == (1, 2)


def test_avazu_click_rules_row(tmp_path: Path) -> None:
    path = tmp_path / "train.parquet"
    _events({"a": 100, "b": 50, "c": 20}).write_parquet(path)
    ctx = {"avazu_parquet": str(path), "avazu_attributes": ["C1"]}
    outcome = checks.avazu_click_rules(
        HERE, ctx, paper_clicks=20, poster_clicks=100, min_users=1, top_sites=100
    )
    assert outcome.run_value == (
        "paper (≥ 20 clicks): 1 subcategories, 3 device-subcategory pairs over 1 attributes; "
        "poster (≥ 100 clicks): 1 subcategories, 1 device-subcategory pairs over 1 attributes"
    )
    with pytest.raises(Missing, match="converted Avazu"):
        checks.avazu_click_rules(
            HERE, {}, paper_clicks=20, poster_clicks=100, min_users=1, top_sites=100
        )


@pytest.mark.skipif(not (SHARED / "papers").is_dir(), reason="the papers' text not found")
def test_click_rule_note_quotes_the_paper() -> None:
    """The poster row's note quotes the paper's rule verbatim (the source quotes the poster)."""
    claim = next(c for c in load_claims()[1] if c.id == "aistats_avazu_click_rule")
    quote = re.search(r'"([^"]+)"', claim.note)[1]
    text = re.sub(r"\s+", " ", (SHARED / "papers" / "000_904d48b38ce41b65.txt").read_text())
    assert quote in text
