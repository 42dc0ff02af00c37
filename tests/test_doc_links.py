"""Every link of the README and of the pages it leads to resolves: a relative link names a file
of the project (``docs/outputs.md``, ``../config/README.md``, an image) and an anchor
(``#the-library``, ``own-data.md#outputs-in-resultseventsname``) a heading of that page, as
GitHub makes heading anchors. Web links (``https://...``) are not fetched."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _workflow import ROOT

PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "config" / "README.md",
        *(ROOT / "docs").glob("*.md"),
    ],
    key=str,
)
# [text](target) and ![alt](target), outside code spans and fenced blocks
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """``text`` without fenced code blocks and code spans (their brackets are not links)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, code marks and punctuation other than
    ``-`` and ``_`` dropped, each space a ``-``."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    found: set[str] = set()
    for heading in re.findall(r"^#+ (.+)$", text, flags=re.M):
        anchor = github_anchor(heading)
        suffix = 1
        unique = anchor
        while unique in found:  # repeated headings get -1, -2, ...
            unique = f"{anchor}-{suffix}"
            suffix += 1
        found.add(unique)
    return found


def links(page: Path) -> list[str]:
    return [t for t in LINK.findall(_prose(page.read_text())) if not re.match(r"\w+:", t)]


def test_the_anchor_rule_matches_githubs_on_known_headings():
    assert github_anchor("Outputs in `results/events/<name>/`") == "outputs-in-resultseventsname"
    assert (
        github_anchor("Real data: MovieLens, Avazu, Gowalla") == "real-data-movielens-avazu-gowalla"
    )
    assert github_anchor("I want to…") == "i-want-to"


def test_the_readme_links_the_pages_of_its_guide():
    targets = {t.split("#", 1)[0] for t in links(ROOT / "README.md")}
    for page in (
        "docs/outputs.md",
        "docs/running.md",
        "docs/own-data.md",
        "docs/publishing.md",
        "docs/cluster.md",
        "docs/performance.md",
        "config/README.md",
    ):
        assert page in targets, page


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path):
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no file {file}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading with anchor #{anchor} in {file.name}")
    assert not broken, "\n".join(broken)
