"""Downloads are verified and resumable; pre-placed data is located without writing to it."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import stat
import urllib.error
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

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"real datasets not found at {SHARED} (../shared/data)"
)

PAYLOAD = bytes(range(256)) * 40  # 10 KiB


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


class FakeResponse(io.BytesIO):
    """A urlopen() result: status, headers, and an optional failure mid-transfer."""

    def __init__(self, data: bytes, *, status: int = 200, headers=None, fail_after=None):
        super().__init__(data)
        self.status = status
        self.headers = {"Content-Length": str(len(data)), **(headers or {})}
        self.fail_after = fail_after

    def read(self, size=-1):
        if self.fail_after is not None and self.tell() >= self.fail_after:
            raise ConnectionResetError("connection reset by peer")
        if self.fail_after is not None:
            size = min(size, self.fail_after - self.tell())
        return super().read(size)


class RangeServer:
    """Serves PAYLOAD honouring Range headers; records the requests."""

    def __init__(self, data=PAYLOAD, *, honour_range=True, fail_after=None):
        self.data, self.honour_range, self.fail_after = data, honour_range, fail_after
        self.requests: list[dict[str, str]] = []

    def __call__(self, request, timeout=None):
        headers = dict(request.header_items())
        self.requests.append(headers)
        fail_after, self.fail_after = self.fail_after, None  # fail only once
        rng = headers.get("Range")
        if rng and self.honour_range:
            start = int(rng.removeprefix("bytes=").rstrip("-"))
            body = self.data[start:]
            return FakeResponse(
                body,
                status=206,
                headers={"Content-Range": f"bytes {start}-{len(self.data) - 1}/{len(self.data)}"},
                fail_after=fail_after,
            )
        return FakeResponse(self.data, fail_after=fail_after)


def test_file_url_download_is_verified_and_renamed(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(PAYLOAD)
    dest = tmp_path / "out" / "file.bin"
    assert download_file(src.as_uri(), dest, md5=md5(PAYLOAD)) == dest
    assert dest.read_bytes() == PAYLOAD
    assert not dest.with_name("file.bin.part").exists()


def test_checksum_mismatch_leaves_nothing_and_names_both_digests(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(PAYLOAD)
    dest = tmp_path / "file.bin"
    wrong = "0" * 32
    with pytest.raises(ChecksumError) as info:
        download_file(src.as_uri(), dest, md5=wrong)
    message = str(info.value)
    assert src.as_uri() in message and wrong in message and md5(PAYLOAD) in message
    assert list(tmp_path.iterdir()) == [src]


def test_part_file_is_resumed_with_a_range_request(tmp_path, monkeypatch):
    server = RangeServer()
    monkeypatch.setattr(dl, "urlopen", server)
    dest = tmp_path / "file.bin"
    dest.with_name("file.bin.part").write_bytes(PAYLOAD[:3000])
    download_file("https://example.org/file.bin", dest, md5=md5(PAYLOAD))
    assert server.requests[0]["Range"] == "bytes=3000-"
    assert dest.read_bytes() == PAYLOAD
    assert not dest.with_name("file.bin.part").exists()


def test_server_ignoring_range_restarts_from_scratch(tmp_path, monkeypatch):
    monkeypatch.setattr(dl, "urlopen", RangeServer(honour_range=False))
    dest = tmp_path / "file.bin"
    dest.with_name("file.bin.part").write_bytes(b"garbage" * 100)
    download_file("https://example.org/file.bin", dest, md5=md5(PAYLOAD))
    assert dest.read_bytes() == PAYLOAD


def test_stale_part_failing_checksum_is_retried_once_from_scratch(tmp_path, monkeypatch):
    server = RangeServer()
    monkeypatch.setattr(dl, "urlopen", server)
    dest = tmp_path / "file.bin"
    dest.with_name("file.bin.part").write_bytes(b"x" * 3000)  # wrong prefix
    download_file("https://example.org/file.bin", dest, md5=md5(PAYLOAD))
    assert [r.get("Range") for r in server.requests] == ["bytes=3000-", None]
    assert dest.read_bytes() == PAYLOAD


def test_interrupted_transfer_keeps_part_and_next_run_resumes(tmp_path, monkeypatch):
    server = RangeServer(fail_after=4096)
    monkeypatch.setattr(dl, "urlopen", server)
    dest = tmp_path / "file.bin"
    part = dest.with_name("file.bin.part")
    with pytest.raises(DownloadError, match="interrupted after 4096 bytes"):
        download_file("https://example.org/file.bin", dest, md5=md5(PAYLOAD))
    assert not dest.exists() and part.stat().st_size == 4096
    download_file("https://example.org/file.bin", dest, md5=md5(PAYLOAD))
    assert server.requests[-1]["Range"] == "bytes=4096-"
    assert dest.read_bytes() == PAYLOAD


def test_http_error_names_url_and_status(tmp_path, monkeypatch):
    def refuse(request, timeout=None):
        raise urllib.error.HTTPError(request.full_url, 404, "Not Found", {}, None)

    monkeypatch.setattr(dl, "urlopen", refuse)
    with pytest.raises(DownloadError, match=r"https://example.org/x.zip failed: HTTP 404"):
        download_file("https://example.org/x.zip", tmp_path / "x.zip")
    assert list(tmp_path.iterdir()) == []


def test_verified_existing_file_is_not_downloaded_again(tmp_path, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("network used")

    monkeypatch.setattr(dl, "urlopen", no_network)
    dest = tmp_path / "file.bin"
    dest.write_bytes(PAYLOAD)
    assert download_file("https://example.org/f", dest, md5=md5(PAYLOAD)) == dest


def test_record_sha256_pins_the_first_digest(tmp_path):
    path = tmp_path / "train.gz"
    path.write_bytes(b"first")
    digest = record_sha256(path)
    assert (tmp_path / "train.gz.sha256").read_text() == f"{digest}  train.gz\n"
    assert record_sha256(path) == digest
    path.write_bytes(b"changed")
    with pytest.raises(ChecksumError, match="differs from the one recorded"):
        record_sha256(path)


def test_gowalla_download_records_sha256_and_checks_it_next_time(tmp_path):
    src = tmp_path / "loc-gowalla_totalCheckins.txt.gz"
    src.write_bytes(gzip.compress(b"0\t2010-10-19T23:55:27Z\t30.2\t-97.7\t22847\n"))
    data_dir = tmp_path / "data"
    got = download_gowalla(data_dir, url=src.as_uri())
    assert got == data_dir / "gowalla" / src.name
    recorded = (data_dir / "gowalla" / (src.name + ".sha256")).read_text().split()[0]
    assert recorded == hashlib.sha256(src.read_bytes()).hexdigest()
    # A later download of different bytes fails the recorded digest and leaves no file.
    got.unlink()
    src.write_bytes(gzip.compress(b"other\n"))
    with pytest.raises(ChecksumError, match=recorded):
        download_gowalla(data_dir, url=src.as_uri())
    assert not got.exists()


def _movielens_zip(path: Path, folder: str, files: dict[str, bytes]) -> bytes:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(f"{folder}/{name}", data)
    return path.read_bytes()


def test_movielens_download_and_extract(tmp_path):
    files = {"u.data": b"1\t1\t5\t0\n", "u.item": b"", "u.user": b"", "u.genre": b""}
    data = _movielens_zip(tmp_path / "ml-100k.zip", "ml-100k", files)
    dest = tmp_path / "resources"
    folder = download_movielens(
        "ml-100k", dest, url=(tmp_path / "ml-100k.zip").as_uri(), md5=md5(data)
    )
    assert folder == dest / "ml-100k" and (folder / "u.data").read_bytes() == files["u.data"]
    assert (dest / "ml-100k.zip").exists()
    # Second call: nothing to do.
    assert download_movielens("ml-100k", dest, url="https://invalid.example/", md5="0") == folder


def test_movielens_corrupted_archive_leaves_no_file(tmp_path):
    _movielens_zip(tmp_path / "ml-1m.zip", "ml-1m", {"ratings.dat": b"1::1::5::0\n"})
    dest = tmp_path / "resources"
    with pytest.raises(ChecksumError, match="c4d9eecfca2ab87c1945afe126590906"):
        download_movielens("ml-1m", dest, url=(tmp_path / "ml-1m.zip").as_uri())
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
@needs_shared
def test_locate_shared_copies_and_flag_partial_ones(caplog):
    before = {p: p.stat().st_mtime_ns for p in SHARED.rglob("*")}
    ml1m = locate_dataset_files(SHARED, "ml-1m")
    assert ml1m["ratings"].name == "ratings.dat.gz"
    ml100k = locate_dataset_files(SHARED, "ml-100k")
    assert ml100k["ratings"] == SHARED / "ml-100k" / "u.data"
    assert locate_dataset_files(SHARED, "avazu")["train"].name == "train.gz"
    gowalla = locate_dataset_files(SHARED, "gowalla")["checkins"]
    assert gowalla.name == "loc-gowalla_totalCheckins.first-10000-lines.txt"
    (ratings,) = dataset_completeness("ml-1m", ml1m, roles=("ratings",))
    assert (ratings.rows, ratings.official_rows, ratings.partial) == (487_650, 1_000_209, True)
    assert "PARTIAL copy" in caplog.text
    full = dataset_completeness("ml-100k", ml100k)
    assert [c.partial for c in full] == [False, False, False]
    (avazu,) = dataset_completeness("avazu", locate_dataset_files(SHARED, "avazu"))
    assert avazu.rows == 9_999 and avazu.partial
    assert before == {p: p.stat().st_mtime_ns for p in SHARED.rglob("*")}  # read only


def test_count_lines_handles_gzip_and_missing_final_newline(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"1\n2\n3")
    (tmp_path / "b.gz").write_bytes(gzip.compress(b"1\n2\n"))
    assert dl.count_lines(tmp_path / "a.txt") == 3
    assert dl.count_lines(tmp_path / "b.gz") == 2
    assert os.path.exists(tmp_path / "b.gz")
