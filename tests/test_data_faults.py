"""A corpus of damaged raw files, each run through the rule that reads it (Snakemake on a
workflow copy, ``data_dir`` pointing at a copy of ../shared/data with damaged files): the run
fails with a message naming the file (and line where known), printed on the console (the
workflow's onerror handler quotes the first line of each failed job's error), and results/
holds nothing from the failed jobs. Damaged files of different experiments share one run
(``--keep-going``: each experiment's job reads its own file and fails on its own). Trailing
blank lines, harmless, are accepted."""

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


def _damaged_copy(data_dir: Path, damaged: dict[str, bytes], removed: tuple[str, ...]) -> Path:
    """A data_dir of symlinks to ../shared/data with the files of ``damaged`` (name: bytes)
    written instead and the files ``removed`` left out."""
    for folder in ("ml-1m", "ml-100k", "avazu", "gowalla"):
        (data_dir / folder).mkdir(parents=True)
        for src in (SHARED_DATA / folder).iterdir():
            relative = f"{folder}/{src.name}"
            keep = src.is_file() and relative not in removed and relative not in damaged
            if keep and not (folder == "gowalla" and src.name.startswith("loc-")):
                os.symlink(src, data_dir / relative)
    for name, data in damaged.items():
        (data_dir / name).write_bytes(data)
    return data_dir


def _run_experiments(workdir: Path, data_dir: Path, experiments: list[str], name: str):
    """Snakemake on the targets of ``experiments`` (the others off) with ``data_dir``;
    ``--keep-going``, so that every experiment's job runs when another one fails."""
    changes = {
        "experiments": {**ALL_OFF, **dict.fromkeys(experiments, True)},
        "data_dir": str(data_dir),
    }
    if "wpm_gowalla" in experiments:
        changes["wpm"] = {"gowalla": {"source": "snap"}}
    overlay = write_config(workdir, name, changes)
    targets = [TARGETS[experiment] for experiment in experiments]
    return snakemake(
        workdir, *targets, "--cores", "1", "--keep-going", "--configfile", overlay, check=False
    )


def _groups(cases: list[tuple]) -> list[tuple[str, ...]]:
    """Case ids in runs of at most one case per experiment: MovieLens's one job reads both
    MovieLens sets (its first error stops it), Avazu's and Gowalla's jobs read their own."""
    by_experiment: dict[str, list[str]] = {}
    for case in cases:
        by_experiment.setdefault(case[1], []).append(case[0])
    rounds = max(len(ids) for ids in by_experiment.values())
    return [
        tuple(ids[index] for ids in by_experiment.values() if index < len(ids))
        for index in range(rounds)
    ]


CASE = {case[0]: case[1:] for case in CASES}
RUN_OF = {case_id: group for group in _groups(CASES) for case_id in group}


@pytest.fixture(scope="module")
def damaged_run(tmp_path_factory):
    """The run of a case's group (started at the first case that asks for it), as
    (CompletedProcess, data_dir, workflow copy); one copy for all groups, since a failed run
    leaves nothing in results/."""
    root = tmp_path_factory.mktemp("damaged")
    workdir = copy_workflow(root / "clone")
    runs = {}

    def run(case_id: str):
        group = RUN_OF[case_id]
        if group not in runs:
            damaged = {CASE[i][1]: CASE[i][2]() for i in group}
            removed = tuple(name for i in group for name in CASE[i][3])
            data_dir = _damaged_copy(root / f"data-{len(runs)}", damaged, removed)
            experiments = [CASE[i][0] for i in group]
            proc = _run_experiments(workdir, data_dir, experiments, f"damaged-{len(runs)}")
            runs[group] = (proc, data_dir, workdir)
        return runs[group]

    return run


@pytest.mark.parametrize("case_id", [case[0] for case in CASES])
def test_damaged_file_fails_its_job_naming_the_file(damaged_run, case_id):
    proc, data_dir, workdir = damaged_run(case_id)
    message = CASE[case_id][4]
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


@pytest.fixture(scope="module")
def blank_lines_run(tmp_path_factory):
    """One run of the three experiments, each official file with blank lines appended."""
    root = tmp_path_factory.mktemp("blank")
    damaged = {}
    for _, name, removed, blank in BLANK_LINE_CASES:
        source = name if not removed else removed[0]
        data = (SHARED_DATA / source).read_bytes()
        if source.endswith(".gz"):
            data = gzip.decompress(data)
        damaged[name] = data.rstrip(b"\n") + b"\n" + blank
    removed = tuple(name for case in BLANK_LINE_CASES for name in case[2])
    data_dir = _damaged_copy(root / "data", damaged, removed)
    workdir = copy_workflow(root / "clone")
    experiments = [case[0] for case in BLANK_LINE_CASES]
    proc = _run_experiments(workdir, data_dir, experiments, "blank")
    return proc, workdir


@pytest.mark.parametrize(("experiment", "name", "removed", "blank"), BLANK_LINE_CASES, ids=str)
def test_trailing_blank_lines_are_accepted(blank_lines_run, experiment, name, removed, blank):
    """A blank line at the end of an official file is harmless (u.data's stopped the run)."""
    proc, workdir = blank_lines_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (workdir / TARGETS[experiment]).stat().st_size > 0
