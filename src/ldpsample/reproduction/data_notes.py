"""The ``data`` cell of each row: full data, a partial copy with its fraction, generated data.

The fractions come from the run's own records: the ``movielens_data`` job's log names a partial
copy with its row count, and the Avazu conversion's ``train.json`` holds its rows. Nothing here
reads the data itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = [
    "ML1M_SHARED_RATINGS",
    "OFFICIAL_ROWS",
    "fraction_from_log",
    "partial_note",
    "run_data_notes",
]

#: Official data rows (as in ldpsample.datasets: detect partial copies).
OFFICIAL_ROWS = {"ml-1m": 1_000_209, "ml-100k": 100_000, "avazu": 40_428_967}

#: Ratings in the shared partial ML-1M copy (../shared/data/ml-1m/ratings.dat.gz), used only when
#: the run's log does not record the count (docs/reproduction.md).
ML1M_SHARED_RATINGS = 487_650


def fraction_from_log(text: str, dataset: str) -> tuple[int, int] | None:
    """``(rows, official)`` from a log line ``<dataset> <role> (...) is a PARTIAL copy: R of N``."""
    match = re.search(rf"{re.escape(dataset)} \w+ \(.*?\) is a PARTIAL copy: (\d+) of (\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def partial_note(rows: int | None, official: int, what: str) -> str:
    """``full`` or ``partial (rows/official what, x %)`` (``rows`` None: unknown)."""
    if rows is None:
        return f"unknown ({what})"
    if rows >= official:
        return "full"
    return f"partial ({rows:,}/{official:,} {what}, {100 * rows / official:.3g} %)"


def run_data_notes(
    *,
    movielens_log: str | Path | None = None,
    avazu_stats: str | Path | None = None,
    avazu_source: str = "kaggle",
    wpm_gowalla: str = "not available",
    wpm_movielens_log: str | Path | None = None,
) -> dict[str, str]:
    """The ``data`` cells, from the run's own records where it keeps them.

    * MovieLens: the ``movielens_data`` job's log names a PARTIAL copy with its row count
      (no such line: the files were complete; no log: unknown, and the note names
      :data:`ML1M_SHARED_RATINGS`, the shared copy's count, as a hint only);
    * Avazu: the conversion's ``train.json`` (``rows``) against the official 40,428,967 rows;
      ``avazu_source: synthetic`` is ``generated``;
    * WPM MovieLens: a ``wpm_movielens_part`` job's log, which names a PARTIAL ML-100K copy
      the same way (no log: ``unknown``); Gowalla: ``wpm_gowalla`` as given by the caller
      (which file the config reads).
    """
    notes = {"synthetic": "generated", "theory": "closed forms (no data)", "generated": "generated"}
    if movielens_log is not None and Path(movielens_log).is_file():
        text = Path(movielens_log).read_text(errors="replace")
        ml1m = fraction_from_log(text, "ml-1m")
        ml100k = fraction_from_log(text, "ml-100k")
        parts = [
            "ML-1M " + (partial_note(*ml1m, "ratings") if ml1m else "full"),
            "ML-100K " + (partial_note(*ml100k, "ratings") if ml100k else "full"),
        ]
        notes["movielens"] = "; ".join(parts)
    else:
        notes["movielens"] = (
            "unknown: no movielens_data log (the shared copy holds "
            f"{ML1M_SHARED_RATINGS:,}/{OFFICIAL_ROWS['ml-1m']:,} ML-1M ratings)"
        )
    if avazu_source == "synthetic":
        notes["avazu"] = "generated (Avazu-shaped log, not the paper's data)"
    elif avazu_stats is not None and Path(avazu_stats).is_file():
        rows = int(json.loads(Path(avazu_stats).read_text())["rows"])
        notes["avazu"] = partial_note(rows, OFFICIAL_ROWS["avazu"], "rows")
    else:
        notes["avazu"] = "unknown: no conversion stats"
    if wpm_movielens_log is not None and Path(wpm_movielens_log).is_file():
        ml100k = fraction_from_log(Path(wpm_movielens_log).read_text(errors="replace"), "ml-100k")
        notes["wpm_movielens"] = (
            f"ML-100K {partial_note(*ml100k, 'ratings')}" if ml100k else "full (ML-100K)"
        )
    else:
        notes["wpm_movielens"] = "unknown: no wpm_movielens_part log (ML-100K)"
    notes["wpm_gowalla"] = wpm_gowalla
    return notes
