"""The tests' way of running Snakemake's script jobs (tests/job_fork.py, through
tests/snakemake_fork.py) behaves as a fresh interpreter on the script: the same files, console
and exit status, the job's own folder, arguments, path, environment and thread count, an edit
of a script or a module reaching the next job, and a job of a run past its timeout killed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import job_fork
import pytest
import snakemake_fork
from test_snakemake_fork import _comparable, _ends

pytestmark = pytest.mark.workflow

SNAKEFILE = """\
import os

os.environ["PYTHONPATH"] = os.path.abspath("lib")  # as the workflow puts its src/ first


rule all:
    input:
        "one.json",
        "two.json",


rule probe:
    output:
        "{name}.json",
    threads: 2
    script:
        "probe.py"


rule fail:
    script:
        "fail.py"


rule leave:
    params:
        how=config.get("how", "exit 3"),
    script:
        "leave.py"


rule slow:
    script:
        "slow.py"
"""

PROBE = """\
import json, os, sys
import numpy
import helper

print("to stdout", snakemake.wildcards.name)
print("to stderr", snakemake.wildcards.name, file=sys.stderr)
parent = open(f"/proc/{os.getppid()}/cmdline", "rb").read().split(b"\\0")
record = {
    "name": __name__,
    "argv": [os.path.basename(sys.argv[0]).split(".", 1)[1]],
    "path": sys.path[:3],
    "cwd": os.getcwd(),
    "mark": os.environ.get("JOB_FORK_MARK"),
    "threads": os.environ.get("OPENBLAS_NUM_THREADS"),
    "helper": helper.VALUE,
    "legacy": float(numpy.random.random()),
    "seaborn_loaded": "seaborn" in sys.modules,
    "parent": " ".join(part.decode() for part in parent if part),
}
with open(snakemake.output[0], "w") as out:
    json.dump(record, out)
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "probe.py").write_text(PROBE)
    (tmp_path / "fail.py").write_text("def deep():\n    raise ValueError('bad row 7')\n\ndeep()\n")
    (tmp_path / "leave.py").write_text(
        "import sys\nhow = snakemake.params.how\n"
        "if how == 'exit 3':\n    sys.exit(3)\n"
        "if how == 'exit message':\n    sys.exit('stopped: see the log')\n"
    )
    (tmp_path / "slow.py").write_text(
        "import os, time\nopen('slow.pid', 'w').write(str(os.getpid()))\ntime.sleep(30)\n"
    )
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper.py").write_text('VALUE = "first"\n')
    return tmp_path


def _zygotes_ready() -> None:
    """Start the server (and its zygotes) and wait until both zygotes listen, so that the jobs
    below are forked rather than started afresh while a zygote imports."""
    if os.environ.get(snakemake_fork.MODE_VARIABLE) == "subprocess":
        pytest.skip(f"{snakemake_fork.MODE_VARIABLE}=subprocess: no job is forked")
    if job_fork._shadows(job_fork._python_path(dict(os.environ), os.getcwd())):
        pytest.skip("this session's PYTHONPATH holds a module the zygotes import: no job is forked")
    snakemake_fork.run(["--version"], cwd=Path.cwd())
    folder = Path(snakemake_fork._SERVER.jobs.folder)
    for _ in range(600):
        if all((folder / f"threads-{n}.sock").exists() for n in job_fork.THREADS):
            return
        time.sleep(0.1)
    raise AssertionError("the job zygotes did not start listening within 60 s")


def _records(project: Path) -> dict[str, dict]:
    return {name: json.loads((project / f"{name}.json").read_text()) for name in ("one", "two")}


def test_a_forked_job_is_what_a_fresh_interpreter_on_the_script_is(project, monkeypatch):
    monkeypatch.setenv("JOB_FORK_MARK", "mark")
    _zygotes_ready()
    forked = snakemake_fork.run(["--cores", "2"], cwd=project)
    assert forked.returncode == 0, forked.stderr
    got = _records(project)
    monkeypatch.setenv(snakemake_fork.MODE_VARIABLE, "subprocess")
    plain = snakemake_fork.run(["--cores", "2", "--forceall"], cwd=project)
    assert plain.returncode == 0, plain.stderr
    want = _records(project)
    for name in ("one", "two"):
        # forked from a zygote that had imported seaborn, against a shell's fresh python
        assert "job_fork.py" in got[name].pop("parent")
        assert "job_fork.py" not in want[name].pop("parent")
        assert got[name].pop("seaborn_loaded") and not want[name].pop("seaborn_loaded")
    # each job's legacy numpy generator is seeded anew, as in a fresh interpreter
    assert got["one"].pop("legacy") != got["two"].pop("legacy")
    for name in ("one", "two"):
        want[name].pop("legacy")
    assert got == want
    assert got["one"]["path"][:2] == [str(project / ".snakemake" / "scripts"), str(project / "lib")]
    assert got["one"]["threads"] == "2" and got["one"]["helper"] == "first"
    for stream in ("stdout", "stderr"):
        lines = sorted(re.findall(r"^to \w+ \w+$", getattr(forked, stream), re.M))
        assert lines == sorted(re.findall(r"^to \w+ \w+$", getattr(plain, stream), re.M))
        assert lines, stream


def test_an_edit_of_a_module_or_script_reaches_the_next_forked_job(project):
    _zygotes_ready()
    assert snakemake_fork.run(["--cores", "2"], cwd=project).returncode == 0
    (project / "lib" / "helper.py").write_text('VALUE = "second"\n')
    (project / "probe.py").write_text(
        PROBE.replace('"mark": os.environ', '"mark": 7 or os.environ')
    )
    done = snakemake_fork.run(["--cores", "2", "--forceall"], cwd=project)
    assert done.returncode == 0, done.stderr
    for record in _records(project).values():
        assert record["helper"] == "second" and record["mark"] == 7
        assert "job_fork.py" in record["parent"]


@pytest.mark.parametrize(
    "args",
    [
        ["--cores", "1", "fail"],
        ["--cores", "1", "leave", "--config", "how=exit 3"],
        ["--cores", "1", "leave", "--config", "how=exit message"],
    ],
    ids=["uncaught exception", "sys.exit(3)", "sys.exit(message)"],
)
def test_a_failing_forked_job_fails_the_run_as_a_fresh_one_does(project, args, monkeypatch):
    _zygotes_ready()
    forked = snakemake_fork.run(args, cwd=project)
    monkeypatch.setenv(snakemake_fork.MODE_VARIABLE, "subprocess")
    plain = snakemake_fork.run(args, cwd=project)
    assert forked.returncode == plain.returncode != 0

    # The script's temporary name differs between any two runs, and a failed job's command
    # names the interpreter Snakemake ran: the client, where the job was forked.
    client = snakemake_fork._zygotes().client

    def same(text: str) -> str:
        text = text.replace(client, sys.executable)
        return re.sub(r"tmp\w+\.(\w+)\.py", r"tmp<name>.\1.py", _comparable(text))

    assert same(forked.stdout) == same(plain.stdout)
    assert same(forked.stderr) == same(plain.stderr)


def test_a_forked_job_of_a_run_past_its_timeout_is_killed(project):
    _zygotes_ready()
    with pytest.raises(subprocess.TimeoutExpired):
        snakemake_fork.run(["--cores", "1", "slow"], cwd=project, timeout=8)
    job = int((project / "slow.pid").read_text())
    assert _ends(job), "the timed-out run's forked job is still running"


def test_a_job_whose_start_would_differ_runs_in_a_fresh_interpreter(project, monkeypatch):
    """A job whose PYTHONPATH holds a module the zygote imported (here ``yaml``) or whose
    thread count no zygote has runs as ``python <script>``: it imports that module from its
    path, as a fresh interpreter would."""
    _zygotes_ready()
    (project / "lib" / "yaml.py").write_text("SHADOW = True\n")
    (project / "probe.py").write_text(PROBE.replace("import helper", "import helper, yaml"))
    done = snakemake_fork.run(["--cores", "2", "one.json"], cwd=project)
    assert done.returncode == 0, done.stderr
    assert "job_fork.py" not in _records_one(project)["parent"]
    (project / "lib" / "yaml.py").unlink()
    three = ["--cores", "3", "--set-threads", "probe=3", "--forceall", "one.json"]
    done = snakemake_fork.run(three, cwd=project)
    assert done.returncode == 0, done.stderr
    assert "job_fork.py" not in _records_one(project)["parent"]


def _records_one(project: Path) -> dict:
    return json.loads((project / "one.json").read_text())
