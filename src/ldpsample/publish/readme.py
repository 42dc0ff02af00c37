"""The README.md of a published folder: what each file is, its ε, what a reader may conclude,
and the one command that estimates from it.

The text is a function of the spec and of ``release.json``'s content only (public), so it is
as publishable as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ldpsample.publish.exactness import RELATIVE_EXCESS
from ldpsample.publish.spec import ReleaseSpec

__all__ = ["ESTIMATE_COMMAND", "publication_readme"]

#: The command that turns a published folder into population estimates.
ESTIMATE_COMMAND = "ldpsample estimate <this folder> --out <table.csv>"


def publication_readme(spec: ReleaseSpec, index: Mapping[str, Any]) -> str:
    """Markdown describing the published folder of ``spec`` whose ``release.json`` holds
    ``index`` (its ``files``: path -> ``epsilon, rows, sha256``)."""
    if index["publishable"]:
        status = (
            "Publishable: every draw used secret randomness from the operating system, "
            "never stored."
        )
    else:
        status = (
            "**Reproducible, not for publication**: the draws come from a seed; whoever "
            "knows it recomputes every draw. Do not publish this folder."
        )
    rows = "\n".join(
        f"| `{path}` | {entry['epsilon']!r} | {entry['rows']} | `{entry['sha256']}` |"
        for path, entry in sorted(index["files"].items())
    )
    membership = (
        "only in the subcategories where they have data (membership is public)"
        if spec.attributes_public
        else "in every subcategory (a user without data there draws from the prior q, so the "
        "rows reveal only that the user is in the table)"
    )
    drawn = f"{spec.samples} item(s) per subcategory and ε, drawn from"
    cost = "subcategories × Σε × samples"
    if spec.joint:
        membership = (
            "once per attribute (a user without data there draws from the prior q, so the "
            "rows reveal only that the user is in the table)"
        )
        drawn = (
            f"{spec.samples} (subcategory, item) pair(s) per attribute and ε (joint release: "
            "the prior is q(s, i) = π(s)·q_s(i), π the public `subcategory_shares` of "
            "`spec/manifest.json`), drawn from"
        )
        cost = "attributes × Σε × samples"
    plan = _plan_text(index.get("accuracy_plan"))
    return f"""# Release {index["release_id"]} of `{spec.name}`

{status}

Each user released, {membership}, {drawn}
p·K_(q,ε): the minimax-optimal ε-LDP sampler (Zamanlooy, Diaz & Asoodeh, AISTATS 2025,
Algorithm 1) with the public prior q of `spec/domain.csv`. Each file is ε-LDP for every user at
its ε (to within a factor 1 + {RELATIVE_EXCESS:g} of ε over the 2**-53 grid of the uniforms);
together they cost each user at most {spec.budget_bound!r} ({cost}).

| file | ε | rows | sha256 |
|---|---|---|---|
{rows}

- `released/eps~<ε>.parquet`: one row per draw, columns `{", ".join(index["columns"])}`.
- `spec/manifest.json`, `spec/domain.csv`: the public mechanism (items, q, ε values, samples,
  provenance); sha256 of the manifest `{index["spec"]["sha256"]}`.
- `release.json`: this release's id, the spec's sha256 and every file above with its sha256
  (check them with `sha256sum`).
{plan}
Estimate the population's item distributions (with standard errors) from this folder alone:

    {ESTIMATE_COMMAND}
"""


def _plan_text(plan: Mapping[str, Any] | None) -> str:
    """The README's paragraph on ``release.json``'s accuracy plan ("" without one)."""
    if plan is None:
        return ""
    cells = plan["cells"]
    worst = max(cells, key=lambda cell: cell["predicted_tv_error"])
    warnings = "".join(f"\n- {line}" for line in plan["warnings"])
    verdict = (
        f"{len(plan['warnings'])} of them cannot beat reporting q by inversion:{warnings}\n"
        if plan["warnings"]
        else "In every one inversion can beat reporting q.\n"
    )
    return f"""
`release.json`'s `accuracy_plan` was computed before any draw from public inputs only (the
spec and the number of users, assuming the population at the prior q): per subcategory and ε
the inversion's predicted TV error and cond(K). Largest predicted TV error
{worst["predicted_tv_error"]:.3g} ({worst["attribute"]}={worst["subcategory"]!r}, ε =
{worst["epsilon"]!r}) over {len(cells)} (subcategory, ε) cells. {verdict}"""
