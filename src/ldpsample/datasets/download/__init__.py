"""Getting the raw data: verified downloads and the official folder layout.

Two ways in, both ending in the same layout under one folder (``data_dir``)::

    data_dir/
      ml-100k/   u.data u.item u.user u.genre ...           (official ml-100k.zip, extracted)
      ml-1m/     ratings.dat[.gz] movies.dat users.dat ...  (official ml-1m.zip, extracted)
      avazu/     train.gz | train.csv | train.csv.gz | train  (Kaggle avazu-ctr-prediction)
      gowalla/   loc-gowalla_totalCheckins.txt[.gz]         (SNAP)

* **Download** (:func:`download_movielens`, :func:`download_avazu`, :func:`download_gowalla`).
  HTTP goes through `pooch <https://www.fatiando.org/pooch/>`_: a temporary file, the
  checksum checked before the file gets its name, retries after a dropped connection and a
  progress bar. A checksum mismatch raises :class:`ChecksumError` naming the URL and both
  digests, an HTTP error :class:`DownloadError` naming the URL; nothing is kept from either.
  GroupLens publishes md5 sums (the defaults, :data:`~ldpsample.datasets.registry.DOWNLOADS`);
  Kaggle and SNAP publish none, so the sha256 of the first download is recorded next to the
  file (``<file>.sha256``, ``sha256sum`` format) and every later download is checked
  against it. URL and checksum can be overridden (a lab mirror or cache).
* **Pre-placed** (:func:`locate_dataset_files`): a folder holding the official layout is read
  as it is (never written). Partial copies are accepted; :func:`dataset_completeness` compares
  row counts with the official ones and logs a warning when a copy is partial.

The layout, URLs, checksums and row counts live in :mod:`ldpsample.datasets.registry`
(standard library only, which the workflow loads at parse time). Avazu needs the official
Kaggle CLI.
"""

from __future__ import annotations

import gzip
import logging
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ldpsample.datasets.download.archives import extract_zip
from ldpsample.datasets.download.checksums import (
    file_digest,
    read_recorded_sha256,
    record_hint,
    record_sha256,
)
from ldpsample.datasets.download.errors import (
    ChecksumError,
    DownloadError,
    KaggleUnavailableError,
)
from ldpsample.datasets.download.http import download_file
from ldpsample.datasets.registry import (
    AVAZU_COMPETITION,
    DATASETS,
    DOWNLOADS,
    OFFICIAL_ROW_COUNTS,
    dataset_folder,
    locate_dataset_files,
)

__all__ = [
    "AVAZU_COMPETITION",
    "DATASETS",
    "DOWNLOADS",
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

#: The files each official MovieLens archive must hold (under ``<name>/``): the first file
#: name of every role of :data:`DATASETS`.
MOVIELENS_ARCHIVES: dict[str, tuple[str, ...]] = {
    name: tuple(names[0] for names in DATASETS[name][1].values()) for name in ("ml-100k", "ml-1m")
}

#: Data files that start with a header line (not counted as a row).
_HEADER_ROLES = {("avazu", "train")}


def download_movielens(
    name: str,
    dest_dir: PathLike,
    *,
    url: str | None = None,
    md5: str | None = None,
    sha256: str | None = None,
    keep_archive: bool = True,
    retries: int = 2,
    timeout: float = 60.0,
    progressbar: bool = False,
) -> Path:
    """Download and extract an official MovieLens archive into ``dest_dir/<name>/``.

    The zip (``dest_dir/<name>.zip``) is checked against ``md5``/``sha256`` (default: the
    md5 GroupLens publishes, :data:`DOWNLOADS`); with neither given for a custom ``url``,
    the first download's sha256 is recorded and checked later (:func:`record_sha256`).
    The folder may already exist (the pipeline's marker file lives in it): its files are
    replaced by the archive's.

    Parameters
    ----------
    name
        ``"ml-100k"`` or ``"ml-1m"``.
    dest_dir
        Folder receiving ``<name>.zip`` and the extracted ``<name>/``.
    url, md5, sha256
        Override the GroupLens URL and checksum (a mirror, a lab cache).
    keep_archive
        Keep the verified zip next to the folder (a re-run then skips the download).
    retries, timeout, progressbar
        As for :func:`download_file`.

    Returns
    -------
    pathlib.Path
        The extracted folder, holding the official files.
    """
    if name not in MOVIELENS_ARCHIVES:
        raise ValueError(f"unknown MovieLens archive {name!r}; known: {sorted(MOVIELENS_ARCHIVES)}")
    official = DOWNLOADS[name]
    if url is None and md5 is None and sha256 is None:
        md5 = official["md5"]
    url = url or str(official["url"])
    dest_dir = Path(dest_dir)
    archive = dest_dir / f"{name}.zip"
    _download_verified(
        name,
        url,
        archive,
        md5=md5,
        sha256=sha256,
        retries=retries,
        timeout=timeout,
        progressbar=progressbar,
    )
    try:
        target = extract_zip(archive, dest_dir, folder=name, required=MOVIELENS_ARCHIVES[name])
    except ValueError as exc:
        archive.unlink()  # unusable: the next run downloads it again
        raise ValueError(f"{exc} (downloaded from {url}; the archive was deleted)") from exc
    if not keep_archive:
        archive.unlink()
    return target


def download_gowalla(
    dest_dir: PathLike,
    *,
    url: str | None = None,
    sha256: str | None = None,
    md5: str | None = None,
    retries: int = 2,
    timeout: float = 60.0,
    progressbar: bool = False,
) -> Path:
    """Download SNAP's Gowalla check-ins into ``dest_dir/gowalla/``.

    SNAP publishes no checksum: unless ``sha256``/``md5`` is given, the first download's
    sha256 is written next to the file (``<file>.sha256``) and a later download must match it.
    """
    url = url or str(DOWNLOADS["gowalla"]["url"])
    dest = Path(dest_dir) / "gowalla" / DATASETS["gowalla"][1]["checkins"][0]
    _download_verified(
        "gowalla",
        url,
        dest,
        md5=md5,
        sha256=sha256,
        retries=retries,
        timeout=timeout,
        progressbar=progressbar,
    )
    return dest


def _download_verified(
    dataset: str,
    url: str,
    dest: Path,
    *,
    md5: str | None,
    sha256: str | None,
    **options: Any,
) -> None:
    """:func:`download_file` against ``md5``/``sha256``, or without either against the sha256
    recorded at the first download (recorded now if there is none). A mismatch with the record
    says where it is and how to accept a new version."""
    if md5 is not None or sha256 is not None:
        download_file(url, dest, md5=md5, sha256=sha256, **options)
        return
    try:
        download_file(url, dest, sha256=read_recorded_sha256(dest), **options)
    except ChecksumError as exc:
        raise ChecksumError(f"{exc}; {record_hint(dest, dataset)}") from exc
    record_sha256(dest)


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


def download_dataset(
    dataset: str,
    dest_dir: PathLike,
    *,
    url: str | None = None,
    md5: str | None = None,
    sha256: str | None = None,
    progressbar: bool = False,
) -> dict[str, Path]:
    """Download ``dataset`` into ``dest_dir`` in the official layout; return its files by role.

    The pipeline's single entry point for downloads: GroupLens zips for ``"ml-100k"`` and
    ``"ml-1m"``, the Kaggle CLI for ``"avazu"`` (credentials needed), SNAP for ``"gowalla"``.
    ``url``, ``md5`` and ``sha256`` override the defaults of :data:`DOWNLOADS` (the config's
    ``downloads.<dataset>`` keys). On failure, an empty ``dest_dir/<dataset>/`` folder (which
    Snakemake creates for the rule's marker file) is removed, so nothing is left behind.
    """
    options = {"url": url, "md5": md5, "sha256": sha256, "progressbar": progressbar}
    folder = Path(dest_dir) / dataset_folder(dataset)
    try:
        if dataset in MOVIELENS_ARCHIVES:
            download_movielens(dataset, dest_dir, **options)
        elif dataset == "avazu":
            download_avazu(dest_dir)
        else:
            download_gowalla(dest_dir, **options)
    except BaseException:
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        raise
    return locate_dataset_files(dest_dir, dataset)
