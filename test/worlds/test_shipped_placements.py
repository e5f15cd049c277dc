"""Shipped placements (config/placements/): a scenario placed before the run with the engine exports
where dartpy is not installed (a ROS 2 + Gazebo machine), from the placement shipped for its
configuration, and the shipped placements are what the engine places now.

Tolerance: tools/shipped_placements.py's TOLERANCE (1e-7 m and rad): the same pinned dartpy places a
configuration the same to round-off.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eels_gz.run.placing import placement_key, shipped_placements_file

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("shipped_placements", ROOT / "tools" / "shipped_placements.py")
shipped_tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shipped_tool)
PLACED = shipped_tool.placed_scenarios()

# an interpreter in which `import dartpy` fails, as on a Gazebo machine without it
NO_ENGINE = "import sys; sys.modules['dartpy'] = None; "


def test_every_placed_scenario_has_a_shipped_placement():
    assert {"leader_follower", "moulin_descent", "sidewind", "tube_dangle", "wall_climb"} <= set(PLACED)
    for name in PLACED:
        assert shipped_placements_file(name).is_file(), f"{name}: run tools/shipped_placements.py"


@pytest.mark.parametrize("scenario", PLACED)
def test_shipped_placements_are_what_the_engine_places_now(scenario):
    shipped = json.loads(shipped_placements_file(scenario).read_text())
    fresh = shipped_tool.compute(scenario)
    assert shipped_tool.differences(shipped, fresh) == [], "run tools/shipped_placements.py"


def _export_without_engine(tmp_path, overrides: dict) -> subprocess.CompletedProcess:
    code = (NO_ENGINE + "import json; from eels_gz import config; from eels_gz.run.export import export_scenario; "
            f"r = export_scenario(config.resolve(None, {overrides!r}, []), {str(tmp_path)!r}); "
            "print(json.dumps({'source': r['placement_source'], 'engine': sorted(m for m in sys.modules "
            "if m.split('.')[0] == 'dartpy' and sys.modules[m] is not None)}))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


@pytest.mark.parametrize("scenario", ["sidewind", "moulin_descent"])
def test_a_placed_scenario_exports_without_the_engine_from_its_shipped_placement(tmp_path, scenario):
    res = _export_without_engine(tmp_path, {"scenario": scenario})
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out == {"source": "shipped", "engine": []}
    written = json.loads((tmp_path / "placement.json").read_text())
    shipped = json.loads(shipped_placements_file(scenario).read_text())
    # the record goes through a rotation matrix and back: equal to round-off
    as_written = {"placements": [{**shipped["placements"][0], "placement": written}]}
    assert shipped_tool.differences(shipped, as_written) == []
    assert written["joints"] == shipped["placements"][0]["placement"]["joints"]


def test_an_unshipped_configuration_without_the_engine_names_what_to_do(tmp_path):
    res = _export_without_engine(tmp_path, {"scenario": "sidewind", "robot": {"n_modules": 6}})
    assert res.returncode != 0
    assert "dartpy" in res.stderr and "sidewind" in res.stderr and "holds no placement" in res.stderr
    assert not (tmp_path / "world.sdf").exists()


def test_the_key_names_files_by_content_not_path(tmp_path):
    """The same world reached by two paths keys alike (an install prefix is not a checkout)."""
    from eels_gz.registry import world_path

    world = world_path("ice_plane")
    copy = tmp_path / "w.sdf"
    copy.write_bytes(world.read_bytes())
    base = {"robot": {"name": "eels_1_5", "urdf": None}, "scenario": {"name": "x"}, "physics": {"dt": 0.001}}
    assert placement_key({**base, "world": str(world)}) == placement_key({**base, "world": str(copy)})
    assert placement_key({**base, "world": str(world)}) != placement_key({**base, "world": "ice_plane"})
    copy.write_text(copy.read_text().replace("ice_plane", "ice_plane2"))
    assert placement_key({**base, "world": str(world)}) != placement_key({**base, "world": str(copy)})
