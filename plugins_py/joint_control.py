"""gz-sim Python system: a PID loop per joint, with set points from a scenario.

Parameters (in its ``<plugin>`` element, written by urdf/eels.gazebo.xacro
from config/joint_control.yaml):

- ``<gains name= pattern= mode= p= i= d= i_max= effort_max=/>``, repeated:
  the first group whose ``pattern`` (regex, full match) fits a joint's name
  controls it; ``mode`` is ``position`` or ``velocity``. Joints that fit no
  group are left passive.
- ``<scenario>``: path of a scenario YAML with time-stamped set points
  (optional; empty means "hold the shape the robot starts in").
- ``<pair leader= follower= multiplier=/>``, repeated: a mechanically
  coupled pair (a counter-rotating screw pair has multiplier -1); the
  follower's set points are the leader's times the multiplier.

- ``<joint_commands_topic>``: gz topic of external set points (default
  ``/joint_commands``, as in config/bridge.yaml), a gz.msgs.Model whose
  ``joint[i].name`` and ``axis1.position``/``axis1.velocity`` (NaN: none)
  override the scenario's set points for that joint from then on; unknown
  joint names and infinite values are logged and skipped.

Position-mode joints hold their initial position until a set point arrives;
a velocity set point alone moves their position target at that rate.
Velocity-mode joints are PI-controlled on velocity, default 0.

Required parameters are read with sdformat's two-argument getters (a missing
one is an error naming it). ``reset`` (a world reset) clears the integrators
and the held shape, which is taken again from the reset state; external set
points are kept.
"""

from __future__ import annotations

import logging
import math
import re

import numpy as np
from gz_compat import iter_elements, joint_states, msgs, param, set_joint_forces, sim, transport

from eels_gz.control.pid import PidArray, PidGains
from eels_gz.control.setpoints import SetpointSchedule, load_scenario

log = logging.getLogger("joint_control")
PLUGIN = "joint_control"


class JointControl:
    def configure(self, entity, sdf, ecm, event_mgr):
        model = sim.Model(entity)
        groups = []
        for el in iter_elements(sdf, "gains"):
            mode = param(el, "get_string", "mode", PLUGIN)
            if mode not in ("position", "velocity"):
                name, _ = el.get_string("name", "")
                raise ValueError(f"{PLUGIN}: <gains name='{name}'>: mode must be position or velocity, got '{mode}'")
            gains = PidGains(*(param(el, "get_double", k, PLUGIN) for k in ("p", "i", "d", "i_max", "effort_max")))
            groups.append((re.compile(param(el, "get_string", "pattern", PLUGIN)), mode, gains))
        if not groups:
            raise ValueError(f"{PLUGIN} needs at least one <gains> group")

        self.joints, self.names, modes, gains = [], [], [], []
        for e in model.joints(ecm):
            joint = sim.Joint(e)
            name = joint.name(ecm)
            for rx, mode, g in groups:
                if rx.fullmatch(name):
                    self.joints.append(joint)
                    self.names.append(name)
                    modes.append(mode)
                    gains.append(g)
                    joint.enable_position_check(ecm)
                    joint.enable_velocity_check(ecm)
                    break
        self.velocity_mode = np.array([m == "velocity" for m in modes], dtype=bool)
        self.position_mode = (~self.velocity_mode).astype(float)
        self.pid = PidArray(gains)
        index = {n: k for k, n in enumerate(self.names)}

        self.pairs = []
        for el in iter_elements(sdf, "pair"):
            leader, follower = (param(el, "get_string", k, PLUGIN) for k in ("leader", "follower"))
            for n in (leader, follower):
                if n not in index:
                    raise ValueError(f"{PLUGIN}: <pair>: joint '{n}' is not a controlled joint of the model")
            self.pairs.append((index[leader], index[follower], param(el, "get_double", "multiplier", PLUGIN)))
        self._lead = np.array([p[0] for p in self.pairs], dtype=int)
        self._follow = np.array([p[1] for p in self.pairs], dtype=int)
        self._mult = np.array([p[2] for p in self.pairs], dtype=float)

        path, found = sdf.get_string("scenario", "")
        keyframes = load_scenario(path).get("setpoints", []) if found and path else []
        self.schedule = SetpointSchedule(self.names, keyframes, path or "<no scenario>")
        bad = [self.names[j] for f in self.schedule.frames for j in f.position if self.velocity_mode[j]]
        if bad:
            raise ValueError(f"{path}: position set points for velocity-controlled joints: {sorted(set(bad))}")

        # external set points (e.g. from ROS /joint_commands) override the schedule
        self.external_pos = np.full(len(self.names), np.nan)
        self.external_vel = np.full(len(self.names), np.nan)
        self.has_external = False
        self.q_hold = None
        topic, _ = sdf.get_string("joint_commands_topic", "/joint_commands")
        self.node = transport.Node()
        if not self.node.subscribe(msgs.Model, topic, self.on_joint_commands):
            raise ValueError(f"{PLUGIN}: <joint_commands_topic>: cannot subscribe to '{topic}'")

    def reset(self, info, ecm):
        """World reset: integrators cleared, the shape to hold taken again from the reset state."""
        self.pid.reset()
        self.q_hold = None

    def on_joint_commands(self, msg):
        """External set points by joint name (a gz.msgs.Model, as bridged from sensor_msgs/JointState)."""
        index = set(self.names)
        for joint in msg.joint:
            name = joint.name
            if name not in index:
                log.warning("joint command for '%s' ignored: not a controlled joint (known: %s)",
                            name, ", ".join(self.names))
                continue
            pos, vel = float(joint.axis1.position), float(joint.axis1.velocity)
            if math.isinf(pos) or math.isinf(vel):
                log.warning("joint command for '%s' ignored: position %s, velocity %s", name, pos, vel)
                continue
            k = self.names.index(name)
            if not math.isnan(pos) and self.velocity_mode[k]:
                log.warning("joint command for '%s': position ignored, the joint is velocity-controlled", name)
                pos = float("nan")
            self.set_targets([name], [pos], [vel])

    def set_targets(self, names, positions=None, velocities=None):
        """Override set points by joint name (NaN or None leaves one to the schedule)."""
        index = {n: k for k, n in enumerate(self.names)}
        for k, name in enumerate(names):
            if name not in index:
                raise KeyError(f"unknown joint '{name}'")
            if positions is not None:
                self.external_pos[index[name]] = positions[k]
            if velocities is not None:
                self.external_vel[index[name]] = velocities[k]
        self.has_external = True

    def pre_update(self, info, ecm):
        if info.paused or not self.joints:
            return
        states = joint_states(ecm, self.joints)
        if states is None:
            return  # state is reported from the step after the checks were enabled
        q, dq = states
        dt = info.dt.total_seconds()
        if self.q_hold is None:
            self.q_hold = q.copy()

        q_ref, v_ref = self.schedule.at(info.sim_time.total_seconds())
        if self.has_external:
            q_ref = np.where(np.isnan(self.external_pos), q_ref, self.external_pos)
            v_ref = np.where(np.isnan(self.external_vel), v_ref, self.external_vel)
        if self.pairs:
            q_ref, v_ref = q_ref.copy(), v_ref.copy()
            q_ref[self._follow] = self._mult * q_ref[self._lead]
            v_ref[self._follow] = self._mult * v_ref[self._lead]

        no_pos = np.isnan(q_ref)
        v_ref = np.where(np.isnan(v_ref), 0.0, v_ref)
        # position joints with only a velocity set point track a moving hold position
        self.q_hold = np.where(no_pos, self.q_hold + v_ref * dt * self.position_mode, q_ref)
        vel_mode = self.velocity_mode
        err = np.where(vel_mode, v_ref - dq, self.q_hold - q)
        err_rate = np.where(vel_mode, 0.0, v_ref - dq)
        tau = self.pid.update(err, err_rate, dt)
        set_joint_forces(ecm, self.joints, tau)


def get_system():
    return JointControl()
