"""The README's robot, world and scenario tables match the registry."""

from __future__ import annotations

import re

import pytest

from eels_gz.paths import asset
from eels_gz.registry import readme_tables


@pytest.mark.parametrize("marker, table", sorted(readme_tables().items()))
def test_readme_table_matches_registry(marker, table):
    readme = asset("README.md").read_text() if asset("README.md").exists() else None
    if readme is None:
        pytest.skip("README.md is not installed with the package")
    m = re.search(rf"<!-- {marker}:begin -->\n(.*?)\n<!-- {marker}:end -->", readme, re.S)
    assert m, f"README.md has no <!-- {marker}:begin/end --> block"
    assert m.group(1) == table, f"README {marker} table is out of date; expected:\n{table}"
