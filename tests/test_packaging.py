"""The project's packaging stays consistent: environment.yml mirrors pyproject.toml, the
README's test command is exactly what CI runs, and the core install (numpy and scipy only)
imports and releases from a spec without any extra."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _normalise(requirement: str) -> tuple[str, str]:
    name, spec = re.match(r"^([A-Za-z0-9_.\-]+)(.*)$", requirement.strip()).groups()
    return name.lower().replace("_", "-"), spec.replace(" ", "")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"]]
    for extra in project["optional-dependencies"]:
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


#: What the core install must not import (the extras' packages).
EXTRAS_PACKAGES = ("polars", "pyarrow", "pandas", "ot", "cvxpy", "seaborn", "matplotlib", "yaml")

CORE_IMPORTS = """
import sys
import ldpsample, ldpsample.publish
for name in ldpsample.__all__:
    getattr(ldpsample, name)
for name in ("SecureUniforms", "SeededUniforms", "read_device_spec", "release_on_device"):
    getattr(ldpsample.publish, name)
import ldpsample.cli
ldpsample.cli.build_parser()
print(sorted(m for m in sys.modules if m.split(".")[0] in {extras!r}))
"""

#: The device client with seeded uniforms on the spec folder ``argv[1]`` and the user's counts
#: ``argv[2]`` (JSON rows ``attribute, subcategory, item, count``); prints the drawn
#: (subcategory, item) pairs and the extras' modules it loaded (the extras' names: ``argv[3:]``).
SEEDED_DEVICE = """
import json, sys
from ldpsample.publish import SeededUniforms, read_device_spec, release_on_device
mine = {}
for attribute, subcategory, item, count in json.loads(sys.argv[2]):
    mine.setdefault((attribute, subcategory), {})[item] = count
spec = read_device_spec(sys.argv[1])
rows = release_on_device(spec, mine, user="me", uniforms=SeededUniforms(5))
heavy = sorted(m for m in sys.modules if m.split(".")[0] in sys.argv[3:])
print(json.dumps({"rows": [[r["subcategory"], r["item"]] for r in rows], "heavy": heavy}))
"""


def test_the_core_and_the_device_client_import_no_extra():
    """Importing the library, every export of ``ldpsample``, the device client and the command
    line's parser loads none of the extras' packages (all of them are installed here)."""
    import subprocess
    import sys

    code = CORE_IMPORTS.format(extras=set(EXTRAS_PACKAGES))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]", proc.stdout


def _device_example() -> str:
    doc = (ROOT / "docs" / "publishing.md").read_text()
    section = doc.split("## On each user's own device", 1)[1].split("\n## ", 1)[0]
    (install,) = re.findall(r"```bash\n(.*?)\n```", section, flags=re.S)
    assert install == "pip install /path/to/ldpsample"
    (example,) = re.findall(r"```python\n(.*?)\n```", section, flags=re.S)
    return example


@pytest.mark.install
def test_core_install_in_a_fresh_venv_runs_the_device_example(tmp_path):
    """``pip install <project>`` (no extras) into a fresh venv gives numpy and scipy only, and
    docs/publishing.md's device example runs there as printed on a spec the pipeline's writer
    made; its seeded draws equal release_items' (the full install's), of a per-subcategory and
    of a joint spec; a name needing an extra says which; ``ldpsample show`` prints the spec."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    from ldpsample.publish import SeededUniforms, build_spec, release_items, write_spec

    project = tmp_path / "project"
    project.mkdir()
    for part in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / part, project / part)
    shutil.copytree(
        ROOT / "src", project / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__")
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    install = subprocess.run(  # byte code is a cache: the test imports a few modules once
        [str(python), "-m", "pip", "install", "--quiet", "--no-compile", str(project)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert install.returncode == 0, install.stderr
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert {"numpy", "scipy", "ldpsample"} <= names
    assert not names & {"polars", "pyarrow", "pandas", "pot", "cvxpy", "seaborn", "matplotlib"}

    spec = build_spec(
        name="demo",
        key="events.demo",
        attributes=[],
        prior="uniform",
        items=["news", "sports", "music"],
        epsilons=[1.0, 4.0],
        samples=3,
    )
    work = tmp_path / "device"
    write_spec(spec, work / "spec")
    example = subprocess.run(
        [str(python), "-c", _device_example()],
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
    )
    assert example.returncode == 0, example.stderr
    rows = [line for line in example.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 2 * 3  # ε values x samples, one subcategory

    # seeded draws, per subcategory and joint, equal release_items' (the full install's)
    joint = build_spec(
        name="demo",
        key="events.demo",
        attributes=["country"],
        prior="uniform",
        items=["news", "sports", "music"],
        subcategories={"country": ["de", "fr"]},
        epsilons=[1.0, 4.0],
        samples=2,
        release_mode="joint",
        subcategory_shares={"country": {"de": 1, "fr": 3}},
    )
    write_spec(joint, work / "joint")
    import polars as pl

    for folder, made, counts in (
        ("spec", spec, [("all", "all", "news", 3.0), ("all", "all", "music", 1.0)]),
        ("joint", joint, [("country", "de", "news", 2.0), ("country", "fr", "music", 1.0)]),
    ):
        proc = subprocess.run(
            [str(python), "-c", SEEDED_DEVICE, folder, json.dumps(counts), *EXTRAS_PACKAGES],
            cwd=work,
            capture_output=True,
            text=True,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        mine = pl.DataFrame(
            [("me", *row) for row in counts],
            schema=["user", "attribute", "subcategory", "item", "count"],
            orient="row",
        )
        want = release_items(made, mine, uniforms=SeededUniforms(5)).released
        pairs = [list(pair) for pair in want.select("subcategory", "item").iter_rows()]
        assert json.loads(proc.stdout) == {"rows": pairs, "heavy": []}, folder

    needs_polars = subprocess.run(
        [str(python), "-c", "from ldpsample.publish import read_spec"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert needs_polars.returncode == 1
    assert needs_polars.stderr.strip().splitlines()[-1] == (
        "ModuleNotFoundError: ldpsample.publish.read_spec needs polars, which this install "
        "lacks: pip install 'ldpsample[events]'"
    )

    shown = subprocess.run(
        [str(venv / "bin" / "ldpsample"), "show", "spec"],
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
    )
    assert shown.returncode == 0, shown.stderr
    assert "demo" in shown.stdout and "music" in shown.stdout


def test_a_missing_module_outside_the_extras_is_raised_as_it_is():
    """Only a package of an extra gets the install hint; any other missing module is the
    original error."""
    import pytest

    from ldpsample._lazy import lazy_exports

    getattr_, _ = lazy_exports("pkg", {"thing": "ldpsample_no_such_module"}, {})
    with pytest.raises(ModuleNotFoundError) as info:
        getattr_("thing")
    assert info.value.name == "ldpsample_no_such_module" and "pip install" not in str(info.value)
