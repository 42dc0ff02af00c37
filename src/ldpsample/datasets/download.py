"""Getting the raw data: verified downloads and the official folder layout.

Two ways in, both ending in the same layout under one folder (``data_dir``)::

    data_dir/
      ml-100k/   u.data u.item u.user u.genre ...           (official ml-100k.zip, extracted)
      ml-1m/     ratings.dat[.gz] movies.dat users.dat ...  (official ml-1m.zip, extracted)
      avazu/     train.gz | train.csv | train.csv.gz | train  (Kaggle avazu-ctr-prediction)
      gowalla/   loc-gowalla_totalCheckins.txt[.gz]         (SNAP)

* **Download** (:func:`download_movielens`, :func:`download_avazu`, :func:`download_gowalla`).
  Every download goes to ``<name>.part`` first, is verified, and only then renamed onto its
  final name, so a final file is always complete and checked. An interrupted transfer keeps the
  ``.part`` file and the next run resumes it (HTTP ``Range``); a checksum mismatch deletes it
  and raises :class:`ChecksumError` naming the URL and the expected and actual digests.
  GroupLens publishes md5 sums, which are checked; Kaggle and SNAP publish none, so the sha256
  of the first download is recorded next to the file (``<file>.sha256``, ``sha256sum``
  format) and every later download or :func:`record_sha256` call is checked against it.
* **Pre-placed** (:func:`locate_dataset_files`): a folder holding the official layout is read
  as it is (never written). Partial copies are accepted; :func:`dataset_completeness` compares
  row counts with the official ones and logs a warning when a copy is partial.

Only the standard library is used for HTTP (``urllib``); Avazu needs the official Kaggle CLI.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ldpsample.io import write_text

__all__ = [
    "AVAZU_COMPETITION",
    "DATASETS",
    "GOWALLA_URL",
    "MOVIELENS_ARCHIVES",
    "OFFICIAL_ROW_COUNTS",
    "ChecksumError",
    "Completeness",
    "DownloadError",
    "KaggleUnavailableError",
    "count_lines",
    "dataset_completeness",
    "download_avazu",
    "download_dataset",
    "download_file",
    "download_gowalla",
    "download_movielens",
    "extract_zip",
    "file_digest",
    "kaggle_credential_sources",
    "locate_dataset_files",
    "record_sha256",
]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class _Archive:
    url: str
    md5: str
    folder: str
    required: tuple[str, ...]


#: The official GroupLens archives and the md5 sums GroupLens publishes for them.
MOVIELENS_ARCHIVES: dict[str, _Archive] = {
    "ml-100k": _Archive(
        url="https://files.grouplens.org/datasets/movielens/ml-100k.zip",
        md5="0e33842e24a9c977be4e0107933c0723",
        folder="ml-100k",
        required=("u.data", "u.item", "u.user", "u.genre"),
    ),
    "ml-1m": _Archive(
        url="https://files.grouplens.org/datasets/movielens/ml-1m.zip",
        md5="c4d9eecfca2ab87c1945afe126590906",
        folder="ml-1m",
        required=("ratings.dat", "movies.dat", "users.dat"),
    ),
}

#: SNAP Gowalla check-ins (no checksum published: the first download's sha256 is recorded).
GOWALLA_URL = "https://snap.stanford.edu/data/loc-gowalla_totalCheckins.txt.gz"

#: The Kaggle competition holding Avazu's ``train.gz``.
AVAZU_COMPETITION = "avazu-ctr-prediction"

#: Data rows (lines without a header) of the official files, used to detect partial copies.
OFFICIAL_ROW_COUNTS: dict[tuple[str, str], int] = {
    ("ml-100k", "ratings"): 100_000,
    ("ml-100k", "users"): 943,
    ("ml-100k", "items"): 1_682,
    ("ml-1m", "ratings"): 1_000_209,
    ("ml-1m", "users"): 6_040,
    ("ml-1m", "movies"): 3_883,
    ("avazu", "train"): 40_428_967,
    ("gowalla", "checkins"): 6_442_890,
}

#: Per dataset: folder under ``data_dir`` and, per role, the file names accepted (first found
#: wins). Glob patterns (containing ``*``) are a last resort and mark the copy as partial.
DATASETS: dict[str, tuple[str, dict[str, tuple[str, ...]]]] = {
    "ml-100k": (
        "ml-100k",
        {
            "ratings": ("u.data", "u.data.gz"),
            "items": ("u.item", "u.item.gz"),
            "users": ("u.user", "u.user.gz"),
            "genres": ("u.genre",),
        },
    ),
    "ml-1m": (
        "ml-1m",
        {
            "ratings": ("ratings.dat", "ratings.dat.gz"),
            "movies": ("movies.dat", "movies.dat.gz"),
            "users": ("users.dat", "users.dat.gz"),
        },
    ),
    "avazu": ("avazu", {"train": ("train.gz", "train.csv", "train.csv.gz", "train")}),
    "gowalla": (
        "gowalla",
        {
            "checkins": (
                "loc-gowalla_totalCheckins.txt.gz",
                "loc-gowalla_totalCheckins.txt",
                "loc-gowalla_totalCheckins.first-*-lines.txt",
            )
        },
    ),
}

#: Data files that start with a header line (not counted as a row).
_HEADER_ROLES = {("avazu", "train")}


class DownloadError(RuntimeError):
    """A download failed (network, HTTP status, truncated transfer)."""


class ChecksumError(ValueError):
    """A file's digest differs from the published or recorded one."""


class KaggleUnavailableError(RuntimeError):
    """The Kaggle CLI or the user's Kaggle credentials are missing, or the CLI failed."""


# --------------------------------------------------------------------------------------------
# digests
# --------------------------------------------------------------------------------------------


def file_digest(path: PathLike, algorithm: str = "sha256", *, chunk_size: int = 1 << 20) -> str:
    """Hex digest of a file's bytes (``algorithm`` is any :mod:`hashlib` name)."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def _sha256_record_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _read_recorded_sha256(path: Path) -> str | None:
    record = _sha256_record_path(path)
    if not record.exists():
        return None
    text = record.read_text(encoding="utf-8").split()
    if not text or len(text[0]) != 64:
        raise ChecksumError(f"{record}: not a sha256sum line: {record.read_text()!r:.200}")
    return text[0].lower()


def record_sha256(path: PathLike) -> str:
    """Record ``path``'s sha256 in ``<path>.sha256`` or check it against an existing record.

    Used for downloads without a published checksum (Kaggle, SNAP): the first download pins
    the digest, every later one must match it.

    Returns
    -------
    str
        The sha256 of ``path``.

    Raises
    ------
    ChecksumError
        If a record exists and differs from the file's digest.
    """
    path = Path(path)
    actual = file_digest(path, "sha256")
    recorded = _read_recorded_sha256(path)
    if recorded is None:
        write_text(f"{actual}  {path.name}\n", _sha256_record_path(path))
        log.info("recorded sha256 %s of %s in %s", actual, path, _sha256_record_path(path))
    elif recorded != actual:
        raise ChecksumError(
            f"{path}: sha256 {actual} differs from the one recorded at the first download "
            f"({recorded}, in {_sha256_record_path(path)}); the file changed or is corrupted. "
            "Delete both files to download again and record a new digest."
        )
    return actual


# --------------------------------------------------------------------------------------------
# HTTP download with resume
# --------------------------------------------------------------------------------------------

# Indirection so tests can replace the network.
urlopen: Callable[..., Any] = urllib.request.urlopen


def _digests(path: Path, algorithms: list[str]) -> dict[str, str]:
    hashers = {name: hashlib.new(name) for name in algorithms}
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            for h in hashers.values():
                h.update(chunk)
    return {name: h.hexdigest() for name, h in hashers.items()}


def download_file(
    url: str,
    dest: PathLike,
    *,
    md5: str | None = None,
    sha256: str | None = None,
    timeout: float = 60.0,
    chunk_size: int = 1 << 20,
) -> Path:
    """Download ``url`` to ``dest`` through ``<dest>.part``, verified before it is renamed.

    Parameters
    ----------
    url
        Any URL :func:`urllib.request.urlopen` understands (``https://``, ``file://``).
    dest
        Final path. If it exists and matches the given digests it is kept (no download).
    md5, sha256
        Expected hex digests (either, both or none).
    timeout
        Socket timeout in seconds.
    chunk_size
        Bytes per read.

    Returns
    -------
    pathlib.Path
        ``dest``.

    Raises
    ------
    DownloadError
        On a network or HTTP error or a truncated transfer. The ``.part`` file is kept so
        that the next call resumes it with an HTTP ``Range`` request.
    ChecksumError
        If the completed download does not match ``md5``/``sha256``. The ``.part`` file is
        deleted; the message names the URL and the expected and actual digests.
    """
    dest = Path(dest)
    expected = {name: value.lower() for name, value in (("md5", md5), ("sha256", sha256)) if value}
    if dest.exists():
        if not expected:
            log.info("%s already present; not downloading %s", dest, url)
            return dest
        actual = _digests(dest, list(expected))
        if actual == expected:
            log.info("%s already present and verified (%s)", dest, actual)
            return dest
        log.warning(
            "%s exists but fails its checksum (%s, expected %s); downloading again",
            dest,
            actual,
            expected,
        )
        dest.unlink()
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")

    for attempt in (1, 2):
        offset = part.stat().st_size if part.exists() else 0
        _fetch_into(url, part, offset=offset, timeout=timeout, chunk_size=chunk_size)
        if not expected:
            break
        actual = _digests(part, list(expected))
        if actual == expected:
            break
        part.unlink()
        if offset and attempt == 1:
            # A stale .part (e.g. from another version of the file) spoilt the resume: retry
            # once from scratch before blaming the server.
            log.warning("resumed download of %s fails its checksum; restarting from scratch", url)
            continue
        details = "; ".join(f"expected {k} {expected[k]}, got {actual[k]}" for k in expected)
        raise ChecksumError(
            f"checksum mismatch for {url}: {details}. The download was deleted ({part}); "
            "nothing was written to " + str(dest)
        )
    os.replace(part, dest)
    log.info("downloaded %s to %s (%d bytes)", url, dest, dest.stat().st_size)
    return dest


def _fetch_into(url: str, part: Path, *, offset: int, timeout: float, chunk_size: int) -> None:
    headers = {"User-Agent": "ldpsample (+https://github.com/)"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    request = urllib.request.Request(url, headers=headers)
    try:
        response = urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:
            log.info("server says %s is already complete in %s (HTTP 416)", url, part)
            return
        raise DownloadError(f"downloading {url} failed: HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DownloadError(f"downloading {url} failed: {reason}") from exc
    with response:
        status = getattr(response, "status", None)
        length_header = response.headers.get("Content-Length") if response.headers else None
        length = int(length_header) if length_header and length_header.isdigit() else None
        if offset and status == 206:
            content_range = response.headers.get("Content-Range", "")
            start = content_range.removeprefix("bytes ").split("-", 1)[0]
            if start.strip() != str(offset):
                raise DownloadError(
                    f"downloading {url}: asked to resume at byte {offset}, server sent "
                    f"Content-Range {content_range!r}"
                )
            mode, start_at = "ab", offset
            log.info("resuming %s at byte %d", url, offset)
        else:
            if offset:
                log.info("server ignored the Range request for %s; restarting", url)
            mode, start_at = "wb", 0
        received = 0
        try:
            with open(part, mode) as handle:
                while chunk := response.read(chunk_size):
                    handle.write(chunk)
                    received += len(chunk)
        except (urllib.error.URLError, OSError) as exc:
            raise DownloadError(
                f"downloading {url} was interrupted after {start_at + received} bytes ({exc}); "
                f"the partial file {part} is kept and the next run resumes it"
            ) from exc
    if length is not None and received != length:
        raise DownloadError(
            f"downloading {url}: got {received} of {length} bytes; the partial file {part} is "
            "kept and the next run resumes it"
        )


# --------------------------------------------------------------------------------------------
# archives
# --------------------------------------------------------------------------------------------


def extract_zip(archive: PathLike, dest_dir: PathLike, *, folder: str) -> Path:
    """Extract ``folder/`` from a zip archive into ``dest_dir/folder``, atomically.

    The archive is extracted into a temporary folder next to the target, checked (no member
    may escape it) and renamed into place, so ``dest_dir/folder`` is either complete or absent.

    Raises
    ------
    ValueError
        If the archive has no ``folder/`` member or a member with an unsafe path.
    FileExistsError
        If ``dest_dir/folder`` already exists.
    """
    archive, dest_dir = Path(archive), Path(dest_dir)
    target = dest_dir / folder
    if target.exists():
        raise FileExistsError(f"{target} already exists; remove it to extract {archive} again")
    dest_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder}.", suffix=".tmp", dir=dest_dir))
    try:
        with zipfile.ZipFile(archive) as zf:
            names = zf.namelist()
            if not any(n.startswith(folder + "/") for n in names):
                raise ValueError(f"{archive}: no member under {folder}/ (members: {names[:5]})")
            root = tmp.resolve()
            for name in names:
                resolved = (tmp / name).resolve()
                if root not in resolved.parents and resolved != root:
                    raise ValueError(f"{archive}: unsafe member path {name!r}")
            zf.extractall(tmp)
        os.replace(tmp / folder, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def download_movielens(
    name: str,
    dest_dir: PathLike,
    *,
    url: str | None = None,
    md5: str | None = None,
    keep_archive: bool = True,
    timeout: float = 60.0,
) -> Path:
    """Download and extract an official MovieLens archive into ``dest_dir/<name>/``.

    Parameters
    ----------
    name
        ``"ml-100k"`` or ``"ml-1m"``.
    dest_dir
        Folder receiving ``<name>.zip`` and the extracted ``<name>/``.
    url, md5
        Override the GroupLens URL and md5 (e.g. a mirror or a local ``file://`` copy).
    keep_archive
        Keep the verified zip next to the folder (a re-run then skips the download).
    timeout
        Socket timeout in seconds.

    Returns
    -------
    pathlib.Path
        The extracted folder, holding the official files.
    """
    if name not in MOVIELENS_ARCHIVES:
        raise ValueError(f"unknown MovieLens archive {name!r}; known: {sorted(MOVIELENS_ARCHIVES)}")
    spec = MOVIELENS_ARCHIVES[name]
    dest_dir = Path(dest_dir)
    target = dest_dir / spec.folder
    if target.is_dir():
        missing = [f for f in spec.required if not (target / f).exists()]
        if not missing:
            log.info("%s already extracted in %s", name, target)
            return target
        raise FileNotFoundError(
            f"{target} exists but lacks {missing}; remove the folder to download {name} again"
        )
    archive = download_file(
        url or spec.url, dest_dir / f"{name}.zip", md5=md5 or spec.md5, timeout=timeout
    )
    extract_zip(archive, dest_dir, folder=spec.folder)
    missing = [f for f in spec.required if not (target / f).exists()]
    if missing:
        shutil.rmtree(target)
        raise ValueError(f"{archive}: the extracted {spec.folder}/ lacks {missing}")
    if not keep_archive:
        archive.unlink()
    return target


def download_gowalla(dest_dir: PathLike, *, url: str = GOWALLA_URL, timeout: float = 60.0) -> Path:
    """Download SNAP's Gowalla check-ins into ``dest_dir/gowalla/`` and record their sha256.

    SNAP publishes no checksum. The first download's sha256 is written next to the file
    (``loc-gowalla_totalCheckins.txt.gz.sha256``); a later download must match it.
    """
    dest = Path(dest_dir) / "gowalla" / url.rsplit("/", 1)[-1]
    recorded = _read_recorded_sha256(dest)
    download_file(url, dest, sha256=recorded, timeout=timeout)
    record_sha256(dest)
    return dest


# --------------------------------------------------------------------------------------------
# Kaggle (Avazu)
# --------------------------------------------------------------------------------------------


def kaggle_credential_sources(
    *, environ: Mapping[str, str] | None = None, home: PathLike | None = None
) -> list[str]:
    """Where the Kaggle CLI would find credentials (only existence is checked, never content).

    Looks at ``KAGGLE_API_TOKEN``, ``KAGGLE_USERNAME`` + ``KAGGLE_KEY`` and, in the Kaggle
    config folder (``KAGGLE_CONFIG_DIR`` or ``~/.kaggle``), ``access_token`` and
    ``kaggle.json``. An empty list means none was found.
    """
    env = os.environ if environ is None else environ
    found = []
    if env.get("KAGGLE_API_TOKEN"):
        found.append("environment variable KAGGLE_API_TOKEN")
    if env.get("KAGGLE_USERNAME") and env.get("KAGGLE_KEY"):
        found.append("environment variables KAGGLE_USERNAME and KAGGLE_KEY")
    if env.get("KAGGLE_CONFIG_DIR"):
        config_dir = Path(env["KAGGLE_CONFIG_DIR"])
    else:
        config_dir = Path(home if home is not None else Path.home()) / ".kaggle"
    for name in ("access_token", "kaggle.json"):
        if (config_dir / name).is_file():
            found.append(str(config_dir / name))
    return found


def _kaggle_help(competition: str, problems: list[str]) -> str:
    lines = [
        f"Cannot download Avazu (Kaggle competition {competition!r}, file train.gz):",
        *[f"  - {p}" for p in problems],
        "To download it:",
        "  1. install the official CLI in the environment running the pipeline: pip install kaggle",
        "  2. create an API token at https://www.kaggle.com/settings/api and either export "
        "KAGGLE_API_TOKEN=<token>, or save the token in ~/.kaggle/access_token, or (legacy) "
        "save kaggle.json as ~/.kaggle/kaggle.json (chmod 600) or export KAGGLE_USERNAME and "
        "KAGGLE_KEY",
        f"  3. accept the competition rules with the same account at "
        f"https://www.kaggle.com/competitions/{competition}/rules (otherwise HTTP 403)",
        "Or skip the download: fetch train.gz yourself (https://www.kaggle.com/competitions/"
        f"{competition}/data), put it at <data_dir>/avazu/train.gz (train.csv also works) and "
        "point the pipeline's data_dir at that folder; files in data_dir are only read.",
    ]
    return "\n".join(lines)


def download_avazu(
    dest_dir: PathLike,
    *,
    competition: str = AVAZU_COMPETITION,
    file: str = "train.gz",
    kaggle_cli: str = "kaggle",
    check_credentials: bool = True,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """Download Avazu's ``train.gz`` with the official Kaggle CLI into ``dest_dir/avazu/``.

    Runs ``kaggle competitions download -c <competition> -f <file> -p <tmp>``, moves the file
    into place atomically and records its sha256 (Kaggle publishes none; a later download
    must match the recorded one).

    Parameters
    ----------
    dest_dir
        Folder receiving ``avazu/<file>``.
    competition, file
        Kaggle competition and file.
    kaggle_cli
        Name or path of the CLI executable.
    check_credentials
        Check beforehand that credentials exist (:func:`kaggle_credential_sources`) for a
        clear message; turn off for credential set-ups this check does not know.
    environ
        Environment to check and pass to the CLI (default ``os.environ``).

    Raises
    ------
    KaggleUnavailableError
        If the CLI or the credentials are missing (the message explains how to get them and
        the ``data_dir`` alternative) or the CLI fails (its output is quoted).
    """
    dest = Path(dest_dir) / "avazu" / file
    if dest.exists():
        record_sha256(dest)
        log.info("%s already present", dest)
        return dest
    env = dict(os.environ if environ is None else environ)
    problems = []
    cli = shutil.which(kaggle_cli, path=env.get("PATH"))
    if cli is None:
        problems.append(f"the Kaggle CLI {kaggle_cli!r} is not installed (not found on PATH)")
    if check_credentials and not kaggle_credential_sources(environ=env):
        config = env.get("KAGGLE_CONFIG_DIR") or "~/.kaggle"
        problems.append(
            "no Kaggle credentials found (KAGGLE_API_TOKEN, KAGGLE_USERNAME/KAGGLE_KEY, "
            f"{config}/access_token, {config}/kaggle.json)"
        )
    if problems:
        raise KaggleUnavailableError(_kaggle_help(competition, problems))
    assert cli is not None
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".kaggle-", dir=dest.parent))
    try:
        cmd = [cli, "competitions", "download", "-c", competition, "-f", file, "-p", str(tmp)]
        log.info("running %s", " ".join(cmd))
        result = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if result.returncode != 0:
            output = (result.stderr or result.stdout or "").strip()[-2000:]
            raise KaggleUnavailableError(
                f"`{' '.join(cmd)}` failed with exit code {result.returncode}:\n{output}\n\n"
                + _kaggle_help(competition, ["the Kaggle CLI failed (see its output above)"])
            )
        got = _find_kaggle_download(tmp, file)
        with open(got, "rb") as handle:
            if file.endswith(".gz") and handle.read(2) != b"\x1f\x8b":
                raise KaggleUnavailableError(f"{got}: the downloaded {file} is not gzip data")
        os.replace(got, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    record_sha256(dest)
    return dest


def _find_kaggle_download(folder: Path, file: str) -> Path:
    """The CLI saves ``file`` as is, or zipped as ``file.zip`` / ``<competition>.zip``."""
    direct = folder / file
    if direct.exists():
        return direct
    for archive in sorted(folder.glob("*.zip")):
        with zipfile.ZipFile(archive) as zf:
            if file in zf.namelist():
                zf.extract(file, folder)
                return folder / file
    names = sorted(p.name for p in folder.iterdir())
    raise KaggleUnavailableError(f"the Kaggle CLI finished but {file} is not among {names}")


# --------------------------------------------------------------------------------------------
# pre-placed data
# --------------------------------------------------------------------------------------------


def locate_dataset_files(data_dir: PathLike, dataset: str) -> dict[str, Path]:
    """Paths of a dataset's files in a folder holding the official layout (read only).

    Parameters
    ----------
    data_dir
        Folder holding ``ml-100k/``, ``ml-1m/``, ``avazu/`` and/or ``gowalla/``.
    dataset
        One of :data:`DATASETS`: ``"ml-100k"``, ``"ml-1m"``, ``"avazu"``, ``"gowalla"``.

    Returns
    -------
    dict
        Role → path, e.g. ``{"ratings": ..., "movies": ..., "users": ...}`` for ``ml-1m``.
        For every role the first existing name of :data:`DATASETS` is used (an official
        uncompressed file before its ``.gz``).

    Raises
    ------
    FileNotFoundError
        Naming every missing role, the names looked for and the folder.
    """
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; known: {sorted(DATASETS)}")
    folder_name, roles = DATASETS[dataset]
    folder = Path(data_dir) / folder_name
    found: dict[str, Path] = {}
    missing: list[str] = []
    for role, names in roles.items():
        path = _first_existing(folder, names)
        if path is None:
            missing.append(f"{role} (looked for {', '.join(names)})")
        else:
            found[role] = path
            if "*" in names[-1] and path.name not in names:
                log.warning("%s: using %s, a partial copy, for %s", dataset, path, role)
    if missing:
        where = folder if folder.is_dir() else f"{folder} (folder does not exist)"
        raise FileNotFoundError(f"{dataset}: missing in {where}: " + "; ".join(missing))
    log.info("%s files: %s", dataset, {k: str(v) for k, v in found.items()})
    return found


def _first_existing(folder: Path, names: tuple[str, ...]) -> Path | None:
    for name in names:
        if "*" in name:
            matches = (
                sorted(p for p in folder.glob(name) if p.is_file() and ".austin" not in p.name)
                if folder.is_dir()
                else []
            )
            if matches:
                return matches[0]
        elif (folder / name).is_file():
            return folder / name
    return None


def _open_maybe_gzip(path: Path) -> Any:
    with open(path, "rb") as handle:
        magic = handle.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def count_lines(path: PathLike) -> int:
    """Number of lines of a (possibly gzipped) text file; a last line without newline counts."""
    count = 0
    last = b"\n"
    with _open_maybe_gzip(Path(path)) as handle:
        while chunk := handle.read(1 << 22):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


@dataclass(frozen=True)
class Completeness:
    """Row counts of one dataset file against the official release."""

    dataset: str
    role: str
    path: Path
    rows: int
    official_rows: int

    @property
    def partial(self) -> bool:
        """True if the file has fewer rows than the official one."""
        return self.rows < self.official_rows


def dataset_completeness(
    dataset: str, files: Mapping[str, PathLike], *, roles: tuple[str, ...] | None = None
) -> list[Completeness]:
    """Count the rows of ``files`` and compare them with :data:`OFFICIAL_ROW_COUNTS`.

    A partial copy is accepted: it is logged as a warning (never an error). Counting reads
    the file once (the full Avazu file takes about a minute; convert it with
    :func:`ldpsample.datasets.avazu.convert_avazu_to_parquet`, which counts as it goes).
    """
    out = []
    for role, path in files.items():
        key = (dataset, role)
        if key not in OFFICIAL_ROW_COUNTS or (roles is not None and role not in roles):
            continue
        rows = count_lines(path) - (1 if key in _HEADER_ROLES else 0)
        info = Completeness(dataset, role, Path(path), rows, OFFICIAL_ROW_COUNTS[key])
        if info.partial:
            log.warning(
                "%s %s (%s) is a PARTIAL copy: %d of %d official rows (%.1f %%); results "
                "computed from it are not the paper's",
                dataset,
                role,
                path,
                rows,
                info.official_rows,
                100 * rows / info.official_rows,
            )
        elif rows > info.official_rows:
            log.warning(
                "%s %s (%s) has %d rows, more than the official %d",
                dataset,
                role,
                path,
                rows,
                info.official_rows,
            )
        out.append(info)
    return out


def download_dataset(dataset: str, dest_dir: PathLike) -> dict[str, Path]:
    """Download ``dataset`` into ``dest_dir`` in the official layout; return its files by role.

    The pipeline's single entry point for downloads: GroupLens zips (md5-checked) for
    ``"ml-100k"`` and ``"ml-1m"``, the Kaggle CLI for ``"avazu"`` (credentials needed), SNAP for
    ``"gowalla"``. Afterwards :func:`locate_dataset_files` finds the files in ``dest_dir``.
    """
    if dataset in MOVIELENS_ARCHIVES:
        download_movielens(dataset, dest_dir)
    elif dataset == "avazu":
        download_avazu(dest_dir)
    elif dataset == "gowalla":
        download_gowalla(dest_dir)
    else:
        raise ValueError(f"unknown dataset {dataset!r}; known: {sorted(DATASETS)}")
    return locate_dataset_files(dest_dir, dataset)
