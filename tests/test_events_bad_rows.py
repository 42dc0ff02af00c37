"""Faulty rows of an events table in the library: a CSV's records with a field missing or one too
many and unclosed quotes (events/reading/csv_lines.py, exact rows and lines, multi-line quoted
fields, and a hypothesis property against the csv module of the standard library), their skip giving
the table without them, and the value faults' messages and counts
(events/reading/table_checks.py)."""

from __future__ import annotations

import csv
import io
import logging

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpsample.events.counting.histograms import build_event_histograms
from ldpsample.events.options import EventsOptions
from ldpsample.events.reading.csv_lines import csv_faults
from ldpsample.events.reading.scan import EventsTableError, scan_events

COLUMNS = [("user", "k.user"), ("item", "k.item"), ("genre", "k.attributes")]


def write(tmp_path, text, name="t.csv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_faulty_records_exact_rows_and_first_line(tmp_path):
    path = write(
        tmp_path,
        'user,item,genre,count\nu1,m1,a,1\nu2,m2\nu3,m3,b,1,9\nu4,"m,4",,1\n\nu6,m6,c,1\n',
    )
    faults = csv_faults(path, separator=",")
    assert faults.fields == 4
    assert faults.missing.tolist() == [1, 4]  # u2's row and the blank line
    assert faults.extra.tolist() == [2]
    assert faults.first == ("missing field", 3, "u2,m2")
    assert not faults.unclosed


def test_a_quoted_field_over_lines_is_one_record_named_by_its_first_line(tmp_path):
    path = write(tmp_path, 'user,item,genre\nu1,"m1\nx",a\nu3,m3,b\nu4,"a\nb\nc,d",x,y\nu5\n')
    faults = csv_faults(path, separator=",")
    # data rows: u1 (0), u3 (1), u4 (2, one too many), u5 (3, missing): as polars reads them
    assert faults.extra.tolist() == [2] and faults.missing.tolist() == [3]
    assert faults.first == ("extra field", 5, 'u4,"a\nb\nc,d",x,y')
    read = pl.read_csv(path, truncate_ragged_lines=True)
    assert read["user"].to_list() == ["u1", "u3", "u4", "u5"]


@pytest.mark.parametrize("line", ['u2,"m2,b', 'u2,m"2,b'])
def test_an_unclosed_quote_stops_even_with_skip(tmp_path, line):
    path = write(tmp_path, f"user,item,genre\nu1,m1,a\n{line}\nu3,m3,b\n")
    faults = csv_faults(path, separator=",")
    assert faults.unclosed and faults.first == ("unclosed quote", 3, line)
    for mode in ("error", "skip"):
        with pytest.raises(EventsTableError, match=r"t\.csv, line 3: unclosed quote in "):
            scan_events(path, COLUMNS, key="events.k.path", on_bad_rows=mode)


def test_a_clean_file_has_no_faults_and_reads_as_before(tmp_path):
    path = write(tmp_path, 'user,item,genre\nu1,"m,1",a\nu2,"say ""hi""",b\n')
    assert csv_faults(path, separator=",").first is None
    assert scan_events(path, COLUMNS, key="k").collect().equals(pl.read_csv(path))


records = st.lists(
    st.tuples(
        st.sampled_from(["ok", "short", "long"]),
        st.text("ab, \n\"'", min_size=0, max_size=6),
    ),
    min_size=1,
    max_size=25,
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(rows=records)
def test_faults_match_the_standard_csv_module_and_skip_leaves_the_good_rows(tmp_path_factory, rows):
    """Records written by csv.writer (quoting what needs it: separators, quotes, newlines inside
    a field), some with a field dropped or added: csv_faults finds exactly those, by their data
    row, and the skipped scan holds exactly the others."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["user", "item", "genre"])
    good = []
    for index, (kind, text) in enumerate(rows):
        fields = [f"u{index}", text or "x", "g"]
        if kind == "short":
            fields = fields[:2]
        elif kind == "long":
            fields = [*fields, "extra"]
        else:
            good.append(fields)
        writer.writerow(fields)
    path = write(tmp_path_factory.mktemp("csv"), buffer.getvalue())
    faults = csv_faults(path, separator=",")
    assert faults.missing.tolist() == [i for i, (k, _) in enumerate(rows) if k == "short"]
    assert faults.extra.tolist() == [i for i, (k, _) in enumerate(rows) if k == "long"]
    assert not faults.unclosed
    kept = scan_events(path, COLUMNS, key="events.k.path", on_bad_rows="skip").collect()
    assert kept.rows() == [tuple(f) for f in good]
    if faults.first is not None:
        with pytest.raises(EventsTableError, match=r"t\.csv, line \d+: (missing|extra) field"):
            scan_events(path, COLUMNS, key="events.k.path")


OPTIONS = dict(
    key="events.k",
    user="user",
    item="item",
    count="n",
    attributes=["genre"],
    min_user_count=0,
    min_users=1,
)


def test_value_faults_name_the_first_and_count_every_cause(tmp_path, caplog):
    text = "user,item,genre,n\nu1,m1,a,1\nu2,m2,b,x\nu3,m3,,1\nu4,m4,b,-2\nu5,m5,b,-1\n"
    path = write(tmp_path, text)
    with pytest.raises(EventsTableError) as info:
        build_event_histograms(EventsOptions(path=path, **OPTIONS))
    first = str(info.value).splitlines()[0]
    assert first.startswith(
        f"{path}, data row 2 (line 3 of a CSV with a header): n='x' in "
        "{'user': 'u2', 'item': 'm2', 'n': 'x', 'genre': 'b'}: column 'n' (config key "
        "events.k.count) must hold numbers; 1 such rows, 2 with a negative 'n', 1 with a null "
        "'genre' (events.k.on_bad_rows: skip skips them)"
    )
    with caplog.at_level(logging.WARNING):
        skipped = build_event_histograms(EventsOptions(path=path, **OPTIONS, on_bad_rows="skip"))
    assert (
        f"{path}: skipped rows: 1 with a missing or non-numeric 'n', 2 with a negative 'n', 1 "
        "with a null 'genre'" in caplog.text
    )
    clean = build_event_histograms(
        EventsOptions(path=write(tmp_path, "user,item,genre,n\nu1,m1,a,1\n", "c.csv"), **OPTIONS)
    )
    assert skipped.histograms.equals(clean.histograms)


def test_a_negative_weight_in_parquet_names_its_row_without_a_line(tmp_path):
    path = tmp_path / "e.parquet"
    pl.DataFrame(
        {"user": ["u1", "u2"], "item": ["a", "b"], "n": [1.0, -3.0], "genre": "g"}
    ).write_parquet(path)
    with pytest.raises(
        EventsTableError, match=rf"^{path}, data row 2: n='-3.0' in .* must be >= 0"
    ):
        build_event_histograms(EventsOptions(path=path, **OPTIONS))


def test_on_bad_rows_must_be_error_or_skip(tmp_path):
    path = write(tmp_path, "user,item,genre,n\nu1,m1,a,1\n")
    with pytest.raises(ValueError, match=r"config key events\.k\.on_bad_rows: 'drop' is not"):
        build_event_histograms(EventsOptions(path=path, **OPTIONS, on_bad_rows="drop"))


def test_a_gzipped_csv_names_the_same_faults(tmp_path):
    import gzip

    text = "user,item,genre\nu1,m1,a\nu2,m2\nu3,m3,b,x\n"
    path = tmp_path / "t.csv.gz"
    path.write_bytes(gzip.compress(text.encode()))
    faults = csv_faults(str(path), separator=",")
    assert faults.missing.tolist() == [1] and faults.extra.tolist() == [2]
    with pytest.raises(EventsTableError, match=r"t\.csv\.gz, line 3: missing field in 'u2,m2'"):
        scan_events(str(path), COLUMNS, key="events.k.path")
    kept = scan_events(str(path), COLUMNS, key="events.k.path", on_bad_rows="skip").collect()
    assert kept.rows() == [("u1", "m1", "a")]


def test_an_unreadable_file_suggests_no_reader_option(tmp_path):
    """polars' own advice (truncate_ragged_lines, ignore_errors) is no config key: only the
    first line of its error is shown."""
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1 not a parquet file")
    with pytest.raises(EventsTableError) as info:
        build_event_histograms(EventsOptions(path=path, **OPTIONS))
    message = str(info.value)
    assert message.startswith(f"{path}: cannot read the events table (config key events.k.path)")
    assert "\n" not in message and "Consider" not in message


def test_a_null_user_after_skipped_records_is_named_by_its_own_line(tmp_path, caplog):
    """Rows left out by a skip do not shift the line that names a later fault, in any file."""
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text("user,item,genre,n\nu1,m1,a,1\nu2,m2,a,1,9\n")
    (folder / "b.csv").write_text("user,item,genre,n\nu3,m1\nu4,m2,a,1\n,m3,a,1\n")
    with caplog.at_level(logging.WARNING):
        build_event_histograms(EventsOptions(path=folder, **OPTIONS, on_bad_rows="skip"))
    assert (
        f"dropped 1 rows with a null user (column 'user'; events.k.on_null: drop), the first at "
        f"{folder / 'b.csv'}, data row 3 (line 4 of a CSV with a header): user=None in "
        in caplog.text
    )
