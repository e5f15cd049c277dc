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
  ``-x -y -z`` in m, ``-R -P -Y`` in rad);
- :func:`scenario_export`: for ``scenario:=NAME``, the scenario exported as
  ``eels-gz export`` writes it (:mod:`eels_gz.run.export`) into a fresh
  temporary folder: the world ``gz sim -r`` runs, with the robot and its
  systems already in it (no ``create``).
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
    from eels_gz.terrain.writers import find_terrain_field

    try:
        field = find_terrain_field(Path(world_file))
    except TerrainError as exc:
        log.warning("%s: no terrain distance field (%s); the robot is placed on z = 0", world_file, exc)
        field = None
    return spawn_pose(description, field)


def spawn_urdf(description, spawn: Spawn) -> str:
    """The Gazebo URDF of ``description`` with an ``initial_joints`` system for ``spawn.joints``."""
    urdf = description.gazebo_urdf()
    if not spawn.joints:
        return urdf
    root = etree.fromstring(urdf.encode())
    plugin = etree.SubElement(etree.SubElement(root, "gazebo"), "plugin", **LOADER)
    etree.SubElement(plugin, "module_name").text = "initial_joints"
    for name, q in sorted(spawn.joints.items()):
        etree.SubElement(plugin, "joint", name=name, position=repr(float(q)))
    return etree.tostring(root, encoding="unicode")


def scenario_export(scenario: str, robot: str = "", world: str = "", contact: str = "", n_modules: str = "",
                    out_dir: str | Path | None = None):
    """``eels-gz export --scenario`` for the launch arguments (empty: the scenario's, else the run
    defaults, as ``eels-gz run`` takes them) into ``out_dir`` (a new temporary folder when None).
    Returns (export.json's content, the resolution: its description and world). Bad input raises the
    export's error (ConfigError, RegistryError...), whose message names it."""
    import tempfile

    from eels_gz import config
    from eels_gz.run.export import write_export

    overrides: dict = {"scenario": scenario}
    if robot:
        overrides.setdefault("robot", {})["name"] = robot
    if n_modules:
        overrides.setdefault("robot", {})["n_modules"] = int(n_modules)
    if world:
        overrides["world"] = world
    if contact:
        overrides["contact"] = {"model": contact}
    cfg = config.resolve(None, overrides, [])
    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="eels_gz_export_")) / scenario
    out.mkdir(parents=True, exist_ok=True)
    return write_export(cfg, out)


def create_arguments(name: str, urdf_file: str | Path, spawn: Spawn) -> list[str]:
    """``ros_gz_sim create`` arguments spawning ``urdf_file`` as model ``name`` at ``spawn.pose``."""
    args = ["-name", name, "-file", str(urdf_file)]
    # gflags' -flag=value form: a negative value is never taken for a flag
    return args + [f"{flag}={float(value)!r}" for flag, value in zip(POSE_FLAGS, spawn.pose)]
