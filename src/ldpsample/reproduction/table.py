"""The reproduction table: one row per claim of the claims file, with its verdict.

Only files under the results folder are read (the experiments that the config switched on); a
claim whose experiment did not run gets ``not run``. Which experiments ran, and the data notes
(partial fractions, Gowalla source), come from the caller (the Snakemake rule passes them from
the config and the run's logs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from ldpsample.reproduction.claims import DATA_KEYS, Claim, load_claims
from ldpsample.reproduction.outcome import VERDICTS, Missing, count_verdicts, verdict

__all__ = ["COLUMNS", "COUNT_COLUMNS", "reproduction_table", "verdict_counts"]

#: Columns of ``results/reproduction.csv``.
COLUMNS = ("claim", "paper", "paper_value", "run_value", "data", "check", "tolerance", "verdict")
#: Columns of ``results/reproduction_counts.csv``.
COUNT_COLUMNS = ("verdict", "rows")


def _paper_cell(papers: Mapping[str, str], claim: Claim) -> str:
    return f"{papers[claim.paper]}, {claim.location} [{claim.source}]"


def _data_cell(claim: Claim, data: Mapping[str, str], enabled: Mapping[str, bool]) -> str:
    """The claim's data note; a claim reading several stages lists those that ran."""
    if len(claim.data) == 1:
        return data.get(claim.data[0], "not available")
    notes = [
        f"{key}: {data[key]}"
        for key in claim.data
        if key in data and enabled.get(DATA_KEYS[key], False)
    ]
    return " | ".join(notes) or "not available"


def _row(
    claim: Claim,
    root: Path,
    ctx: Mapping[str, object],
    enabled: Mapping[str, bool],
    reasons: Mapping[str, str],
) -> dict[str, str]:
    ran = not claim.experiment or any(enabled.get(e, False) for e in claim.experiment)
    if not ran:
        why = claim.unavailable or reasons.get(
            claim.experiment[0], "experiment switched off in the config"
        )
        return {"run_value": "", "data": "not available", "verdict": f"not run: {why}"}
    check = claim.function()
    try:
        outcome = check(root, ctx, **claim.args) if check is not None else None
    except Missing as exc:
        return {"run_value": "", "verdict": f"not run: {claim.unavailable or exc}"}
    run_value = outcome.run_value if outcome is not None else ""
    if claim.unavailable or outcome is None:
        return {"run_value": run_value, "verdict": f"not run: {claim.unavailable}"}
    return {
        "run_value": run_value,
        "verdict": verdict(outcome, kind=claim.kind, extra_note=claim.note),
    }


def reproduction_table(
    results: str | Path,
    *,
    enabled: Mapping[str, bool],
    data: Mapping[str, str],
    context: Mapping[str, object] | None = None,
    not_run: Mapping[str, str] | None = None,
    claims: str | Path | None = None,
) -> pl.DataFrame:
    """One row per claim of the claims file (columns :data:`COLUMNS`).

    Parameters
    ----------
    results
        The run's results folder.
    enabled
        Experiment -> whether this run's config switched it on (a missing key: off); keys as
        :data:`ldpsample.reproduction.claims.EXPERIMENTS`.
    data
        Data key -> the ``data`` cell (``full``, ``partial (...)``, ``generated``).
    context
        Values the checks need (the rule passes them from the config): ``movielens_variant``,
        ``movielens_variants``, ``avazu_folder``, ``avazu_folders``, ``avazu_arxiv_folder``,
        ``avazu_attributes``, ``ring_n``, ``theory_n``, ``example_1``, ``seed``,
        ``wpm_movielens_setup``, ``wpm_base_measure``. ``enabled`` is added to it.
    not_run
        Experiment -> why it is off (default: "experiment switched off in the config").
    claims
        A claims file (default: the one shipped with the package).
    """
    papers, rows_of = load_claims(claims)
    root = Path(results)
    ctx = {**dict(context or {}), "enabled": dict(enabled)}
    reasons = dict(not_run or {})
    rows = []
    for claim in rows_of:
        row = {
            "claim": claim.id,
            "paper": _paper_cell(papers, claim),
            "paper_value": claim.quoted,
            "data": _data_cell(claim, data, enabled),
            "check": claim.computed,
            "tolerance": f"{claim.tolerance} ({claim.why})",
        }
        row.update(_row(claim, root, ctx, enabled, reasons))
        rows.append(row)
    return pl.DataFrame(rows, schema=dict.fromkeys(COLUMNS, pl.String())).select(COLUMNS)


def verdict_counts(table: pl.DataFrame | Sequence[str]) -> pl.DataFrame:
    """Rows per verdict kind (``reproduced``, ``differs``, ``not run``, ``extra``, zeros
    included) of a reproduction table or of its ``verdict`` cells."""
    cells = table["verdict"].to_list() if isinstance(table, pl.DataFrame) else list(table)
    counts = count_verdicts(cells)
    return pl.DataFrame(
        {"verdict": list(VERDICTS), "rows": [counts[v] for v in VERDICTS]},
        schema={"verdict": pl.String(), "rows": pl.Int64()},
    )
