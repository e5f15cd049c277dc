"""gz-sim Python system of the ``hold`` scenario: it only watches.

Every joint holds its set point of config/scenarios/hold.yaml (joint_control); this system records the
world pose of the robot's base (the root link of ``<description_file>``) before the first step, and
after every step the base's pose and every moving joint's velocity, and ``metrics()`` gives
eels_gz.scenarios.hold's figures of how still the robot stayed. Parameters: the scenario elements of
eels_gz.scenarios.plugin_elements; ``<params>`` ``settle`` (s).
"""

from __future__ import annotations

from gz_compat import MetricsFile, base_link, joint_states, link_world_states, param, scenario_params, sim
from lxml import etree

from eels_gz.scenarios.hold import RestWatch
from eels_gz.steps import step_start

PLUGIN = "hold"
MOVING = ("revolute", "continuous", "prismatic")


class Hold:
    def configure(self, entity, sdf, ecm, event_mgr):
        self.metrics_out = MetricsFile(sdf, PLUGIN, self)  # under Gazebo: <metrics_file>, after post_update
        model = sim.Model(entity)
        urdf_file = param(sdf, "get_string", "description_file", PLUGIN)
        with open(urdf_file) as f:
            urdf = f.read()
        self.links = [base_link(model, ecm, urdf, urdf_file, PLUGIN)]
        names, self.joints = [], []
        for j in etree.fromstring(urdf.encode()).iter("joint"):
            joint = model.joint_by_name(ecm, j.get("name")) if j.get("type") in MOVING else None
            if joint:
                names.append(j.get("name"))
                self.joints.append(sim.Joint(joint))
                self.joints[-1].enable_position_check(ecm)
                self.joints[-1].enable_velocity_check(ecm)
        self.watch = RestWatch(names, scenario_params(sdf).get("settle", 0.0))
        self.started = False

    def pre_update(self, info, ecm):
        if not self.started:  # the base before the first step moves it (after any placement)
            states = link_world_states(ecm, self.links)
            if states is not None:
                self.watch.start(step_start(info), states[0][0], states[1][0])
                self.started = True

    def post_update(self, info, ecm):
        if not self.started or info.paused:
            return
        base = link_world_states(ecm, self.links)
        joints = joint_states(ecm, self.joints)
        if base is not None and joints is not None:
            self.watch.add(info.sim_time.total_seconds(), base[0][0], base[1][0], joints[1])

    def metrics(self):
        return self.watch.metrics() if self.started else {}


def get_system():
    return Hold()
