"""Issue 31 §9: a robot placed inside the terrain ran 2 s buried with status ``ok`` and no warning.
A given start pose (robot.pose [x, y, z, roll, pitch, yaw]) that puts a collision shape more than
START_DEPTH into the terrain is now refused (exit 2, nothing written), naming the shape and the
depth; ``robot.pose: auto`` still places the robot on the terrain."""

from __future__ import annotations

import pytest
from faults_cli import SMALL, cli

from eels_gz import config
from eels_gz.errors import PlacementError
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare

# m: the engine's contact depth against the plane is exact for the screw cylinders up to round-off
DEPTH_TOL = 1e-6


def small_cfg(pose) -> dict:
    cfg = config.resolve()
    config.set_key(cfg, "robot.name", "eels_1_0_front_only", "test")
    config.set_key(cfg, "robot.n_modules", 2, "test")
    config.set_key(cfg, "robot.pose", pose, "test")
    return cfg


@pytest.fixture(scope="module")
def rest_z() -> float:
    """Base height of the auto pose on ice_plane: lowest collision at AUTO_CLEARANCE above z = 0."""
    from eels_gz.dart.simulation import AUTO_CLEARANCE

    sim = prepare(resolve_run(small_cfg("auto"))).sim
    return float(sim.robot_skeleton.getRootBodyNode().getWorldTransform().translation()[2]) - AUTO_CLEARANCE


def test_a_pose_3_cm_inside_the_ice_is_refused_and_writes_nothing(tmp_path, rest_z):
    out = tmp_path / "run"
    res = cli("run", *SMALL, "--duration", "0.2", "--set", f"robot.pose=[0, 0, {rest_z - 0.03}, 0, 0, 0]",
              "--out", out)
    assert res.exit_code == 2, res.output
    assert "0.030 m inside the terrain" in res.output and "robot.pose auto" in res.output, res.output
    assert not out.exists() and not (tmp_path / "run.partial").exists()


def test_the_refusal_measures_the_depth(rest_z):
    with pytest.raises(PlacementError, match=r"collision 'module_\d_(screw_link|shell)_collision' 0\.025 m inside"):
        prepare(resolve_run(small_cfg([0, 0, rest_z - 0.025, 0, 0, 0])))


def test_a_pose_within_the_start_tolerance_runs(rest_z):
    from eels_gz.dart.terrain_start import START_DEPTH

    prepare(resolve_run(small_cfg([0, 0, rest_z - 0.5 * START_DEPTH, 0, 0, 0])))
    prepare(resolve_run(small_cfg([0, 0, rest_z + 0.001, 0, 0, 0])))


def test_a_fixed_base_robot_keeps_its_root_joint_origin_under_its_pose():
    """A URDF rooted at a link named "world" (the drag rig): gz-sim places the model frame at the pose and
    the first joint's child at pose x that joint's origin (urdf/drag_rig.urdf.xacro raises its carriages
    one screw radius). Before, an explicit pose replaced the origin, so `calibrate simulate`'s rig started
    with its screw's axis on the ground. Exact to round-off."""
    import numpy as np
    from lxml import etree

    from eels_gz.rotations import rpy_matrix

    cfg = config.resolve()
    config.set_key(cfg, "robot.name", "drag_rig", "test")
    config.set_key(cfg, "robot.pose", [0.4, -0.2, 0.05, 0.0, 0.0, 0.3], "test")
    sim = prepare(resolve_run(cfg)).sim
    joint = etree.fromstring(sim.robot_source_urdf.encode()).find("joint[@name='drag_x']")
    origin = np.eye(4)
    origin[:3, 3] = [float(v) for v in joint.find("origin").get("xyz").split()]
    assert origin[2, 3] > 0.0  # the rig's carriages start above its origin
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = rpy_matrix(0.0, 0.0, 0.3), [0.4, -0.2, 0.05]
    assert np.allclose(sim.frame_world_pose("carriage_x"), pose @ origin, atol=1e-12)
