"""Glue for the pipeline's thin scripts: logging to the rule's log file, parameter logging.

Uses: the standard library only; the ``snakemake`` object is passed in, Snakemake is not imported.

A script does three things: ``log = start(snakemake)``, one call into the library with plain
arguments, and an atomic write (:mod:`ldpsample.pipeline.io`). ``start`` sends Python logging,
warnings and progress bars (tqdm writes to stderr) to ``snakemake.log[0]`` and records the rule,
its wildcards and every parameter, so a log says exactly what produced an output.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

__all__ = ["start"]


def _plain(value: Any) -> Any:
    """Snakemake's Namedlist/dict-like objects as plain Python for readable logs."""
    if hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def start(smk: Any) -> logging.Logger:
    """Route logs, warnings and stderr of a Snakemake ``script:`` to its first log file.

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
    if log_path is not None:
        stream = open(log_path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - lives as long as the job
        sys.stderr = stream
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
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
