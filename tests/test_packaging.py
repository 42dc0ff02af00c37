"""The project's packaging stays consistent: environment.yml mirrors pyproject.toml, and the
README's test command is exactly what CI runs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _normalise(requirement: str) -> tuple[str, str]:
    name, spec = re.match(r"^([A-Za-z0-9_.\-]+)(.*)$", requirement.strip()).groups()
    return name.lower().replace("_", "-"), spec.replace(" ", "")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"]]
    for extra in ("workflow", "test"):
        wanted += [
            r for r in project["optional-dependencies"][extra] if not r.startswith("ldpsample")
        ]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [
        d for d in env["dependencies"] if isinstance(d, str) and not d.startswith(("python", "pip"))
    ]
    assert sorted(map(_normalise, conda)) == sorted(map(_normalise, wanted))


def _readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(?:bash|sh)\n(.*?)\n```", setup, flags=re.S)


def test_readme_has_exactly_two_setup_commands():
    commands = _readme_commands()
    assert len(commands) == 2, commands
    assert "snakemake --cores 2" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert _readme_commands()[1].strip() in ci


def test_readme_library_example_runs(capsys):
    """The README's Python example is real code: run it as written."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## The library", 1)[1].split("\n## ", 1)[0]
    (example,) = re.findall(r"```python\n(.*?)\n```", section, flags=re.S)
    exec(compile(example, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "[" in printed  # the TV distances of the two users


def test_progress_bars_are_off_by_default_and_go_to_stderr(capsys):
    """Long loops report progress when a script asks (the rule's log), and are silent otherwise."""
    from ldpsample.experiments.synthetic import synthetic_values

    synthetic_values(n=5, epsilon=1.0, runs=2, grid_size=3, seed=0)
    assert capsys.readouterr().err == ""
    synthetic_values(n=5, epsilon=1.0, runs=2, grid_size=3, seed=0, progress=True)
    err = capsys.readouterr().err
    assert "runs" in err and "2/2" in err
