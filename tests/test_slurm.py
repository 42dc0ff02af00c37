"""The pipeline on a real SLURM cluster through Snakemake's SLURM executor plugin.

The tests use a single-node cluster (slurmctld, slurmd, and slurmdbd so that ``sacct`` works)
started with ``../shared/tools/local-slurm.sh``: by the test session in the background, which
stops it when the session ends (tests/slurm_session.py: every Snakemake start waits 9 s while
the SLURM client is installed and no controller runs), or, when the session did not start one,
by this module, which stops it at its end; a cluster already up is used and left up. Then it
runs CONFIG through the user profile ``profiles/slurm`` plus the CI overlay
``profiles/slurm-test`` in a temporary copy of the workflow, with one job made to fail, and
runs the same command again once the failure is undone. That one run and its resumption are
checked for

(a) every non-local job ran as a SLURM job: one ``sacct`` row per submitted job, found by the
    run's job name (the plugin passes its run UUID as ``--job-name``), state COMPLETED but for
    the failing job;
(b) every file under results/ is identical to a local run of the same config, the tables of a
    partitioned events table evaluated in buckets by the map/reduce jobs among them;
(c) the failing job fails the run while the others finish, the output names its logs and the
    log holds the error, and re-running the same command resumes: only the failed job is
    submitted again and no finished output is rewritten.

The profile tests at the top need no cluster and are not marked ``slurm``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import conftest
import numpy as np
import polars as pl
import pytest
import slurm_session
import yaml
from _workflow import (
    ROOT,
    copy_workflow,
    events_entry,
    result_differences,
    result_files,
    snakemake,
    write_config,
)

LOCAL_SLURM = slurm_session.LOCAL_SLURM

# The configuration run through SLURM and locally (changes to config/config.yaml). Stages added
# here are covered by every check below: their SLURM jobs are looked up in sacct and every file
# they write under results/ is compared with the local run.
CONFIG = {
    "experiments": {"synthetic": True, "theory": True},
    "synthetic": {"n": [20], "epsilons": [2, 8], "runs": 2, "grid_size": 10},
    # A partitioned events table (two parquet files, EVENTS_FILES) in two buckets of users: the
    # map/reduce jobs of workflow/rules/events_buckets.smk, each a SLURM job.
    "events": {
        "partitioned": events_entry(
            "data/events",
            attributes=["country"],
            top_items=4,
            epsilons=[1, 4],
            methods=["minimax", "mollifier_tv"],
            buckets=2,
        )
    },
}
#: Files of the events table: (name, seed) of each partition.
EVENTS_FILES = (("part-0.parquet", 0), ("part-1.parquet", 1))
# The SLURM run makes the job of one wildcard combination fail by appending a raise to its script.
FAILING = {
    "rule": "synthetic_part",
    "script": "scripts/synthetic_part.py",
    "condition": 'snakemake.wildcards.eps == "8"',
    "log": "logs/synthetic_part/n~20_eps~8.log",
}
# User profile + CI overlay (a later --profile replaces whole top-level keys); profiles/default/
# is left out, as with the documented `--workflow-profile profiles/slurm`.
SLURM_PROFILES = (
    *("--workflow-profile", "none"),
    *("--profile", "profiles/slurm"),
    *("--profile", "profiles/slurm-test"),
)
RUN_TIMEOUT = 900  # seconds per snakemake run; a healthy run takes well under a minute
READY_STATES = {"idle", "mix"}


# --- profiles (no cluster needed) ----------------------------------------------------------


@pytest.mark.parametrize("profile", ["slurm", "slurm-test"])
def test_every_profile_entry_has_a_comment(profile):
    lines = (ROOT / "profiles" / profile / "config.yaml").read_text().splitlines()
    for number, line in enumerate(lines):
        key = re.match(r"^(\s*)([\w-]+):", line)
        if key:
            above = lines[number - 1] if number else ""
            assert above.startswith(key.group(1) + "#"), f"{profile}: no comment above {line!r}"


def test_slurm_profile_is_the_plugin_with_default_resources():
    from importlib.metadata import version

    assert version("snakemake-executor-plugin-slurm") == "2.8.0"
    user = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
    test = yaml.safe_load((ROOT / "profiles/slurm-test/config.yaml").read_text())
    assert user["executor"] == "slurm"
    resources = user["default-resources"]
    assert set(resources) == {"slurm_partition", "slurm_account", "mem_mb", "runtime"}
    # The overlay restates the whole block (top-level keys are replaced, not merged): it
    # changes partition and account only.
    assert set(test["default-resources"]) == set(resources)
    for key in ("mem_mb", "runtime"):
        assert test["default-resources"][key] == resources[key], key
    # Nothing machine-specific: the profiles work from any clone.
    for profile in (user, test):
        assert not any(str(value).startswith(("/", "~")) for value in profile.values())


# --- the cluster -----------------------------------------------------------------------------


def _node_states() -> set[str]:
    """States that ``sinfo`` reports for the cluster's nodes (empty if it cannot be asked)."""
    if shutil.which("sinfo") is None:
        return set()
    try:
        proc = subprocess.run(
            ["sinfo", "--noheader", "--format=%t"], capture_output=True, text=True, timeout=30
        )
    except subprocess.TimeoutExpired:
        return set()
    return set(proc.stdout.split()) if proc.returncode == 0 else set()


def _wait_for_ready_node(timeout: float = 180) -> set[str]:
    """The node states once one is idle/mix, or the last states seen after ``timeout`` s: a
    freshly started slurmctld may still be completing a job from its saved state ("comp")."""
    deadline = time.monotonic() + timeout
    states = _node_states()
    while not READY_STATES & states and time.monotonic() < deadline:
        time.sleep(2)
        states = _node_states()
    return states


def _sacct_problem() -> str | None:
    """Why ``sacct`` cannot be used (None if it works: accounting through slurmdbd is on)."""
    proc = subprocess.run(
        ["sacct", "--noheader", "--allocations", "--starttime=now"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return None if proc.returncode == 0 else (proc.stderr or proc.stdout).strip()


def _check_cluster(started: bool) -> None:
    """Skip unless the cluster that is up has accounting (fail instead if it was started for
    these tests); a freshly started one must first show a ready node."""
    if started:
        states = _wait_for_ready_node()
        if not READY_STATES & states:
            pytest.skip(f"SLURM started, but sinfo reports {sorted(states)}, not idle/mix")
    problem = _sacct_problem()
    if problem and started:
        pytest.fail(f"SLURM started with accounting, but sacct fails: {problem}")
    if problem:
        pytest.skip(f"the running SLURM cluster has no accounting, sacct says: {problem}")


@pytest.fixture(scope="module")
def slurm_cluster():
    """A running SLURM cluster with accounting: the one the test session started in the
    background (conftest.py, tests/slurm_session.py; the session stops it), the one already
    up, or one started here and stopped at the module's end."""
    session = slurm_session.from_env()
    if session is not None:
        outcome = slurm_session.wait(session)
        if outcome.code != 0:
            pytest.skip(f"{LOCAL_SLURM} start failed (exit {outcome.code}):\n{outcome.log[-3000:]}")
        _check_cluster(outcome.started)
        yield "started by the session" if outcome.started else "already running"
        return
    if {"idle", "mix", "alloc"} & _node_states():
        problem = _sacct_problem()
        if problem:
            pytest.skip(f"the running SLURM cluster has no accounting, sacct says: {problem}")
        yield "already running"
        return
    reason = slurm_session.cannot_start()
    if reason:
        pytest.skip(f"no SLURM cluster is up and {reason}")
    start = slurm_session.local_slurm("start")
    try:
        if start.returncode != 0:
            pytest.skip(
                f"{LOCAL_SLURM} start failed (exit {start.returncode}):\n{start.stderr[-3000:]}"
            )
        _check_cluster(started=True)
        yield "started"
    finally:
        slurm_session.local_slurm("stop")


@pytest.mark.slurm
def test_the_plugins_probe_gets_its_answer(slurm_cluster):
    """snakemake-executor-plugin-slurm 2.8.0 runs ``scontrol show config`` (for MinJobAge) when
    Snakemake imports it, at every Snakemake start; with the SLURM client installed and no
    controller, that call waits 9 s before failing. With the cluster up it answers."""
    proc = subprocess.run(
        ["scontrol", "show", "config"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "MinJobAge" in proc.stdout


@pytest.mark.slurm
def test_the_session_starts_the_cluster_when_it_can():
    """conftest.py starts the local cluster in the background whenever the SLURM tests are
    selected on a machine that can start one, so that Snakemake's starts do not wait on the
    plugin's probe."""
    reason = slurm_session.cannot_start()
    if reason:
        pytest.skip(reason)
    assert slurm_session.from_env() is not None, f"{slurm_session.ENV_VAR} is not set"


def test_only_sessions_that_select_the_slurm_tests_start_the_cluster():
    """Plain ``pytest`` (pyproject's addopts ``-m``) selects no SLURM test, and neither does
    ``-m "not slurm"`` or ``-m workflow`` alone; ``-m ''`` (the README's test command) and
    ``-m slurm`` do. The fast tests (no marks) are selected by the default and by ``-m ''``."""
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    addopts = shlex.split(options["ini_options"]["addopts"])
    default = addopts[addopts.index("-m") + 1]
    slurm_test = {"slurm"}
    assert not conftest.selects(default, slurm_test)
    assert not conftest.selects("not slurm", slurm_test)
    assert not conftest.selects("workflow", slurm_test)
    assert conftest.selects("", slurm_test)
    assert conftest.selects("slurm", slurm_test)
    assert conftest.selects("slurm or workflow", slurm_test)
    assert conftest.selects(default, set())
    assert conftest.selects("", set())
    for mark in ("workflow", "data", "install", "slow"):
        assert not conftest.selects(default, {mark}), mark


def test_a_session_without_the_slurm_tests_skips_the_plugins_probe(pytestconfig):
    """Where the session selects no SLURM test it starts no cluster and sets ``SLURM_CONF`` to
    an empty file (docs/cluster.md's workaround): ``scontrol show config``, which the SLURM
    plugin runs at every Snakemake start, then fails at once instead of waiting for a
    controller."""
    if conftest.selects_slurm_tests(pytestconfig):
        pytest.skip("this session selects the SLURM tests (it starts the cluster)")
    assert slurm_session.from_env() is None
    assert os.environ["SLURM_CONF"] == os.devnull
    if shutil.which("scontrol"):
        proc = subprocess.run(
            ["scontrol", "show", "config"], capture_output=True, text=True, timeout=60
        )
        assert proc.returncode != 0
        assert "is empty" in proc.stderr, proc.stderr  # not "Unable to contact slurm controller"


# --- runs ------------------------------------------------------------------------------------


@dataclass
class Run:
    workdir: Path
    returncode: int
    output: str  # snakemake's stdout + stderr
    run_id: str  # the plugin's run UUID, used as every job's SLURM job name
    started: float  # time.time() when the run began


def _prepare(workdir: Path) -> str:
    """A fresh copy of the workflow with CONFIG; returns the config file to pass.

    Experiments that CONFIG does not name are switched off, so that a stage enabled in the
    default config later does not silently make this test bigger (or need downloads).
    """
    copy_workflow(workdir)
    (workdir / "data" / "events").mkdir(parents=True)
    for name, seed in EVENTS_FILES:
        _events_part(seed).write_parquet(workdir / "data" / "events" / name)
    default = yaml.safe_load((workdir / "config" / "config.yaml").read_text())
    experiments = {name: False for name in default["experiments"]} | CONFIG["experiments"]
    config = {**CONFIG, "experiments": experiments}
    return write_config(workdir, "slurm_test", config)


def _events_part(seed: int) -> pl.DataFrame:
    """One partition of the events table: 300 events of 40 users (users span both files)."""
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "user_id": [f"u{u:02d}" for u in rng.integers(0, 40, 300)],
            "item_id": [f"i{i}" for i in rng.integers(0, 6, 300)],
            "n": rng.integers(1, 4, 300).astype(float),
            "country": rng.choice(["de", "fr"], 300).tolist(),
        }
    )


def _run_on_slurm(workdir: Path, configfile: str, *, check: bool = True) -> Run:
    started = time.time()
    proc = snakemake(
        workdir, *SLURM_PROFILES, "--configfile", configfile, check=check, timeout=RUN_TIMEOUT
    )
    output = proc.stdout + proc.stderr
    match = re.search(r"SLURM run ID: (\S+)", output)
    assert match, f"no SLURM run ID in the output:\n{output}"
    return Run(workdir, proc.returncode, output, match.group(1), started)


def _job_headers(output: str) -> Counter:
    """(rule, "local"/"cluster") for every job Snakemake started, from its job headers."""
    return Counter(
        (rule, "local" if local else "cluster")
        for local, rule in re.findall(r"^(local)?rule (\w+):$", output, flags=re.MULTILINE)
    )


def _submitted(output: str) -> dict[str, str]:
    """SLURM job id -> rule (or group) of every sbatch submission the plugin reported."""
    pattern = r"submitted with SLURM jobid (\S+) \(log: \S*/slurm_logs/(?:rule|group)_([^/]+)/"
    return dict(re.findall(pattern, output))


def _sacct(run: Run) -> dict[str, dict[str, str]]:
    """sacct rows (allocations only, not steps) of the jobs named after the run, by job id.

    Job ids restart at 1 after a clean cluster start while slurmdbd keeps the old rows, so
    the job name is what identifies a run's jobs.
    """
    fields = ["JobID", "JobName", "State", "WorkDir"]
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(run.started - 120))
    proc = subprocess.run(
        [
            "sacct",
            "--noheader",
            "--parsable2",
            "--allocations",
            f"--name={run.run_id}",
            f"--starttime={since}",
            f"--format={','.join(fields)}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    rows = [dict(zip(fields, line.split("|"), strict=True)) for line in proc.stdout.splitlines()]
    return {row["JobID"]: row for row in rows}


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """CONFIG run locally (profiles/default/), the reference for the SLURM run."""
    workdir = tmp_path_factory.mktemp("local_run")
    configfile = _prepare(workdir)
    snakemake(workdir, "--cores", "2", "--configfile", configfile, timeout=RUN_TIMEOUT)
    return workdir


@dataclass
class SlurmRuns:
    """CONFIG through SLURM with the FAILING job made to fail, then the same command again."""

    planned: Counter  # rule -> jobs of a dry run before the first run
    failed: Run  # the run with the injected failure (--keep-going: the other jobs finished)
    failed_log: str  # the failing job's rule log after the failed run
    finished: dict[str, int]  # results/ file -> mtime (ns) after the failed run
    resumed: Run  # the same command after the injection was undone


@pytest.fixture(scope="module")
def slurm_runs(slurm_cluster, tmp_path_factory):
    """CONFIG run through SLURM once, shared by (a), (b) and (c): the FAILING job raises, every
    other job runs (the profile's keep-going); the injection is then undone as if the failure
    had been transient (a node crash, a time limit) and the same command resumes the run."""
    workdir = tmp_path_factory.mktemp("slurm_run")
    configfile = _prepare(workdir)
    dry = snakemake(workdir, "--dry-run", *SLURM_PROFILES, "--configfile", configfile)
    planned = Counter(rule for rule, _ in _job_headers(dry.stdout + dry.stderr).elements())
    script = workdir / FAILING["script"]
    original, mtime = script.read_text(), script.stat().st_mtime_ns
    script.write_text(
        f'{original}\n\nif {FAILING["condition"]}:\n    raise RuntimeError("injected failure")\n'
    )
    failed = _run_on_slurm(workdir, configfile, check=False)
    failed_log = (workdir / FAILING["log"]).read_text()
    finished = {name: path.stat().st_mtime_ns for name, path in result_files(workdir).items()}
    # Same text and same mtime: a script's mtime is Snakemake's code trigger for it.
    script.write_text(original)
    os.utime(script, ns=(mtime, mtime))
    resumed = _run_on_slurm(workdir, configfile)
    return SlurmRuns(planned, failed, failed_log, finished, resumed)


# --- (a) real SLURM jobs -------------------------------------------------------------------


def _cluster_jobs(run: Run) -> Counter:
    """Rule -> jobs that ``run`` started on the cluster (not on the submitting host)."""
    headers = _job_headers(run.output)
    return Counter({rule: n for (rule, where), n in headers.items() if where == "cluster"})


@pytest.mark.slurm
def test_every_cluster_job_ran_as_a_slurm_job(slurm_runs):
    failed, resumed = slurm_runs.failed, slurm_runs.resumed
    started = Counter(rule for rule, _ in _job_headers(failed.output).elements())
    started += Counter(rule for rule, _ in _job_headers(resumed.output).elements())
    # Every planned job ran, each either on the submitting host or on the cluster, and the
    # failing job twice (failed, then resumed) ...
    assert started == slurm_runs.planned + Counter({FAILING["rule"]: 1}), failed.output
    cluster_jobs = _cluster_jobs(failed) + _cluster_jobs(resumed)
    syn = CONFIG["synthetic"]
    assert cluster_jobs["synthetic_part"] == len(syn["n"]) * len(syn["epsilons"]) + 1
    # the events table's map/reduce jobs: one split per file, one histogram job per bucket
    buckets = CONFIG["events"]["partitioned"]["buckets"]
    assert cluster_jobs["events_split"] == len(EVENTS_FILES), failed.output
    assert cluster_jobs["events_bucket_histograms"] == buckets, failed.output
    assert cluster_jobs["events_bucket_metrics"] == buckets, failed.output
    states = {}
    for run in (failed, resumed):
        # ... each cluster job through one sbatch call ...
        submitted = _submitted(run.output)
        assert Counter(submitted.values()) == _cluster_jobs(run), run.output
        # ... and SLURM's accounting holds exactly those jobs under the run's name.
        rows = _sacct(run)
        assert sorted(rows) == sorted(submitted), (rows, run.output)
        for jobid, row in rows.items():
            assert row["JobName"] == run.run_id, row
            assert Path(row["WorkDir"]).resolve() == run.workdir.resolve(), row
            states[jobid] = row["State"]
    # Every job completed but the failing one (test (c) checks its state)
    _, failed_id = _error_logs(failed.output, FAILING["rule"])
    del states[failed_id]
    assert set(states.values()) == {"COMPLETED"}, states


# --- (b) same results as a local run --------------------------------------------------------


@pytest.mark.slurm
def test_slurm_results_equal_a_local_run(slurm_runs, local_run):
    workdir = slurm_runs.resumed.workdir
    assert result_files(workdir), "the SLURM run wrote no results"
    assert result_differences(local_run, workdir) == []


# --- (c) a failing job, then resuming -------------------------------------------------------


def _error_logs(output: str, rule: str) -> tuple[list[str], str]:
    """Log paths and SLURM job id that Snakemake's "Error in rule" block names for ``rule``."""
    block = re.search(rf"^Error in rule {rule}:\n((?:    .*\n?)+)", output, flags=re.MULTILINE)
    assert block, f"no error block for rule {rule}:\n{output}"
    logs = re.search(r"^    log: (.+?) \(check log file", block.group(1), flags=re.MULTILINE)
    jobid = re.search(r"^    external_jobid: (\S+)", block.group(1), flags=re.MULTILINE)
    assert logs and jobid, block.group(0)
    return logs.group(1).split(", "), jobid.group(1)


@pytest.mark.slurm
def test_a_failed_job_names_its_log_and_a_rerun_resumes(slurm_runs):
    failed, workdir = slurm_runs.failed, slurm_runs.failed.workdir
    assert failed.returncode != 0, failed.output
    logs, failed_id = _error_logs(failed.output, FAILING["rule"])
    # The output names the rule's log, which holds the error, and the kept SLURM log.
    assert FAILING["log"] in logs, logs
    assert "RuntimeError: injected failure" in slurm_runs.failed_log
    # ... and the console quotes the error itself (the workflow's onerror handler)
    causes = failed.output.split("Why the failed job(s) failed", 1)[-1]
    assert f"{FAILING['rule']} ({FAILING['log']}): RuntimeError: injected failure" in causes
    slurm_logs = [Path(p) for p in logs if "/.snakemake/slurm_logs/" in p]
    assert len(slurm_logs) == 1 and slurm_logs[0].is_file(), logs
    assert FAILING["log"] in slurm_logs[0].read_text()
    states = {jobid: row["State"] for jobid, row in _sacct(failed).items()}
    assert states.pop(failed_id) == "FAILED"
    assert states and set(states.values()) == {"COMPLETED"}, states  # the other jobs finished

    # The same command after the fix submits only the failed job and rewrites nothing.
    resumed = slurm_runs.resumed
    submitted = _submitted(resumed.output)
    assert list(submitted.values()) == [FAILING["rule"]], resumed.output
    assert [row["State"] for row in _sacct(resumed).values()] == ["COMPLETED"]
    rewritten = [
        name
        for name, ns in slurm_runs.finished.items()
        if (workdir / name).stat().st_mtime_ns != ns
    ]
    assert rewritten == [], resumed.output
