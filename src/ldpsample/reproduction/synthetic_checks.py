"""The AISTATS paper's synthetic figure (Fig. 2) against ``results/synthetic/values.parquet``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import pairwise
from pathlib import Path

import polars as pl

from ldpsample.reproduction.outcome import Missing, Outcome
from ldpsample.reproduction.run_files import read_result

__all__ = ["fig2_crossover"]


def fig2_crossover(results: Path, ctx: Mapping[str, object], *, divergence: str) -> Outcome:
    """Mean over the runs per ``p1``: the mollifier lower near the uniform ``p``, the minimax
    sampler lower towards the point mass, exactly one switch, for every ``(n, ε)``."""
    df = read_result(results, "synthetic/values.parquet").filter(pl.col("divergence") == divergence)
    if df.is_empty():
        raise Missing(f"no {divergence} values in synthetic/values.parquet")
    mean = (
        df.group_by("n", "epsilon", "p1", "method")
        .agg(pl.col("value").mean())
        .pivot(on="method", index=["n", "epsilon", "p1"], values="value")
        .sort("n", "epsilon", "p1")
    )
    parts, ok = [], True
    for (n, eps), g in mean.group_by(["n", "epsilon"], maintain_order=True):
        better = (g["minimax"] < g["mollifier"]).to_list()
        p1 = g["p1"].to_list()
        switches = sum(a != b for a, b in pairwise(better))
        # crossover: mollifier lower near the uniform p, minimax lower towards the point mass
        shape = (not better[0]) and better[-1] and switches == 1
        cross = next((x for x, b in zip(p1, better, strict=True) if b), math.nan)
        ok &= shape
        parts.append(f"n={n} ε={eps:g}: minimax lower from p1≈{cross:.2f}, {switches} switch(es)")
    return Outcome("; ".join(parts), ok, "the crossover shape differs")
