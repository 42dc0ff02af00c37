"""A corpus of damaged raw files, each run through the rule that reads it (Snakemake on a fresh
workflow copy, ``data_dir`` pointing at a copy of ../shared/data with one file damaged): the
run fails with a message naming the file (and line where known), printed on the console (the
workflow's onerror handler quotes the first line of each failed job's error), and results/
holds nothing from the failed job. Trailing blank lines, harmless, are accepted."""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from _workflow import (
    EXPERIMENTS,
    SHARED_DATA,
    copy_workflow,
    requires_shared_data,
    snakemake,
    write_config,
)

pytestmark = [
    pytest.mark.workflow,
    pytest.mark.data,
    requires_shared_data("ml-1m", "ml-100k", "avazu", "gowalla"),
]

ALL_OFF = dict.fromkeys(EXPERIMENTS, False)
GOWALLA_SAMPLE = "loc-gowalla_totalCheckins.first-10000-lines.txt"
TARGETS = {
    "movielens": "results/movielens/events/ml-1m.parquet",
    "avazu": "results/avazu/cache/kaggle/train.parquet",
    "wpm_gowalla": "results/wpm_gowalla/checkins.parquet",
}


def _half(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _avazu_lines() -> list[bytes]:
    return gzip.decompress((SHARED_DATA / "avazu" / "train.gz").read_bytes()).split(b"\n")[:200]


def _without_site_id() -> bytes:
    lines = [line.split(b",") for line in _avazu_lines() if line]
    keep = [i for i, name in enumerate(lines[0]) if name != b"site_id"]
    return b"\n".join(b",".join(row[i] for i in keep) for row in lines) + b"\n"


def _bad_bytes() -> bytes:
    lines = _avazu_lines()
    lines[3] = lines[3].replace(b",", b",\xff\xfe", 1)
    return b"\n".join(lines)


def _u_data_with(line: bytes, *, at: int = 17) -> Callable[[], bytes]:
    """ML-100K's u.data with ``line`` inserted as line ``at``."""

    def make() -> bytes:
        lines = (SHARED_DATA / "ml-100k" / "u.data").read_bytes().splitlines(keepends=True)
        return b"".join([*lines[: at - 1], line + b"\n", *lines[at - 1 :]])

    return make


def _repeated(name: str, lines: int) -> Callable[[], bytes]:
    """A shared file followed by its first ``lines`` lines again (rows that must be unique)."""

    def make() -> bytes:
        data = (SHARED_DATA / name).read_bytes()
        return data + b"".join(data.splitlines(keepends=True)[:lines])

    return make


def _gowalla_lines() -> bytes:
    lines = (SHARED_DATA / "gowalla" / GOWALLA_SAMPLE).read_bytes().split(b"\n")[:3]
    return b"\n".join([*lines, b"0\t2010-10-19T23:55:27Z"]) + b"\n"


# (case id, experiment, file written under data_dir, its bytes, files removed, message)
CASES: list[tuple[str, str, str, Callable[[], bytes], tuple[str, ...], str]] = [
    (
        "ml-1m-truncated-gzip",
        "movielens",
        "ml-1m/ratings.dat.gz",
        lambda: _half((SHARED_DATA / "ml-1m" / "ratings.dat.gz").read_bytes()),
        (),
        "ml-1m/ratings.dat.gz, line 242924: truncated or corrupt gzip file",
    ),
    (
        "ml-1m-empty-file",
        "movielens",
        "ml-1m/ratings.dat",
        lambda: b"",
        ("ml-1m/ratings.dat.gz",),
        "ml-1m/ratings.dat: empty file",
    ),
    (
        "ml-1m-wrong-field-count",
        "movielens",
        "ml-1m/ratings.dat",
        lambda: b"1::1193::5::978300760\n1::661::3::978302109\n1::914::3\n",
        ("ml-1m/ratings.dat.gz",),
        "ml-1m/ratings.dat, line 3: expected 4 fields separated by '::', got 3: '1::914::3'",
    ),
    (
        "ml-100k-not-an-integer",
        "movielens",
        "ml-100k/u.data",
        lambda: b"196\t242\t3\t881250949\n186\t302\tthree\t891717742\n",
        (),
        "ml-100k/u.data, line 2, field 'rating': expected an integer, got 'three'",
    ),
    # official files: every value error names file, line and field; ids that must be unique are
    (
        "ml-100k-rating-99",
        "movielens",
        "ml-100k/u.data",
        _u_data_with(b"1\t1\t99\t881250949"),
        (),
        "ml-100k/u.data, line 17, field 'rating': 99 is not a rating (1-5; user 1, movie 1)",
    ),
    (
        "ml-100k-user-0",
        "movielens",
        "ml-100k/u.data",
        _u_data_with(b"0\t1\t3\t881250949"),
        (),
        "ml-100k/u.data, line 17, field 'user_id': 0 is not an id (ids are 1, 2, ...)",
    ),
    (
        "ml-100k-user-minus-5",
        "movielens",
        "ml-100k/u.data",
        _u_data_with(b"-5\t1\t3\t881250949"),
        (),
        "ml-100k/u.data, line 17, field 'user_id': -5 is not an id (ids are 1, 2, ...)",
    ),
    (
        "ml-100k-unknown-user",
        "movielens",
        "ml-100k/u.data",
        _u_data_with(b"944\t1\t3\t881250949"),
        (),
        "ml-100k/u.data, line 17, field 'user_id': user 944 is not listed in ",
    ),
    (
        "ml-100k-unknown-movie",
        "movielens",
        "ml-100k/u.data",
        _u_data_with(b"1\t1683\t3\t881250949"),
        (),
        "ml-100k/u.data, line 17, field 'movie_id': movie 1683 is not listed in ",
    ),
    (
        "ml-100k-1000-repeated-ratings",
        "movielens",
        "ml-100k/u.data",
        _repeated("ml-100k/u.data", 1000),
        (),
        "ml-100k/u.data, line 100001: user 196 rates movie 242 again (first on line 1)",
    ),
    (
        "ml-1m-repeated-user",
        "movielens",
        "ml-1m/users.dat",
        _repeated("ml-1m/users.dat", 1),
        (),
        "ml-1m/users.dat, line 6041: user 1 is listed again (first on line 1)",
    ),
    (
        "avazu-truncated-gzip",
        "avazu",
        "avazu/train.gz",
        lambda: _half((SHARED_DATA / "avazu" / "train.gz").read_bytes()),
        (),
        "avazu/train.gz: cannot read after line 1 (data row 0; corrupted or truncated file?)",
    ),
    (
        "avazu-missing-column",
        "avazu",
        "avazu/train.csv",
        _without_site_id,
        ("avazu/train.gz",),
        "avazu/train.csv, line 1: the header lacks the columns ['site_id']",
    ),
    (
        "avazu-undecodable-bytes",
        "avazu",
        "avazu/train.csv",
        _bad_bytes,
        ("avazu/train.gz",),
        "avazu/train.csv, line 4: cannot parse the CSV: In CSV column #1: Row #4",
    ),
    (
        "avazu-empty-file",
        "avazu",
        "avazu/train.csv",
        lambda: b"",
        ("avazu/train.gz",),
        "avazu/train.csv, line 1: empty file",
    ),
    (
        "gowalla-truncated-gzip",
        "wpm_gowalla",
        "gowalla/loc-gowalla_totalCheckins.txt.gz",
        lambda: _half(
            gzip.compress((SHARED_DATA / "gowalla" / GOWALLA_SAMPLE).read_bytes(), mtime=0)
        ),
        (),
        "gowalla/loc-gowalla_totalCheckins.txt.gz, line 4885: truncated or corrupt gzip file",
    ),
    (
        "gowalla-wrong-field-count",
        "wpm_gowalla",
        "gowalla/loc-gowalla_totalCheckins.txt",
        _gowalla_lines,
        (),
        "gowalla/loc-gowalla_totalCheckins.txt, line 4: expected 5 fields separated by '\\t'",
    ),
]


def _damaged_copy(root: Path, name: str, data: bytes, removed: tuple[str, ...]) -> Path:
    """A data_dir of symlinks to ../shared/data with ``name`` replaced by ``data``."""
    data_dir = root / "data"
    for folder in ("ml-1m", "ml-100k", "avazu", "gowalla"):
        (data_dir / folder).mkdir(parents=True)
        for src in (SHARED_DATA / folder).iterdir():
            relative = f"{folder}/{src.name}"
            keep = src.is_file() and relative not in removed and relative != name
            if keep and not (folder == "gowalla" and src.name.startswith("loc-")):
                os.symlink(src, data_dir / relative)
    (data_dir / name).write_bytes(data)
    return data_dir


@pytest.mark.parametrize(
    ("experiment", "name", "make", "removed", "message"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_damaged_file_fails_its_job_naming_the_file(
    tmp_path, experiment, name, make, removed, message
):
    data_dir = _damaged_copy(tmp_path, name, make(), removed)
    workdir = copy_workflow(tmp_path / "clone")
    changes = {"experiments": {**ALL_OFF, experiment: True}, "data_dir": str(data_dir)}
    if experiment == "wpm_gowalla":
        changes["wpm"] = {"gowalla": {"source": "snap"}}
    overlay = write_config(workdir, "damaged", changes)
    proc = snakemake(
        workdir, TARGETS[experiment], "--cores", "1", "--configfile", overlay, check=False
    )
    assert proc.returncode != 0
    # the cause is on the console, not only in the job's log (Snakemake prints its path)
    assert "Why the failed job(s) failed" in proc.stderr, proc.stderr[-3000:]
    causes = proc.stderr.split("Why the failed job(s) failed", 1)[1]
    assert f"{data_dir}/{message}" in causes, causes
    results = workdir / "results"
    left = [p for p in results.rglob("*") if p.is_file()] if results.exists() else []
    assert left == []


# (experiment, file under data_dir, files removed, blank lines appended): MovieLens and Gowalla
# ignore lines of white space anywhere, Avazu's CSV empty lines at its end
BLANK_LINE_CASES = [
    ("movielens", "ml-100k/u.data", (), b"\n \n"),
    ("avazu", "avazu/train.csv", ("avazu/train.gz",), b"\n\n"),
    ("wpm_gowalla", f"gowalla/{GOWALLA_SAMPLE}", (), b"\n \n"),
]


@pytest.mark.parametrize(("experiment", "name", "removed", "blank"), BLANK_LINE_CASES, ids=str)
def test_trailing_blank_lines_are_accepted(tmp_path, experiment, name, removed, blank):
    """A blank line at the end of an official file is harmless (u.data's stopped the run)."""
    source = name if not removed else removed[0]
    data = (SHARED_DATA / source).read_bytes()
    if source.endswith(".gz"):
        data = gzip.decompress(data)
    data_dir = _damaged_copy(tmp_path, name, data.rstrip(b"\n") + b"\n" + blank, removed)
    workdir = copy_workflow(tmp_path / "clone")
    changes = {"experiments": {**ALL_OFF, experiment: True}, "data_dir": str(data_dir)}
    if experiment == "wpm_gowalla":
        changes["wpm"] = {"gowalla": {"source": "snap"}}
    overlay = write_config(workdir, "blank", changes)
    snakemake(workdir, TARGETS[experiment], "--cores", "1", "--configfile", overlay)
    assert (workdir / TARGETS[experiment]).stat().st_size > 0
