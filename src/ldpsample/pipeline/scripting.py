"""Glue for the pipeline's thin scripts: logging to the rule's log file and the console,
parameter logging.

A script does three things: ``log = start(snakemake)``, one call into the library with plain
arguments, and an atomic write (:mod:`ldpsample.pipeline.io`). ``start`` sends Python logging,
warnings and stderr to ``snakemake.log[0]`` and records the rule, its wildcards and every
parameter, so a log says exactly what produced an output; the console (the script's own stderr,
which Snakemake shows) gets what a user watches a run for: progress (tqdm bars, the phases'
lines with rows done and rate, :mod:`ldpsample.pipeline.progress`), warnings, errors and a
failing job's traceback.

The ``snakemake`` object is passed in; Snakemake is not imported.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

from ldpsample.pipeline.progress import is_progress

__all__ = ["Tee", "start"]


class Tee:
    """A text stream writing to several (the log file and the console): what a script prints to
    stderr (tqdm bars, a traceback) lands in both."""

    def __init__(self, *streams: TextIO) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        # everything else (fileno, encoding) is the first stream's: the log file
        return getattr(self.streams[0], name)


class _ConsoleFilter(logging.Filter):
    """Progress lines and warnings and above: what the console shows of a job's log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or is_progress(record)


def _plain(value: Any) -> Any:
    """Snakemake's Namedlist/dict-like objects as plain Python for readable logs."""
    if hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def start(smk: Any) -> logging.Logger:
    """Route logs, warnings and stderr of a Snakemake ``script:`` to its first log file, and
    progress, warnings and errors to the console too.

    Parameters
    ----------
    smk
        The ``snakemake`` object Snakemake injects into scripts.

    Returns
    -------
    logging.Logger
        A logger named after the rule.
    """
    log_path = smk.log[0] if len(smk.log) else None
    handlers: list[logging.Handler] = []
    if log_path is not None:
        stream = open(log_path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - lives as long as the job
        console = sys.stderr
        sys.stderr = Tee(stream, console)
        handlers.append(logging.StreamHandler(stream))
        shown = logging.StreamHandler(console)
        shown.addFilter(_ConsoleFilter())
        handlers.append(shown)
    else:
        handlers.append(logging.StreamHandler(sys.stderr))
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
    logging.captureWarnings(True)
    logger = logging.getLogger(smk.rule)
    logger.info("rule %s, wildcards %s", smk.rule, _plain(dict(smk.wildcards.items())))
    logger.info("params %s", _plain(dict(smk.params.items())))
    logger.info("inputs %s", list(smk.input))
    logger.info("outputs %s", list(smk.output))
    logger.info("threads %s%s", smk.threads, _polars_pool())
    return logger


def _polars_pool() -> str:
    """Polars' thread pool, if the script has imported polars (the workflow sets it to the
    job's threads through POLARS_MAX_THREADS; common.smk)."""
    polars = sys.modules.get("polars")
    return f"; polars thread pool {polars.thread_pool_size()}" if polars is not None else ""
