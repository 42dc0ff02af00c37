"""The papers' data-size statements and the poster's Avazu click rule, against the files this run
read.

* :func:`aistats_ml100k_size`, :func:`aistats_ml1m_size` -- the AISTATS paper's §5.4 sentence
  "The MovieLens 100K and MovieLens 1M datasets contain 100,000 and 1 million ratings,
  respectively, provided by 1,000 and 6,000 users" (000_904d48b38ce41b65.txt) against the
  MovieLens files the MovieLens stage read (context key ``movielens_files``);
* :func:`avazu_rows` -- §5.3's "The dataset contains 40M rows" against the Avazu conversion's
  ``train.json`` (context key ``avazu_stats``);
* :func:`gowalla_size` -- the WPM paper's Appendix N "Gowalla dataset [cho2011friendship]
  contains 6,442,892 check-ins from 196,591 users at 1,280,969 locations"
  (001_520e0969f7c94e6f.txt) against the SNAP check-in file the WPM Gowalla stage read
  (context key ``wpm_gowalla_file``);
* :func:`avazu_click_rules` -- what the poster's "at least 100 clicks" rule
  (004_5160668ac1105b3d.txt) and the paper's "users with at least 20 clicks on these websites
  ... subcategories with at least 100 users" (000_904d48b38ce41b65.txt, §5.3) each keep of the
  converted Avazu file (context key ``avazu_parquet``).

A printed round figure matches when the run's count, rounded at the printed figure's last
non-zero digit, gives it (943 users print as 1,000; 40,428,967 rows as 40M); an exact figure
(100,000 ratings, 6,442,892 check-ins) must match exactly. A copy with fewer rows than the
official release (:data:`ldpsample.datasets.registry.OFFICIAL_ROW_COUNTS`, the rule the readers
use to flag a PARTIAL copy) cannot show the full size: the row is ``not run`` with the count the
copy holds, after every part the copy does allow is checked (ML-1M's ``users.dat`` is complete
in the shared copy, so its users are checked even when its ratings are not).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from ldpsample.datasets.registry import OFFICIAL_ROW_COUNTS
from ldpsample.experiments.movielens.data import read_ml1m, read_ml100k
from ldpsample.reproduction.outcome import Missing, Outcome

__all__ = [
    "aistats_ml1m_size",
    "aistats_ml100k_size",
    "avazu_click_rules",
    "avazu_rows",
    "click_rule_counts",
    "gowalla_size",
    "rounds_at_last_digit",
]

DOC = "docs/reproduction.md#data-sizes"


def rounds_at_last_digit(value: int, printed: int) -> bool:
    """``value`` rounded at ``printed``'s last non-zero digit gives ``printed`` (943 -> 1000,
    6,040 -> 6,000, 40,428,967 -> 40,000,000; 100,000 takes [50,000, 150,000))."""
    step = 10 ** (len(str(printed)) - len(str(printed).rstrip("0")))
    return int(value + step // 2) // step * step == printed


def _movielens_files(ctx: Mapping[str, object], dataset: str) -> Mapping[str, str]:
    files = dict(ctx.get("movielens_files") or {}).get(dataset)
    if not files:
        raise Missing(f"the context has no {dataset} files (the MovieLens stage did not read it)")
    return files


def aistats_ml100k_size(
    results: Path, ctx: Mapping[str, object], *, ratings: int, users: int
) -> Outcome:
    """ML-100K's ratings (exact) and users (rounded) of §5.4 against the files the MovieLens
    stage read; ML-100K is complete in the shared copy, so nothing here is partial."""
    table = read_ml100k(_movielens_files(ctx, "ml-100k"))["ratings"]
    count, people = table.height, table["user_id"].n_unique()
    ok = count == ratings and rounds_at_last_digit(people, users)
    return Outcome(
        f"{count:,} ratings from {people:,} users",
        ok,
        f"the ML-100K files read hold {count:,} ratings from {people:,} users ({DOC})",
    )


def aistats_ml1m_size(
    results: Path, ctx: Mapping[str, object], *, ratings: int, users: int
) -> Outcome:
    """ML-1M's ratings and users of §5.4 (both round figures) against the files the MovieLens
    stage read: the users of ``users.dat`` always; the ratings only when the ratings file is
    not a partial copy (fewer lines than the official 1,000,209), else ``not run`` saying what
    was checked."""
    data = read_ml1m(_movielens_files(ctx, "ml-1m"))
    count, listed = data["ratings"].height, data["users"].height
    value = f"{count:,} ratings; {listed:,} users in users.dat"
    if not rounds_at_last_digit(listed, users):
        return Outcome(value, False, f"users.dat lists {listed:,} users ({DOC})")
    official = OFFICIAL_ROW_COUNTS[("ml-1m", "ratings")]
    if count < official:
        raise Missing(
            f"the ML-1M ratings file read is a partial copy ({count:,} of the official "
            f"{official:,} lines), so the 1 million ratings cannot be counted; its users.dat "
            f"(complete) lists {listed:,} users, which print as {users:,} ({DOC})"
        )
    return Outcome(value, rounds_at_last_digit(count, ratings), f"{count:,} ratings read ({DOC})")


def avazu_rows(results: Path, ctx: Mapping[str, object], *, rows: int) -> Outcome:
    """§5.3's 40M rows against the rows the Avazu conversion wrote (``train.json``); a copy
    with fewer rows than the official 40,428,967 is ``not run`` with its count."""
    stats = ctx.get("avazu_stats")
    if not stats or not Path(str(stats)).is_file():
        raise Missing("no Avazu conversion stats (train.json): the Kaggle file was not read")
    count = int(json.loads(Path(str(stats)).read_text())["rows"])
    official = OFFICIAL_ROW_COUNTS[("avazu", "train")]
    if count < official:
        raise Missing(
            f"the Avazu file read is a partial copy ({count:,} of the official {official:,} "
            f"rows), so the 40M rows cannot be counted ({DOC})"
        )
    return Outcome(
        f"{count:,} rows",
        rounds_at_last_digit(count, rows),
        f"the Avazu file read has {count:,} rows ({DOC})",
    )


def gowalla_size(
    results: Path, ctx: Mapping[str, object], *, checkins: int, users: int, locations: int
) -> Outcome:
    """Appendix N's Gowalla size (check-ins, users, locations, each exact) against the SNAP
    check-in file the WPM Gowalla stage read. The derived sample, or a SNAP file with fewer
    lines than the official 6,442,890, is ``not run`` with its counts. (SNAP's page states
    6,442,890 check-ins; the paper prints 6,442,892.)"""
    source = dict(ctx.get("wpm_gowalla_file") or {})
    if not source.get("path"):
        raise Missing("the context has no Gowalla file (the wpm_gowalla stage did not run)")
    if source.get("source") == "derived":
        raise Missing(
            f"the run read the derived sample {Path(str(source['path'])).name} (ids remapped, "
            f"filtered), not the SNAP file the sentence counts ({DOC})"
        )
    frame = (
        pl.scan_csv(
            source["path"],
            separator="\t",
            has_header=False,
            new_columns=["user", "time", "latitude", "longitude", "location"],
            schema_overrides={"user": pl.Int64, "location": pl.Int64},
        )
        .select(
            pl.len().alias("checkins"),
            pl.col("user").n_unique().alias("users"),
            pl.col("location").n_unique().alias("locations"),
        )
        .collect()
        .row(0, named=True)
    )
    value = (
        f"{frame['checkins']:,} check-ins from {frame['users']:,} users at "
        f"{frame['locations']:,} locations"
    )
    official = OFFICIAL_ROW_COUNTS[("gowalla", "checkins")]
    if frame["checkins"] < official:
        raise Missing(
            f"the Gowalla file read is a partial copy ({value}; SNAP's file has {official:,} "
            f"lines) ({DOC})"
        )
    ok = (frame["checkins"], frame["users"], frame["locations"]) == (checkins, users, locations)
    return Outcome(value, ok, f"the SNAP file read holds {value} ({DOC})")


def click_rule_counts(
    events: pl.LazyFrame,
    *,
    attributes: list[str],
    top_sites: int,
    min_clicks: int,
    min_users: int,
) -> pl.DataFrame:
    """Devices and subcategories kept by the text's rule, per attribute: in each subcategory
    (one value of the attribute) the ``top_sites`` websites with the most clicks (ties: the
    smaller ``site_id``), the devices with at least ``min_clicks`` clicks on those websites,
    the subcategories with at least ``min_users`` such devices.

    ``events`` has ``device_id``, ``site_id``, ``click`` (0/1) and the attribute columns.
    Returns ``attribute``, ``subcategories`` (kept), ``devices`` (kept, summed over the kept
    subcategories), one row per attribute in the order given.
    """
    rows = []
    for attribute in attributes:
        sites = (
            events.group_by(attribute, "site_id")
            .agg(pl.col("click").sum().alias("clicks"))
            .sort([attribute, "clicks", "site_id"], descending=[False, True, False])
            .group_by(attribute, maintain_order=True)
            .head(top_sites)
            .select(attribute, "site_id")
        )
        devices = (
            events.join(sites, on=[attribute, "site_id"], how="semi")
            .group_by(attribute, "device_id")
            .agg(pl.col("click").sum().alias("clicks"))
            .filter(pl.col("clicks") >= min_clicks)
            .group_by(attribute)
            .agg(pl.len().alias("devices"))
            .filter(pl.col("devices") >= min_users)
            .select(
                pl.len().alias("subcategories"),
                pl.col("devices").sum().alias("devices"),
            )
            .collect()
        )
        rows.append(
            {
                "attribute": attribute,
                "subcategories": int(devices["subcategories"][0]),
                "devices": int(devices["devices"][0] or 0),
            }
        )
    return pl.DataFrame(
        rows,
        schema={"attribute": pl.String, "subcategories": pl.Int64, "devices": pl.Int64},
    )


def avazu_click_rules(
    results: Path,
    ctx: Mapping[str, object],
    *,
    paper_clicks: int,
    poster_clicks: int,
    min_users: int,
    top_sites: int,
) -> Outcome:
    """Subcategories and devices kept under the paper's click threshold and under the poster's,
    on the converted Avazu file the run read, summed over the run's attributes. The poster's
    rule keeps a subset of the paper's (a device with 100 clicks has 20)."""
    parquet = ctx.get("avazu_parquet")
    if not parquet or not Path(str(parquet)).is_file():
        raise Missing("no converted Avazu file: the Kaggle file was not read")
    attributes = [str(a) for a in ctx.get("avazu_attributes") or []]
    events = pl.scan_parquet(str(parquet))
    shown = []
    for name, clicks in (("paper", paper_clicks), ("poster", poster_clicks)):
        counts = click_rule_counts(
            events,
            attributes=attributes,
            top_sites=top_sites,
            min_clicks=clicks,
            min_users=min_users,
        )
        shown.append(
            f"{name} (≥ {clicks} clicks): {counts['subcategories'].sum()} subcategories, "
            f"{counts['devices'].sum():,} device-subcategory pairs over "
            f"{len(attributes)} attributes"
        )
    return Outcome("; ".join(shown), True)
