"""Input files that used to break their reader, or get a wrong answer from it (issue 45, class 5):
each is refused naming the file and what is wrong (exit 2, no traceback, nothing written), or read
as the docs say (a scan's stray point dropped)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from faults_cli import SMALL, cli

REPO = Path(__file__).resolve().parents[2]


def refused(res, *words) -> None:
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and all(w in res.output for w in words), res.output


@pytest.mark.parametrize("suffix", [".urdf", ".xacro"])
def test_a_binary_robot_description_is_named_not_a_unicode_error(tmp_path, suffix):
    binary = tmp_path / f"robot{suffix}"
    binary.write_bytes(bytes(range(256)) * 8)
    res = cli("run", *SMALL, "--urdf", binary, "--out", tmp_path / "r")
    refused(res, str(binary), "not a URDF/xacro XML text file")
    assert "UnicodeDecodeError" not in res.output and not (tmp_path / "r").exists()


def test_a_deeply_nested_yaml_is_named_not_a_recursion_error(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("robot: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n")
    res = cli("run", *SMALL, "--config", deep, "--out", tmp_path / "r")
    refused(res, str(deep), "nested more than")
    assert "RecursionError" not in res.output


@pytest.mark.parametrize("value", [-9999.0, 1e30])
def test_an_untagged_nodata_post_is_refused_not_a_kilometres_high_terrain(tmp_path, value):
    heights = np.random.default_rng(0).normal(0.0, 0.1, (64, 64))
    heights[10, 10] = value
    dem = tmp_path / "dem.npy"
    np.save(dem, heights)
    res = cli("world", "dem", dem, "--spacing", "0.5", "0.5", "--out", tmp_path / "w")
    refused(res, str(dem), "row 10, column 10", "untagged nodata")
    assert not (tmp_path / "w").exists()


BOX = """v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
v 0 0 1
v 1 0 1
v 1 1 1
v 0 1 {z}
f 1 3 2
f 1 4 3
f 5 6 7
f 5 7 8
f 1 2 6
f 1 6 5
f 2 3 7
f 2 7 6
f 3 4 8
f 3 8 7
f 4 1 5
f 4 5 8
"""


@pytest.mark.parametrize("z, words", [("nan", ("not finite", "vertex 7")), ("1e30", ("from the origin", "vertex 7"))])
def test_a_mesh_with_a_broken_vertex_is_named_not_called_open(tmp_path, z, words):
    mesh = tmp_path / "box.obj"
    mesh.write_text(BOX.format(z=z))
    res = cli("world", "mesh", mesh, "--out", tmp_path / "w")
    refused(res, str(mesh), *words)
    assert "is open" not in res.output and "tube" not in res.output
    assert not (tmp_path / "w").exists()


def test_a_scans_far_stray_point_is_dropped_as_the_docs_say(tmp_path):
    lines = (REPO / "examples" / "moulin_scan.xyz").read_text().splitlines()
    scan = tmp_path / "shaft.xyz"
    scan.write_text("\n".join([*lines, "500.0 500.0 500.0"]) + "\n")
    res = cli("world", "pointcloud", scan, "--out", tmp_path / "w")
    assert res.exit_code == 0, res.output
    record = json.loads((tmp_path / "w" / "models" / "shaft" / "terrain.json").read_text())
    assert record["parameters"]["strays_removed"] == 1, record["parameters"]
