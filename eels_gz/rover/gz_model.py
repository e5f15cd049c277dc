"""A rover's wheels from a running model through the gz-sim API, for the
icr_steering and wheel_odometry plugins (the same naming contract as
from_urdf). The API module is passed in (``gz_compat.sim``): nothing here
imports gz or the embedded host.

- wheel position: the steering link's (or, for a fixed wheel, the wheel
  link's) origin in the base link frame, from ``Link.world_pose`` of both;
- steering range: ``Joint.axis(ecm)[0].lower()/upper()`` where the API has
  it (Gazebo), else the ``limits`` the plugin's ``<steer>`` elements give
  (written by urdf/rover.gazebo.xacro from the xacro's ``steer_limits``);
- radius: the plugin's ``<wheel_radius>`` (gz-sim's Python API cannot read a
  collision's geometry).
"""

from __future__ import annotations

import math

import numpy as np

from eels_gz.errors import RoverError
from eels_gz.rover.from_urdf import STEER_SUFFIX, WHEEL_SUFFIX
from eels_gz.rover.wheels import Wheel


def _matrix(pose) -> np.ndarray:
    """4x4 from a gz.math Pose3d (position .x/.y/.z, rotation quaternion .w/.x/.y/.z)."""
    p, q = pose.pos(), pose.rot()
    w, x, y, z = q.w(), q.x(), q.y(), q.z()
    T = np.eye(4)
    T[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                 [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                 [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    T[:3, 3] = [p.x(), p.y(), p.z()]
    return T


def wheel_joints(sim, model, ecm) -> list[tuple[str, object, object | None]]:
    """(id, wheel Joint, steering Joint or None) for every ``<id>_wheel_joint``."""
    joints = {sim.Joint(e).name(ecm): sim.Joint(e) for e in model.joints(ecm)}
    out = []
    for name, joint in joints.items():
        if name.endswith(WHEEL_SUFFIX):
            wid = name[: -len(WHEEL_SUFFIX)]
            out.append((wid, joint, joints.get(wid + STEER_SUFFIX)))
    if not out:
        raise RoverError(f"model '{model.name(ecm)}' has no '<id>{WHEEL_SUFFIX}' joints (rover naming "
                         "contract, urdf/rover_macros.xacro)")
    return out


def wheels_from_model(sim, model, ecm, base_link: str, radius: float,
                      limits: dict[str, tuple[float, float]]) -> list[Wheel]:
    """The model's wheels in the order of ``wheel_joints``."""
    base = model.link_by_name(ecm, base_link)
    if not base:
        raise RoverError(f"model '{model.name(ecm)}' has no link '{base_link}'")
    T_base_inv = np.linalg.inv(_matrix(sim.Link(base).world_pose(ecm)))
    wheels = []
    for wid, wheel, steer in wheel_joints(sim, model, ecm):
        joint = steer if steer is not None else wheel
        link = sim.Link(model.link_by_name(ecm, joint.child_link_name(ecm)))
        T = T_base_inv @ _matrix(link.world_pose(ecm))
        x, y = float(T[0, 3]), float(T[1, 3])
        if steer is None:
            # rolls along axle x z for a positive rate; the wheel link's y is the axle
            axle = T[:3, 1]
            roll = np.cross(axle, [0.0, 0.0, 1.0])
            wheels.append(Wheel.fixed(wid, x, y, radius, math.atan2(roll[1], roll[0])))
            continue
        name = steer.name(ecm)
        axes = steer.axis(ecm) if hasattr(steer, "axis") else None  # gz-sim: list of sdformat JointAxis, or None
        if axes:
            lo, hi = float(axes[0].lower()), float(axes[0].upper())
        elif name in limits:
            lo, hi = limits[name]
        else:
            raise RoverError(f"steering joint '{name}': no limits from the gz API and no <steer joint='{name}'> "
                             "element in the plugin")
        wheels.append(Wheel(wid, x, y, radius, lo, hi))
    return wheels
