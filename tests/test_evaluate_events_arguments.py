"""The notebook path (``ldpsample.events.evaluate_events``) checks its arguments as the workflow
checks a config entry: the same checks (cross-checked against the config check of a config
holding the same entry), the same messages naming the argument instead of the config key, before
any table is read; an unknown key names the nearest allowed one, in the notebook and in a config
that Snakemake checks."""

from __future__ import annotations

import copy
import logging

import pytest
import yaml
from _workflow import OTHERS_OFF, ROOT, copy_workflow, events_entry, snakemake, write_config

from ldpsample.events import evaluate_events
from ldpsample.events.evaluation import _as_arguments
from ldpsample.events.reading.scan import EventsTableError
from ldpsample.pipeline.config_check import ConfigError, check_config, check_events

SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
DEFAULT = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


@pytest.fixture
def table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.csv").write_text("user,item,genre,n\nu1,m1,a,1\nu2,m2,b,2\nu3,m1,a,1\n")
    return "t.csv"


BASE = dict(user="user", item="item", count="n", attributes=["genre"])

BAD = {
    "epsilon-zero": dict(epsilons=[0]),
    "epsilon-negative": dict(epsilons=[-1, 2]),
    "epsilon-nan": dict(epsilons=[float("nan")]),
    "min-users": dict(min_users=0),
    "method": dict(methods=["laplace"]),
    "on-bad-rows": dict(on_bad_rows="drop"),
    "repeated-attribute": dict(attributes=["genre", "genre"]),
    "prior-typo": dict(prior={"path": "t.csv", "atributes": ["genre"]}),
    "prior-columns": dict(prior={"path": "t.csv", "attributes": []}),
    "missing-table": dict(path="nowhere.csv"),
}


def pipeline_message(case: dict) -> str:
    """The workflow's config check of a config holding the same entry (``events.events``)."""
    changes = dict(case)
    entry = {"path": changes.pop("path", "t.csv"), **BASE, **changes}
    config = copy.deepcopy(DEFAULT)
    config["events"] = {"events": entry}
    with pytest.raises(ConfigError) as info:
        check_config(config, SCHEMA)
        check_events(config)
    return str(info.value)


@pytest.mark.parametrize("case", sorted(BAD))
def test_the_notebook_fails_as_the_config_check_naming_the_argument(table, case, caplog):
    changes = dict(BAD[case])
    path = changes.pop("path", table)
    with caplog.at_level(logging.INFO), pytest.raises(ConfigError) as info:
        evaluate_events(path, **{**BASE, **changes})
    message = str(info.value)
    assert message == _as_arguments(pipeline_message(BAD[case]), "events.events")
    assert message.startswith("evaluate_events argument ")
    assert "events.events" not in message and "config key" not in message
    # before any scan: no phase of an attribute started
    assert not any("attribute 'genre'" in r.getMessage() for r in caplog.records)


def test_the_first_lines_name_the_argument_and_the_value(table):
    expected = {
        "epsilon-zero": "evaluate_events argument epsilons[0]: 0 must be > 0",
        "epsilon-negative": "evaluate_events argument epsilons[0]: -1 must be > 0",
        "prior-typo": (
            "evaluate_events argument prior.atributes: unknown key 'atributes' (did you mean "
            "'attributes'?)"
        ),
        "missing-table": "evaluate_events argument path: ",
    }
    for case, first in expected.items():
        changes = dict(BAD[case])
        with pytest.raises(ConfigError) as info:
            evaluate_events(changes.pop("path", table), **{**BASE, **changes})
        assert str(info.value).splitlines()[0].startswith(first), (case, str(info.value))


def test_table_errors_name_the_argument_not_the_config_key(table):
    with pytest.raises(EventsTableError) as info:
        evaluate_events(table, **{**BASE, "user": "customer"})
    assert str(info.value).splitlines()[0] == (
        "t.csv: column 'customer' (argument user) not found; the table has columns "
        "['user', 'item', 'genre', 'n']"
    )
    with open("bad.csv", "w") as handle:
        handle.write("user,item,genre,n\nu1,m1,a,1\nu2,m2\n")
    with pytest.raises(EventsTableError) as info:
        evaluate_events("bad.csv", **BASE)
    assert str(info.value).startswith("bad.csv, line 3: missing field in 'u2,m2'")
    assert "(the header has 4 fields; argument path)" in str(info.value)
    assert str(info.value).endswith("; on_bad_rows: skip skips them")


def test_an_unknown_keyword_names_the_nearest(table):
    with pytest.raises(TypeError, match=r"argument 'top_item'; did you mean 'top_items'\?$"):
        evaluate_events(table, **BASE, top_item=5)
    with pytest.raises(TypeError, match=r"argument 'zzz'; known: path, user, item"):
        evaluate_events(table, **BASE, zzz=5)


def test_valid_arguments_still_evaluate(table):
    result = evaluate_events(table, **BASE, epsilons=(1,), methods=("minimax",), top_items="auto")
    assert result.max_tv["epsilon"].unique().to_list() == [1.0]


@pytest.mark.workflow
def test_a_config_typo_names_the_nearest_key_through_snakemake(tmp_path):
    wd = copy_workflow(tmp_path / "wf")
    (wd / "data").mkdir()
    (wd / "data/t.csv").write_text("user_id,item_id,n,country,device\nu1,m1,1,de,x\n")
    entry = events_entry("data/t.csv", top_item=5)
    config = write_config(wd, "typo", {**OTHERS_OFF, "events": {"typo": entry}})
    proc = snakemake(wd, "-n", "--configfile", config, check=False)
    assert proc.returncode != 0
    assert (
        "config error at events.typo.top_item: unknown key 'top_item' (did you mean "
        "'top_items'?)" in proc.stdout + proc.stderr
    )
