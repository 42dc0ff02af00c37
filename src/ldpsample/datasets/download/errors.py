"""The errors of getting the data: one class for each way a download fails.

Standard library only. Each class names the package, :mod:`ldpsample.datasets.download`, as its
``__module__``: that is where users import it from, and a traceback's last line (the cause line
of a failed job) names the class by that path.
"""

from __future__ import annotations

__all__ = ["ChecksumError", "DownloadError", "KaggleUnavailableError"]


class DownloadError(RuntimeError):
    """A download failed (network, HTTP status, truncated transfer)."""

    __module__ = "ldpsample.datasets.download"


class ChecksumError(ValueError):
    """A file's digest differs from the published or recorded one."""

    __module__ = "ldpsample.datasets.download"


class KaggleUnavailableError(RuntimeError):
    """The Kaggle CLI or the user's Kaggle credentials are missing, or the CLI failed."""

    __module__ = "ldpsample.datasets.download"
