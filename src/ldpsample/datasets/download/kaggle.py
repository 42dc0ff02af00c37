"""Avazu through the official Kaggle CLI: :func:`download_avazu` and the credential check.

The CLI runs as a subprocess (``kaggle competitions download``) into a temporary folder whose
file is then moved into place; Kaggle publishes no checksum, so the file's sha256 is recorded
(:func:`~ldpsample.datasets.download.checksums.record_sha256`). A missing CLI or missing
credentials give one message saying how to get them, or how to place the file by hand instead.

Uses the standard library, :mod:`~ldpsample.datasets.download.errors`,
:mod:`~ldpsample.datasets.download.checksums` and :mod:`ldpsample.datasets.registry`.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path

from ldpsample.datasets.download.checksums import record_sha256
from ldpsample.datasets.download.errors import KaggleUnavailableError
from ldpsample.datasets.registry import AVAZU_COMPETITION

__all__ = ["download_avazu", "kaggle_credential_sources"]

#: The package's one logger, named for the package (as the job logs and
#: scripts/download_dataset.py, which sends it to the console, know it).
log = logging.getLogger("ldpsample.datasets.download")

PathLike = str | os.PathLike[str]


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
