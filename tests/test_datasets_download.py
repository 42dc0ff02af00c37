"""Downloads are verified and resumable; pre-placed data is located without writing to it."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

from ldpsample.datasets import download as dl
from ldpsample.datasets.download import (
    ChecksumError,
    DownloadError,
    KaggleUnavailableError,
    dataset_completeness,
    download_avazu,
    download_file,
    download_gowalla,
    download_movielens,
    extract_zip,
    kaggle_credential_sources,
    locate_dataset_files,
    record_sha256,
)

PAYLOAD = bytes(range(256)) * 40  # 10 KiB


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def test_http_download_is_verified_and_renamed(tmp_path, http_server):
    url = http_server.add("/file.bin", PAYLOAD)
    dest = tmp_path / "out" / "file.bin"
    assert download_file(url, dest, md5=md5(PAYLOAD), retries=0) == dest
    assert dest.read_bytes() == PAYLOAD
    assert sorted(p.name for p in dest.parent.iterdir()) == ["file.bin"]


def test_file_url_download_is_verified_and_renamed(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(PAYLOAD)
    dest = tmp_path / "out" / "file.bin"
    assert download_file(src.as_uri(), dest, sha256=hashlib.sha256(PAYLOAD).hexdigest()) == dest
    assert dest.read_bytes() == PAYLOAD


def test_checksum_mismatch_leaves_nothing_and_names_url_and_both_digests(tmp_path, http_server):
    url = http_server.add("/file.bin", PAYLOAD)
    dest = tmp_path / "dl" / "file.bin"
    wrong = "0" * 32
    with pytest.raises(ChecksumError) as info:
        download_file(url, dest, md5=wrong, retries=0)
    message = str(info.value)
    assert url in message and wrong in message and md5(PAYLOAD) in message
    assert list((tmp_path / "dl").iterdir()) == []


def test_http_error_names_url_and_status(tmp_path, http_server):
    url = http_server.url("/missing.zip")
    with pytest.raises(DownloadError, match="HTTP 404") as info:
        download_file(url, tmp_path / "x.zip", md5="0" * 32, retries=0)
    assert url in str(info.value)
    assert not (tmp_path / "x.zip").exists()


def test_dropped_connection_is_retried_and_truncated_bytes_never_kept(tmp_path, http_server):
    url = http_server.add("/file.bin", PAYLOAD, drop=1)
    dest = tmp_path / "file.bin"
    download_file(url, dest, md5=md5(PAYLOAD), retries=1)
    assert dest.read_bytes() == PAYLOAD
    assert http_server.requests == ["/file.bin", "/file.bin"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.bin"]


def test_connection_dropped_every_time_is_a_clear_error_and_leaves_nothing(tmp_path, http_server):
    url = http_server.add("/file.bin", PAYLOAD, drop=-1)
    with pytest.raises(DownloadError, match="after 2 attempts") as info:
        download_file(url, tmp_path / "file.bin", retries=1)  # no checksum: length must catch it
    assert url in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_verified_existing_file_is_not_downloaded_again(tmp_path, http_server):
    url = http_server.add("/file.bin", PAYLOAD)
    dest = tmp_path / "file.bin"
    download_file(url, dest, md5=md5(PAYLOAD))
    download_file(url, dest, md5=md5(PAYLOAD))
    assert http_server.requests == ["/file.bin"]
    # A corrupted local copy fails its checksum and is downloaded again.
    dest.write_bytes(b"corrupted")
    download_file(url, dest, md5=md5(PAYLOAD))
    assert dest.read_bytes() == PAYLOAD and len(http_server.requests) == 2


def test_record_sha256_pins_the_first_digest(tmp_path):
    path = tmp_path / "train.gz"
    path.write_bytes(b"first")
    digest = record_sha256(path)
    assert (tmp_path / "train.gz.sha256").read_text() == f"{digest}  train.gz\n"
    assert record_sha256(path) == digest
    path.write_bytes(b"changed")
    with pytest.raises(ChecksumError, match="differs from the one recorded"):
        record_sha256(path)


def test_gowalla_download_records_sha256_and_checks_it_next_time(tmp_path, http_server):
    data = gzip.compress(b"0\t2010-10-19T23:55:27Z\t30.2\t-97.7\t22847\n")
    url = http_server.add("/loc-gowalla_totalCheckins.txt.gz", data)
    data_dir = tmp_path / "data"
    got = download_gowalla(data_dir, url=url, retries=0)
    assert got == data_dir / "gowalla" / "loc-gowalla_totalCheckins.txt.gz"
    recorded = (got.parent / (got.name + ".sha256")).read_text().split()[0]
    assert recorded == hashlib.sha256(data).hexdigest()
    # A later download of different bytes fails the recorded digest and leaves no file.
    got.unlink()
    http_server.add("/loc-gowalla_totalCheckins.txt.gz", gzip.compress(b"other\n"))
    with pytest.raises(ChecksumError, match=recorded):
        download_gowalla(data_dir, url=url, retries=0)
    assert not got.exists()


def _movielens_zip(path: Path, folder: str, files: dict[str, bytes]) -> bytes:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(f"{folder}/{name}", data)
    return path.read_bytes()


ML100K_FILES = {"u.data": b"1\t1\t5\t0\n", "u.item": b"", "u.user": b"", "u.genre": b""}


@pytest.mark.parametrize("precreated", [False, True], ids=["no-folder", "snakemake-folder"])
def test_movielens_download_and_extract(tmp_path, http_server, precreated):
    data = _movielens_zip(tmp_path / "ml-100k.zip", "ml-100k", ML100K_FILES)
    url = http_server.add("/ml-100k.zip", data)
    dest = tmp_path / "resources"
    if precreated:  # Snakemake creates the folder of the rule's marker before the job
        (dest / "ml-100k").mkdir(parents=True)
    folder = download_movielens("ml-100k", dest, url=url, md5=md5(data), retries=0)
    assert folder == dest / "ml-100k" and (folder / "u.data").read_bytes() == ML100K_FILES["u.data"]
    assert (dest / "ml-100k.zip").exists()
    # Second call: the verified zip is reused, no request.
    assert download_movielens("ml-100k", dest, url=url, md5=md5(data)) == folder
    assert http_server.requests == ["/ml-100k.zip"]


def test_movielens_archive_lacking_a_member_is_named(tmp_path, http_server):
    files = {k: v for k, v in ML100K_FILES.items() if k != "u.genre"}
    data = _movielens_zip(tmp_path / "ml-100k.zip", "ml-100k", files)
    url = http_server.add("/ml-100k.zip", data)
    dest = tmp_path / "resources"
    with pytest.raises(ValueError, match=r"lacks ml-100k/u\.genre") as info:
        download_movielens("ml-100k", dest, url=url, md5=md5(data), retries=0)
    assert url in str(info.value)
    assert not (dest / "ml-100k").exists()


def test_movielens_default_checksum_is_the_published_md5(tmp_path, http_server, monkeypatch):
    data = _movielens_zip(tmp_path / "ml-1m.zip", "ml-1m", {"ratings.dat": b"1::1::5::0\n"})
    url = http_server.add("/ml-1m.zip", data)
    monkeypatch.setitem(dl.DOWNLOADS, "ml-1m", {"url": url, "md5": dl.DOWNLOADS["ml-1m"]["md5"]})
    dest = tmp_path / "resources"
    with pytest.raises(ChecksumError, match="c4d9eecfca2ab87c1945afe126590906"):
        download_movielens("ml-1m", dest, retries=0)
    assert not dest.exists() or list(dest.iterdir()) == []


def test_extract_zip_rejects_unsafe_members(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ml-1m/ok.dat", b"")
        zf.writestr("ml-1m/../../escape.txt", b"")
    with pytest.raises(ValueError, match="unsafe member"):
        extract_zip(archive, tmp_path / "out", folder="ml-1m")
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "out" / "ml-1m").exists()


# ---------------------------------------------------------------------------------------------
# Kaggle
# ---------------------------------------------------------------------------------------------


def _clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"PATH": str(bin_dir), "HOME": str(home), "KAGGLE_CONFIG_DIR": str(home), **extra}


def test_kaggle_missing_cli_and_credentials_explains_what_to_do(tmp_path):
    env = _clean_env(tmp_path)
    with pytest.raises(KaggleUnavailableError) as info:
        download_avazu(tmp_path / "data", environ=env)
    message = str(info.value)
    for needle in (
        "not installed",
        "pip install kaggle",
        "no Kaggle credentials found",
        "KAGGLE_API_TOKEN",
        "kaggle.json",
        "KAGGLE_USERNAME",
        "https://www.kaggle.com/settings/api",
        "avazu-ctr-prediction/rules",
        "<data_dir>/avazu/train.gz",
    ):
        assert needle in message, needle
    assert not (tmp_path / "data" / "avazu" / "train.gz").exists()


def test_kaggle_credential_sources(tmp_path):
    env = _clean_env(tmp_path)
    assert kaggle_credential_sources(environ=env) == []
    assert kaggle_credential_sources(environ={**env, "KAGGLE_API_TOKEN": "t"}) == [
        "environment variable KAGGLE_API_TOKEN"
    ]
    assert len(kaggle_credential_sources(environ={**env, "KAGGLE_USERNAME": "u"})) == 0
    (Path(env["KAGGLE_CONFIG_DIR"]) / "kaggle.json").write_text("{}")
    assert kaggle_credential_sources(environ=env) == [
        str(Path(env["KAGGLE_CONFIG_DIR"]) / "kaggle.json")
    ]


def _fake_kaggle(tmp_path: Path, script: str) -> None:
    cli = tmp_path / "bin" / "kaggle"
    cli.write_text("#!/bin/sh\n" + script)
    cli.chmod(cli.stat().st_mode | stat.S_IEXEC)


def test_kaggle_download_moves_file_and_records_sha256(tmp_path):
    env = _clean_env(tmp_path, KAGGLE_API_TOKEN="dummy")
    content = gzip.compress(b"id,click\n1,0\n")
    (tmp_path / "payload.gz").write_bytes(content)
    # Fake CLI: copies the payload into the folder given with -p.
    _fake_kaggle(
        tmp_path,
        'while [ "$#" -gt 0 ]; do if [ "$1" = "-p" ]; then out="$2"; fi; shift; done\n'
        f'{shutil.which("cp")} "{tmp_path / "payload.gz"}" "$out/train.gz"\n',
    )
    got = download_avazu(tmp_path / "data", environ=env)
    assert got.read_bytes() == content
    recorded = Path(str(got) + ".sha256").read_text().split()[0]
    assert recorded == hashlib.sha256(content).hexdigest()
    assert sorted(p.name for p in got.parent.iterdir()) == ["train.gz", "train.gz.sha256"]


def test_kaggle_cli_failure_quotes_its_output(tmp_path):
    env = _clean_env(tmp_path, KAGGLE_USERNAME="u", KAGGLE_KEY="k")
    _fake_kaggle(tmp_path, 'echo "403 - Forbidden: accept the rules" >&2\nexit 1\n')
    with pytest.raises(KaggleUnavailableError, match="403 - Forbidden") as info:
        download_avazu(tmp_path / "data", environ=env)
    assert "exit code 1" in str(info.value)
    assert list((tmp_path / "data" / "avazu").iterdir()) == []


# ---------------------------------------------------------------------------------------------
# pre-placed data
# ---------------------------------------------------------------------------------------------


def test_locate_names_every_missing_file_and_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"ml-1m: missing in .*ml-1m \(folder does not"):
        locate_dataset_files(tmp_path, "ml-1m")
    (tmp_path / "ml-1m").mkdir()
    (tmp_path / "ml-1m" / "movies.dat").write_text("")
    with pytest.raises(FileNotFoundError) as info:
        locate_dataset_files(tmp_path, "ml-1m")
    message = str(info.value)
    assert "ratings (looked for ratings.dat, ratings.dat.gz)" in message
    assert "users (looked for users.dat, users.dat.gz)" in message
    assert "movies" not in message.split("missing in")[1].split(":", 1)[1]
    with pytest.raises(ValueError, match="unknown dataset 'ml-20m'"):
        locate_dataset_files(tmp_path, "ml-20m")


def test_locate_prefers_official_names(tmp_path):
    folder = tmp_path / "avazu"
    folder.mkdir()
    (folder / "train.csv").write_text("")
    assert locate_dataset_files(tmp_path, "avazu") == {"train": folder / "train.csv"}
    (folder / "train.gz").write_bytes(b"")
    assert locate_dataset_files(tmp_path, "avazu") == {"train": folder / "train.gz"}


@pytest.mark.data
def test_locate_shared_copies_and_flag_partial_ones(caplog, shared_data):
    before = {p: p.stat().st_mtime_ns for p in shared_data.rglob("*")}
    ml1m = locate_dataset_files(shared_data, "ml-1m")
    assert ml1m["ratings"].name == "ratings.dat.gz"
    ml100k = locate_dataset_files(shared_data, "ml-100k")
    assert ml100k["ratings"] == shared_data / "ml-100k" / "u.data"
    assert locate_dataset_files(shared_data, "avazu")["train"].name == "train.gz"
    gowalla = locate_dataset_files(shared_data, "gowalla")["checkins"]
    assert gowalla.name == "loc-gowalla_totalCheckins.first-10000-lines.txt"
    (ratings,) = dataset_completeness("ml-1m", ml1m, roles=("ratings",))
    assert (ratings.rows, ratings.official_rows, ratings.partial) == (487_650, 1_000_209, True)
    assert "PARTIAL copy" in caplog.text
    full = dataset_completeness("ml-100k", ml100k)
    assert [c.partial for c in full] == [False, False, False]
    (avazu,) = dataset_completeness("avazu", locate_dataset_files(shared_data, "avazu"))
    assert avazu.rows == 9_999 and avazu.partial
    assert before == {p: p.stat().st_mtime_ns for p in shared_data.rglob("*")}  # read only


def test_count_lines_handles_gzip_and_missing_final_newline(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"1\n2\n3")
    (tmp_path / "b.gz").write_bytes(gzip.compress(b"1\n2\n"))
    assert dl.count_lines(tmp_path / "a.txt") == 3
    assert dl.count_lines(tmp_path / "b.gz") == 2
    assert os.path.exists(tmp_path / "b.gz")
