"""The pipeline end to end on the default config (the README's first block's run, or a run in a
temporary copy of the project), moved to another folder: outputs' contents, nothing left to do
after the move, partial re-runs, the report and the jobs' logs."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import readme_clone
import snakemake_fork
import yaml
from _workflow import (
    ROOT,
    SHARED_DATA,
    copy_workflow,
    planned_jobs,
    requires_shared_data,
    result_files,
    snakemake,
    write_config,
)
from scipy.special import rel_entr

pytestmark = pytest.mark.workflow

CONFIG = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """The default config run once, as README's main command does (``snakemake --cores 2``),
    then moved to another folder: the run of the README's first block when this session runs
    it (tests/readme_clone.py), copied, else a run of a fresh copy of the project, renamed. The
    tests below edit and re-plan it; test_nothing_left_to_do_after_a_run checks that the move
    left it up to date."""
    root = tmp_path_factory.mktemp("default_run")
    moved = root / "moved"
    started = os.environ.get(readme_clone.ENV_VAR)
    if started:
        return readme_clone.copy_run(Path(started), moved)
    workdir = copy_workflow(root / "ran")
    snakemake(workdir, "--cores", "2")
    return workdir.rename(moved)


def test_synthetic_table_has_the_documented_shape(default_run):
    values = pl.read_parquet(default_run / "results/synthetic/values.parquet")
    assert values.columns == ["n", "epsilon", "run", "p1", "method", "divergence", "value"]
    syn = CONFIG["synthetic"]
    assert (
        values.height == len(syn["n"]) * len(syn["epsilons"]) * syn["runs"] * syn["grid_size"] * 4
    )
    assert set(values["method"]) == {"minimax", "mollifier"}
    assert set(values["divergence"]) == {"tv", "kl"}
    assert values["value"].is_finite().all() and (values["value"] >= 0).all()


def _tv_mollifier_value(p, q, epsilon):
    """Optimal TV of the projection onto the relative mollifier: max(excess, deficit)."""
    lower, upper = math.exp(-epsilon / 2) * q, math.exp(epsilon / 2) * q
    return max(np.clip(p - upper, 0, None).sum(), np.clip(lower - p, 0, None).sum())


def test_synthetic_values_match_an_independent_computation(default_run):
    """Recompute run 0 from scratch: the prior from the seed, the kernel by the paper's
    recursion (tests/oracle.py), the mollifier TV from its closed form."""
    from oracle import oracle_kernel

    values = pl.read_parquet(default_run / "results/synthetic/values.parquet")
    n, epsilon = CONFIG["synthetic"]["n"][0], float(CONFIG["synthetic"]["epsilons"][0])
    rng = np.random.default_rng([CONFIG["seed"], n])
    u = rng.uniform(size=(CONFIG["synthetic"]["runs"], n))
    q = u[0] / u[0].sum()
    K = oracle_kernel(q, epsilon)
    run0 = values.filter(pl.col("run") == 0, pl.col("n") == n, pl.col("epsilon") == epsilon)
    for p1 in np.linspace(1 / n, 1, CONFIG["synthetic"]["grid_size"])[[0, 37, -1]]:
        p = np.full(n, (1 - p1) / (n - 1))
        p[0] = p1
        p /= p.sum()
        released = p @ K
        expected = {
            ("minimax", "tv"): 0.5 * np.abs(p - released).sum(),
            ("minimax", "kl"): float(rel_entr(p, released).sum()),
            ("mollifier", "tv"): _tv_mollifier_value(p, q, epsilon),
        }
        for (method, divergence), want in expected.items():
            got = run0.filter(
                (pl.col("p1") - p1).abs() < 1e-12,
                pl.col("method") == method,
                pl.col("divergence") == divergence,
            )["value"]
            assert got.len() == 1
            assert got[0] == pytest.approx(want, rel=1e-9, abs=1e-12), (p1, method, divergence)


def test_minimax_beats_the_mollifier_for_concentrated_p(default_run):
    """Fig. 2's message: as p1 -> 1 the minimax sampler has the smaller mean TV and KL."""
    values = pl.read_parquet(default_run / "results/synthetic/values.parquet")
    last = values.filter(pl.col("p1") == pl.col("p1").max())
    means = last.group_by("method", "divergence").agg(pl.col("value").mean())
    mean = {(r["method"], r["divergence"]): r["value"] for r in means.iter_rows(named=True)}
    assert mean[("minimax", "tv")] < mean[("mollifier", "tv")]
    assert mean[("minimax", "kl")] < mean[("mollifier", "kl")]


def test_figures_are_png(default_run):
    for path in ("results/synthetic/figure.png", "results/theory/risk.png"):
        data = (default_run / path).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, path


def test_figures_are_readable_at_report_width(default_run):
    """No strip figures (the ring example was 2476 x 432 px), every panel has a y label and
    the labels use mathtext instead of literal underscores (Γ_f, Q_t)."""
    import struct

    for path in sorted((default_run / "results").rglob("*.png")):
        width, height = struct.unpack(">II", path.read_bytes()[16:24])
        assert width / height < 3.5, (path, width, height)


def test_faceted_figures_label_every_panel():
    from ldpsample.experiments.theory import risk_curves
    from ldpsample.figures.theory import plot_risk_curves

    figure = plot_risk_curves(
        risk_curves(n=10, epsilons=[0.5, 1.0, 2.0], q_mins=[0.01], divergences=["tv", "kl"])
    )
    labels = [ax.get_ylabel() for ax in figure.axes if ax.get_title()]
    assert len(labels) == 2 and all(label for label in labels)
    assert all("$\\Gamma_f" in label for label in labels)


def test_theory_tables(default_run):
    theory = CONFIG["theory"]
    risk = pl.read_csv(default_run / "results/theory/risk.csv")
    num = theory["epsilon_grid"]["num"]
    assert risk.height == (len(theory["q_mins"]) + 1) * len(theory["divergences"]) * num
    # Uniform prior = randomized response: Gamma_TV = (n - 1) / (e^eps + n - 1) (Corollary 2).
    n = theory["n"]
    uniform_tv = risk.filter(pl.col("prior") == "uniform", pl.col("divergence") == "tv")
    eps = uniform_tv["epsilon"].to_numpy()
    np.testing.assert_allclose(uniform_tv["risk"], (n - 1) / (np.exp(eps) + n - 1), rtol=1e-12)
    example = pl.read_csv(default_run / "results/theory/example_1.csv")
    by_prior = {r["prior"]: r for r in example.iter_rows(named=True)}
    assert by_prior["public q"]["tv_of_p"] == pytest.approx(0.0376, abs=5e-5)
    assert by_prior["uniform"]["tv_of_p"] == pytest.approx(0.107, abs=5e-4)
    assert by_prior["public q"]["gamma_tv"] == pytest.approx(0.93, abs=5e-3)


def test_default_run_fills_the_reproduction_table(default_run):
    """The reproduction stage runs on the default config (no real data in data_dir): the
    offline claims are reproduced (Theorem 1 against the LP, Example 1's truncated TV, the
    closed form against the LP), Example 1's Γ_TV differs as documented and the real-data rows
    say they did not run; the counts file adds up."""
    files = result_files(default_run)
    assert "results/reproduction.csv" in files
    table = pl.read_csv(files["results/reproduction.csv"])
    rows = {r["claim"]: r for r in table.iter_rows(named=True)}
    for claim in (
        "fig2_crossover_tv",
        "fig2_crossover_kl",
        "theorem1_risk",
        "lemma1_worst_case",
        "corollary2_randomized_response",
        "proposition1_binary",
        "tv_bound_2tv",
        "wpm_sinkhorn_convergence",
        "wpm_theorem_4_3_linear_rate",
        "aistats_closed_form_vs_lp",
    ):
        assert rows[claim]["verdict"] == "reproduced", rows[claim]
    assert "LP optimum" in rows["theorem1_risk"]["run_value"]
    # Example 1's digits are truncated, not rounded: TV(p, pK) = 0.0376 prints as 0.03
    assert rows["example1_tv"]["verdict"] == "reproduced"
    assert rows["example1_tv"]["run_value"].startswith("TV(p, pK) = 0.0376")
    assert rows["example1_gamma"]["verdict"].startswith("differs: erratum")
    assert rows["avazu_summary"]["verdict"].startswith("not run")
    assert rows["aistats_avazu_rows"]["verdict"].startswith("not run")
    counts = pl.read_csv(files["results/reproduction_counts.csv"])
    assert counts["rows"].sum() == table.height
    kinds = table["verdict"].str.split(":").list.first()
    assert dict(counts.iter_rows()) == {v: int((kinds == v).sum()) for v in counts["verdict"]}


@pytest.fixture(scope="module")
def dry_run_after_the_move(default_run):
    """`SLURM_CONF=/dev/null snakemake --dry-run` in the moved default run, once: docs/cluster.md's
    local command (the variable only keeps the SLURM plugin's import from waiting on
    `scontrol`; it plans as the plain command does)."""
    env = {**os.environ, "SLURM_CONF": "/dev/null"}
    return snakemake_fork.run(["--dry-run"], cwd=default_run, env=env, timeout=600)


def test_nothing_left_to_do_after_a_run(dry_run_after_the_move):
    """Up to date after the run, in the folder it was moved to: Snakemake records each job's
    input paths, and the library sources among them are relative to the project folder."""
    proc = dry_run_after_the_move
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_a_moved_project_with_its_venv_inside(tmp_path):
    """docs/running.md: a `.venv` inside the project moves with it, and `.venv/bin/python -m
    snakemake` works from the new folder and finds nothing to do (the venv's interpreter is a
    link to the system's, and the jobs import the library from the moved src/); its commands
    such as `.venv/bin/snakemake` name the old folder's path and do not (test_readme.py checks
    the README install's). The venv here sees the test environment's packages through a .pth
    file instead of a pip install."""
    project = copy_workflow(tmp_path / "project")
    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    packages = [path for path in sys.path if path.endswith("site-packages")]
    (next((venv / "lib").glob("python3*")) / "site-packages" / "test-env.pth").write_text(
        "\n".join(packages) + "\n"
    )
    target = ["results/theory/example_1.csv", "--cores", "1"]

    def venv_snakemake(folder, *args):
        python = folder / ".venv" / "bin" / "python"
        return subprocess.run(
            [str(python), "-m", "snakemake", *target, *args],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=600,
            env={k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")},
        )

    ran = venv_snakemake(project)
    assert ran.returncode == 0, ran.stderr[-3000:]
    moved = project.rename(tmp_path / "moved")
    again = venv_snakemake(moved, "--dry-run")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Nothing to be done" in again.stdout + again.stderr


def test_a_local_run_with_an_empty_slurm_configuration(dry_run_after_the_move):
    """docs/cluster.md's workaround for the SLURM plugin's `scontrol show config` at import (9 s
    where the client is installed and no controller answers): `SLURM_CONF=/dev/null` in front
    of a local command. The run is the same (nothing to do after the default run), and where
    `scontrol` is installed it fails at once instead of waiting for a controller."""
    proc = dry_run_after_the_move
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Nothing to be done" in proc.stdout + proc.stderr
    if shutil.which("scontrol"):
        # (a guard, not a timing: with a configuration it may wait ~9 s for a controller)
        probe = subprocess.run(
            ["scontrol", "show", "config"],
            env={**os.environ, "SLURM_CONF": "/dev/null"},
            capture_output=True,
            timeout=5,
        )
        assert probe.returncode != 0


def test_adding_an_epsilon_runs_only_the_new_jobs(default_run):
    eps = [*CONFIG["synthetic"]["epsilons"], 4]
    alt = write_config(default_run, "more_eps", {"synthetic": {"epsilons": eps}})
    jobs = planned_jobs(default_run, "--configfile", alt)
    assert jobs == {
        "all": 1,
        "synthetic_part": 1,
        "synthetic_combine": 1,
        "synthetic_figure": 1,
        "reproduction": 1,  # the reproduction table reads the synthetic values
    }


def test_changing_runs_reruns_the_synthetic_stage_only(default_run):
    alt = write_config(default_run, "more_runs", {"synthetic": {"runs": 3}})
    jobs = planned_jobs(default_run, "--configfile", alt)
    parts = len(CONFIG["synthetic"]["n"]) * len(CONFIG["synthetic"]["epsilons"])
    assert jobs == {
        "all": 1,
        "synthetic_part": parts,
        "synthetic_combine": 1,
        "synthetic_figure": 1,
        "reproduction": 1,
    }


def jobs_after_an_edit(workdir, path):
    """The jobs Snakemake plans in ``workdir`` after a comment is appended to ``path``; the
    file's text and times are restored afterwards (the other tests' state)."""
    original, times = path.read_text(), path.stat()
    try:
        path.write_text(original + "\n# an edit\n")
        return planned_jobs(workdir)
    finally:
        path.write_text(original)
        os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))


def test_editing_a_script_reruns_its_rule(default_run):
    jobs = jobs_after_an_edit(default_run, default_run / "scripts" / "theory_example.py")
    assert jobs == {"all": 1, "theory_example": 1, "reproduction": 1}


def test_editing_a_mollifier_module_reruns_the_stages_that_use_it(default_run):
    """A rule lists the mollifier as the package folder "mollifier/":
    an edit of any module in it, here the KL normaliser, re-runs the synthetic parts and the WPM
    ring jobs (the KPM's clip-normaliser is the mollifier's KL core), not the theory risk."""
    module = default_run / "src" / "ldpsample" / "mollifier" / "kl_normaliser.py"
    jobs = jobs_after_an_edit(default_run, module)
    parts = len(CONFIG["synthetic"]["n"]) * len(CONFIG["synthetic"]["epsilons"])
    assert jobs["synthetic_part"] == parts
    assert jobs["wpm_ring_example"] == jobs["wpm_ring_convergence"] == 1
    assert "theory_risk" not in jobs  # its library sources do not include the mollifier


@pytest.mark.parametrize(
    ("module", "rerun", "kept"),
    [
        # imported by theory.py's helpers and the synthetic parts, named in no hand-kept list once
        ("_threads.py", {"theory_risk", "synthetic_part"}, set()),
        # the sphere's closed form: its stage (and the ring's, through the wasserstein package)
        ("wasserstein/sphere.py", {"wpm_sphere"}, {"theory_risk", "synthetic_part"}),
        # a reproduction check the claims file names: imported by name, listed as the package
        ("reproduction/cost_checks.py", {"reproduction"}, {"theory_risk", "synthetic_part"}),
    ],
)
def test_editing_a_library_module_reruns_exactly_the_jobs_that_import_it(
    default_run, module, rerun, kept
):
    """A rule's library inputs are its script's import closure (get_script_sources), so an
    edit of a module re-plans the jobs whose scripts import it, and no other."""
    jobs = jobs_after_an_edit(default_run, default_run / "src" / "ldpsample" / module)
    assert rerun <= set(jobs), (module, jobs)
    assert not kept & set(jobs), (module, jobs)


def test_report_carries_every_figure(default_run):
    snakemake(default_run, "--report", "report.html")
    html = (default_run / "report.html").read_text(errors="replace")
    for name in ("figure.png", "risk.png", "risk.csv", "example_1.csv"):
        assert name in html, name


def test_long_jobs_log_their_parameters_and_progress(default_run):
    (log,) = (default_run / "logs" / "synthetic_part").glob("*.log")
    text = log.read_text()
    assert "params {'runs': 10" in text or f"'runs': {CONFIG['synthetic']['runs']}" in text
    assert f"{CONFIG['synthetic']['runs']}/{CONFIG['synthetic']['runs']}" in text  # tqdm bar


EPSILON_BOUNDS = [1e-100, 700]
BOUNDS_CONFIG = {
    "experiments": dict.fromkeys(CONFIG["experiments"], True),
    "synthetic": {"n": [20], "epsilons": EPSILON_BOUNDS, "runs": 2, "grid_size": 5},
    "theory": {
        "n": 20,
        "epsilon_grid": {"start": EPSILON_BOUNDS[0], "stop": EPSILON_BOUNDS[1], "num": 5},
        "q_mins": [0.0, 0.01],
        "divergences": ["tv", "kl", "chi2", "hellinger"],
        "example_1": {"q": [0.01, 0.99], "p": [0.05, 0.95], "epsilon": EPSILON_BOUNDS[1]},
    },
    "movielens": {"epsilons": EPSILON_BOUNDS},
    # one attribute: every avazu stage still runs (one histograms and one metrics job, not 9)
    "avazu": {"epsilons": EPSILON_BOUNDS, "attributes": ["C1"], "min_rows": 1, "min_users": 2},
    "wpm": {
        "ring": {
            "n": 20,
            "epsilons": EPSILON_BOUNDS,
            "convergence": {"epsilon": EPSILON_BOUNDS[1], "etas": [0.05], "max_iter": 20},
        },
        "movielens": {
            "epsilons": EPSILON_BOUNDS,
            "n_scales": 2,
            "n_outputs": 20,
            "max_validation_users": 5,
            "max_test_users": 5,
        },
        "gowalla": {
            "source": "derived",
            "grid_size": 4,
            "repeats": 1,
            "epsilons": EPSILON_BOUNDS,
            "map_epsilons": EPSILON_BOUNDS,
        },
        # S^2's closed form at both bounds; the exact-LP grids include the circle S^1, whose cap
        # threshold falls out of double precision from ε ≈ 668 (r = 1): sphere_wpm names ε then
        # (tests/test_wpm_sphere.py), so the grid comparison runs at the lower bound only.
        "sphere": {"dims": [3], "epsilons": EPSILON_BOUNDS, "grid_epsilons": EPSILON_BOUNDS[:1]},
    },
}


@requires_shared_data("ml-1m", "ml-100k", "avazu", "gowalla")
@pytest.mark.data
def test_every_stage_runs_at_the_epsilon_bounds(tmp_path):
    """ε = 1e-100 and ε = 700, the bounds the config check accepts, in every ε key: every stage
    runs, in folders eps~0.000…01 (100 decimals) and eps~700, and every kernel passes its
    privacy audit; the reproduction table is written too (its LP check of Theorem 1 counts the
    values above ε = 20 as not checked; it failed on them). The sphere's closed form on S^2 runs
    at both bounds."""
    workdir = copy_workflow(tmp_path / "clone")
    overlay = write_config(workdir, "bounds", BOUNDS_CONFIG)
    data_dir = str(SHARED_DATA)
    snakemake(
        workdir,
        *("--cores", "2", "--configfile", overlay, "--config", f"data_dir={data_dir}"),
    )
    theorem1 = pl.read_csv(workdir / "results/reproduction.csv").filter(
        pl.col("claim") == "theorem1_risk"
    )
    assert "with ε > 20 not checked by the LP" in theorem1["run_value"].item()
    tiny = "eps~0." + "0" * 99 + "1"
    for path in (
        f"results/synthetic/parts/n~20/{tiny}/values.parquet",
        "results/synthetic/parts/n~20/eps~700/values.parquet",
        f"results/movielens/prior~ml-100k_weight~count/figures/{tiny}.png",
        f"results/wpm_gowalla/maps/{tiny}/maps.png",
        "results/wpm_gowalla/maps/eps~700/maps.png",
        "results/wpm_movielens/test.csv",
        "results/wpm_ring/convergence.png",
        "results/theory/risk.png",
    ):
        assert (workdir / path).stat().st_size > 0, path
    values = pl.read_parquet(workdir / "results/synthetic/values.parquet")
    assert sorted(set(values["epsilon"])) == EPSILON_BOUNDS
    sphere = pl.read_parquet(workdir / "results/wpm_sphere/scales.parquet").sort("epsilon")
    assert sphere["epsilon"].to_list() == EPSILON_BOUNDS and set(sphere["d"]) == {3}
    # the whole sphere at ε → 0 (scale 1), a cap of radius ~1e-101 at ε = 700: finite, positive
    assert sphere["scale"][0] == 1.0 and 0.0 < sphere["scale"][1] < 1e-100, sphere
    assert values["value"].is_finite().all()
    for table in ("movielens/prior~ml-100k_weight~count", "avazu"):
        audit = pl.read_csv(workdir / "results" / table / "audit.csv")
        assert audit.height > 0 and set(audit["epsilon"]) == set(EPSILON_BOUNDS)
        assert (audit["realized_epsilon"] <= audit["epsilon"] * (1 + 1e-12)).all()
