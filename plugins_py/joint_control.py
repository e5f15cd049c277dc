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
from gz_compat import iter_elements, joint_states, msgs, param, register_peer, set_joint_forces, sim, transport

from eels_gz.control.joint_targets import JointLoops
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
        self.pid = PidArray(gains)
        self._index = index = {n: k for k, n in enumerate(self.names)}  # set_targets' lookups

        self.pairs = []
        for el in iter_elements(sdf, "pair"):
            leader, follower = (param(el, "get_string", k, PLUGIN) for k in ("leader", "follower"))
            for n in (leader, follower):
                if n not in index:
                    raise ValueError(f"{PLUGIN}: <pair>: joint '{n}' is not a controlled joint of the model")
            self.pairs.append((index[leader], index[follower], param(el, "get_double", "multiplier", PLUGIN)))
        self.loops = JointLoops(self.pid, self.velocity_mode, self.pairs)

        path, found = sdf.get_string("scenario", "")
        keyframes = load_scenario(path).get("setpoints", []) if found and path else []
        self.schedule = SetpointSchedule(self.names, keyframes, path or "<no scenario>")
        bad = [self.names[j] for f in self.schedule.frames for j in f.position if self.velocity_mode[j]]
        if bad:
            raise ValueError(f"{path}: position set points for velocity-controlled joints: {sorted(set(bad))}")

        # external set points (e.g. from ROS /joint_commands) override the schedule
        self.has_external = False
        topic, _ = sdf.get_string("joint_commands_topic", "/joint_commands")
        self.node = transport.Node()
        if not self.node.subscribe(msgs.Model, topic, self.on_joint_commands):
            raise ValueError(f"{PLUGIN}: <joint_commands_topic>: cannot subscribe to '{topic}'")
        register_peer(entity, PLUGIN, self, ecm)  # the scenario systems' peer (gz_compat.peer)

    @property
    def q_hold(self):
        """The positions the position-mode joints hold (None before the first update)."""
        return self.loops.q_hold

    def reset(self, info, ecm):
        """World reset: integrators cleared, the shape to hold taken again from the reset state."""
        self.loops.reset()

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
        index = self._index
        for k, name in enumerate(names):
            if name not in index:
                raise KeyError(f"unknown joint '{name}'")
            if positions is not None:
                self.loops.external_pos[index[name]] = positions[k]
            if velocities is not None:
                self.loops.external_vel[index[name]] = velocities[k]
        self.has_external = True

    def pre_update(self, info, ecm):
        if info.paused or not self.joints:
            return
        states = joint_states(ecm, self.joints)
        if states is None:
            return  # state is reported from the step after the checks were enabled
        q, dq = states
        q_ref, v_ref = self.schedule.at(info.sim_time.total_seconds())
        set_joint_forces(ecm, self.joints, self.loops.step(q, dq, q_ref, v_ref, info.dt.total_seconds()))


def get_system():
    return JointControl()
