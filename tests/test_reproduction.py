"""Reproduction table (issue 14): verdict logic on hand-made results, and the stage in the DAG
(its run on the default config is checked on test_workflow.py's default run)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from _workflow import SHARED_DATA, copy_workflow, planned_jobs

from ldpsample.reproduction import (
    COLUMNS,
    fraction_from_log,
    partial_note,
    reproduction_table,
    run_data_notes,
    within,
)

ALL_ON = {
    "synthetic": True,
    "theory": True,
    "movielens": True,
    "movielens_ml1m": False,
    "avazu": False,
    "avazu_arxiv": False,
    "wpm_ring": False,
    "wpm_movielens": True,
    "wpm_gowalla": False,
}
CONTEXT = {"movielens_variant": "prior~ml-100k_weight~count", "avazu_folder": "avazu", "ring_n": 10}


def _summary(tv, kl) -> pl.DataFrame:
    """A MovieLens summary.csv: (minimax, mollifier) win shares and improvements per divergence."""
    rows = []
    for divergence, ((s_mm, i_mm), (s_mo, i_mo)) in (("tv", tv), ("kl", kl)):
        for method, share, imp in (("minimax", s_mm, i_mm), ("mollifier", s_mo, i_mo)):
            rows.append(
                {
                    "divergence": divergence,
                    "method": method,
                    "wins": round(share * 48),
                    "ties": 2,
                    "cases": 48,
                    "win_share": share,
                    "mean_improvement": imp,
                }
            )
    return pl.DataFrame(rows)


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    (root / "theory").mkdir(parents=True)
    # Example 1 exactly as the library computes it (0.0376 / 0.107; Γ_TV 0.93 / 0.12).
    pl.DataFrame(
        {
            "prior": ["public q", "uniform"],
            "tv_of_p": [0.0376, 0.1073],
            "gamma_tv": [0.99 / (0.01 * math.e**2 + 0.99), 1 / (math.e**2 + 1)],
        }
    ).write_csv(root / "theory" / "example_1.csv")
    q, eps = 0.001, 1.0
    d = math.e * q + 1 - q
    pl.DataFrame(
        {
            "prior": ["q_min=0.001"] * 2,
            "q_min": [q, q],
            "epsilon": [eps, eps],
            "divergence": ["tv", "kl"],
            "risk": [(1 - q) / d, math.log(d / (math.e * q))],
        }
    ).write_csv(root / "theory" / "risk.csv")
    ml = root / "movielens" / CONTEXT["movielens_variant"]
    ml.mkdir(parents=True)
    # TV matches the paper (26/48, 20/48; 0.11 vs 0.03); KL does not.
    _summary(((26 / 48, 0.112), (20 / 48, 0.031)), ((0.625, 0.2), (0.375, 0.01))).write_csv(
        ml / "summary.csv"
    )
    (root / "wpm_movielens").mkdir()
    pl.DataFrame(
        {
            "epsilon": [0.25, 0.25, 1.0, 1.0],
            "method": ["wpm", "kpm_genre", "wpm", "kpm_genre"],
            "scale": [0.9] * 4,
            "hit_rate_mean": [0.057, 0.064, 0.12, 0.10],
            "hit_rate_se": [0.01] * 4,
            "n_users": [100] * 4,
        }
    ).write_csv(root / "wpm_movielens" / "test.csv")
    return root


def _table(results: Path, enabled=ALL_ON) -> dict[str, dict]:
    table = reproduction_table(
        results,
        enabled=enabled,
        data={"theory": "closed forms (no data)", "movielens": "partial (x)"},
        context=CONTEXT,
    )
    assert table.columns == list(COLUMNS)
    return {row["claim"]: row for row in table.iter_rows(named=True)}


def test_matching_value_is_reproduced(results: Path) -> None:
    rows = _table(results)
    assert rows["theorem1_risk"]["verdict"] == "reproduced"
    assert rows["example1_tv"]["verdict"] == "reproduced"
    assert rows["movielens_win_share_tv"]["verdict"] == "reproduced"
    assert rows["movielens_win_share_tv"]["run_value"].startswith(
        "minimax 54.2 % vs mollifier 41.7 %"
    )
    assert rows["movielens_improvement_tv"]["verdict"] == "reproduced"
    assert rows["movielens_win_share_tv"]["data"] == "partial (x)"


def test_differing_value_says_why_and_links_the_doc(results: Path) -> None:
    rows = _table(results)
    gamma = rows["example1_gamma"]["verdict"]
    assert gamma.startswith("differs: erratum") and "docs/minimax.md#" in gamma
    kl = rows["movielens_win_share_kl"]["verdict"]
    assert kl.startswith("differs:") and "TV-only" in kl and "docs/reproduction.md#movielens" in kl
    wpm = rows["wpm_hit1_ordering"]
    assert wpm["verdict"].startswith("differs:") and "docs/wpm-small-epsilon.md" in wpm["verdict"]
    assert "ε=0.25: wpm 0.057 < kpm_genre 0.064" in wpm["run_value"]


def test_wrong_closed_form_differs(results: Path) -> None:
    risk = pl.read_csv(results / "theory" / "risk.csv").with_columns(pl.col("risk") + 1e-6)
    risk.write_csv(results / "theory" / "risk.csv")
    assert _table(results)["theorem1_risk"]["verdict"].startswith("differs")


def test_missing_experiment_is_not_run(results: Path) -> None:
    rows = _table(results)
    for claim in (
        "avazu_summary",
        "arxiv_fig4_18_24",
        "wpm_gowalla_w1_ordering",
        "fig2_crossover_tv",
    ):
        assert rows[claim]["verdict"].startswith("not run:"), claim
        assert rows[claim]["data"] == "not available"
        assert rows[claim]["run_value"] == ""
    # switched on but its output is absent: not run, naming the file
    rows = _table(results, {**ALL_ON, "wpm_gowalla": True})
    assert (
        rows["wpm_gowalla_w1_ordering"]["verdict"]
        == "not run: wpm_gowalla/w1.csv not in this run's results"
    )


def test_avazu_without_cases_is_not_run(results: Path) -> None:
    (results / "avazu").mkdir()
    pl.DataFrame(
        {
            "divergence": ["tv"] * 2,
            "method": ["minimax", "mollifier"],
            "wins": [0, 0],
            "ties": [0, 0],
            "cases": [0, 0],
            "win_share": [None, None],
            "mean_improvement": [None, None],
        },
        schema_overrides={"win_share": pl.Float64, "mean_improvement": pl.Float64},
    ).write_csv(results / "avazu" / "summary.csv")
    pl.DataFrame(
        schema={
            "epsilon": pl.Float64,
            "attribute": pl.String,
            "subcategory": pl.Int64,
            "method": pl.String,
            "max_tv": pl.Float64,
            "n_users": pl.Int64,
        }
    ).write_csv(results / "avazu" / "max_tv.csv")
    rows = _table(results, {**ALL_ON, "avazu": True})
    for claim in ("avazu_summary", "avazu_fig3_gap"):
        assert rows[claim]["verdict"].startswith(
            "not run: the Avazu stage ran but kept no subcategory"
        )


def test_avazu_arxiv_row_reads_the_variant_folder(results: Path) -> None:
    """The ≥ 1000-users row reads avazu_arxiv_folder (an avazu.variants folder), not avazu/."""
    folder = results / "avazu" / "min_users~1000"
    folder.mkdir(parents=True)
    pl.DataFrame(
        {
            "epsilon": [8.0] * 4,
            "attribute": ["C1"] * 4,
            "subcategory": [1005, 1005, 1002, 1002],
            "method": ["minimax", "mollifier_tv"] * 2,
            "max_tv": [0.2, 0.5, 0.3, 0.4],
            "n_users": [1500, 1500, 1200, 1200],
        }
    ).write_csv(folder / "max_tv.csv")
    context = {**CONTEXT, "avazu_arxiv_folder": "avazu/min_users~1000"}
    table = reproduction_table(
        results, enabled={**ALL_ON, "avazu_arxiv": True}, data={}, context=context
    )
    row = table.filter(pl.col("claim") == "avazu_arxiv_1000_users").row(0, named=True)
    assert row["verdict"] == "reproduced", row
    assert row["run_value"].startswith("minimax lower in 100.0 % of 2")


def test_arxiv_fig4_reads_the_youngest_group(results: Path) -> None:
    folder = results / "movielens" / "prior~ml-1m_weight~count"
    folder.mkdir(parents=True)
    pl.DataFrame(
        {
            "epsilon": [4.0, 4.0, 4.0, 4.0],
            "group": ["0-24", "0-24", "25-34", "25-34"],
            "method": ["minimax", "mollifier_tv"] * 2,
            "max_tv": [0.25, 0.615, 0.9, 0.1],
            "n_users": [715, 715, 941, 941],
        }
    ).write_csv(folder / "max_tv.csv")
    row = _table(results, {**ALL_ON, "movielens_ml1m": True})["arxiv_fig4_18_24"]
    assert row["verdict"] == "reproduced" and row["run_value"] == "RM-TV 0.615 vs minimax 0.250"


def test_helpers() -> None:
    assert (
        within(0.0376, 0.03, 0.01) and not within(0.05, 0.03, 0.01) and not within(math.nan, 0, 1)
    )
    line = (
        "ml-1m ratings (/d/ml-1m/ratings.dat.gz) is a PARTIAL copy: 487650 of 1000209 official rows"
    )
    assert fraction_from_log(line, "ml-1m") == (487650, 1000209)
    assert fraction_from_log(line, "ml-100k") is None
    assert partial_note(487650, 1000209, "ratings") == "partial (487,650/1,000,209 ratings, 48.8 %)"
    assert partial_note(10, 10, "rows") == "full"


def test_data_notes_from_the_run(tmp_path: Path) -> None:
    log = tmp_path / "ml.log"
    log.write_text(
        "x ml-1m ratings (r.dat.gz) is a PARTIAL copy: 487650 of 1000209 official rows\n"
    )
    stats = tmp_path / "train.json"
    stats.write_text(json.dumps({"rows": 10000, "partial": True}))
    notes = run_data_notes(movielens_log=log, avazu_stats=stats, wpm_gowalla="derived")
    assert notes["movielens"] == "ML-1M partial (487,650/1,000,209 ratings, 48.8 %); ML-100K full"
    assert notes["avazu"] == "partial (10,000/40,428,967 rows, 0.0247 %)"
    assert notes["wpm_gowalla"] == "derived"
    assert run_data_notes(avazu_source="synthetic")["avazu"].startswith("generated")
    assert run_data_notes()["movielens"].startswith("unknown")


@pytest.mark.workflow
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"shared data not found at {SHARED_DATA}")
def test_paper_config_dag_includes_the_stage(tmp_path: Path) -> None:
    workdir = copy_workflow(tmp_path / "wf")
    (workdir / "resources").mkdir(exist_ok=True)
    jobs = planned_jobs(
        workdir,
        "--configfile",
        "config/paper.yaml",
        "--config",
        f"data_dir={SHARED_DATA.resolve()}",
    )
    assert jobs.get("reproduction") == 1
    assert jobs.get("movielens_aggregate", 0) >= 1 and jobs.get("wpm_gowalla_combine") == 1
    # the AISTATS threshold in results/avazu/, the arXiv one in results/avazu/min_users~1000/
    assert jobs.get("avazu_aggregate") == 2
