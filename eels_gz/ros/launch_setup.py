"""What launch/sim.launch.py hands to Gazebo, computed without ROS or Gazebo (so tests can check it).

- :func:`resting_spawn`: the robot's resting pose on the world's terrain, the
  embedded host's ``pose: auto`` (:mod:`eels_gz.spawn`), from the world's
  terrain distance field (a DEM, a mesh or a plane);
- :func:`spawn_urdf`: the description Gazebo spawns: the URDF with its
  ``<gazebo>`` blocks, plus the ``initial_joints`` system
  (plugins_py/initial_joints.py) when the placement bent joints (a rover's
  suspension on uneven ground);
- :func:`create_arguments`: ``ros_gz_sim create``'s command line (ros_gz
  ``jazzy``, ``create.cpp``, parsed by gflags: ``-name``, ``-file``,
  ``-x -y -z`` in m, ``-R -P -Y`` in rad).

For ``scenario:=NAME`` the launch file exports its plan with :func:`eels_gz.run.export.launch_export`
instead (run orchestration, above this package).
"""

from __future__ import annotations

import logging
from pathlib import Path

from lxml import etree

from eels_gz.errors import TerrainError
from eels_gz.spawn import Spawn, spawn_pose

log = logging.getLogger(__name__)
POSE_FLAGS = ("-x", "-y", "-z", "-R", "-P", "-Y")
LOADER = {"filename": "gz-sim-python-system-loader-system", "name": "gz::sim::systems::PythonSystemLoader"}


def resting_spawn(description, world_file: str | Path) -> Spawn:
    """The pose (and joint angles) at which ``description`` rests on ``world_file``'s terrain."""
    from eels_gz.terrain.world_terrain import find_terrain_field

    try:
        field = find_terrain_field(Path(world_file))
    except TerrainError as exc:
        log.warning("%s: no terrain distance field (%s); the robot is placed on z = 0", world_file, exc)
        field = None
    return spawn_pose(description, field)


def spawn_urdf(description, spawn: Spawn) -> str:
    """The Gazebo URDF of ``description`` with an ``initial_joints`` system for ``spawn.joints``."""
    root = description.gazebo_element()
    if not spawn.joints:
        return etree.tostring(root, encoding="unicode")
    plugin = etree.SubElement(etree.SubElement(root, "gazebo"), "plugin", **LOADER)
    etree.SubElement(plugin, "module_name").text = "initial_joints"
    for name, q in sorted(spawn.joints.items()):
        etree.SubElement(plugin, "joint", name=name, position=repr(float(q)))
    return etree.tostring(root, encoding="unicode")


def create_arguments(name: str, urdf_file: str | Path, spawn: Spawn) -> list[str]:
    """``ros_gz_sim create`` arguments spawning ``urdf_file`` as model ``name`` at ``spawn.pose``."""
    args = ["-name", name, "-file", str(urdf_file)]
    # gflags' -flag=value form: a negative value is never taken for a flag
    return args + [f"{flag}={float(value)!r}" for flag, value in zip(POSE_FLAGS, spawn.pose)]
