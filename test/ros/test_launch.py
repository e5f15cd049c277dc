"""Gazebo mode files: launch/sim.launch.py compiles and takes the promised
arguments; the files it references exist; config/bridge.yaml, the topic
table of docs/ros.md, the host's gz topics and (when present) the architecture's
topic table agree."""

from __future__ import annotations

import ast
import py_compile
import re
from pathlib import Path

import pytest

from eels_gz.gzapi import topics
from eels_gz.ros.bridge import load_bridge

REPO = Path(__file__).resolve().parents[2]
LAUNCH = REPO / "launch" / "sim.launch.py"
ARCHITECTURE = Path("/work/shared/ARCHITECTURE.md")
ROS_TYPE = re.compile(r"^(\w+)/(\w+)")


def test_launch_file_compiles_and_declares_the_arguments(tmp_path):
    py_compile.compile(str(LAUNCH), cfile=str(tmp_path / "sim.pyc"), doraise=True)
    tree = ast.parse(LAUNCH.read_text())
    (args,) = [n.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "ARGS" for t in n.targets)]
    assert [k.value for k in args.keys] == ["robot", "n_modules", "world", "contact", "gui", "scenario", "headless"]
    text = LAUNCH.read_text()
    for needed in ("gz_sim.launch.py", "robot_state_publisher", '"create"', "parameter_bridge"):
        assert needed in text


def test_files_the_launch_file_references_exist():
    text = LAUNCH.read_text()
    for rel in re.findall(r'SHARE / "(\w+)" / "([\w.]+)"', text):
        assert (REPO / rel[0] / rel[1]).is_file(), rel


def _table(markdown: str, hosts: bool = False) -> set[tuple]:
    """(topic, type, direction[, hosts]) rows of a markdown topic table."""
    rows = set()
    for line in markdown.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) in (3, 4) and cells[0].startswith("/") and ROS_TYPE.match(cells[1]):
            row = (cells[0], ROS_TYPE.match(cells[1]).group(0), "ROS_TO_GZ" if "ROS →" in cells[2] else "GZ_TO_ROS")
            rows.add(row + (cells[3],) if hosts else row)
    return rows


def _bridge_rows(hosts: bool = False) -> set[tuple]:
    rows = set()
    both = {e.ros_topic for e in load_bridge(robot="<robot>", fts_sensors=[("<joint>", "<sensor>")], host=False)}
    for e in load_bridge(robot="<robot>", fts_sensors=[("<joint>", "<sensor>")]):
        pkg, _, name = e.ros_type.split("/")
        row = (e.ros_topic, f"{pkg}/{name}", e.direction)
        rows.add(row + ("both" if e.ros_topic in both else "embedded host only",) if hosts else row)
    return rows


def test_bridge_matches_the_docs_table():
    """config/bridge.yaml (both hosts) and config/bridge_host.yaml (host only) against docs/ros.md's table."""
    section = (REPO / "docs" / "ros.md").read_text().split("## ROS 2 interface", 1)[1].split("\n## ", 1)[0]
    assert _table(section, hosts=True) == _bridge_rows(hosts=True)


@pytest.mark.skipif(not ARCHITECTURE.is_file(), reason="the architecture document is not beside this checkout")
def test_bridge_matches_the_architecture_table():
    assert _table(ARCHITECTURE.read_text()) == _bridge_rows()


def test_host_topics_are_the_bridge_gz_topics():
    gz = {e.ros_topic: e.gz_topic for e in load_bridge(robot="r", fts_sensors=[("j", "s")], world="w")}
    for name in (topics.CLOCK, topics.JOINT_STATES, topics.GROUND_TRUTH, topics.ENABLE_GRAVITY, topics.SET_POSE):
        assert gz[name] == name


def test_bad_bridge_files(tmp_path):
    from eels_gz.errors import ConfigError

    f = tmp_path / "b.yaml"
    f.write_text("- ros_topic_name: /x\n  gz_topic_name: /x\n  ros_type_name: std_msgs/msg/Bool\n"
                 "  gz_type_name: gz.msgs.Boolean\n  direction: SIDEWAYS\n")
    with pytest.raises(ConfigError, match="direction must be one of"):
        load_bridge(f)
    f.write_text("- ros_topic_name: /x\n  gz_topic_name: /x\n  ros_type_name: std_msgs/msg/String\n"
                 "  gz_type_name: gz.msgs.StringMsg\n  direction: GZ_TO_ROS\n")
    with pytest.raises(ConfigError, match="no GZ_TO_ROS conversion"):
        load_bridge(f)
    f.write_text("{}\n")
    with pytest.raises(ConfigError, match="expected a list"):
        load_bridge(f)


def test_gazebo_gets_the_description_with_its_gazebo_blocks():
    """robot_state_publisher and ``ros_gz_sim create`` get the URDF with its <gazebo> blocks: without
    them Gazebo would spawn the robot with no plugins and no sensors."""
    from lxml import etree

    from eels_gz import registry
    from eels_gz.description.assemble import robot_description

    assert "description.gazebo_urdf()" in LAUNCH.read_text()
    desc = robot_description(registry.robot("eels_1_5"), xacro_args={"head": "true"}, gazebo=True)
    root = etree.fromstring(desc.gazebo_urdf().encode())
    modules = {m.text for m in root.iter("module_name")}
    assert {"joint_control"} <= modules
    sensors = {s.get("type") for s in root.iter("sensor")}
    assert {"imu", "gpu_lidar", "force_torque", "camera"} <= sensors
    # the Gazebo blocks are the description's own, unchanged
    assert len(root.findall("gazebo")) == len(desc.gazebo) + len(desc.references)


# --- scenario:= ---------------------------------------------------------------------------------------

def _node(actions, executable: str):
    (node,) = [a for a in actions if type(a).__name__ == "Node" and a.kwargs["executable"] == executable]
    return node


def test_scenario_runs_its_exported_world(monkeypatch):
    """``scenario:=hold gui:=false``: gz sim runs (-r, server only) the world eels-gz export writes for
    the scenario, with the robot in it (no ``create``); robot_state_publisher gets the exported URDF
    with its Gazebo blocks, and the bridge carries the description's sensors as without a scenario."""
    import json

    import yaml
    from test_spawn import run_launch

    actions = run_launch(monkeypatch, scenario="hold", gui="false")
    (gz,) = [a for a in actions if type(a).__name__ == "IncludeLaunchDescription"]
    gz_args = dict(gz.kwargs["launch_arguments"])["gz_args"].split()
    assert gz_args[0] == "-r" and gz_args[-1] == "-s"
    world = Path(gz_args[1])
    assert world.name == "world.sdf"
    result = json.loads((world.parent / "export.json").read_text())
    assert result["scenario"] == "hold" and result["files"]["world"] == str(world)
    assert not [a for a in actions if type(a).__name__ == "Node" and a.kwargs["executable"] == "create"]
    urdf = _node(actions, "robot_state_publisher").kwargs["parameters"][0]["robot_description"]
    assert urdf == Path(result["files"]["robot"]).read_text() and "<gazebo>" in urdf
    bridge = _node(actions, "parameter_bridge").kwargs["parameters"][0]["config_file"]
    without = run_launch(monkeypatch, gui="false")  # the same robot and world, no scenario
    bridge0 = _node(without, "parameter_bridge").kwargs["parameters"][0]["config_file"]
    assert yaml.safe_load(Path(bridge).read_text()) == yaml.safe_load(Path(bridge0).read_text())


def test_scenario_takes_the_launch_arguments_as_the_export_flags(monkeypatch):
    """robot:=, world:= and contact:= reach the export as --robot, --world and --contact; an empty
    contact:= takes the scenario's (hold names none: stock)."""
    import json

    from test_spawn import run_launch

    def exported(**given) -> dict:
        actions = run_launch(monkeypatch, scenario="hold", gui="false", **given)
        (gz,) = [a for a in actions if type(a).__name__ == "IncludeLaunchDescription"]
        world = Path(dict(gz.kwargs["launch_arguments"])["gz_args"].split()[1])
        return json.loads((world.parent / "export.json").read_text())

    result = exported(robot="eels_1_5", world="tube", contact="screw")
    assert (result["robot"], result["world_name"], result["config"]["contact"]["model"]) == ("eels_1_5", "tube", "screw")
    assert "screw_contact" in result["python_systems"]
    assert exported()["config"]["contact"]["model"] == "stock"

