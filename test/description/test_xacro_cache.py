"""The xacro cache (eels_gz.description.xacro_cache): a description is made by xacro once per set of
inputs; changing any file xacro read (the file, an include, a YAML of xacro.load_yaml) or any
argument makes it again; what the key cannot cover ($(env)) is never cached; concurrent writers
leave whole entries."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from eels_gz.description import xacro_loader
from eels_gz.description.xacro_loader import load_description

OLD = time.time() - 60.0  # files older than the cache's settling time (a just-written file is not cached)


def _write(path, text):
    path.write_text(textwrap.dedent(text))
    os.utime(path, (OLD, OLD))


@pytest.fixture
def robot(tmp_path, monkeypatch):
    """A xacro with an include and a YAML (xacro.load_yaml), the cache in tmp_path/cache, and a
    count of xacro's runs."""
    monkeypatch.setenv("EELS_GZ_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "src"
    src.mkdir()
    _write(src / "params.yaml", "mass: 2.5\n")
    _write(src / "part.xacro", """\
        <robot xmlns:xacro="http://www.ros.org/wiki/xacro">
          <link name="part"/>
        </robot>
        """)
    _write(src / "robot.urdf.xacro", """\
        <robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">
          <xacro:arg name="width" default="1"/>
          <xacro:property name="p" value="${xacro.load_yaml('params.yaml')}"/>
          <xacro:include filename="part.xacro"/>
          <link name="base"><inertial><mass value="${p['mass']}"/>
            <inertia ixx="$(arg width)" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
        </robot>
        """)
    runs = []
    real = xacro_loader.process_xacro
    monkeypatch.setattr(xacro_loader, "process_xacro", lambda path, args=None: (runs.append(1), real(path, args))[1])
    return src, runs


def _mass(desc) -> str:
    return desc.urdf.split('mass value="')[1].split('"')[0]


def test_a_description_is_made_once_and_again_when_an_input_changes(robot):
    src, runs = robot
    path = src / "robot.urdf.xacro"
    first = load_description(path, {"width": "1"})
    assert len(runs) == 1 and _mass(first) == "2.5"
    again = load_description(path, {"width": "1"})
    assert len(runs) == 1 and again.urdf == first.urdf  # from the cache
    assert 'ixx="2"' in load_description(path, {"width": "2"}).urdf and len(runs) == 2  # another argument
    _write(src / "params.yaml", "mass: 3.5\n")  # a YAML xacro.load_yaml read
    assert _mass(load_description(path, {"width": "1"})) == "3.5" and len(runs) == 3
    _write(src / "part.xacro", """\
        <robot xmlns:xacro="http://www.ros.org/wiki/xacro">
          <link name="other_part"/>
        </robot>
        """)  # an included file
    assert "other_part" in load_description(path, {"width": "1"}).urdf and len(runs) == 4
    load_description(path, {"width": "1"})
    assert len(runs) == 4


def test_a_file_edited_while_xacro_reads_it_and_env_lookups_are_not_cached(robot, monkeypatch):
    src, runs = robot
    path = src / "robot.urdf.xacro"
    (src / "params.yaml").write_text("mass: 2.5\n")  # modified just now: may have changed under xacro
    load_description(path, {})
    load_description(path, {})
    assert len(runs) == 2
    _write(src / "params.yaml", "mass: 2.5\n")
    _write(src / "env.urdf.xacro", """\
        <robot name="e" xmlns:xacro="http://www.ros.org/wiki/xacro">
          <link name="$(optenv EELS_GZ_TEST_LINK base)"/>
        </robot>
        """)
    monkeypatch.setenv("EELS_GZ_TEST_LINK", "first")
    assert 'name="first"' in load_description(src / "env.urdf.xacro", {}).urdf
    monkeypatch.setenv("EELS_GZ_TEST_LINK", "second")
    assert 'name="second"' in load_description(src / "env.urdf.xacro", {}).urdf
    assert len(runs) == 4


def test_the_cache_off_or_unwritable_still_gives_the_description(robot, monkeypatch, tmp_path):
    src, runs = robot
    monkeypatch.setenv("EELS_GZ_CACHE_DIR", "off")
    load_description(src / "robot.urdf.xacro", {})
    load_description(src / "robot.urdf.xacro", {})
    assert len(runs) == 2
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv("EELS_GZ_CACHE_DIR", str(blocker / "cache"))  # under a file: cannot be made
    assert _mass(load_description(src / "robot.urdf.xacro", {})) == "2.5"


WRITER = """
import sys
from eels_gz.description.xacro_loader import load_description
for _ in range(5):
    assert 'mass value="2.5"' in load_description(sys.argv[1], {"width": "1"}).urdf
"""


def test_concurrent_writers_leave_whole_entries(robot, tmp_path):
    src, _ = robot
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(src / "robot.urdf.xacro")], env=dict(os.environ))
             for _ in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    entries = list((tmp_path / "cache" / "xacro").iterdir())
    assert len(entries) == 1 and entries[0].suffix == ".json"  # no temporary file left behind
    assert 'mass value="2.5"' in load_description(src / "robot.urdf.xacro", {"width": "1"}).urdf


def test_runs_that_differ_only_in_their_own_scenario_file_share_one_entry(tmp_path, monkeypatch):
    """A run's scenario file is in its own folder (a different path in every sample of a sweep): the
    robots that copy the path as text share one entry for all of them, and each gets exactly
    xacro's output for its own path; a robot that reads the file (wheel_rig, xacro.load_yaml) is
    made from the real path."""
    from eels_gz import registry
    from eels_gz.description.assemble import robot_description
    from eels_gz.run.runner import _scenario_file

    monkeypatch.setenv("EELS_GZ_CACHE_DIR", str(tmp_path / "cache"))
    runs = []
    for k in range(3):
        runs.append(_scenario_file({"name": "screw_spin"}, tmp_path / f"sample_{k}" / "run.partial")[0])
    calls = []
    real = xacro_loader.process_xacro
    monkeypatch.setattr(xacro_loader, "process_xacro", lambda *a, **k: (calls.append(a), real(*a, **k))[1])
    entry = registry.robot("eels_1_0_front_only")
    for scenario in runs:
        got = robot_description(entry, scenario=scenario).gazebo_urdf()
        args = {**entry.args(None), "gazebo": "true", "scenario": scenario}
        want = xacro_loader.split_gazebo(real(entry.path, args), str(entry.path)).gazebo_urdf()
        assert got == want and scenario in got
    assert len(calls) == 1  # xacro ran for the first run only
    assert len(list((tmp_path / "cache" / "xacro").iterdir())) == 1

    # a description that reads the file (as wheel_rig does, xacro.load_yaml): made from the real path
    reads = tmp_path / "reads.urdf.xacro"
    _write(reads, """\
        <robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">
          <xacro:arg name="scenario" default=""/>
          <link name="${xacro.load_yaml('$(arg scenario)')['link']}"/>
        </robot>
        """)
    for k, name in enumerate(("left", "right")):
        own = tmp_path / f"own_{k}" / "scenario.yaml"
        own.parent.mkdir()
        _write(own, f"link: {name}\n")
        assert f'name="{name}"' in load_description(reads, {"scenario": str(own)}).urdf
