"""The options of an events entry (ldpsample.events.options.EventsOptions): one definition
whose defaults are the events schema's and docs/own-data.md's, kinds as enums, each rule's
params its fields; and the Python API called with only the required arguments gives exactly the
numbers the pipeline gives for the same minimal config entry (a Snakemake run on a fresh copy)."""

from __future__ import annotations

import ast
import copy
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from _workflow import ROOT, copy_workflow, planned_jobs, snakemake

from ldpsample.events import build_event_histograms, evaluate_events
from ldpsample.events.bucketed.steps import histograms_in_buckets
from ldpsample.events.options import (
    HISTOGRAM_FIELDS,
    METRICS_FIELDS,
    ROSTER_FIELDS,
    ActivityScope,
    EventsOptions,
    Method,
    OnBadRows,
    OnNull,
    PriorKind,
)
from ldpsample.pipeline.config_check import apply_events_defaults, events_defaults
from ldpsample.pipeline.io import write_csv

SCHEMA = ROOT / "workflow/schemas/events.schema.yaml"
FIELDS = [f for f in dataclasses.fields(EventsOptions) if f.name != "key"]


def _dataset_schema() -> dict:
    return yaml.safe_load(SCHEMA.read_text())["$defs"]["dataset"]


def _plain(value):
    """A field's default as the schema writes it (enums as text, tuples as lists)."""
    return json.loads(json.dumps(value))


def test_every_field_is_a_described_schema_key_with_the_schemas_default():
    dataset = _dataset_schema()
    defaults = events_defaults(SCHEMA)
    for field in FIELDS:
        spec = dataset["properties"][field.name]
        assert spec.get("description"), field.name
        if field.default is dataclasses.MISSING:
            assert field.name in dataset["required"], field.name
        else:
            assert _plain(field.default) == defaults[field.name], field.name


def test_a_minimal_entry_filled_by_the_schema_is_the_options_with_only_required_fields():
    entry = {"path": "t.csv", "user": "u", "item": "i"}
    filled = copy.deepcopy(entry)
    apply_events_defaults({"events": {"x": filled}}, SCHEMA)
    assert set(filled) > set(entry)
    built = EventsOptions.from_entry(filled, key="events.x")
    assert built == EventsOptions(path="t.csv", user="u", item="i", key="events.x")
    assert built.prior is PriorKind.POOLED and built.min_user_count == 0 and built.min_users == 1
    assert built.evaluation_top_items == 100  # top_items: auto


def test_the_docs_key_table_states_the_schemas_defaults():
    """docs/own-data.md's table of keys (config/README.md points to it): each field's row, its
    default as the schema's (methods: "all four", every Method)."""
    text = (ROOT / "docs/own-data.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+)` \| (.+?) \|", text, re.M))
    defaults = events_defaults(SCHEMA)
    compared = 0
    for field in FIELDS:
        if field.default is dataclasses.MISSING:
            continue
        shown = rows[field.name]
        if field.name == "methods":
            assert shown == "all four" and len(Method) == 4
            continue
        assert yaml.safe_load(shown.strip("`")) == defaults[field.name], field.name
        compared += 1
    assert compared >= 12


@pytest.mark.parametrize(
    ("field", "kind"),
    [
        ("activity_scope", ActivityScope),
        ("on_null", OnNull),
        ("on_bad_rows", OnBadRows),
        ("prior", PriorKind),
    ],
)
def test_kinds_are_enums_and_a_value_outside_names_its_key(field, kind):
    first = next(iter(kind))
    built = EventsOptions(path="t", user="u", item="i", **{field: first.value})
    assert getattr(built, field) is first
    with pytest.raises(ValueError, match=rf"^config key events\.k\.{field}: 'nope' is not "):
        EventsOptions(path="t", user="u", item="i", key="events.k", **{field: "nope"})


def test_methods_and_top_items_are_checked():
    built = EventsOptions(path="t", user="u", item="i", methods=["minimax"])
    assert built.methods == (Method.MINIMAX,)
    with pytest.raises(ValueError, match=r"^config key events\.methods: 'rr' is not minimax"):
        EventsOptions(path="t", user="u", item="i", methods=["rr"])
    for bad in (0, True, "all"):
        with pytest.raises(ValueError, match=r"^config key events\.top_items: "):
            EventsOptions(path="t", user="u", item="i", top_items=bad)


def test_one_attribute_restricts_the_attributes_and_a_public_tables_columns():
    built = EventsOptions(
        path="t",
        user="u",
        item="i",
        count="n",
        attributes=["a", "b"],
        prior={"path": "public.parquet", "attributes": ["A", "B"]},
    )
    # the public table's absent columns are the events table's
    assert built.prior == {
        "path": "public.parquet",
        "user": "u",
        "item": "i",
        "count": "n",
        "attributes": ["A", "B"],
    }
    assert built.prior_kind is PriorKind.TABLE
    one = built.for_attribute("b")
    assert one.attributes == ("b",) and one.prior["attributes"] == ["B"]
    assert built.for_attribute(None) is built
    whole = EventsOptions(path="t", user="u", item="i")
    assert whole.for_attribute("all") is whole


def test_params_are_plain_sorted_and_rebuild_the_options():
    built = EventsOptions(
        path="t",
        user="u",
        item="i",
        key="events.k",
        items=[3, "b", "a"],
        exclude_users=["z", "y"],
        epsilons=[8, 0.5],
        methods=["mollifier_tv", "minimax"],
        on_bad_rows="skip",
    )
    params = built.params(HISTOGRAM_FIELDS)
    assert json.loads(json.dumps(params)) == params  # plain values (a rule's params)
    assert params["items"] == ["3", "a", "b"] and params["exclude_users"] == ["y", "z"]
    assert params["on_bad_rows"] == "skip" and "epsilons" not in params
    assert built.params(METRICS_FIELDS) == {
        "epsilons": [0.5, 8.0],
        "methods": ["minimax", "mollifier_tv"],
    }
    rebuilt = EventsOptions.from_params(params)
    assert rebuilt.items == ("3", "a", "b") and rebuilt.on_bad_rows is OnBadRows.SKIP
    assert set(ROSTER_FIELDS) < set(HISTOGRAM_FIELDS)


def test_only_the_threads_module_sizes_threads_from_the_cpu_count():
    """Thread counts are decided in ldpsample/_threads.py alone: no other module calls
    os.cpu_count() (docstrings may name it)."""
    callers = []
    for path in sorted((ROOT / "src/ldpsample").rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "cpu_count"
            ):
                callers.append(path.relative_to(ROOT / "src").as_posix())
    assert callers == ["ldpsample/_threads.py"]


def _minimal_table(path: Path) -> None:
    rng = np.random.default_rng(5)
    rows = 1500
    pl.DataFrame(
        {
            "user_id": [f"u{k:03d}" for k in rng.integers(0, 60, rows)],
            "item_id": [f"i{k}" for k in rng.zipf(1.6, rows) % 12],
        }
    ).write_parquet(path)


def test_buckets_and_one_job_with_only_required_options_agree(tmp_path):
    """The map/reduce steps read the same defaults as the one job: with only path, user and
    item given (top_items auto = 100, prior pooled, every user kept), the same histograms,
    subcategories and priors."""
    _minimal_table(tmp_path / "one.parquet")
    frame = pl.read_parquet(tmp_path / "one.parquet")
    (tmp_path / "parts").mkdir()
    for part in range(3):
        frame[part::3].write_parquet(tmp_path / f"parts/p{part}.parquet")
    one = build_event_histograms(
        EventsOptions(path=tmp_path / "one.parquet", user="user_id", item="item_id")
    )
    got = histograms_in_buckets(
        tmp_path / "parts",
        buckets=3,
        workdir=tmp_path / "w",
        options={"user": "user_id", "item": "item_id"},
    )
    histograms = pl.concat([pl.read_parquet(h) for h in got.histograms])
    assert histograms.sort("attribute", "subcategory", "user", "item").equals(one.histograms)
    assert got.subcategories.equals(one.subcategories)
    pooled = (
        one.histograms.group_by("subcategory", "item")
        .agg(pl.col("count").sum())
        .sort("subcategory", "item")
    )
    assert got.priors["item"].to_list() == pooled["item"].to_list()
    assert np.allclose(got.priors["q"], pooled["count"] / pooled["count"].sum(), rtol=1e-15)


@pytest.mark.workflow
def test_the_api_with_only_required_arguments_gives_the_pipelines_numbers(tmp_path):
    """A config entry {path, user, item} through Snakemake on a fresh copy, and the same table
    through build_event_histograms(EventsOptions(path, user, item)) and
    evaluate_events(path, user=..., item=...): identical histograms, priors, subcategories and
    tables (the CSVs byte for byte, written by the pipeline's writer). Then the re-runs a config
    change plans: ε re-runs the metrics, not the histograms; min_users re-runs both."""
    wd = copy_workflow(tmp_path / "wf")
    (wd / "data").mkdir()
    _minimal_table(wd / "data/mini.parquet")
    entry = {"path": "data/mini.parquet", "user": "user_id", "item": "item_id"}
    (wd / "config/mini.yaml").write_text(yaml.safe_dump({"events": {"mini": entry}}))
    base = wd / "results/events/mini"
    tables = ["max_tv", "max_kl", "summary", "subcategories", "tradeoff", "audit"]
    targets = [f"results/events/mini/{t}.csv" for t in tables]
    snakemake(wd, *targets, "-c2", "--configfile", "config/mini.yaml")

    source = wd / "data/mini.parquet"
    built = build_event_histograms(EventsOptions(path=source, user="user_id", item="item_id"))
    work = base / "work/attribute~all"
    assert built.histograms.height > 0
    assert built.histograms.equals(pl.read_parquet(work / "histograms.parquet"))
    assert built.priors.equals(pl.read_parquet(work / "priors.parquet"))
    assert built.subcategories.equals(pl.read_parquet(work / "subcategories.parquet"))

    result = evaluate_events(source, user="user_id", item="item_id")
    assert result.histograms.equals(built.histograms)
    for table in tables:
        mine = tmp_path / f"{table}.csv"
        write_csv(getattr(result, table), mine)
        assert mine.read_bytes() == (base / f"{table}.csv").read_bytes(), table
    assert sorted(set(result.max_tv["epsilon"])) == [0.5, 1.0, 2.0, 4.0, 8.0]
    assert set(result.max_tv["method"]) | set(result.max_kl["method"]) == set(Method)

    def planned(changes: dict) -> dict[str, int]:
        (wd / "config/changed.yaml").write_text(
            yaml.safe_dump({"events": {"mini": {**entry, **changes}}})
        )
        return planned_jobs(wd, *targets, "-c2", "--configfile", "config/changed.yaml")

    assert planned({}) == {}
    epsilons = planned({"epsilons": [1, 2]})
    assert "events_histograms" not in epsilons and epsilons["events_metrics"] == 1
    users = planned({"min_users": 2})
    assert users["events_histograms"] == 1 and users["events_metrics"] == 1
