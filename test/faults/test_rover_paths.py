"""Issue 31 §5: a rover refuses, with the reason, a test path its steering cannot drive (Rocky 7
cannot crab), instead of driving another path and reporting ``ok``. The admissible motions come
from the rover's steering joints (eels_gz.rover.steering.IcrSteering.why_not), not from names."""

from __future__ import annotations

import pytest
from faults_cli import cli

from eels_gz import registry
from eels_gz.description.assemble import robot_description
from eels_gz.run.drive_runs import PATHS, path_segments
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


def test_the_campaign_plans_only_what_the_rover_can_drive():
    """`rover campaign --robot rocky7` used to plan every path and rate and write an input_error row for
    each it refused. Its plan now holds the paths its steering admits (as the test above finds them from
    its joints) and the rates its motors reach (the wheel joints' <limit velocity>), and names what it
    left out with the reason; Archimede's plan is the spec's whole grid (54 drives)."""
    from lxml import etree

    from eels_gz.sweep.rover_campaign import campaign_spec

    spec, left_out = campaign_spec("archimede")
    assert len(spec.expand()) == 54 and left_out == {}
    spec, left_out = campaign_spec("rocky7")
    s = steering("rocky7")
    desc = robot_description(registry.robot("rocky7"), gazebo=False)
    limit = min(float(j.find("limit").get("velocity")) for j in etree.fromstring(desc.urdf.encode()).iter("joint")
                if j.get("name").endswith("_wheel_joint"))
    planned = spec.expand()
    assert planned and all(all(s.why_not(*seg.shape) is None for seg in path_segments(p.inputs["path"]))
                           and p.inputs["speed"] <= limit for p in planned)
    assert "path lateral" in left_out and "cannot crab" in left_out["path lateral"]
    assert "rate 2.4" in left_out and "beyond the drive motors' limit" in left_out["rate 2.4"]
    assert {p.inputs["path"] for p in planned} == {"straight"}  # it cannot turn about a point off its fixed axle
