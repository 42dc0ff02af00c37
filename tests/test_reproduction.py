"""Reproduction table: the verdict logic on hand-made results, the claims file
and its loader, the counts per verdict, and the stage in the DAG (its run on the default config
is checked on test_workflow.py's default run)."""

from __future__ import annotations

import json
import math
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import polars as pl
import pytest
from _workflow import ROOT, SHARED_DATA, copy_workflow, planned_jobs

from ldpsample.reproduction import (
    CLAIMS_FILE,
    COLUMNS,
    SOURCE_PATTERN,
    VERDICTS,
    ClaimsError,
    Outcome,
    count_verdicts,
    fraction_from_log,
    load_claims,
    partial_note,
    reproduction_table,
    rounds_to,
    run_data_notes,
    verdict,
    verdict_counts,
    within,
)
from ldpsample.reproduction.movielens_checks import rounded_win_shares

ALL_ON = {
    "synthetic": True,
    "theory": True,
    "movielens": True,
    "movielens_ml1m": False,
    "movielens_any": True,
    "avazu": False,
    "avazu_arxiv": False,
    "avazu_any": False,
    "wpm_ring": False,
    "wpm_movielens": True,
    "wpm_gowalla": False,
}
CONTEXT = {
    "movielens_variant": "prior~ml-100k_weight~count",
    "avazu_folder": "avazu",
    "ring_n": 10,
    "ring_r": 1.0,
    "theory_n": 10,
    "example_1": {"q": [0.01, 0.99], "p": [0.05, 0.95], "epsilon": 2.0},
    "seed": 0,
}
MOVIELENS_EXTRA = {"movielens_win_share_kl", "movielens_win_share_pooled"}
MOVIELENS_EXTRA |= {"movielens_improvement_kl", "movielens_improvement_pooled"}
EXTRA = MOVIELENS_EXTRA | {"aistats_avazu_click_rule"}


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


def _max_table(column: str, methods: tuple[str, str], wins: int, ties: int) -> pl.DataFrame:
    """48 cases (8 ε x 6 groups): minimax lower in the first ``wins``, equal to 2 decimals (but
    not exactly) in the next ``ties``, higher in the rest."""
    rows = []
    for k in range(48):
        eps, group = 1.0 + k // 6, f"g{k % 6}"
        minimax = 0.300 if k < wins else (0.301 if k < wins + ties else 0.500)
        for method, value in zip(methods, (minimax, 0.400 if k < wins else 0.302), strict=True):
            rows.append({"epsilon": eps, "group": group, "method": method, column: value})
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
    # Under the 2-decimal rule: 26 wins, 2 ties, 20 losses (54.2 % vs 41.7 %) on TV.
    _max_table("max_tv", ("minimax", "mollifier_tv"), 26, 2).write_csv(ml / "max_tv.csv")
    _max_table("max_kl", ("minimax_kl", "mollifier_kl"), 30, 0).write_csv(ml / "max_kl.csv")
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


def _table(results: Path, enabled=ALL_ON, **kwargs) -> dict[str, dict]:
    table = reproduction_table(
        results,
        enabled=enabled,
        data={"theory": "closed forms (no data)", "movielens": "partial (x)"},
        context=CONTEXT,
        **kwargs,
    )
    assert table.columns == list(COLUMNS)
    return {row["claim"]: row for row in table.iter_rows(named=True)}


# --------------------------------------------------------------------------------------------
# verdicts on hand-made results
# --------------------------------------------------------------------------------------------


def test_matching_value_is_reproduced(results: Path) -> None:
    rows = _table(results)
    assert rows["theorem1_risk"]["verdict"] == "reproduced"
    assert "LP optimum" in rows["theorem1_risk"]["run_value"]
    assert rows["movielens_win_share_tv"]["verdict"] == "reproduced"
    assert rows["movielens_win_share_tv"]["run_value"] == (
        "exact: minimax 54.2 % vs mollifier 41.7 % of 48; 2-decimal rule: 54.2 % vs 41.7 %, 2 ties"
    )
    assert rows["movielens_improvement_tv"]["verdict"] == "reproduced"
    assert rows["movielens_win_share_tv"]["data"] == "partial (x)"


def test_win_share_verdict_uses_the_notebooks_rounding(results: Path) -> None:
    """The exact shares match the paper but the 2-decimal rule leaves 10 ties: differs."""
    ml = results / "movielens" / CONTEXT["movielens_variant"]
    _max_table("max_tv", ("minimax", "mollifier_tv"), 20, 10).write_csv(ml / "max_tv.csv")
    row = _table(results)["movielens_win_share_tv"]
    assert row["verdict"].startswith("differs:"), row
    assert "2-decimal rule: 41.7 % vs 37.5 %, 10 ties" in row["run_value"]


def test_rounded_win_shares_count_ties() -> None:
    cases = pl.DataFrame(
        {
            "epsilon": [1.0, 1.0, 2.0, 2.0],
            "group": ["a", "b", "a", "b"],
            "minimax": [0.123, 0.5, 0.201, 0.30],
            "mollifier": [0.126, 0.4, 0.204, 0.31],
        }
    )
    # 0.12 < 0.13 win; 0.5 > 0.4 loss; 0.20 == 0.20 tie; 0.30 < 0.31 win
    assert rounded_win_shares(cases) == {"minimax": 0.5, "mollifier": 0.25, "ties": 1, "cases": 4}


def test_differing_value_says_why_and_links_the_doc(results: Path) -> None:
    rows = _table(results)
    gamma = rows["example1_gamma"]["verdict"]
    assert gamma.startswith("differs: erratum") and "docs/minimax.md#" in gamma
    # Example 1's TV(p, pK) = 0.0376 / 0.107 truncate to the printed 0.03 / 0.1
    assert rows["example1_tv"]["verdict"] == "reproduced"
    wpm = rows["wpm_hit1_ordering"]
    assert wpm["verdict"].startswith("differs:") and "docs/wpm-small-epsilon.md" in wpm["verdict"]
    assert "ε=0.25: wpm 0.057 < kpm_genre 0.064" in wpm["run_value"]
    # no split to rebuild in the context: the reason gives the standard errors instead
    assert "0.49 standard errors of the difference" in wpm["verdict"]


def test_rows_that_are_not_claims_are_extra(results: Path) -> None:
    rows = _table(results)
    for claim in MOVIELENS_EXTRA:
        verdict_cell = rows[claim]["verdict"]
        assert verdict_cell.startswith("extra: not a claim of the paper"), claim
        assert "docs/reproduction.md#movielens" in verdict_cell
        assert rows[claim]["run_value"], claim  # the value is still shown
    # The KL count is not the paper's, but an extra row never "differs".
    assert "62.5 %" in rows["movielens_win_share_kl"]["run_value"]


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


def test_rows_of_stages_that_did_not_run_are_not_run(results: Path) -> None:
    """The WPM ring statements and the arXiv Avazu summary need their stages (off here)."""
    rows = _table(results)
    for claim in ("wpm_proposition_3_2", "wpm_theorem_3_5", "arxiv_avazu_summary"):
        assert rows[claim]["verdict"].startswith("not run:"), claim
        assert rows[claim]["paper_value"] != "not available"


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
    for claim in ("avazu_summary", "avazu_fig3_gap", "avazu_c18_ninefold"):
        assert rows[claim]["verdict"].startswith(
            "not run: the Avazu stage ran but kept no subcategory"
        ), claim


def _avazu_max_tv(folder: Path, epsilon: float, attribute: str, cases: dict) -> None:
    """An Avazu max_tv.csv: subcategory -> (minimax, mollifier) worst-case TV."""
    folder.mkdir(parents=True, exist_ok=True)
    pl.DataFrame(
        [
            {
                "epsilon": epsilon,
                "attribute": attribute,
                "subcategory": sub,
                "method": method,
                "max_tv": value,
                "n_users": 1500,
            }
            for sub, pair in cases.items()
            for method, value in zip(("minimax", "mollifier_tv"), pair, strict=True)
        ]
    ).write_csv(folder / "max_tv.csv")


def test_avazu_ninefold_reads_c18_subcategory_2(results: Path) -> None:
    _avazu_max_tv(results / "avazu", 12.0, "C18", {2: (0.05, 0.46), 3: (0.2, 0.3)})
    row = _table(results, {**ALL_ON, "avazu": True})["avazu_c18_ninefold"]
    assert row["verdict"] == "reproduced" and row["run_value"].startswith("9.20-fold")


def test_avazu_arxiv_row_reads_the_variant_folder(results: Path) -> None:
    """The ≥ 1000-users row reads avazu_arxiv_folder (an avazu.variants folder), not avazu/."""
    folder = results / "avazu" / "min_users~1000"
    _avazu_max_tv(folder, 8.0, "C1", {1005: (0.2, 0.5), 1002: (0.3, 0.4)})
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


def test_fig4_overall_improvement_aggregates_the_groups(results: Path) -> None:
    ml = results / "movielens" / CONTEXT["movielens_variant"]
    rows = [
        {"epsilon": 5.0, "group": g, "method": m, "max_tv": v}
        for g, mm, mo in (("a", 0.1, 0.2), ("b", 0.3, 0.4))
        for m, v in (("minimax", mm), ("mollifier_tv", mo))
    ]
    pl.DataFrame(rows).write_csv(ml / "max_tv.csv")
    row = _table(results)["movielens_fig4_overall_improvement"]
    # 1 - 0.4 / 0.6 = 33.3 %; per group 50 % and 25 %: mean 37.5 %
    assert row["run_value"].startswith("33.3 % (1 − Σ minimax / Σ mollifier over 2 age groups)")
    assert "mean of per-group ratios 37.5 %" in row["run_value"]
    assert row["verdict"].startswith("differs")


def test_multi_stage_rows_list_the_data_of_the_stages_that_ran(results: Path) -> None:
    rows = _table(results)
    assert rows["tv_bound_2tv"]["data"] == "theory: closed forms (no data) | movielens: partial (x)"


# --------------------------------------------------------------------------------------------
# verdict helpers and counts
# --------------------------------------------------------------------------------------------


def test_verdict_helpers() -> None:
    assert verdict(Outcome("v", True)) == "reproduced"
    assert verdict(Outcome("v", False, "why (doc)")) == "differs: why (doc)"
    assert verdict(Outcome("v", False, "why"), kind="extra", extra_note="what") == "extra: what"
    with pytest.raises(ValueError, match="reason"):
        verdict(Outcome("v", False))
    with pytest.raises(ValueError, match="note"):
        verdict(Outcome("v", True), kind="extra")
    cells = ["reproduced", "differs: x", "not run: y", "extra: z", "not run: w"]
    assert count_verdicts(cells) == {"reproduced": 1, "differs": 1, "not run": 2, "extra": 1}
    with pytest.raises(ValueError, match="not a verdict"):
        count_verdicts(["maybe"])
    counts = verdict_counts(cells)
    assert counts.columns == ["verdict", "rows"] and counts["verdict"].to_list() == list(VERDICTS)
    assert rounds_to(0.034, "0.03") and not rounds_to(0.0376, "0.03") and rounds_to(0.107, "0.1")
    assert rounds_to(9.2, "9") and not rounds_to(9.6, "9") and not rounds_to(math.nan, "9")


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
    assert run_data_notes()["wpm_movielens"].startswith("unknown")
    wpm_log = tmp_path / "wpm.log"
    wpm_log.write_text("setup: 1 input movies\n")
    assert run_data_notes(wpm_movielens_log=wpm_log)["wpm_movielens"] == "full (ML-100K)"
    wpm_log.write_text(
        "ml-100k ratings (u.data) is a PARTIAL copy: 50000 of 100000 official rows\n"
    )
    assert run_data_notes(wpm_movielens_log=wpm_log)["wpm_movielens"] == (
        "ML-100K partial (50,000/100,000 ratings, 50 %)"
    )


# --------------------------------------------------------------------------------------------
# the claims file
# --------------------------------------------------------------------------------------------


def test_shipped_claims_file_is_complete() -> None:
    papers, claims = load_claims()
    ids = [c.id for c in claims]
    assert len(ids) == len(set(ids)) == 43
    # the issue's claims each have a row
    for claim in (
        "movielens_fig4_overall_improvement",
        "avazu_c18_ninefold",
        "arxiv_avazu_summary",
        "tv_bound_2tv",
        "lemma1_worst_case",
        "corollary2_randomized_response",
        "proposition1_binary",
        "wpm_theorem_4_3_linear_rate",
        "wpm_gap_grows_with_epsilon",
        "wpm_proposition_3_2",
        "wpm_proposition_3_3",
        "wpm_theorem_3_4",
        "wpm_theorem_3_5",
        "lemma3_diagonal",
        "theorem2_kernel",
        "wpm_vanilla_bregman",
        "aistats_ml100k_size",
        "aistats_ml1m_size",
        "aistats_avazu_rows",
        "wpm_gowalla_size",
        "aistats_avazu_click_rule",
        "aistats_closed_form_vs_lp",
    ):
        assert claim in ids, claim
    # every row is a claim with a check: nothing is left "not available"
    assert all(c.check and not c.unavailable for c in claims)
    assert {c.id for c in claims if c.kind == "extra"} == EXTRA
    assert set(papers) == {"aistats", "arxiv", "wpm"}
    # every claim is documented
    doc = (ROOT / "docs" / "reproduction.md").read_text()
    for claim in ids:
        assert f"`{claim}`" in doc, claim


PAPERS = ROOT.parent / "shared" / "papers"


def test_sources_cite_the_papers_not_an_issue() -> None:
    """Every source names a text of its own paper, a place and a quoted sentence; neither the
    claims file nor docs/paper-vs-code.md cites an issue."""
    _, claims = load_claims()
    for claim in claims:
        match = SOURCE_PATTERN.match(claim.source)
        assert match, claim.id
        assert "issue" not in claim.source.lower(), claim.id
    for path in (CLAIMS_FILE, ROOT / "docs" / "paper-vs-code.md"):
        assert "issue" not in path.read_text(encoding="utf-8").lower(), path


@pytest.mark.skipif(not PAPERS.is_dir(), reason=f"the papers' text not found at {PAPERS}")
def test_every_quote_is_in_the_cited_text() -> None:
    """The quoted sentence of every source occurs in the file it names (whitespace folded)."""

    def fold(text: str) -> str:
        return re.sub(r"\s+", " ", text)

    texts: dict[str, str] = {}
    for claim in load_claims()[1]:
        match = SOURCE_PATTERN.match(claim.source)
        name = match["file"]
        if name not in texts:
            texts[name] = fold((PAPERS / name).read_text(encoding="utf-8"))
        assert fold(match["quote"]) in texts[name], claim.id


def test_claims_file_ships_with_the_package() -> None:
    """The claims file is package data (a pip install carries it), not a file of the checkout."""
    assert CLAIMS_FILE.is_file()
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["ldpsample"]
    assert any(fnmatch("reproduction/claims.toml", pattern) for pattern in package_data)


def _claims_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "claims.toml"
    path.write_text('[papers]\naistats = "A"\n\n[texts]\n"a.txt" = "aistats"\n\n' + body)
    return path


GOOD = """[[claim]]
id = "x"
paper = "aistats"
location = "Fig. 1"
source = 'a.txt, §1: "the sentence"'
quoted = "1"
computed = "c"
check = "theory_checks.example1_tv"
experiment = ["theory"]
data = ["theory"]
tolerance = "t"
why = "w"
kind = "claim"
"""


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.replace('location = "Fig. 1"\n', ""), r"claim #1 \(x\): key 'location'"),
        (lambda s: s.replace('"theory_checks.example1_tv"', '"os.system"'), "key 'check'"),
        (lambda s: s.replace("example1_tv", "nope"), "not a function"),
        (lambda s: s + "args = { bogus = 1 }\n", "key 'args' does not fit"),
        (lambda s: s.replace('kind = "claim"', 'kind = "extra"'), "needs a 'note'"),
        (lambda s: s.replace('["theory"]\ndata', '["thoery"]\ndata'), "unknown experiment"),
        (lambda s: s.replace('paper = "aistats"', 'paper = "nips"'), "key 'paper'"),
        (lambda s: s + "\n" + s, "key 'id': 'x' is repeated"),
        (lambda s: s.replace('check = "theory_checks.example1_tv"', 'check = ""'), "unavailable"),
        (lambda s: s.replace("[[claim]]", "[[claim"), "not valid TOML"),
        (lambda s: s.replace("source = 'a.txt, §1: \"the sentence\"'\n", ""), "key 'source'"),
        (lambda s: s.replace('"the sentence"', "the sentence"), "key 'source' must read"),
        (lambda s: s.replace("a.txt", "b.txt"), "'b.txt' is not a text of paper 'aistats'"),
    ],
)
def test_malformed_claims_name_the_file_and_key(tmp_path, change, message) -> None:
    path = _claims_file(tmp_path, change(GOOD))
    with pytest.raises(ClaimsError, match=message) as info:
        load_claims(path)
    assert str(info.value).splitlines()[0].startswith(str(path))


def test_a_claims_file_drives_the_table(results: Path, tmp_path: Path) -> None:
    body = GOOD + GOOD.replace('id = "x"', 'id = "y"').replace(
        'kind = "claim"', 'kind = "claim"\nunavailable = "not in the paper we have"'
    )
    table = reproduction_table(
        results,
        enabled=ALL_ON,
        data={"theory": "none"},
        context=CONTEXT,
        claims=_claims_file(tmp_path, body),
    )
    assert table["claim"].to_list() == ["x", "y"]
    assert table["paper"].to_list() == ['A, Fig. 1 [a.txt, §1: "the sentence"]'] * 2
    assert table["tolerance"].to_list() == ["t (w)"] * 2
    assert table["verdict"][0] == "reproduced"  # 0.0376 / 0.107 truncate to 0.03 / 0.1
    # the check still computes the run's value; the verdict says why nothing is compared
    assert table["run_value"][1] == table["run_value"][0] != ""
    assert table["verdict"][1] == "not run: not in the paper we have"


# --------------------------------------------------------------------------------------------
# the README and the docs state the counts of the documented paper run
# --------------------------------------------------------------------------------------------


def _documented_run_rows() -> list[list[str]]:
    doc = (ROOT / "docs" / "reproduction.md").read_text()
    section = doc.split("## The paper configuration on the shared data", 1)[1].split("\n## ", 1)[0]
    return [
        [cell.strip() for cell in line.strip("|").split(" | ")]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith(("| claim", "| ---"))
    ]


def test_readme_counts_are_those_of_the_documented_run() -> None:
    rows = _documented_run_rows()
    assert [row[0] for row in rows] == [c.id for c in load_claims()[1]]
    counts = count_verdicts(row[-1] for row in rows)
    readme = (ROOT / "README.md").read_text()
    stated = re.search(
        r"(\d+) rows: (\d+) reproduced, (\d+) differ, (\d+) not run and (\d+) extra", readme
    )
    assert stated, "the README's reproduction paragraph lost its counts"
    assert [int(x) for x in stated.groups()] == [
        len(rows),
        counts["reproduced"],
        counts["differs"],
        counts["not run"],
        counts["extra"],
    ]


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
