"""Issue 31 §5: a rover refuses, with the reason, a test path its steering cannot drive (Rocky 7
cannot crab), instead of driving another path and reporting ``ok``. The admissible motions come
from the rover's steering joints (eels_gz.rover.steering.IcrSteering.why_not), not from names."""

from __future__ import annotations

import pytest
from faults_cli import cli

from eels_gz import registry
from eels_gz.description.assemble import robot_description
from eels_gz.run.rover_drive import PATHS, path_segments
from eels_gz.rover.from_urdf import wheels_from_urdf
from eels_gz.rover.steering import IcrSteering


def steering(robot: str) -> IcrSteering:
    desc = robot_description(registry.robot(robot), gazebo=False)
    return IcrSteering(wheels_from_urdf(desc.urdf, desc.source))


def test_rocky7_refuses_the_lateral_path_and_writes_nothing(tmp_path):
    out = tmp_path / "rover"
    res = cli("rover", "drive", "--robot", "rocky7", "--path", "lateral", "--speed", "1.2", "--out", out)
    assert res.exit_code == 2, res.output
    assert "cannot drive path 'lateral'" in res.output and "cannot crab" in res.output, res.output
    assert "Traceback" not in res.output
    assert not list(out.glob("*.json")), "a refused drive wrote a run file"


@pytest.mark.parametrize("path", PATHS)
def test_archimede_can_drive_every_test_path(path):
    """Archimede (steering range past +-90 deg) admits every segment of every test path as given."""
    s = steering("archimede")
    assert [s.why_not(*seg.shape) for seg in path_segments(path)] == [None] * len(path_segments(path))


def test_rocky7_admits_exactly_the_paths_its_joints_allow():
    """Rocky 7's rear and middle wheels do not steer (their steering range is a single angle): it may
    drive straight and turn about a point on its fixed axle line, never translate sideways."""
    s = steering("rocky7")
    fixed = [w for w in s.wheels if w.steer_min == w.steer_max]
    assert fixed, "Rocky 7 has fixed wheels in its description"
    assert s.why_not(1.0, 0.0, 0.0) is None
    assert "crab" in s.why_not(0.0, 1.0, 0.0)
    refused = {p for p in PATHS if any(s.why_not(*seg.shape) for seg in path_segments(p))}
    assert {"lateral", "diagonal_20", "square"} <= refused
    assert "straight" not in refused
