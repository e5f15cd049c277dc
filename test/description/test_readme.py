"""The robot, world and scenario tables of the README and its docs/ pages match the registry,
and every page the README links to exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from eels_gz.registry import readme_tables

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@pytest.mark.parametrize("marker, table", sorted(readme_tables().items()))
def test_docs_table_matches_registry(marker, table):
    pattern = re.compile(rf"<!-- {marker}:begin -->\n(.*?)\n<!-- {marker}:end -->", re.S)
    found = [(p, m) for p in PAGES for m in pattern.finditer(p.read_text())]
    assert len(found) == 1, f"expected one <!-- {marker}:begin/end --> block in README.md and docs/, found " \
                            f"{[str(p.relative_to(REPO)) for p, _ in found]}"
    page, m = found[0]
    assert m.group(1) == table, f"{page.relative_to(REPO)}: the {marker} table is out of date; expected:\n{table}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page):
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
        assert (page.parent / target).exists(), f"{page.relative_to(REPO)} links to missing {target}"
