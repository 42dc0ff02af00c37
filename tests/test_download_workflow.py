"""The download stage as a user meets it: a fresh copy of the workflow, an empty data_dir and
`snakemake --cores 2`, with `downloads:` pointed at a real HTTP server on 127.0.0.1 that serves
official-layout zips built here from ../shared/data. The first run downloads, verifies, unpacks
and computes results/movielens; the second has nothing to do. Faults served by the same server
(wrong checksum, 404, a connection dropped on every attempt, a zip lacking a member) each fail
with a message naming what is wrong and leave no file in resources/ and nothing in results/.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest
import yaml
from _workflow import (
    SHARED_DATA,
    copy_workflow,
    planned_jobs,
    requires_shared_data,
    snakemake,
    write_config,
)
from http_server import LocalHTTPServer

pytestmark = [
    pytest.mark.workflow,
    pytest.mark.data,
    requires_shared_data("ml-1m", "ml-100k"),
]

VARIANT = "results/movielens/prior~ml-100k_weight~count"
ONLY_MOVIELENS = {
    "experiments": {
        "synthetic": False,
        "theory": False,
        "movielens": True,
        "avazu": False,
        "wpm_ring": False,
        "wpm_movielens": False,
        "wpm_gowalla": False,
    },
    "movielens": {"epsilons": [4]},
}


def _zip_folder(path: Path, folder: str, files: dict[str, bytes]) -> bytes:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, data in sorted(files.items()):
            zf.writestr(f"{folder}/{name}", data)
    return path.read_bytes()


@pytest.fixture(scope="module")
def official_zips(tmp_path_factory) -> dict[str, bytes]:
    """ml-100k.zip and ml-1m.zip in the official layout, from the shared copies."""
    folder = tmp_path_factory.mktemp("zips")
    ml100k = {
        p.name: p.read_bytes()
        for p in sorted((SHARED_DATA / "ml-100k").iterdir())
        if p.is_file() and p.name != "PROVENANCE.md"
    }
    ml1m = {
        "ratings.dat": gzip.decompress((SHARED_DATA / "ml-1m" / "ratings.dat.gz").read_bytes()),
        **{
            name: (SHARED_DATA / "ml-1m" / name).read_bytes()
            for name in ("movies.dat", "users.dat", "README")
        },
    }
    return {
        "ml-100k": _zip_folder(folder / "ml-100k.zip", "ml-100k", ml100k),
        "ml-1m": _zip_folder(folder / "ml-1m.zip", "ml-1m", ml1m),
    }


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def _setup(tmp_path: Path, server, zips: dict[str, bytes], **faults) -> tuple[Path, list[str]]:
    """A fresh workflow copy whose downloads point at ``server``; returns it and the args."""
    workdir = copy_workflow(tmp_path / "clone")
    empty = tmp_path / "empty-data-dir"
    empty.mkdir()
    downloads = {}
    for name, data in zips.items():
        fault = faults.get(name, {})
        path = f"/mirror/{name}.zip"
        if fault.get("serve", True):
            server.add(path, fault.get("data", data), drop=fault.get("drop", 0))
        downloads[name] = {"url": server.url(path), "md5": fault.get("md5", _md5(data))}
    downloads["gowalla"] = {"url": server.url("/gowalla.txt.gz"), "sha256": None}
    overlay = write_config(workdir, "download-test", {**ONLY_MOVIELENS, "downloads": downloads})
    return workdir, ["--cores", "2", "--configfile", overlay, "--config", f"data_dir={empty}"]


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def served_run(tmp_path_factory, official_zips):
    """A fresh clone's `snakemake --cores 2` with the default data_dir (resources/, empty but
    for its README) and MovieLens on: ml-1m's first transfer is cut mid-file. Returns the
    copy, the command's arguments, the run and the server (stopped after the module's tests)."""
    server = LocalHTTPServer().start()
    try:
        workdir = copy_workflow(tmp_path_factory.mktemp("served") / "clone")
        downloads = {
            name: {
                "url": server.add(f"/mirror/{name}.zip", data, drop=int(name == "ml-1m")),
                "md5": _md5(data),
            }
            for name, data in official_zips.items()
        }
        downloads["gowalla"] = {"url": server.url("/gowalla.txt.gz"), "sha256": None}
        experiments = {**ONLY_MOVIELENS["experiments"], "wpm_movielens": "auto"}
        overlay = write_config(
            workdir,
            "served",
            {**ONLY_MOVIELENS, "experiments": experiments, "downloads": downloads},
        )
        args = ["--cores", "2", "--configfile", overlay]
        proc = snakemake(workdir, *args)
        yield workdir, args, proc, server
    finally:
        server.stop()


def test_fresh_clone_downloads_verifies_unpacks_and_runs_movielens(served_run):
    workdir, _, proc, server = served_run
    # the retry is reported as it happens, with its reason, on the console and in the log
    retry = f"download of {server.url('/mirror/ml-1m.zip')}: attempt 1 of 3 failed ("
    assert f"download_dataset ml-1m: {retry}" in proc.stderr, proc.stderr[-3000:]
    assert "IncompleteRead" in proc.stderr.split(retry, 1)[1].splitlines()[0]
    assert retry in (workdir / "logs" / "download_dataset" / "ml-1m.log").read_text()
    assert sorted(server.requests) == [
        "/mirror/ml-100k.zip",
        "/mirror/ml-1m.zip",
        "/mirror/ml-1m.zip",
    ]
    resources = workdir / "resources"
    # readable by others sharing resources/, like any file written there (pooch's temporary
    # files are 0600)
    umask = os.umask(0)
    os.umask(umask)
    for name in ("ml-100k.zip", "ml-1m.zip", "ml-100k/u.data"):
        assert stat.S_IMODE((resources / name).stat().st_mode) == 0o666 & ~umask, name
    assert (resources / "ml-100k" / "u.data").read_bytes() == (
        SHARED_DATA / "ml-100k" / "u.data"
    ).read_bytes()
    assert (resources / "ml-1m" / "ratings.dat").read_bytes() == gzip.decompress(
        (SHARED_DATA / "ml-1m" / "ratings.dat.gz").read_bytes()
    )
    for name in ("ml-100k", "ml-1m"):
        marker = (resources / name / "download.done").read_text()
        assert f"{resources.name}/{name}/" in marker or f"resources/{name}/" in marker
    for table in ("max_tv.csv", "max_kl.csv", "summary.csv", "per_user.parquet"):
        assert (workdir / VARIANT / table).stat().st_size > 0
    max_tv = (workdir / VARIANT / "max_tv.csv").read_text().splitlines()
    assert max_tv[0] == "epsilon,group,method,max_tv,n_users"
    groups = sorted({line.split(",")[1] for line in max_tv[1:]})
    assert groups == ["0-24", "25-34", "35-44", "45-49", "50-54", "55+"]
    assert len(max_tv) == 1 + len(groups) * 2


def test_the_same_command_twice_leaves_the_second_nothing_to_do(served_run, tmp_path):
    """With the default data_dir (resources/), a run with MovieLens on downloads ML-100K there.
    The identical second command must not find it as data placed in data_dir and switch on
    wpm_movielens ("auto"): it has nothing to do, makes no request and leaves
    results/reproduction.csv as it was. A copy placed in resources/ by hand (no download.done)
    does switch "auto" on (in a copy of the project: the run is shared)."""
    workdir, args, _, server = served_run
    table = (workdir / "results" / "reproduction.csv").read_bytes()
    assert (workdir / "resources" / "ml-100k" / "u.data").is_file()
    again = snakemake(workdir, *args)
    text = again.stdout + again.stderr
    assert "Nothing to be done" in text, text[-3000:]
    off = [line for line in text.splitlines() if "experiments on auto that are off" in line]
    assert (
        "wpm_movielens (resources/ml-100k/download.done marks the pipeline's own download, not "
        "data placed in data_dir: set experiments.wpm_movielens: true to use it)"
    ) in off[0]
    assert (workdir / "results" / "reproduction.csv").read_bytes() == table
    assert sorted(server.requests) == [
        "/mirror/ml-100k.zip",
        "/mirror/ml-1m.zip",
        "/mirror/ml-1m.zip",
    ]
    # the same files without the marker: placed by hand, so "auto" runs wpm_movielens
    copy = tmp_path / "copy"
    shutil.copytree(workdir, copy, symlinks=True)
    (copy / "resources" / "ml-100k" / "download.done").unlink()
    assert "wpm_movielens_part" in planned_jobs(copy, *args)


def _fails(workdir: Path, args: list[str]) -> tuple[subprocess.CompletedProcess, str]:
    """Run and check that the run failed and kept nothing in resources/ or results/; return
    the run and its text (the download logs, then the console)."""
    proc = snakemake(workdir, *args, check=False)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    logs = workdir / "logs" / "download_dataset"
    text = "".join(p.read_text() for p in sorted(logs.glob("*.log"))) if logs.is_dir() else ""
    assert not (workdir / "results").exists() or _files(workdir / "results") == []
    resources = workdir / "resources"
    assert _files(resources) == ["README.md"] or _files(resources) == [], _files(resources)
    return proc, text + proc.stdout + proc.stderr


WRONG_MD5 = "0" * 32


def _failed_run(tmp_path: Path, official_zips: dict[str, bytes], **faults):
    """One failing run with a fault per dataset (both downloads start at once on 2 cores and
    the run ends after both): the served URLs, the run and its text."""
    server = LocalHTTPServer().start()
    try:
        workdir, args = _setup(tmp_path, server, official_zips, **faults)
        proc, text = _fails(workdir, args)
        urls = {name: server.url(f"/mirror/{name}.zip") for name in official_zips}
        return urls, proc, text
    finally:
        server.stop()


@pytest.fixture(scope="module")
def checksum_and_member_faults(tmp_path_factory, official_zips):
    """ml-100k served with a wrong md5 in the config, ml-1m as a zip that lacks users.dat."""
    tmp_path = tmp_path_factory.mktemp("checksum_and_member")
    with zipfile.ZipFile(tmp_path / "ml-1m.zip", "w") as zf:
        zf.writestr("ml-1m/ratings.dat", b"1::1::5::978300760\n")
        zf.writestr("ml-1m/movies.dat", b"1::Toy Story (1995)::Animation\n")
    bad = (tmp_path / "ml-1m.zip").read_bytes()
    faults = {"ml-100k": {"md5": WRONG_MD5}, "ml-1m": {"data": bad, "md5": _md5(bad)}}
    return _failed_run(tmp_path, official_zips, **faults)


@pytest.fixture(scope="module")
def missing_and_dropped_faults(tmp_path_factory, official_zips):
    """ml-100k not served (404), ml-1m's connection dropped on every attempt."""
    tmp_path = tmp_path_factory.mktemp("missing_and_dropped")
    faults = {"ml-100k": {"serve": False}, "ml-1m": {"drop": -1}}
    return _failed_run(tmp_path, official_zips, **faults)


def test_wrong_checksum_names_url_and_both_hashes_and_keeps_nothing(
    checksum_and_member_faults, official_zips
):
    urls, _, text = checksum_and_member_faults
    assert f"checksum mismatch for {urls['ml-100k']}: expected md5 {WRONG_MD5}, got " in text
    assert _md5(official_zips["ml-100k"]) in text


def test_zip_lacking_a_member_names_it(checksum_and_member_faults):
    _, _, text = checksum_and_member_faults
    assert "the archive lacks ml-1m/users.dat" in text


def test_404_names_the_url(missing_and_dropped_faults):
    urls, _, text = missing_and_dropped_faults
    assert f"downloading {urls['ml-100k']} failed: HTTP 404" in text


def test_connection_dropped_on_every_attempt_is_a_clear_error(missing_and_dropped_faults):
    urls, proc, text = missing_and_dropped_faults
    url = urls["ml-1m"]
    # each retry on the console as it happens, then the cause at the end of the run
    for attempt, wait in ((1, 1), (2, 2)):
        assert f"download of {url}: attempt {attempt} of 3 failed (" in proc.stderr
        assert f"; retrying in {wait} s" in proc.stderr
    causes = proc.stderr.split("Why the failed job(s) failed", 1)[1]
    assert f"DownloadError: downloading {url} failed after 3 attempts" in causes
    assert f"downloading {url} failed after 3 attempts" in text


@requires_shared_data("gowalla")
def test_gowalla_mismatch_names_the_recorded_digest_and_how_to_reset_it(tmp_path, http_server):
    """SNAP publishes no checksum: the first download's sha256 is recorded beside the file. When
    a later download differs, the console's cause line names that record and how to accept the
    new file (it named neither)."""
    sample = SHARED_DATA / "gowalla" / "loc-gowalla_totalCheckins.first-10000-lines.txt"
    lines = sample.read_bytes().splitlines(keepends=True)
    workdir = copy_workflow(tmp_path / "clone")
    url = http_server.add("/snap/gowalla.txt.gz", gzip.compress(b"".join(lines[:100]), mtime=0))
    overlay = write_config(workdir, "gowalla", {"downloads": {"gowalla": {"url": url}}})
    args = ["resources/gowalla/download.done", "--cores", "1", "--configfile", overlay]
    snakemake(workdir, *args)
    folder = workdir / "resources" / "gowalla"
    data, record = (
        folder / "loc-gowalla_totalCheckins.txt.gz",
        folder / ("loc-gowalla_totalCheckins.txt.gz.sha256"),
    )
    assert record.read_text().split()[0] == hashlib.sha256(data.read_bytes()).hexdigest()
    # the source changes its file; the user deletes the download to fetch it again
    http_server.add("/snap/gowalla.txt.gz", gzip.compress(b"".join(lines[:200]), mtime=0))
    data.unlink()
    (folder / "download.done").unlink()
    proc = snakemake(workdir, *args, check=False)
    assert proc.returncode != 0
    cause = proc.stderr.split("Why the failed job(s) failed", 1)[1].splitlines()[1]
    assert f"checksum mismatch for {url}: expected sha256 " in cause
    assert (
        f"the expected digest is the one recorded in {record.relative_to(workdir)}: if the new "
        f"file is right (its source published a new version), delete "
        f"{record.relative_to(workdir)} to download again and record the new digest, or set the "
        "config key downloads.gowalla.sha256 to it"
    ) in cause
    assert not data.exists()
    record.unlink()  # as the message says: the next run downloads and records the new digest
    snakemake(workdir, *args)
    assert record.read_text().split()[0] == hashlib.sha256(data.read_bytes()).hexdigest()


def test_downloads_keys_are_validated(tmp_path):
    workdir = copy_workflow(tmp_path / "clone")
    config = yaml.safe_load((workdir / "config" / "config.yaml").read_text())
    assert config["downloads"]["ml-100k"]["md5"] == "0e33842e24a9c977be4e0107933c0723"
    assert config["downloads"]["ml-1m"]["md5"] == "c4d9eecfca2ab87c1945afe126590906"
    bad = write_config(workdir, "bad", {"downloads": {"ml-1m": {"md5": "abc"}}})
    proc = snakemake(workdir, "--dry-run", "--configfile", bad, check=False)
    assert proc.returncode != 0
    assert "config error at downloads.ml-1m.md5: 'abc' does not match" in proc.stdout + proc.stderr
    both = write_config(
        workdir, "both", {"downloads": {"ml-1m": {"md5": "a" * 32, "sha256": "b" * 64}}}
    )
    proc = snakemake(workdir, "--dry-run", "--configfile", both, check=False)
    assert (
        "config error at downloads.ml-1m: give md5 or sha256, not both" in proc.stdout + proc.stderr
    )
