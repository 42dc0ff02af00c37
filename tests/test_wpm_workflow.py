"""The WPM stages through Snakemake, in a temporary copy of the project, on the real
data in ../shared/data with a small config: table contents, figures, per-ε scale-out, the
"auto" toggles and the Gowalla source option; the sphere stage's tables and figure."""

from __future__ import annotations

import itertools
import math
import struct

import numpy as np
import polars as pl
import pytest
import yaml
from _workflow import (
    ROOT,
    SHARED_DATA,
    copy_workflow,
    need_shared_data,
    planned_jobs,
    snakemake,
    write_config,
)

from ldpsample.experiments.wpm_sphere import sphere_scales

pytestmark = pytest.mark.workflow

#: What the WPM stages read from the shared data copies.
WPM_DATA = (
    "ml-100k/u.data",
    "gowalla/derived-LBSNDatasets-Gowalla_3/gowalla3_austin.tsv",
    "gowalla/loc-gowalla_totalCheckins.first-10000-lines.txt",
)
GOWALLA_PREFIX = SHARED_DATA / WPM_DATA[2]

RING = {
    "n": 60,
    "r": 1.0,
    "alpha": 0.3,
    "epsilons": [1, 4],
    "convergence": {
        "epsilon": 1.0,
        "etas": [0.05, 0.01],
        "inputs": 2,
        "max_iter": 400,
        "variant": "dykstra",
    },
}
MOVIELENS = {
    "epsilons": [0.5, 2, 8],
    "methods": ["wpm", "kpm_genre", "exponential"],
    "n_components": 32,
    "n_outputs": 120,
    "n_scales": 3,
    "max_validation_users": 25,
    "max_test_users": 60,
}
GOWALLA = {
    "source": "derived",
    "grid_size": 8,
    "epsilons": [0.5, 2, 6],
    "methods": ["wpm", "kpm"],
    "repeats": 5,
    "map_epsilons": [2],
}
SPHERE = {
    "dims": [2, 3],
    "epsilons": [0.5, 2],
    "r": 1.0,
    "grid_epsilons": [1],
    "grid_sizes": {"s1": [16, 64], "s2": [25, 50]},
}


def only(**toggles: bool | str) -> dict[str, bool | str]:
    """Experiment toggles: the given ones, every other experiment of the default config off
    (with data_dir = shared data, the other real-data stages' "auto" would turn them on)."""
    default = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["experiments"]
    return {name: False for name in default} | toggles


SMALL = {
    "experiments": only(wpm_ring=True, wpm_movielens=True, wpm_gowalla=True),
    "wpm": {"ring": RING, "movielens": MOVIELENS, "gowalla": GOWALLA, "sphere": SPHERE},
}


@pytest.fixture(scope="module")
def wpm_run(tmp_path_factory):
    """The WPM stages (ring, MovieLens, Gowalla and the sphere), and nothing else, on the small
    config with data_dir = shared data."""
    need_shared_data(*WPM_DATA)
    workdir = copy_workflow(tmp_path_factory.mktemp("wpm_run"))
    config = write_config(workdir, "wpm_small", {**SMALL, "data_dir": str(SHARED_DATA)})
    snakemake(workdir, "--cores", "2", "--configfile", config)
    return workdir, config


def test_only_the_wpm_stages_ran(wpm_run):
    workdir, _ = wpm_run
    assert sorted(p.name for p in (workdir / "results").iterdir()) == [
        "reproduction.csv",
        "reproduction_counts.csv",
        "wpm_gowalla",
        "wpm_movielens",
        "wpm_ring",
        "wpm_sphere",
    ]


def test_figures_are_png(wpm_run):
    workdir, _ = wpm_run
    for path in (
        "results/wpm_ring/example.png",
        "results/wpm_ring/convergence.png",
        "results/wpm_movielens/hit_rate.png",
        "results/wpm_gowalla/w1.png",
        "results/wpm_gowalla/maps/eps~2/maps.png",
    ):
        data = (workdir / path).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, path


def test_ring_example_outputs_lie_in_the_polytope_and_wpm_wins(wpm_run):
    workdir, _ = wpm_run
    example = pl.read_parquet(workdir / "results/wpm_ring/example.parquet")
    assert sorted(example["epsilon"].unique()) == [1.0, 4.0]
    assert example.height == RING["n"] * len(RING["epsilons"])
    by_eps = example.partition_by("epsilon", as_dict=True)
    inputs = [frame.sort("point")["input"].to_numpy() for frame in by_eps.values()]
    np.testing.assert_array_equal(inputs[0], inputs[1])  # the same input at every ε
    for frame in by_eps.values():
        for col in ("input", "wpm", "kpm"):
            assert frame[col].sum() == pytest.approx(1.0, abs=1e-9)
        for col in ("wpm", "kpm"):
            assert (frame[col] >= frame["lower"] - 1e-12).all()
            assert (frame[col] <= frame["upper"] + 1e-12).all()
        assert frame["w_wpm"][0] <= frame["w_kpm"][0] + 1e-12
    w = {eps: frame["w_wpm"][0] for (eps,), frame in by_eps.items()}
    assert w[4.0] < w[1.0]


def test_ring_convergence_ends_near_the_exact_lp_value(wpm_run):
    workdir, _ = wpm_run
    table = pl.read_parquet(workdir / "results/wpm_ring/convergence.parquet")
    conv = RING["convergence"]
    assert sorted(table["eta"].unique()) == sorted(conv["etas"])
    assert table["iteration"].max() == conv["max_iter"]
    assert (table["gap"] >= -1e-12).all()
    last = table.filter(pl.col("iteration") == conv["max_iter"])
    assert last.height == len(conv["etas"]) * conv["inputs"]
    n = RING["n"]
    for row in last.iter_rows(named=True):
        # Converged, and within the entropic bound η log(nm) of the LP value.
        assert row["marginal_error"] < 1e-6
        assert row["cost"] - row["exact_cost"] <= row["eta"] * math.log(n * n)
    gaps = last.group_by("eta").agg(pl.col("gap").mean()).sort("eta")["gap"].to_list()
    assert gaps[0] < gaps[-1]  # smaller η ends closer to the LP value
    assert gaps[0] < 0.05 * last["exact_cost"].mean()


def test_movielens_runs_one_job_per_epsilon(wpm_run):
    workdir, _ = wpm_run
    parts = sorted(p.name for p in (workdir / "results/wpm_movielens/parts").iterdir())
    assert parts == ["eps~0.5", "eps~2", "eps~8", "nonprivate"]
    for eps in ("0.5", "2", "8"):
        assert (workdir / f"logs/benchmarks/wpm_movielens_part/eps~{eps}.tsv").exists()


def test_movielens_hit_rates(wpm_run):
    workdir, _ = wpm_run
    test = pl.read_parquet(workdir / "results/wpm_movielens/test.parquet")
    validation = pl.read_parquet(workdir / "results/wpm_movielens/validation.parquet")
    csv = pl.read_csv(workdir / "results/wpm_movielens/test.csv")
    assert csv.height == test.height == len(MOVIELENS["methods"]) * 3 + 1
    assert ((test["hit_rate_mean"] >= 0) & (test["hit_rate_mean"] <= 1)).all()
    assert ((validation["hit_rate"] >= 0) & (validation["hit_rate"] <= 1)).all()
    assert (test["n_users"] == MOVIELENS["max_test_users"]).all()
    assert (validation["n_users"] == MOVIELENS["max_validation_users"]).all()
    assert validation.height == 2 * 3 * MOVIELENS["n_scales"] + 3 + 1

    def row(method: str, eps: float) -> dict:
        rows = test.filter(pl.col("method") == method, pl.col("epsilon") == eps)
        assert rows.height == 1, (method, eps)
        return rows.row(0, named=True)

    # WPM beats the exponential mechanism and KPM on genres clearly at ε = 2 (library results:
    # 0.12 vs 0.06), improves with ε and stays below the non-private ceiling.
    wpm2 = row("wpm", 2.0)
    for other in ("exponential", "kpm_genre"):
        base = row(other, 2.0)
        assert wpm2["hit_rate_mean"] > base["hit_rate_mean"] + 2 * wpm2["hit_rate_se"], other
    assert row("wpm", 8.0)["hit_rate_mean"] > row("wpm", 0.5)["hit_rate_mean"]
    ceiling = row("nonprivate", math.inf)["hit_rate_mean"]
    assert row("wpm", 8.0)["hit_rate_mean"] <= ceiling + 0.03
    # The reported scale is the validation argmax, and lies strictly inside [e^-ε, 1].
    for method in ("wpm", "kpm_genre"):
        for eps in (0.5, 2.0, 8.0):
            val = validation.filter(pl.col("method") == method, pl.col("epsilon") == eps)
            best = val.sort("hit_rate", descending=True, maintain_order=True)["scale"][0]
            chosen = row(method, eps)["scale"]
            assert chosen == pytest.approx(best)
            assert math.exp(-eps) < chosen < 1


def test_gowalla_w1_decreases_with_epsilon_and_wpm_wins(wpm_run):
    workdir, _ = wpm_run
    w1 = pl.read_parquet(workdir / "results/wpm_gowalla/w1.parquet")
    assert w1.height == len(GOWALLA["epsilons"]) * len(GOWALLA["methods"]) * GOWALLA["repeats"]
    assert (w1["w1_released"] >= 0).all() and (w1["w1_expected"] >= 0).all()
    assert w1["n_users"].n_unique() == 1 and w1["n_users"][0] > 250  # derived: ~300 users
    expected = w1.group_by("method", "epsilon").agg(pl.col("w1_expected").first()).sort("epsilon")
    wpm = expected.filter(pl.col("method") == "wpm")["w1_expected"].to_list()
    kpm = expected.filter(pl.col("method") == "kpm")["w1_expected"].to_list()
    assert all(a > b for a, b in itertools.pairwise(wpm))
    assert all(a <= b + 1e-9 for a, b in zip(wpm, kpm, strict=True))
    # Independent release rounds: the repeats differ.
    rounds = w1.filter(pl.col("method") == "wpm", pl.col("epsilon") == 2.0)["w1_released"]
    assert rounds.n_unique() > 1


def test_gowalla_maps_are_distributions(wpm_run):
    workdir, _ = wpm_run
    maps = pl.read_parquet(workdir / "results/wpm_gowalla/maps/eps~2/maps.parquet")
    sums = maps.group_by("distribution").agg(pl.col("probability").sum())
    assert set(sums["distribution"]) == {"true", "wpm", "kpm", "wpm_released", "kpm_released"}
    np.testing.assert_allclose(sums["probability"].to_numpy(), 1.0, atol=1e-9)
    assert maps.filter(pl.col("distribution") == "true").height == GOWALLA["grid_size"] ** 2


def test_sphere_stage_through_snakemake(wpm_run):
    """The wpm_sphere stage's tables hold the closed form for every (d, ε) and the grid
    comparison converges; the figure is a PNG."""
    workdir, _ = wpm_run
    scales = pl.read_parquet(workdir / "results/wpm_sphere/scales.parquet")
    expected = sphere_scales(dims=SPHERE["dims"], epsilons=SPHERE["epsilons"], r=SPHERE["r"])
    assert scales.equals(expected)
    conv = pl.read_parquet(workdir / "results/wpm_sphere/convergence.parquet")
    assert conv.select("d", "n").rows() == [(2, 16), (2, 64), (3, 25), (3, 50)]
    for d in (2, 3):
        errors = conv.filter(pl.col("d") == d).sort("n")["cost_error"].to_list()
        assert errors[1] < errors[0]
    png = (workdir / "results/wpm_sphere/sphere.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert width / height < 3.5  # readable at report width, as every figure


def test_adding_an_epsilon_runs_only_the_new_jobs(wpm_run):
    workdir, _ = wpm_run
    changes = {
        **SMALL,
        "data_dir": str(SHARED_DATA),
        "wpm": {
            **SMALL["wpm"],
            "movielens": {**MOVIELENS, "epsilons": [*MOVIELENS["epsilons"], 4]},
            "gowalla": {**GOWALLA, "epsilons": [*GOWALLA["epsilons"], 4]},
        },
    }
    alt = write_config(workdir, "more_eps", changes)
    assert planned_jobs(workdir, "--configfile", alt) == {
        "all": 1,
        "wpm_movielens_part": 1,
        "wpm_movielens_combine": 1,
        "wpm_movielens_figure": 1,
        "wpm_gowalla_w1": 1,
        "wpm_gowalla_combine": 1,
        "wpm_gowalla_figure": 1,
        "reproduction": 1,
    }


def test_nothing_left_to_do_and_report_has_the_figures(wpm_run):
    workdir, config = wpm_run
    assert planned_jobs(workdir, "--configfile", config) == {}
    snakemake(workdir, "--configfile", config, "--report", "report.html")
    html = (workdir / "report.html").read_text(errors="replace")
    for name in ("example.png", "convergence.png", "hit_rate.png", "w1.png", "maps.png"):
        assert name in html, name


def test_auto_toggles_and_the_snap_source(tmp_path):
    """The "auto" toggles run the data stages exactly when data_dir holds their files;
    source: snap reads the SNAP layout in data_dir (here the raw 10,000-line prefix, 16 Austin
    users with >= 10 check-ins)."""
    need_shared_data(*WPM_DATA)
    workdir = copy_workflow(tmp_path / "auto")
    auto = only(wpm_movielens="auto", wpm_gowalla="auto")
    (tmp_path / "nothing").mkdir()
    empty = write_config(
        workdir, "empty", {"experiments": auto, "data_dir": str(tmp_path / "nothing")}
    )
    assert planned_jobs(workdir, "--configfile", empty) == {"all": 1, "reproduction": 1}
    small = {"wpm": {**SMALL["wpm"], "gowalla": {**GOWALLA, "source": "snap"}}}
    shared = write_config(
        workdir, "shared", {**small, "experiments": auto, "data_dir": str(SHARED_DATA)}
    )
    jobs = planned_jobs(workdir, "--configfile", shared)
    assert jobs["wpm_movielens_part"] == 3 and jobs["wpm_gowalla_w1"] == 3
    target = "results/wpm_gowalla/parts/eps~2/w1.parquet"  # before --configfile (nargs +)
    snakemake(workdir, target, "--cores", "2", "--configfile", shared)
    log = (workdir / "logs/wpm_gowalla_checkins/checkins.log").read_text()
    assert GOWALLA_PREFIX.name in log
    w1 = pl.read_parquet(workdir / target)
    assert w1["n_users"][0] == 16


def test_missing_derived_file_fails_naming_the_key(tmp_path):
    workdir = copy_workflow(tmp_path / "missing")
    (tmp_path / "nothing").mkdir()
    alt = write_config(
        workdir,
        "missing",
        {
            "experiments": only(wpm_gowalla=True),
            "data_dir": str(tmp_path / "nothing"),
            "wpm": {**SMALL["wpm"], "gowalla": GOWALLA},
        },
    )
    proc = snakemake(workdir, "--dry-run", "--configfile", alt, check=False)
    assert proc.returncode != 0
    assert "wpm.gowalla.derived_file" in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("movielens", "epsilons"), [0], "less than or equal to the minimum"),
        (("gowalla", "epsilons"), [-1.0], "less than or equal to the minimum"),
        (("ring", "convergence", "etas"), [0.0], "less than or equal to the minimum"),
        (("movielens", "methods"), ["wpm", "laplace"], "'laplace' is not one of"),
        (("gowalla", "source"), "kaggle", "'kaggle' is not one of"),
        (("ring", "convergence", "variant"), "sinkhorn", "'sinkhorn' is not one of"),
        (("movielens", "max_test_users"), 1, "max_test_users"),
        (("gowalla", "grid"), 8, "'grid' was unexpected"),
    ],
)
def test_the_schema_rejects_bad_wpm_values(path, value, message):
    """Checked before any job: validate() is what the Snakefile runs first."""
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    validate(config, str(ROOT / "workflow/schemas/config.schema.yaml"))
    section = config["wpm"]
    for key in path[:-1]:
        section = section[key]
    section[path[-1]] = value
    with pytest.raises(WorkflowError, match="validating config") as error:
        validate(config, str(ROOT / "workflow/schemas/config.schema.yaml"))
    assert message in str(error.value)


def test_the_shipped_config_has_no_wpm_key_left_to_schema_defaults():
    """Every wpm key is required, so config/config.yaml states each one explicitly."""
    schema = yaml.safe_load((ROOT / "workflow/schemas/wpm.schema.yaml").read_text())
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["wpm"]

    def walk(node: dict, values: dict, where: str) -> None:
        assert node.get("additionalProperties") is False, where
        assert set(node["required"]) == set(node["properties"]), where
        for key, sub in node["properties"].items():
            assert "description" in sub, f"{where}.{key}"
            assert key in values, f"{where}.{key}"
            if sub.get("type") == "object":
                walk(sub, values[key], f"{where}.{key}")

    walk(schema, config, "wpm")
