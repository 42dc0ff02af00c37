"""Avazu conversion, histograms and the synthetic generator, against plain-Python references."""

from __future__ import annotations

import csv
import gzip
import io
import logging
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from real_data_oracle import HISTOGRAM_SCHEMA, avazu_user_matrix, build_avazu_histograms

from ldpsample.datasets import registry
from ldpsample.experiments.avazu.data import (
    AVAZU_ATTRIBUTES,
    AVAZU_COLUMNS,
    PLACEHOLDER_DEVICE_ID,
    convert_avazu_to_parquet,
    placeholder_share,
)
from ldpsample.experiments.avazu.synthetic import generate_avazu_like

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
REAL = SHARED / "avazu" / "train.gz"
needs_real = pytest.mark.skipif(
    not REAL.is_file(), reason=f"real Avazu prefix not found at {REAL} (../shared/data)"
)

DEFAULT_ROW = {
    "id": "1",
    "click": "0",
    "hour": "14102100",
    "C1": "1005",
    "banner_pos": "0",
    "site_id": "s0",
    "site_domain": "d",
    "site_category": "c",
    "app_id": "ecad2386",
    "app_domain": "7801e8d9",
    "app_category": "07d7df22",
    "device_id": "u0",
    "device_ip": "ip",
    "device_model": "m",
    "device_type": "1",
    "device_conn_type": "0",
    **{c: "0" for c in ("C14", "C15", "C16", "C17", "C18", "C19", "C20", "C21")},
}


def write_rows(path: Path, rows: list[dict[str, str]] | list[str], *, header=AVAZU_COLUMNS) -> Path:
    lines = [",".join(header)]
    for r in rows:
        lines.append(r if isinstance(r, str) else ",".join({**DEFAULT_ROW, **r}[c] for c in header))
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


# ---------------------------------------------------------------------------------------------
# plain-Python reference of the published code's rules
# ---------------------------------------------------------------------------------------------


def reference_histograms(
    csv_path: Path,
    attribute: str,
    *,
    top_sites=100,
    min_rows=20,
    min_users=100,
    user_activity="impressions",
    activity_scope="global",
    exclude_placeholder=False,
) -> dict[int, dict[str, Counter]]:
    """{subcategory: {device: Counter(site → impressions)}} with the csv module only."""
    opener = gzip.open if csv_path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(csv_path, "rt", newline="") as handle:
        rows = [
            (r["device_id"], r["site_id"], int(r["click"]), int(r[attribute]))
            for r in csv.DictReader(handle)
            if not (exclude_placeholder and r["device_id"] == PLACEHOLDER_DEVICE_ID)
        ]
    use_clicks = user_activity == "clicks"
    if activity_scope == "global":
        activity = Counter()
        for device, _, click, _ in rows:
            activity[device] += click if use_clicks else 1
        rows = [r for r in rows if activity[r[0]] >= min_rows]
    out = {}
    for value in sorted({r[3] for r in rows}):
        sub = [r for r in rows if r[3] == value]
        clicks = Counter()
        for _, site, click, _ in sub:
            clicks[site] += click
        ranked = sorted(clicks, key=lambda s: (-clicks[s], s))[:top_sites]
        hist: dict[str, Counter] = defaultdict(Counter)
        act: Counter = Counter()
        for device, site, click, _ in sub:
            if site in ranked:
                hist[device][site] += 1
                act[device] += click if use_clicks else 1
        if activity_scope == "top_sites":
            hist = {d: h for d, h in hist.items() if act[d] >= min_rows}
        if len(hist) >= min_users:
            out[value] = dict(hist)
    return out


def as_reference(frame: pl.DataFrame) -> dict[int, dict[str, Counter]]:
    out: dict[int, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for _, sub, device, site, count in frame.iter_rows():
        out[sub][device][site] = count
    return {k: dict(v) for k, v in out.items()}


@pytest.fixture(scope="module")
def real_parquet(tmp_path_factory):
    if not REAL.is_file():
        pytest.skip(f"real Avazu prefix not found at {REAL} (../shared/data)")
    dst = tmp_path_factory.mktemp("avazu") / "train.parquet"
    stats = convert_avazu_to_parquet(REAL, dst)
    return stats, dst


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synthetic")
    src = generate_avazu_like(folder / "train.gz", rows=30_000, seed=7, users=1500, sites=300)
    dst = folder / "train.parquet"
    convert_avazu_to_parquet(src, dst)
    return src, dst


# ---------------------------------------------------------------------------------------------
# the real 10,000-line prefix
# ---------------------------------------------------------------------------------------------


@pytest.mark.data
@needs_real
def test_real_prefix_converts_and_is_flagged_partial(real_parquet):
    stats, dst = real_parquet
    assert (stats.rows, stats.skipped_rows, stats.partial, stats.header_is_official) == (
        9_999,
        0,
        True,
        True,
    )
    frame = pl.read_parquet(dst)
    assert frame.columns == ["device_id", "site_id", "click", *AVAZU_ATTRIBUTES]
    assert frame["click"].sum() == 1_706  # 17.06 % (PROVENANCE.md)
    share = placeholder_share(dst)
    assert share["placeholder_rows"] == 8_723 and share["rows"] == 9_999


@pytest.mark.data
@needs_real
def test_real_prefix_defaults_keep_nothing(real_parquet, caplog):
    _, dst = real_parquet
    frame = build_avazu_histograms(dst, "C18")
    assert frame.height == 0 and frame.schema == pl.Schema(HISTOGRAM_SCHEMA)
    assert "no subcategory has at least 100 devices" in caplog.text


@pytest.mark.data
@needs_real
@pytest.mark.parametrize("attribute", ["C1", "C18", "C21"])
def test_real_prefix_only_the_placeholder_has_20_rows(real_parquet, attribute):
    _, dst = real_parquet
    frame = build_avazu_histograms(dst, attribute, min_users=1)
    assert frame["device_id"].unique().to_list() == [PLACEHOLDER_DEVICE_ID]
    assert as_reference(frame) == reference_histograms(REAL, attribute, min_users=1)
    excluded = build_avazu_histograms(dst, attribute, min_users=1, exclude_placeholder_device=True)
    assert excluded.height == 0  # nobody else reaches 20 rows


@pytest.mark.data
@needs_real
@pytest.mark.parametrize(
    "options",
    [
        {"min_rows": 3, "min_users": 5},
        {"min_rows": 3, "min_users": 5, "exclude_placeholder": True},
        {"min_rows": 2, "min_users": 3, "activity_scope": "top_sites"},
        {"min_rows": 1, "min_users": 2, "user_activity": "clicks", "top_sites": 5},
    ],
)
def test_real_prefix_matches_reference(real_parquet, options):
    _, dst = real_parquet
    kwargs = {k: v for k, v in options.items() if k != "exclude_placeholder"}
    kwargs["exclude_placeholder_device"] = options.get("exclude_placeholder", False)
    for attribute in ("C15", "C18", "C19"):
        frame = build_avazu_histograms(dst, attribute, **kwargs)
        assert as_reference(frame) == reference_histograms(REAL, attribute, **options)
        if kwargs["exclude_placeholder_device"]:
            assert PLACEHOLDER_DEVICE_ID not in frame["device_id"].to_list()
        assert frame.equals(frame.sort("subcategory", "device_id", "site_id"))


# ---------------------------------------------------------------------------------------------
# a generated file
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"min_users": 30},
        {"min_users": 30, "exclude_placeholder": True},
        {"min_rows": 5, "min_users": 10, "activity_scope": "top_sites", "top_sites": 20},
        {"min_rows": 3, "min_users": 10, "user_activity": "clicks"},
    ],
)
def test_generated_file_matches_reference(synthetic, options):
    src, dst = synthetic
    kwargs = {k: v for k, v in options.items() if k != "exclude_placeholder"}
    kwargs["exclude_placeholder_device"] = options.get("exclude_placeholder", False)
    for attribute in ("C1", "C18", "C21"):
        frame = build_avazu_histograms(dst, attribute, **kwargs)
        assert frame.height > 0
        assert as_reference(frame) == reference_histograms(src, attribute, **options)


def test_placeholder_exclusion_removes_exactly_its_rows(synthetic):
    _, dst = synthetic
    # With every site kept and no thresholds, excluding the placeholder only drops its rows.
    options = {"top_sites": 10_000, "min_rows": 1, "min_users": 1}
    kept = build_avazu_histograms(dst, "C18", **options)
    dropped = build_avazu_histograms(dst, "C18", exclude_placeholder_device=True, **options)
    assert PLACEHOLDER_DEVICE_ID in kept["device_id"].to_list()
    assert dropped.equals(kept.filter(pl.col("device_id") != PLACEHOLDER_DEVICE_ID))


def test_placeholder_clicks_decide_the_top_site(tmp_path):
    # The placeholder clicks site "b" three times; the two real users click "a" once each.
    rows = [
        {"device_id": PLACEHOLDER_DEVICE_ID, "site_id": "b", "click": "1"},
        {"device_id": PLACEHOLDER_DEVICE_ID, "site_id": "b", "click": "1"},
        {"device_id": PLACEHOLDER_DEVICE_ID, "site_id": "b", "click": "1"},
        {"device_id": "u1", "site_id": "a", "click": "1"},
        {"device_id": "u1", "site_id": "b"},
        {"device_id": "u2", "site_id": "a", "click": "1"},
        {"device_id": "u2", "site_id": "b"},
    ]
    dst = tmp_path / "t.parquet"
    convert_avazu_to_parquet(write_rows(tmp_path / "t.csv", rows), dst)
    options = {"top_sites": 1, "min_rows": 1, "min_users": 1}
    kept = build_avazu_histograms(dst, "C1", **options)
    dropped = build_avazu_histograms(dst, "C1", exclude_placeholder_device=True, **options)
    assert kept["site_id"].unique().to_list() == ["b"]
    assert dropped["site_id"].unique().to_list() == ["a"]


def test_ties_in_site_clicks_are_broken_by_site_id(tmp_path):
    rows = [{"device_id": f"u{i}", "site_id": s, "click": "1"} for i, s in enumerate("dcab")]
    dst = tmp_path / "t.parquet"
    convert_avazu_to_parquet(write_rows(tmp_path / "t.csv", rows), dst)
    frame = build_avazu_histograms(dst, "C1", top_sites=2, min_rows=1, min_users=1)
    assert sorted(frame["site_id"].unique().to_list()) == ["a", "b"]


def test_user_matrix_and_prior(tmp_path):
    rows = [
        {"device_id": "u1", "site_id": "a"},
        {"device_id": "u1", "site_id": "a"},
        {"device_id": "u1", "site_id": "b"},
        {"device_id": "u2", "site_id": "b", "click": "1"},
    ]
    dst = tmp_path / "t.parquet"
    convert_avazu_to_parquet(write_rows(tmp_path / "t.csv", rows), dst)
    frame = build_avazu_histograms(dst, "C1", min_rows=1, min_users=1)
    devices, sites, P = avazu_user_matrix(frame, 1005)
    assert devices.tolist() == ["u1", "u2"] and sites.tolist() == ["a", "b"]
    np.testing.assert_allclose(P, [[2 / 3, 1 / 3], [0, 1]])
    with pytest.raises(KeyError, match="subcategory 7"):
        avazu_user_matrix(frame, 7)


# ---------------------------------------------------------------------------------------------
# malformed input
# ---------------------------------------------------------------------------------------------


def test_wrong_column_count_raises_with_line(tmp_path):
    good = ",".join(DEFAULT_ROW[c] for c in AVAZU_COLUMNS)
    src = write_rows(tmp_path / "bad.csv.gz", [good, good, good + ",extra", good])
    with pytest.raises(ValueError, match=r"bad.csv.gz, line 4: expected 24 fields, got 25"):
        convert_avazu_to_parquet(src, tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.csv.gz"]  # no temporary left


def test_wrong_column_count_can_be_skipped_and_counted(tmp_path, caplog):
    good = ",".join(DEFAULT_ROW[c] for c in AVAZU_COLUMNS)
    short = ",".join(DEFAULT_ROW[c] for c in AVAZU_COLUMNS[:10])
    bad_value = ",".join({**DEFAULT_ROW, "C14": "x1"}[c] for c in AVAZU_COLUMNS)
    src = write_rows(tmp_path / "bad.csv", [good, short, good, "", good, bad_value])
    with pytest.raises(ValueError, match=r"bad.csv, line 7, column 'C14': expected an integer"):
        # Lines 3 and 5 are skipped; the error line still counts them.
        convert_avazu_to_parquet(src, tmp_path / "out.parquet", on_bad_rows="skip")
    src = write_rows(tmp_path / "bad.csv", [good, short, good, "", good])
    stats = convert_avazu_to_parquet(src, tmp_path / "out.parquet", on_bad_rows="skip")
    assert (stats.rows, stats.skipped_rows) == (3, 2)
    assert "line 3: skipped a row with 10 fields instead of 24" in caplog.text
    assert "line 5: skipped an empty line" in caplog.text
    src = write_rows(tmp_path / "bad.csv", [good, "", good])
    with pytest.raises(ValueError, match=r"bad.csv, line 3: empty line"):
        convert_avazu_to_parquet(src, tmp_path / "out.parquet")


@pytest.mark.parametrize("split", [False, True], ids=["one block", "data row in the next block"])
def test_empty_lines_at_the_end_are_ignored(tmp_path, caplog, split):
    """Harmless at the end (not counted as skipped); followed by data, still a malformed row,
    also when the empty lines end one block and the data row starts the next."""
    caplog.set_level(logging.INFO, logger="ldpsample.experiments.avazu.data")
    good = ",".join(DEFAULT_ROW[c] for c in AVAZU_COLUMNS)
    # header, 20 rows and the 2 empty lines fill the first block exactly
    block_size = len(",".join(AVAZU_COLUMNS)) + 1 + 20 * (len(good) + 1) + 2 if split else 1 << 20
    src = write_rows(tmp_path / "t.csv", [good] * 20 + ["", ""])
    stats = convert_avazu_to_parquet(src, tmp_path / "out.parquet", block_size=block_size)
    assert (stats.rows, stats.skipped_rows) == (20, 0)
    assert "ignored 2 empty line(s) at the end of the file (from line 22)" in caplog.text
    src = write_rows(tmp_path / "t.csv", [good] * 20 + ["", "", good])
    with pytest.raises(ValueError, match=r"t.csv, line 22: empty line"):
        convert_avazu_to_parquet(src, tmp_path / "out.parquet", block_size=block_size)
    stats = convert_avazu_to_parquet(
        src, tmp_path / "out.parquet", block_size=block_size, on_bad_rows="skip"
    )
    assert (stats.rows, stats.skipped_rows) == (21, 2)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"C14": "15a06"}, r"line 3, column 'C14': expected an integer, got '15a06'"),
        ({"C18": ""}, r"line 3, column 'C18': expected an integer, got ''"),
        ({"click": "2"}, r"line 3, column 'click': expected 0 or 1, got 2"),
        ({"click": "yes"}, r"line 3, column 'click': expected an integer, got 'yes'"),
        ({"device_id": ""}, r"line 3, column 'device_id': empty value"),
        ({"C1": "99999999999999999999"}, r"column 'C1': integer out of range"),
    ],
)
def test_bad_values_raise_with_line_and_column(tmp_path, override, message):
    src = write_rows(tmp_path / "bad.csv", [{}, override, {}])
    with pytest.raises(ValueError, match=message):
        convert_avazu_to_parquet(src, tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


def test_header_missing_file_and_truncated_gzip(tmp_path):
    header = [c for c in AVAZU_COLUMNS if c != "C17"]
    src = write_rows(tmp_path / "h.csv", [{}], header=header)
    with pytest.raises(ValueError, match=r"h.csv, line 1: the header lacks the columns \['C17'\]"):
        convert_avazu_to_parquet(src, tmp_path / "out.parquet")
    with pytest.raises(FileNotFoundError, match=r"Avazu file not found: .*nope\.gz"):
        convert_avazu_to_parquet(tmp_path / "nope.gz", tmp_path / "out.parquet")
    with pytest.raises(FileNotFoundError, match="Avazu parquet not found"):
        build_avazu_histograms(tmp_path / "nope.parquet", "C1")
    full = write_rows(tmp_path / "t.gz", [{"id": str(i)} for i in range(5000)]).read_bytes()
    (tmp_path / "cut.gz").write_bytes(full[: len(full) // 2])
    with pytest.raises(ValueError, match=r"cut\.gz"):
        convert_avazu_to_parquet(tmp_path / "cut.gz", tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


def test_empty_subcategories_are_skipped_and_logged(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    rows = [{"device_id": f"u{i}", "C18": "1"} for i in range(3)] + [
        {"device_id": "u0", "C18": "2"}
    ]
    dst = tmp_path / "t.parquet"
    convert_avazu_to_parquet(write_rows(tmp_path / "t.csv", rows), dst)
    frame = build_avazu_histograms(dst, "C18", min_rows=1, min_users=2)
    assert frame["subcategory"].unique().to_list() == [1]
    assert "C18: 2 subcategories; 1 kept, 1 skipped (1 with devices but fewer" in caplog.text
    frame = build_avazu_histograms(dst, "C18", min_rows=5, min_users=1)
    assert frame.height == 0 and frame.schema == pl.Schema(HISTOGRAM_SCHEMA)
    assert "2 with no device left after the activity filter" in caplog.text


def test_empty_file_gives_empty_parquet(tmp_path):
    stats = convert_avazu_to_parquet(write_rows(tmp_path / "e.csv", []), tmp_path / "e.parquet")
    assert stats.rows == 0
    assert build_avazu_histograms(tmp_path / "e.parquet", "C1").height == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"attribute": "C2"}, "attribute must be one of"),
        ({"top_sites": 0}, "top_sites must be a positive integer, got 0"),
        ({"min_users": 1.5}, "min_users must be a positive integer"),
        ({"user_activity": "rows"}, "user_activity must be"),
        ({"activity_scope": "site"}, "activity_scope must be"),
        ({"site_rank_by": "ctr"}, "site_rank_by must be"),
    ],
)
def test_bad_histogram_options(tmp_path, kwargs, message):
    kwargs = {"attribute": "C1", **kwargs}
    with pytest.raises(ValueError, match=message):
        build_avazu_histograms(tmp_path / "x.parquet", **kwargs)


# ---------------------------------------------------------------------------------------------
# generator
# ---------------------------------------------------------------------------------------------


def test_generator_is_seeded_and_avazu_shaped(tmp_path):
    a = generate_avazu_like(tmp_path / "a.csv", rows=20_000, seed=3, chunk_rows=7_000)
    b = generate_avazu_like(tmp_path / "b.csv", rows=20_000, seed=3, chunk_rows=7_000)
    c = generate_avazu_like(tmp_path / "c.csv", rows=20_000, seed=4, chunk_rows=7_000)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    text = a.read_text()
    assert text.splitlines()[0] == ",".join(AVAZU_COLUMNS)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 20_000
    assert all(len(r) == 24 for r in rows[:100])
    clicks = np.mean([int(r["click"]) for r in rows])
    placeholder = np.mean([r["device_id"] == PLACEHOLDER_DEVICE_ID for r in rows])
    assert 0.14 < clicks < 0.20 and 0.77 < placeholder < 0.83
    assert rows[0]["hour"] == "14102100" and rows[-1]["hour"] == "14103023"
    devices = Counter(r["device_id"] for r in rows if r["device_id"] != PLACEHOLDER_DEVICE_ID)
    assert max(devices.values()) >= 20 and sorted(devices.values())[len(devices) // 2] <= 2
    assert {len(Counter(r[c] for r in rows)) for c in ("C1", "C18")} <= {4, 7}


def test_generator_gzip_and_options(tmp_path):
    path = generate_avazu_like(tmp_path / "t.gz", rows=1000, seed=1, attributes=3)
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    stats = convert_avazu_to_parquet(path, tmp_path / "t.parquet")
    assert stats.rows == 1000 and stats.header_is_official
    frame = pl.read_parquet(tmp_path / "t.parquet")
    assert all(frame[c].n_unique() <= 3 for c in AVAZU_ATTRIBUTES)
    with pytest.raises(ValueError, match="unknown attributes"):
        generate_avazu_like(tmp_path / "x.csv", rows=10, seed=1, attributes={"C2": 3})
    with pytest.raises(ValueError, match="rows must be a non-negative integer"):
        generate_avazu_like(tmp_path / "x.csv", rows=-1, seed=1)


def test_the_registry_spells_the_avazu_names_the_reader_uses():
    """The workflow reads the attribute names and the placeholder device from the light
    registry at parse time; they are the reader's (one list, not two that drift apart)."""
    assert registry.AVAZU_ATTRIBUTES == AVAZU_ATTRIBUTES
    assert registry.AVAZU_PLACEHOLDER_DEVICE_ID == PLACEHOLDER_DEVICE_ID
