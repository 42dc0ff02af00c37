"""The papers' Avazu claims against ``results/avazu/`` (AISTATS threshold, 100 users) and the
folder of the run with the arXiv threshold (``context['avazu_arxiv_folder']``, >= 1000 users).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import polars as pl

from ldpsample.reproduction.outcome import Missing, Outcome, rounds_to, within
from ldpsample.reproduction.run_files import read_result

__all__ = ["fig3_gap", "ninefold", "summary"]

DOC = "docs/reproduction.md#avazu"
NO_CASES = (
    "the Avazu stage ran but kept no subcategory (0 cases: none reaches the user threshold on "
    f"this copy; {DOC})"
)


def _folder(ctx: Mapping[str, object], threshold: str) -> str:
    if threshold == "arxiv":
        return str(ctx.get("avazu_arxiv_folder") or ctx["avazu_folder"])
    return str(ctx["avazu_folder"])


def _summary_rows(results: Path, folder: str) -> tuple[dict, dict]:
    """The minimax and mollifier TV rows of a run's summary.csv (:class:`Missing` without
    cases)."""
    df = read_result(results, f"{folder}/summary.csv")
    if "divergence" in df.columns:
        df = df.filter(pl.col("divergence") == "tv")
    if df.is_empty() or int(df["cases"].max() or 0) == 0:
        raise Missing(NO_CASES)
    rows = {r["method"]: r for r in df.iter_rows(named=True)}
    return rows["minimax"], rows["mollifier"]


def _shown(mm: dict, mo: dict) -> str:
    return (
        f"{100 * mm['win_share']:.1f} % ({mm['mean_improvement']:.3f}) vs "
        f"{100 * mo['win_share']:.1f} % ({mo['mean_improvement']:.3f}) of {int(mm['cases'])}"
    )


def summary(
    results: Path,
    ctx: Mapping[str, object],
    *,
    minimax: float,
    mollifier: float,
    minimax_improvement: float,
    mollifier_improvement: float,
    tol_share: float,
    tol_minimax_improvement: float,
    tol_mollifier_improvement: float,
    threshold: str = "aistats",
) -> Outcome:
    """Win shares and mean improvements (TV) of one run's summary.csv: the AISTATS run
    (``threshold="aistats"``, ≥ 100 users) or the arXiv version's (``"arxiv"``, ≥ 1000)."""
    mm, mo = _summary_rows(results, _folder(ctx, threshold))
    ok = (
        within(mm["win_share"], minimax, tol_share)
        and within(mo["win_share"], mollifier, tol_share)
        and within(mm["mean_improvement"], minimax_improvement, tol_minimax_improvement)
        and within(mo["mean_improvement"], mollifier_improvement, tol_mollifier_improvement)
    )
    return Outcome(_shown(mm, mo), ok, f"the summary differs on this data ({DOC})")


def _wide(results: Path, folder: str) -> pl.DataFrame:
    df = read_result(results, f"{folder}/max_tv.csv")
    if df.is_empty():
        raise Missing(NO_CASES)
    return df.pivot(on="method", index=["epsilon", "attribute", "subcategory"], values="max_tv")


def fig3_gap(results: Path, ctx: Mapping[str, object], *, threshold: str = "aistats") -> Outcome:
    """The ordering of Fig. 3: minimax's max TV below the mollifier's in most (ε, subcategory)
    cases, with a positive mean gap (``threshold="arxiv"``: the >= 1000-user run)."""
    wide = _wide(results, _folder(ctx, threshold))
    gap = wide["mollifier_tv"] - wide["minimax"]
    share = float((gap > 0).mean())
    return Outcome(
        f"minimax lower in {100 * share:.1f} % of {wide.height} (ε, subcategory); "
        f"mean gap {gap.mean():.3f}",
        share > 0.5 and float(gap.mean()) > 0,
        f"the gap does not favour minimax on this data ({DOC})",
    )


def ninefold(
    results: Path,
    ctx: Mapping[str, object],
    *,
    attribute: str,
    subcategory: str,
    epsilon: float,
    paper: str,
) -> Outcome:
    """The ratio of the mollifier's max TV to the minimax sampler's in one subcategory (Fig. 3:
    C18 at ε = 12, the published notebook's settings); ``paper`` is the printed factor, matched
    by rounding (``"9"``: [8.5, 9.5])."""
    wide = _wide(results, _folder(ctx, "aistats")).filter(
        (pl.col("attribute") == attribute)
        & (pl.col("subcategory").cast(pl.String) == subcategory)
        & (pl.col("epsilon") == epsilon)
    )
    if wide.is_empty():
        raise Missing(
            f"{attribute} subcategory {subcategory} at ε = {epsilon:g} was not kept in this run "
            f"({DOC})"
        )
    row = wide.row(0, named=True)
    ratio = row["mollifier_tv"] / row["minimax"]
    return Outcome(
        f"{ratio:.2f}-fold (RM-TV {row['mollifier_tv']:.3f} vs minimax {row['minimax']:.3f})",
        rounds_to(ratio, paper),
        f"the ratio differs on this data ({DOC})",
    )
