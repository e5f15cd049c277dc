"""The scenario-systems framework (issue 32): ``<gz:system_priority>`` orders pre_update as gz-sim 8's
SystemManager does; systems of one model find each other per simulation (gz_compat peers); a system
ends a run (gz_compat.request_run_end) and gives metrics.json and the scenario plot; a scenario's
``<params>`` reach its systems as numbers; the <plugin> writer checks what it writes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from lxml import etree

from eels_gz import config, registry
from eels_gz.dart.simulation import Simulation
from eels_gz.errors import ConfigError, PluginError
from eels_gz.run.runner import run
from eels_gz.scenarios.plugin_elements import SCENARIO_PRIORITY, scenario_plugins

LOADER = 'filename="gz-sim-python-system-loader-system" name="gz::sim::systems::PythonSystemLoader"'

PROBE = """
from gz_compat import peer, register_peer, request_run_end, scenario_params
CALLS = []

class Probe:
    def configure(self, entity, sdf, ecm, event_mgr):
        self.entity = entity
        self.label, _ = sdf.get_string("label", "")
        self.params = scenario_params(sdf)
        if self.label == "a":
            register_peer(entity, "probe_a", self, ecm)
        self.found = "unset"

    def pre_update(self, info, ecm):
        CALLS.append(self.label)
        if self.found == "unset":
            self.found = peer(self.entity, "probe_a", ecm)
        end_at = self.params.get("end_at")
        if end_at is not None and info.iterations >= end_at:
            request_run_end(f"done_{self.label}", f"{self.label} ended it at iteration {info.iterations}", ecm)

def get_system():
    return Probe()
"""


def world(tmp_path: Path, plugins: str, name: str = "w") -> Path:
    path = tmp_path / f"{name}.sdf"
    path.write_text(f"""<?xml version="1.0"?>
<sdf version="1.9"><world name="{name}">
<physics name="1ms" type="dart"><max_step_size>0.001</max_step_size></physics>
{plugins}
</world></sdf>""")
    return path


def probe(label: str, priority: int | None = None, params: str = "") -> str:
    p = "" if priority is None else f"<gz:system_priority>{priority}</gz:system_priority>"
    return f'<plugin {LOADER}><module_name>probe</module_name>{p}<label>{label}</label><params>{params}</params></plugin>'


def calls(sim) -> list[str]:
    import sys

    return sys.modules["probe"].CALLS


def test_pre_update_runs_in_priority_order_ties_in_load_order(tmp_path, plugin_dir):
    plugin_dir("probe", PROBE)
    # load order: late(+5), zero_1(none), early(-3), zero_2(0)
    sdf = world(tmp_path, probe("late", 5) + probe("zero_1") + probe("early", -3) + probe("zero_2", 0))
    text = sdf.read_text().replace("<sdf ", '<sdf xmlns:gz="http://gazebosim.org/schema" ', 1)
    sdf.write_text(text)  # gz-sim's own worlds leave gz: undeclared; a declared prefix must work as well
    with Simulation(sdf) as sim:
        sim.step()
        assert calls(sim) == ["early", "zero_1", "zero_2", "late"]


def test_undeclared_gz_prefix_in_a_robot_plugin_and_a_bad_priority(tmp_path, plugin_dir):
    from eels_gz.description.xacro_loader import split_gazebo
    from eels_gz.dart.simulation import RobotSpec

    plugin_dir("probe", PROBE)
    urdf = ('<robot name="r"><link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" '
            'ixz="0" iyz="0"/></inertial><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>'
            '</robot>')
    spec = RobotSpec("r", split_gazebo(urdf, "r.urdf"), pose=[0, 0, 1, 0, 0, 0],
                     plugins=(probe("second", 2), probe("first", -1)))
    with Simulation(world(tmp_path, ""), spec) as sim:
        sim.step()
        assert calls(sim) == ["first", "second"]
    bad = RobotSpec("r", split_gazebo(urdf, "r.urdf"), pose=[0, 0, 1, 0, 0, 0],
                    plugins=(probe("x").replace("<label>", "<gz:system_priority>soon</gz:system_priority><label>"),))
    with pytest.raises(PluginError, match=r"<gz:system_priority> must be a whole number, got 'soon'"):
        Simulation(world(tmp_path, "", "w2"), bad)


def test_peers_are_found_on_the_same_model_and_never_from_another_simulation(tmp_path, plugin_dir):
    plugin_dir("probe", PROBE)
    with Simulation(world(tmp_path, probe("b") + probe("a"))) as sim:  # b configured before a registers
        sim.step()
        b, a = (s.system for s in sim.systems)
        assert b.found is a  # looked up on the first pre_update, after every configure
    with Simulation(world(tmp_path, probe("b"), "alone")) as sim:  # same world entity id, no 'a' here
        sim.step()
        assert sim.systems[0].system.found is None


def test_the_first_run_end_request_wins_and_params_are_numbers(tmp_path, plugin_dir):
    plugin_dir("probe", PROBE)
    sdf = world(tmp_path, probe("x", params="<end_at>3</end_at><gain>-2.5e-1</gain>")
                + probe("y", params="<end_at>3</end_at>"))
    with Simulation(sdf) as sim:
        x = sim.systems[0].system
        assert x.params == {"end_at": 3.0, "gain": -0.25}
        for _ in range(3):
            assert sim.ecm.run_end is None
            sim.step()
        assert sim.ecm.run_end == ("done_x", "x ended it at iteration 3")


def test_a_param_that_is_not_a_number_is_named(tmp_path, plugin_dir):
    plugin_dir("probe", PROBE)
    with pytest.raises(PluginError, match=r"<speed>"):
        Simulation(world(tmp_path, probe("x", params="<speed>fast</speed>")))


def test_scenario_plugins_write_what_the_systems_read_and_refuse_bad_entries():
    scenario = {"systems": ["screw_spin", {"module": "probe", "priority": 3}], "params": {"rate": 2, "k": 1e-3}}
    xml = scenario_plugins("demo", scenario, robot="eels_1_5", description_file="/x/robot.urdf",
                           world_file="/x/w.sdf", metrics_file="/x/m.json", extra_elements={"probe": "<tether/>"})
    nodes = [etree.fromstring(f'<p xmlns:gz="http://gazebosim.org/schema">{x}</p>')[0] for x in xml]
    assert [n.findtext("module_name") for n in nodes] == ["screw_spin", "probe"]
    prio = [int(n.findtext("{http://gazebosim.org/schema}system_priority")) for n in nodes]
    assert prio == [SCENARIO_PRIORITY, 3]
    assert {c.tag: float(c.text) for c in nodes[0].find("params")} == {"rate": 2.0, "k": 1e-3}
    assert nodes[1].find("tether") is not None and nodes[0].find("tether") is None
    assert nodes[0].findtext("metrics_file") == "/x/m.json"
    for bad, match in (({"systems": "screw_spin"}, "must be a list"),
                       ({"systems": ["no-such-module"]}, "not a Python module name"),
                       ({"systems": [{"module": "a", "priority": 1.5}]}, "whole number"),
                       ({"systems": [{"name": "a"}]}, "module name or"),
                       ({"systems": ["a"], "params": {"v": math.inf}}, "finite number")):
        with pytest.raises(ConfigError, match=match):
            scenario_plugins("demo", bad, robot="r", description_file="u", world_file="w", source="demo.yaml")


ENDER = """
import numpy as np
from gz_compat import request_run_end, scenario_params

class Ender:
    def configure(self, entity, sdf, ecm, event_mgr):
        self.params = scenario_params(sdf)
        self.n = 0
    def post_update(self, info, ecm):
        self.n += 1
        if self.n == int(self.params["steps"]):
            request_run_end("target_reached", f"stopped after {self.n} steps", ecm)
    def metrics(self):
        return {"steps_seen": self.n}
    def plot(self, path):
        from PIL import Image
        Image.new("RGB", (4, 4)).save(path)

def get_system():
    return Ender()
"""


def test_a_system_ends_the_run_and_writes_metrics_and_the_plot(tmp_path, plugin_dir, monkeypatch):
    plugin_dir("ender", ENDER)
    yaml_path = tmp_path / "ender_scenario.yaml"
    yaml_path.write_text("description: test\nrobot: eels_1_5\nworld: ice_plane\nsystems: [ender]\nduration: 1.0\n"
                         "params:\n  steps: 7\nsetpoints: []\n")
    known = dict(registry.scenarios())
    monkeypatch.setattr(registry, "scenarios", lambda: {**known, "ender_scenario": yaml_path})
    cfg = config.resolve(overrides={"scenario": {"name": "ender_scenario"}, "log": {"mcap": False}})
    summary = run(cfg, tmp_path / "out")
    assert summary["status"] == "target_reached" and summary["message"] == "stopped after 7 steps"
    assert summary["steps"] == 7
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics == {"scenario": "ender_scenario", "status": "target_reached", "steps_seen": 7}
    assert (tmp_path / "out" / "ender_scenario.png").exists()
    assert Path(summary["files"]["scenario_plot"]).name == "ender_scenario.png"
    assert (tmp_path / "out" / "robot.urdf").read_text().startswith("<")
