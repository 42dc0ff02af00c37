"""The tests' way of running Snakemake (tests/snakemake_fork.py) behaves as ``python -m
snakemake``: the same console and exit status, the run's own folder and environment, the
project's files read afresh at every run, and a run past its timeout killed."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import snakemake_fork

pytestmark = pytest.mark.workflow

#: A workflow whose jobs read the environment, the folder and a module beside the Snakefile
#: (``env`` after ``value``, so that a dry run lists them in one order).
SNAKEFILE = """\
from helper import VALUE


rule all:
    input:
        "env.txt",


rule value:
    output:
        "value.txt",
    run:
        Path(output[0]).write_text(VALUE)


rule env:
    input:
        "value.txt",
    output:
        "env.txt",
    shell:
        "echo $FORK_TEST_MARK > {output}; pwd >> {output}"


rule fail:
    shell:
        "exit 3"


rule slow:
    shell:
        "echo $$ > slow.pid; exec sleep 30"
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "Snakefile").write_text("from pathlib import Path\n" + SNAKEFILE)
    (tmp_path / "helper.py").write_text('VALUE = "first"\n')
    return tmp_path


#: What differs between any two runs of one command: times, the run's UUID, argparse's
#: choices (printed in the order of a set, which hash randomisation shuffles).
_RUN_SPECIFIC = (
    (re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:?\d\d:?\d\d(\.\d+)?"), lambda m: "<time>"),
    (re.compile(r"\[\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4}\]"), lambda m: "<time>"),
    (re.compile(r"Elapsed time: \S+"), lambda m: "Elapsed time: <elapsed>"),
    (re.compile(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}"), lambda m: "<uuid>"),
    (re.compile(r"\{([\w-]+(,[\w-]+)+)\}"), lambda m: ",".join(sorted(m[1].split(",")))),
)


def _comparable(console: str) -> str:
    """The console without what differs between any two runs (``_RUN_SPECIFIC``)."""
    for pattern, replace in _RUN_SPECIFIC:
        console = pattern.sub(replace, console)
    return console


def test_a_run_sees_its_folder_environment_and_the_projects_files_afresh(project, monkeypatch):
    monkeypatch.setenv("FORK_TEST_MARK", "one")
    first = snakemake_fork.run(["--cores", "1"], cwd=project)
    assert first.returncode == 0, first.stderr
    assert (project / "env.txt").read_text().split() == ["one", str(project.resolve())]
    assert (project / "value.txt").read_text() == "first"
    # An edit of a module the Snakefile imports is what the next run uses.
    (project / "helper.py").write_text('VALUE = "second"\n')
    second = snakemake_fork.run(["--cores", "1", "--forceall"], cwd=project)
    assert second.returncode == 0, second.stderr
    assert (project / "value.txt").read_text() == "second"


@pytest.mark.parametrize(
    "args",
    [["--dry-run", "--forceall"], ["--cores", "1", "fail"], ["--no-such-option"]],
    ids=["dry run", "failing job", "bad argument"],
)
def test_the_console_and_status_are_python_m_snakemakes(project, args, monkeypatch):
    monkeypatch.setenv("FORK_TEST_MARK", "x")
    forked = snakemake_fork.run(args, cwd=project)
    monkeypatch.setenv(snakemake_fork.MODE_VARIABLE, "subprocess")  # python -m snakemake
    plain = snakemake_fork.run(args, cwd=project)
    assert forked.returncode == plain.returncode
    assert _comparable(forked.stdout) == _comparable(plain.stdout)
    assert _comparable(forked.stderr) == _comparable(plain.stderr)


def test_a_run_past_its_timeout_is_killed_with_its_jobs_and_the_next_run_works(project):
    with pytest.raises(subprocess.TimeoutExpired):
        snakemake_fork.run(["--cores", "1", "slow"], cwd=project, timeout=5)
    job = int((project / "slow.pid").read_text())
    assert _ends(job), "the timed-out run's job is still running"
    again = snakemake_fork.run(["--cores", "1", "--unlock"], cwd=project)
    assert again.returncode == 0, again.stderr


def _ends(pid: int, within: float = 10) -> bool:
    """Whether process ``pid`` has ended (or is a zombie) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def test_an_interrupted_run_ends_with_its_jobs_and_the_next_run_is_in_step(project):
    """A signal during the wait (here SIGALRM's handler raising, as Ctrl-C would) leaves the
    run's reply unread: the run and its job are killed, and the next run gets its own reply."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.alarm(4)
        with pytest.raises(KeyboardInterrupt):
            snakemake_fork.run(["--cores", "1", "slow"], cwd=project)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    job = int((project / "slow.pid").read_text())
    assert _ends(job), "the interrupted run's job is still running"
    snakemake_fork.run(["--cores", "1", "--unlock"], cwd=project)
    done = snakemake_fork.run(["--cores", "1", "value.txt"], cwd=project)
    assert done.returncode == 0, done.stderr
    assert (project / "value.txt").read_text() == "first"


def test_a_run_imports_from_its_folder_and_its_pythonpath(tmp_path, monkeypatch):
    """As with ``python -m snakemake``, a Snakefile in a subfolder imports modules of the run's
    folder and of the run's PYTHONPATH (a run whose PYTHONPATH differs from the server's is not
    forked: an interpreter reads it when it starts)."""
    (tmp_path / "wf").mkdir()
    (tmp_path / "extra").mkdir()
    (tmp_path / "in_folder.py").write_text('A = "folder"\n')
    (tmp_path / "extra" / "on_path.py").write_text('B = "path"\n')
    (tmp_path / "wf" / "Snakefile").write_text(
        "from in_folder import A\n"
        "from on_path import B\n\n\n"
        "rule all:\n"
        "    output:\n"
        '        "both.txt",\n'
        "    run:\n"
        '        open(output[0], "w").write(A + B)\n'
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "extra"))
    proc = snakemake_fork.run(["-s", "wf/Snakefile", "--cores", "1"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "both.txt").read_text() == "folderpath"
    # without it, the run's folder is still first on the path
    monkeypatch.delenv("PYTHONPATH")
    (tmp_path / "wf" / "Snakefile").write_text(
        (tmp_path / "wf" / "Snakefile").read_text().replace("from on_path import B", 'B = ""')
    )
    proc = snakemake_fork.run(["-s", "wf/Snakefile", "--cores", "1", "--forceall"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "both.txt").read_text() == "folder"
