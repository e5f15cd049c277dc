"""gz-sim Python system: the single-wheel soil rig's drives and measurements (issue 34).

Drives the rig of urdf/wheel_rig.urdf.xacro at a commanded slip: the wheel at
``wheel_rate`` (rad/s) and the carriage at r omega (1 - s) when driving
(s >= 0) or r omega / (1 + s) when braking (s < 0), both by PI velocity loops
on joint forces. After ``settle_s`` it averages, over ``measure_s``, the
efforts those loops apply (the carriage's force balances the soil's drawbar
pull, the drive's torque the soil's moment) and the wheel's sinkage below the
terrain surface. ``metrics()`` returns them with the contract keys of the
``wheel_rig`` scenario: drawbar_pull_N, sinkage_m, wheel_torque_Nm,
normal_load_N, slip, wheel_radius_m, wheel_width_m (or a ``message`` when the run
ended before the window had a sample). Once the window is over it ends the run
(``gz_compat.request_run_end``, status ``ok``): the scenario's run stops there,
and Gazebo pauses the world.

Parameters (in its ``<plugin>`` element, written by urdf/wheel_rig.urdf.xacro
from config/soil_rig.yaml and its arguments): ``<slip>``, ``<wheel_rate>``,
``<normal_load>`` (N, what the rig's masses press with), ``<wheel link=
radius= width=/>``, ``<carriage joint= p= i= i_max= effort_max=/>``,
``<drive joint= p= i= i_max= effort_max=/>``, ``<settle_s>``,
``<measure_s>``, ``<world_file>`` (its terrain is the soil surface).
"""

from __future__ import annotations

import numpy as np
from gz_compat import (MetricsFile, joint_states, link_world_states, param, request_run_end, set_joint_forces, sim,
                       watched_link)

from eels_gz.control.pid import PidArray, PidGains
from eels_gz.soil.rig import RigAverages, carriage_speed
from eels_gz.terrain.world_terrain import find_terrain_field

PLUGIN = "wheel_rig"
NO_SAMPLES = ("the run ended before the rig's measuring window (settle_s + measure_s, config/soil_rig.yaml) "
              "had a sample: no steady-state figures")


class WheelRig:
    def configure(self, entity, sdf, ecm, event_mgr):
        self.metrics_out = MetricsFile(sdf, PLUGIN, self)  # under Gazebo: <metrics_file>, after post_update
        model = sim.Model(entity)
        self.slip = param(sdf, "get_double", "slip", PLUGIN)
        self.rate = param(sdf, "get_double", "wheel_rate", PLUGIN)
        self.normal_load = param(sdf, "get_double", "normal_load", PLUGIN)
        self.settle = param(sdf, "get_double", "settle_s", PLUGIN)
        self.measure = param(sdf, "get_double", "measure_s", PLUGIN)
        wheel = sdf.find_element("wheel") if sdf.has_element("wheel") else None
        if wheel is None:
            raise ValueError(f"{PLUGIN} needs <wheel link=... radius=... width=.../>")
        self.radius = param(wheel, "get_double", "radius", PLUGIN)
        self.width = param(wheel, "get_double", "width", PLUGIN)
        link_name = param(wheel, "get_string", "link", PLUGIN)
        self.link = watched_link(model, ecm, link_name, f"wheel link '{link_name}'", PLUGIN)
        self.joints, gains = [], []
        for tag in ("carriage", "drive"):
            el = sdf.find_element(tag) if sdf.has_element(tag) else None
            if el is None:
                raise ValueError(f"{PLUGIN} needs <{tag} joint=... p=... i=... i_max=... effort_max=.../>")
            name = param(el, "get_string", "joint", PLUGIN)
            joint = model.joint_by_name(ecm, name)
            if not joint:
                raise ValueError(f"{PLUGIN}: joint '{name}' is not a joint of model '{model.name(ecm)}'")
            j = sim.Joint(joint)
            j.enable_position_check(ecm, True)
            j.enable_velocity_check(ecm, True)
            self.joints.append(j)
            gains.append(PidGains(*(param(el, "get_double", k, PLUGIN) for k in ("p", "i")), 0.0,
                                  *(param(el, "get_double", k, PLUGIN) for k in ("i_max", "effort_max"))))
        self.loops = PidArray(gains)
        world_file, found = sdf.get_string("world_file", "")
        if not found or not world_file:
            raise ValueError(f"{PLUGIN} needs <world_file>: the SDF world whose terrain is the soil")
        self.terrain = find_terrain_field(world_file)
        if self.terrain is None:
            raise ValueError(f"{PLUGIN}: world '{world_file}' has no terrain distance field or plane")
        self.target = np.array([carriage_speed(self.radius, self.rate, self.slip), self.rate])
        self.averages = RigAverages()
        self.effort = np.zeros(2)
        self.ended = False

    def reset(self, info, ecm):
        self.loops.reset()
        self.averages = RigAverages()
        self.ended = False

    def pre_update(self, info, ecm):
        if info.paused:
            return
        states = joint_states(ecm, self.joints)
        if states is None:
            return
        _, vel = states
        self.effort = self.loops.update(self.target - vel, np.zeros(2), info.dt.total_seconds())
        set_joint_forces(ecm, self.joints, self.effort)

    def post_update(self, info, ecm):
        t = info.sim_time.total_seconds()
        if info.paused:
            return
        if not self.ended and t >= self.window_end() - 0.5 * info.dt.total_seconds():
            self.ended = True
            request_run_end("ok", f"the rig's measuring window ended at t = {self.window_end():g} s "
                            "(config/soil_rig.yaml)", ecm)
        if not self.settle <= t < self.settle + self.measure:
            return
        states = link_world_states(ecm, [self.link])
        if states is None:
            return
        dist, _ = self.terrain.query(states[0])
        # the efforts applied this step balance the soil: pull = -carriage force, torque = drive torque
        self.averages.add(-self.effort[0], self.effort[1], self.radius - float(dist[0]))

    def window_end(self) -> float:
        """Simulated time (s) at which the measuring window is over."""
        return self.settle + self.measure

    def metrics(self) -> dict:
        """The rig's steady-state measurements, or a ``message`` saying why there are none."""
        out = self.averages.metrics(self.slip, self.normal_load, self.radius, self.width)
        return out or {"message": NO_SAMPLES}


def get_system():
    return WheelRig()
