"""HTTP download through pooch: :func:`download_file`, its retries and their log lines.

pooch provides the temporary file beside the destination, the checksum check before the file
gets its name, the retries (1 s, 2 s, ... apart) and the rename. This module adds a downloader
that always closes its connection and a progress bar, ``file://`` URLs (a mirror on a mounted
share), a warning for each retry naming its reason, and errors that name the URL
(:class:`~ldpsample.datasets.download.errors.DownloadError`,
:class:`~ldpsample.datasets.download.errors.ChecksumError`).

Uses the standard library, :mod:`~ldpsample.datasets.download.errors` and
:func:`ldpsample.pipeline.io.default_permissions`; pooch, requests and tqdm are imported at the
first download, not with the module.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ldpsample.datasets.download.errors import ChecksumError, DownloadError
from ldpsample.pipeline.io import default_permissions

__all__ = ["download_file"]

#: The package's one logger, named for the package (as the job logs and
#: scripts/download_dataset.py, which sends it to the console, know it).
log = logging.getLogger("ldpsample.datasets.download")

PathLike = str | os.PathLike[str]


def _known_hash(md5: str | None, sha256: str | None) -> str | None:
    if md5 and sha256:
        raise ValueError("give md5 or sha256, not both")
    if md5:
        return f"md5:{md5.lower()}"
    if sha256:
        return f"sha256:{sha256.lower()}"
    return None


def _copy_file_url(url: str, output_file: str, _pooch: object) -> None:
    """pooch downloader for ``file://`` URLs (a mirror on a mounted share)."""
    source = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
    try:
        shutil.copyfile(source, output_file)
    except OSError as exc:
        raise DownloadError(f"downloading {url} failed: {exc}") from exc


class _RetryLog(logging.Filter):
    """pooch's logger filter that reports each retry with its reason, and nothing else of pooch's
    below WARNING.

    pooch logs "Failed to download ..." (INFO, no reason) inside the ``except`` block of a
    failed attempt it is about to retry, so the exception being handled is the reason: a
    warning of ours names the URL, the attempt, the error and the wait before the next one.
    """

    def __init__(self, url: str, attempts: int) -> None:
        super().__init__()
        self.url, self.attempts, self.failed = url, attempts, 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith("Failed to download"):
            return record.levelno >= logging.WARNING
        self.failed += 1
        exc = sys.exc_info()[1]
        reason = f"{type(exc).__name__}: {exc}" if exc is not None else "no reason given"
        log.warning(
            "download of %s: attempt %d of %d failed (%s); retrying in %d s",
            self.url,
            self.failed,
            self.attempts,
            " ".join(reason.split())[:500],
            min(self.failed, 10),  # pooch's wait: 1 s, 2 s, ... at most 10 s
        )
        return False


@dataclass(frozen=True)
class _HTTPDownloader:
    """pooch downloader over HTTP(S) that always closes its connection.

    pooch's own ``HTTPDownloader`` leaves the response open when a transfer is cut off
    (a ``ResourceWarning`` at garbage collection); this one streams inside ``with`` blocks.
    pooch still provides the temporary file, the checksum, the retries and the rename.
    """

    timeout: float
    progressbar: bool

    def __call__(self, url: str, output_file: str, _pooch: object) -> None:
        import requests
        from tqdm.auto import tqdm

        headers = {"User-Agent": "ldpsample"}
        with (
            requests.get(url, stream=True, timeout=self.timeout, headers=headers) as response,
            open(output_file, "wb") as handle,
        ):
            response.raise_for_status()
            total = int(response.headers.get("Content-Length", 0)) or None
            with tqdm(
                total=total,
                unit="B",
                unit_scale=True,
                desc=url.rsplit("/", 1)[-1],
                disable=not self.progressbar,
                mininterval=5,
            ) as progress:
                for chunk in response.iter_content(chunk_size=1 << 20):
                    handle.write(chunk)
                    progress.update(len(chunk))


def download_file(
    url: str,
    dest: PathLike,
    *,
    md5: str | None = None,
    sha256: str | None = None,
    retries: int = 2,
    timeout: float = 60.0,
    progressbar: bool = False,
) -> Path:
    """Download ``url`` to ``dest`` with :mod:`pooch`, verified before it gets its name.

    pooch streams into a temporary file beside ``dest``, checks the digest and only then
    renames the file onto ``dest``; a failed, interrupted or corrupted transfer leaves no
    file under ``dest``'s name (a process killed mid-transfer may leave a ``tmp*`` file,
    which nothing reads). A dropped connection or an HTTP error is retried ``retries`` times;
    each retry is logged as a warning naming the URL, the attempt and the error. The file gets
    the permissions of a plain ``open()`` (0644 with the usual umask), not the temporary
    file's 0600.

    Parameters
    ----------
    url
        ``http://``, ``https://`` or ``file://``.
    dest
        Final path. If it exists and matches the digest it is kept (no download); if it
        exists and does not match, it is downloaded again.
    md5, sha256
        Expected hex digest (one of them, or none: then an existing file is trusted).
    retries
        Further attempts after a failed one (pooch waits 1 s, 2 s, ... in between).
    timeout
        Socket timeout in seconds.
    progressbar
        Show a tqdm progress bar on stderr (the rule's log in the pipeline).

    Returns
    -------
    pathlib.Path
        ``dest``.

    Raises
    ------
    DownloadError
        On a network or HTTP error or a truncated transfer, after the retries; the message
        names the URL.
    ChecksumError
        If the download does not match ``md5``/``sha256``; the message names the URL and
        both digests. Nothing is kept.
    """
    import pooch
    import requests

    dest = Path(dest)
    known_hash = _known_hash(md5, sha256)
    fetcher = pooch.create(
        path=dest.parent,
        base_url="",
        registry={dest.name: known_hash},
        urls={dest.name: url},
        retry_if_failed=retries,
        allow_updates=True,
    )
    downloader: Any = (
        _copy_file_url
        if url.startswith("file://")
        else _HTTPDownloader(timeout=timeout, progressbar=progressbar)
    )
    existed = dest.exists()
    if not existed:
        log.info(
            "downloading %s to %s (%d attempts at most, %g s socket timeout)",
            url,
            dest,
            retries + 1,
            timeout,
        )
    pooch_log, retry_log = pooch.get_logger(), _RetryLog(url, retries + 1)
    level = pooch_log.level
    pooch_log.setLevel(logging.INFO)
    pooch_log.addFilter(retry_log)
    try:
        fetcher.fetch(dest.name, downloader=downloader)
    except requests.exceptions.HTTPError as exc:
        response = exc.response
        status = f"HTTP {response.status_code} {response.reason}" if response is not None else exc
        raise DownloadError(
            f"downloading {url} failed: {status} (after {retries + 1} attempts); "
            f"nothing was written to {dest}"
        ) from exc
    except requests.exceptions.RequestException as exc:
        raise DownloadError(
            f"downloading {url} failed after {retries + 1} attempts: {exc}; "
            f"nothing was written to {dest}"
        ) from exc
    except ValueError as exc:
        match = re.search(r"expected (\S+) but got (\S+?)\.", str(exc))
        if match is None:
            raise
        algorithm, expected = match.group(1).split(":", 1)
        raise ChecksumError(
            f"checksum mismatch for {url}: expected {algorithm} {expected}, got {match.group(2)} "
            f"(after {retries + 1} attempts); the download was deleted and nothing was "
            f"written to {dest}"
        ) from exc
    finally:
        pooch_log.removeFilter(retry_log)
        pooch_log.setLevel(level)
    if existed:
        log.info("%s already present and verified (%s)", dest, known_hash or "no checksum")
    else:
        default_permissions(dest)  # pooch's temporary file was 0600
        log.info("downloaded %s to %s (%d bytes)", url, dest, dest.stat().st_size)
    return dest
