"""gz-sim Python system: ICR steering of a rover from ``/cmd_vel``.

Parameters (``<plugin>``, written by urdf/rover.gazebo.xacro):

- ``<mode>``: drive mode (eels_gz.rover.MODES), default general_ackermann;
- ``<base_link>``: the body link (default base_link);
- ``<wheel_radius>``: m;
- ``<steer joint= lower= upper=/>``, repeated: steering limits, used where
  the gz API has no ``Joint.axis``;
- ``<motor steer_effort= steer_speed= drive_effort= drive_speed=/>``: N m and
  rad/s, from the joints' limits in the xacro;
- ``<steering p= i= d= i_max= ff=/>``, ``<drive p= i= i_max=/>``,
  ``<resteer_tolerance>`` (rad), ``<wheel_acceleration>`` (rad/s^2): from
  config/rover_control.yaml;
- ``<cmd_vel_topic>`` (default /cmd_vel).

The subscription callback stores the latest gz.msgs.Twist; ``pre_update``
turns it into steering and wheel efforts (eels_gz.rover.control). Required
parameters are read with sdformat's two-argument getters (a missing one is an
error naming it); joint states are read once they are reported. ``reset``
(a world reset) restarts the controller; the last command is kept.
"""

from __future__ import annotations

import numpy as np
from gz_compat import iter_elements, joint_states, msgs, param, register_peer, set_joint_forces, sim, transport

from eels_gz.rover.control import DriveController, DriveGains, MotorLimits, SteeringGains
from eels_gz.rover.gz_model import wheel_joints, wheels_from_model
from eels_gz.rover.steering import IcrSteering


PLUGIN = "icr_steering"


def _attrs(sdf, name: str, keys: tuple[str, ...], plugin: str = PLUGIN) -> list[float]:
    if not sdf.has_element(name):
        raise ValueError(f"{plugin}: <{name}> is missing (expected attributes {', '.join(keys)})")
    el = sdf.find_element(name)
    return [param(el, "get_double", k, plugin) for k in keys]


def steer_limits(sdf, plugin: str = PLUGIN) -> dict[str, tuple[float, float]]:
    """``<steer joint lower upper/>`` elements of a plugin, by joint name."""
    return {param(el, "get_string", "joint", plugin): (param(el, "get_double", "lower", plugin),
                                                        param(el, "get_double", "upper", plugin))
            for el in iter_elements(sdf, "steer")}


class IcrSteeringSystem:
    def configure(self, entity, sdf, ecm, event_mgr):
        model = sim.Model(entity)
        mode, _ = sdf.get_string("mode", "general_ackermann")
        base, _ = sdf.get_string("base_link", "base_link")
        radius = param(sdf, "get_double", "wheel_radius", PLUGIN)
        self.wheels = wheels_from_model(sim, model, ecm, base, radius, steer_limits(sdf))
        self.steering = IcrSteering(self.wheels, mode)
        pairs = wheel_joints(sim, model, ecm)
        self.wheel_joints = [w for _, w, _ in pairs]
        self.steered = [k for k, (_, _, s) in enumerate(pairs) if s is not None]
        self.steer_joints = [pairs[k][2] for k in self.steered]
        for j in self.wheel_joints + self.steer_joints:
            j.enable_position_check(ecm)
            j.enable_velocity_check(ecm)
        se, ss, de, ds = _attrs(sdf, "motor", ("steer_effort", "steer_speed", "drive_effort", "drive_speed"))
        limits = MotorLimits((se,) * len(self.steered), (ss,) * len(self.steered),
                             (de,) * len(self.wheels), (ds,) * len(self.wheels))
        tol = param(sdf, "get_double", "resteer_tolerance", PLUGIN)
        acc = param(sdf, "get_double", "wheel_acceleration", PLUGIN)
        self.controller = DriveController(
            self.steering, self.steered,
            SteeringGains(*_attrs(sdf, "steering", ("p", "i", "d", "i_max", "ff"))),
            DriveGains(*_attrs(sdf, "drive", ("p", "i", "i_max"))), limits, tol, acc)
        self.cmd = (0.0, 0.0, 0.0)
        topic, _ = sdf.get_string("cmd_vel_topic", "/cmd_vel")
        self.node = transport.Node()
        if not self.node.subscribe(msgs.Twist, topic, self.on_cmd_vel):
            raise ValueError(f"{PLUGIN}: cannot subscribe to '{topic}'")
        register_peer(entity, PLUGIN, self, ecm)

    def on_cmd_vel(self, msg) -> None:
        self.cmd = (msg.linear.x, msg.linear.y, msg.angular.z)

    @property
    def resteering(self) -> bool:
        return self.controller.resteering

    def reset(self, info, ecm):
        self.controller.reset()

    def pre_update(self, info, ecm):
        if info.paused:
            return
        wheels = joint_states(ecm, self.wheel_joints)
        steers = joint_states(ecm, self.steer_joints) if self.steer_joints else (np.zeros(0), np.zeros(0))
        if wheels is None or steers is None:
            return  # joint states are reported from the first physics update after the checks
        tau_s, tau_w = self.controller.update(self.cmd, steers[0], steers[1], wheels[1], info.dt.total_seconds())
        if self.steer_joints:
            set_joint_forces(ecm, self.steer_joints, tau_s)
        set_joint_forces(ecm, self.wheel_joints, tau_w)


def get_system():
    return IcrSteeringSystem()
