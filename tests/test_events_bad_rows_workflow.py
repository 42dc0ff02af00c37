"""Faulty rows of an events table through Snakemake in a temporary copy of the project: each fault
(a field missing or one too many, an unclosed quote, a null attribute value, a null user with
``on_null: error``, a negative weight) stops its job with the file, line and value on the console
that Snakemake prints, for one CSV file, a folder of CSV files and the map/reduce path's split
job; ``on_bad_rows: skip`` counts the skipped rows per cause on the console and gives the results
of the table without them; the jobs' progress lines reach the console too. One run
(``--keep-going``) holds every entry: the faulty ones fail, the skipped ones beside them do not."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _workflow import OTHERS_OFF, copy_workflow, events_entry, snakemake, write_config

pytestmark = pytest.mark.workflow

HEADER = "user_id,item_id,n,country\n"


def clean_rows(users: int = 30, seed: int = 3) -> list[str]:
    """CSV lines (no header) of a small events table: users with a country, weighted items."""
    rng = np.random.default_rng(seed)
    lines = []
    for u in range(users):
        for _ in range(int(rng.integers(4, 9))):
            lines.append(
                f"u{u:03d},i{rng.integers(0, 5)},{rng.integers(1, 4)},{['de', 'fr'][u % 2]}\n"
            )
    return lines


#: Faulty lines inserted after the clean line of the same index, with the cause and the text a
#: message must show.
FAULTS = {
    "missing-field": (5, "u001,i2,3\n", "line 7: missing field in 'u001,i2,3'"),
    "extra-field": (8, "u002,i1,1,de,x\n", "line 10: extra field in 'u002,i1,1,de,x'"),
    "null-attribute": (
        10,
        "u003,i3,2,\n",
        "data row 11 (line 12 of a CSV with a header): country=None in {",
    ),
    "negative": (12, "u004,i0,-2,de\n", "data row 13 (line 14 of a CSV with a header): n='-2' in"),
    "unclosed-quote": (14, 'u005,"i1,2,fr\n', "line 16: unclosed quote in 'u005,\"i1,2,fr'"),
    "null-user": (3, ",i1,2,de\n", "data row 4 (line 5 of a CSV with a header): user_id=None in"),
}


def with_faults(lines: list[str], *names: str) -> str:
    """The CSV text with the named faulty lines inserted (later indices first)."""
    out = list(lines)
    for name in sorted(names, key=lambda n: -FAULTS[n][0]):
        index, line, _ = FAULTS[name]
        out.insert(index, line)
    return HEADER + "".join(out)


def entry(path, **changes):
    return events_entry(
        path,
        **{
            "attributes": ["country"],
            "top_items": 4,
            "min_user_count": 1,
            "min_users": 2,
            "epsilons": [1],
            "methods": ["minimax"],
            "buckets": 1,
            **changes,
        },
    )


#: The tables of an entry that ``on_bad_rows: skip`` must leave as those of the clean table
#: (the run's targets: no figure is asked for).
TABLES = ("max_tv.csv", "summary.csv", "subcategories.csv")


def fault_entries(wd) -> tuple[dict, dict]:
    """Entries whose job must stop on a fault, with the text its console line must show: each
    fault in a CSV file of its own, a folder of CSV files and the map/reduce path."""
    lines = clean_rows()
    events = {}
    expected = {}
    for name in FAULTS:
        path = f"data/{name}.csv"
        (wd / path).write_text(with_faults(lines, name))
        events[f"one-{name}"] = entry(path, on_null="error")
        expected[f"one-{name}"] = f"{path}, {FAULTS[name][2]}"
    # a folder of CSV files: the fault is in its second file, named with its own line
    folder = wd / "data/folder"
    folder.mkdir()
    (folder / "a.csv").write_text(HEADER + "".join(lines[:20]))
    (folder / "b.csv").write_text(HEADER + "u009,i1\n" + "".join(lines[20:]))
    events["folder"] = entry("data/folder")
    expected["folder"] = "data/folder/b.csv, line 2: missing field in 'u009,i1'"
    # the map/reduce path (two buckets): the split job of that file says the same, and an
    # unclosed quote, which polars cannot read, stops the buckets' sample naming its line
    events["buckets"] = entry("data/folder", buckets=2)
    expected["buckets"] = expected["folder"]
    quoted = wd / "data/quoted"
    quoted.mkdir()
    (quoted / "a.csv").write_text(HEADER + "".join(lines[:20]))
    (quoted / "b.csv").write_text(HEADER + "".join(lines[20:24]) + 'u009,"i1,2,de\n')
    events["buckets-quote"] = entry("data/quoted", buckets=2)
    expected["buckets-quote"] = "data/quoted/b.csv, line 6: unclosed quote in 'u009,\"i1,2,de'"
    return events, expected


#: Clean lines of the skipped entries' tables.
SKIP_LINES = clean_rows(seed=5)


def skip_entries(wd) -> dict:
    """``on_bad_rows: skip`` on a CSV file and on a folder split into buckets, and the clean
    table they must equal."""
    lines = SKIP_LINES
    skippable = ["missing-field", "extra-field", "null-attribute", "negative"]
    (wd / "data/skip.csv").write_text(with_faults(lines, *skippable))
    (wd / "data/clean.csv").write_text(HEADER + "".join(lines))
    split = wd / "data/split"
    split.mkdir()
    (split / "a.csv").write_text(with_faults(lines[:18], "missing-field", "extra-field"))
    (split / "b.csv").write_text(HEADER + "".join(lines[18:]))
    return {
        "skipped": entry("data/skip.csv", on_bad_rows="skip"),
        "clean": entry("data/clean.csv"),
        "split": entry("data/split", on_bad_rows="skip", buckets=2),
    }


@pytest.fixture(scope="module")
def bad_rows_run(tmp_path_factory):
    """One Snakemake run of every entry (the faults' and the skipped ones'; the other stages
    off), with --keep-going, so that every entry's jobs run and one console shows every
    entry's error and every skip: (workflow copy, CompletedProcess, console, fault messages,
    skip entries)."""
    wd = copy_workflow(tmp_path_factory.mktemp("bad-rows") / "wf")
    (wd / "data").mkdir()
    faults, expected = fault_entries(wd)
    skips = skip_entries(wd)
    events = {**faults, **skips}
    config = write_config(wd, "bad-rows", {**OTHERS_OFF, "events": events})
    targets = [f"results/events/{name}/{table}" for name in events for table in TABLES]
    # targets before --configfile, which takes every path after it
    proc = snakemake(wd, "-c2", *targets, "--keep-going", "--configfile", config, check=False)
    return wd, proc, proc.stdout + proc.stderr, expected, skips


def failed_jobs(console: str) -> list[str]:
    """The console's lines of failed jobs (``  <rule> (<log>): <first error line>``)."""
    return [line for line in console.splitlines() if line.startswith("  events_")]


def test_each_fault_stops_with_file_line_and_value_on_the_console(bad_rows_run):
    workdir, proc, console, expected, _ = bad_rows_run
    assert proc.returncode != 0
    for name, message in expected.items():
        assert message in console, (name, message, console[-3000:])
    assert "on_bad_rows: skip skips them" in console
    failed = failed_jobs(console)
    assert any(
        line.startswith("  events_split (") and expected["buckets"] in line for line in failed
    ), failed
    # nothing of a failed entry is published
    for name in expected:
        assert not (workdir / f"results/events/{name}/max_tv.csv").exists()


def test_skip_counts_each_cause_on_the_console_and_equals_the_table_without_them(bad_rows_run):
    workdir, _, console, _, skips = bad_rows_run
    # no job of these entries failed (the run's failures are the faults' entries')
    for name in skips:
        own = re.compile(rf"\(logs/[^/ ]+/{re.escape(name)}[/.]")
        assert not [line for line in failed_jobs(console) if own.search(line)], console[-3000:]
    assert (
        "data/skip.csv: skipped 2 rows (1 with a field missing, 1 with one too many; first at "
        "line 7: 'u001,i2,3'; events.skipped.on_bad_rows: skip)" in console
    )
    assert (
        "data/skip.csv: skipped rows: 1 with a negative 'n', 1 with a null 'country' "
        "(events.skipped.on_bad_rows: skip" in console
    )
    assert (
        "data/split/a.csv: skipped 2 rows (1 with a field missing, 1 with one too many" in console
    )
    results = workdir / "results/events"
    for table in TABLES:
        clean = (results / "clean" / table).read_text().replace("clean", "NAME")
        assert (results / "skipped" / table).read_text().replace("skipped", "NAME") == clean
        assert (results / "split" / table).read_text().replace("split", "NAME") == clean
    # progress reaches the console: each scan's phase with the table's rows and their rate,
    # and the split job's batches
    scan = "events.clean: scanning data/clean.csv: checks and the 'country' aggregate"
    assert f"{scan} ..." in console
    assert re.search(
        rf"{re.escape(scan)}: done in [\d.]+ s, {len(SKIP_LINES)} rows \([\d,]+ rows/s\)", console
    )
    split_rows = len(SKIP_LINES) - 18  # b.csv: the clean lines after the first 18
    assert re.search(
        rf"events\.split: splitting data/split/b\.csv into 2 buckets: done in [\d.]+ s, "
        rf"{split_rows} rows \([\d,]+ rows/s\)",
        console,
    ), console[-3000:]
