"""The real-Gazebo tier: runs where a gz-sim 8 is installed (eels_gz.gazebo.install: $EELS_GZ_GAZEBO,
`gz` on PATH with gz.sim8, /opt/ros/jazzy, /opt/gz-harmonic), skips with one line saying what it
looked for elsewhere, and fails instead of skipping when EELS_GZ_REQUIRE_GAZEBO=1 (.ci/run sets it on a
machine where gz-sim is present, so a tier that silently stops running cannot pass)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REQUIRE_VAR = "EELS_GZ_REQUIRE_GAZEBO"
HERE = Path(__file__).parent
_NOT_RUN: list[str] = []


def pytest_collection_modifyitems(config, items):
    """Without a gz-sim (and not required): the tier's tests are left out, said once at the end."""
    from eels_gz.gazebo.install import find_gz_sim, looked_for

    mine = [i for i in items if HERE in Path(str(i.path)).parents]
    if not mine or os.environ.get(REQUIRE_VAR) == "1" or find_gz_sim() is not None:
        return
    items[:] = [i for i in items if i not in mine]
    config.hook.pytest_deselected(items=mine)
    _NOT_RUN.append(f"test/gazebo: {len(mine)} tests not run: no gz-sim found ({looked_for()}); "
                    f"{REQUIRE_VAR}=1 makes that a failure")


def pytest_terminal_summary(terminalreporter):
    for line in _NOT_RUN:
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def gz_sim():
    from eels_gz.gazebo.install import find_gz_sim, looked_for

    found = find_gz_sim()
    if found is None:
        if os.environ.get(REQUIRE_VAR) == "1":
            pytest.fail(f"{REQUIRE_VAR}=1 and no gz-sim found: {looked_for()}")
        pytest.skip(f"real-Gazebo tier: {looked_for()}; none found")
    return found


@pytest.fixture(autouse=True)
def _needs_gz_sim(gz_sim):
    """Every test of this tier needs the gz-sim found (or skips, or fails when it is required)."""
