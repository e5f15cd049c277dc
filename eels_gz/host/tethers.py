"""Tethers: spring-dampers from a point of a robot link to a fixed anchor
in the world, applied by the host as an external force every step.

A scenario lists them under ``tethers:``; each entry is a mapping

- ``link``: a link (or frame) of the robot's original description; merged
  links are followed to the body that carries them;
- ``point``: [x, y, z] in that link's frame where the tether is attached
  (m, default the link origin);
- ``anchor``: [x, y, z] in the world (m), or ``auto`` for the attachment
  point's position when the simulation starts;
- ``stiffness`` (N/m, > 0) and ``damping`` (N s/m, >= 0);
- ``length``: rest length (m, default 0).

The force on the link is f = -(k s + c ds/dt) u when the stretch
s = |p - anchor| - length is positive, u the unit vector from the anchor to
the attachment point p; a tether never pushes (s <= 0 gives no force). It
acts like a wrench a gz-sim system adds in pre_update: for one step, at p.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from eels_gz.errors import ConfigError

KEYS = {"link", "point", "anchor", "stiffness", "damping", "length"}


@dataclass(frozen=True)
class Tether:
    """Parameters of one tether (SI units)."""

    link: str
    point: tuple[float, float, float]
    anchor: tuple[float, float, float] | None  # None: the attachment point at start
    stiffness: float
    damping: float
    length: float = 0.0


def _vec3(value, what: str, where: str) -> tuple[float, float, float]:
    try:
        v = tuple(float(x) for x in value)
    except (TypeError, ValueError):
        v = ()
    if len(v) != 3 or not all(np.isfinite(v)):
        raise ConfigError(f"{where}: tether '{what}' must be 3 finite numbers [x, y, z], got {value!r}")
    return v


def parse_tethers(items, where: str) -> list[Tether]:
    """Check a scenario's ``tethers:`` list."""
    if not isinstance(items, list):
        raise ConfigError(f"{where}: 'tethers' must be a list of mappings, got {type(items).__name__}")
    out = []
    for k, item in enumerate(items):
        here = f"{where}: tethers[{k}]"
        if not isinstance(item, dict) or "link" not in item:
            raise ConfigError(f"{here}: a tether is a mapping with at least 'link', 'stiffness', got {item!r}")
        unknown = set(item) - KEYS
        if unknown:
            raise ConfigError(f"{here}: unknown keys {sorted(unknown)}; expected {sorted(KEYS)}")
        try:
            k_s, c, length = (float(item.get(key, d)) for key, d in
                              (("stiffness", np.nan), ("damping", 0.0), ("length", 0.0)))
        except (TypeError, ValueError):
            raise ConfigError(f"{here}: stiffness, damping and length must be numbers") from None
        if not k_s > 0 or not c >= 0 or not length >= 0:
            raise ConfigError(f"{here}: need stiffness > 0, damping >= 0, length >= 0; got {k_s}, {c}, {length}")
        anchor = item.get("anchor", "auto")
        out.append(Tether(str(item["link"]), _vec3(item.get("point", [0, 0, 0]), "point", here),
                          None if anchor == "auto" else _vec3(anchor, "anchor", here), k_s, c, length))
    return out


class TetherSet:
    """The tethers of one simulation; ``pre_update`` adds their forces for the coming step."""

    def __init__(self, sim, tethers: list[Tether], where: str = "<scenario>"):
        self.sim = sim
        self.tethers = tethers
        self.attached = []  # (tether, body, point in body frame, anchor in world)
        for t in tethers:
            frame = sim.robot_frames.get(t.link)
            body = sim.robot_skeleton.getBodyNode(frame.body if frame else t.link)
            if body is None:
                raise ConfigError(f"{where}: tether link '{t.link}' is not a link of the robot")
            T_body_link = frame.pose if frame else np.eye(4)
            p_body = (T_body_link @ np.r_[t.point, 1.0])[:3]
            anchor = np.array(t.anchor) if t.anchor is not None else \
                (body.getWorldTransform().matrix() @ np.r_[p_body, 1.0])[:3]
            self.attached.append((t, body, p_body, anchor))

    def forces(self) -> list[np.ndarray]:
        """World force (N) of each tether at the current state (the attachment points' positions and
        velocities from the step's batched kinematics while they are current, else from DART)."""
        kin = self.sim.current_kinematics()
        out = []
        for t, body, p_body, anchor in self.attached:
            if kin is not None:
                b = body.getIndexInSkeleton()
                T, (wx, wy, wz) = kin.T[b], kin.w[b].tolist()
                r = T[:3, :3] @ p_body
                rx, ry, rz = r.tolist()
                p, v = T[:3, 3] + r, kin.v[b] + (wy * rz - wz * ry, wz * rx - wx * rz, wx * ry - wy * rx)
            else:
                p = (body.getWorldTransform().matrix() @ np.r_[p_body, 1.0])[:3]
                v = None
            delta = p - anchor
            dist = math.sqrt(float(delta @ delta))
            stretch = dist - t.length
            if stretch <= 0 or dist == 0:
                out.append(np.zeros(3))
                continue
            u = delta / dist
            if v is None:
                v = np.asarray(body.getLinearVelocity(p_body), dtype=float)
            out.append(-(t.stiffness * stretch + t.damping * float(u @ v)) * u)
        return out

    def pre_update(self, info, ecm) -> None:
        for (t, body, p_body, _), f in zip(self.attached, self.forces()):
            body.addExtForce(f, p_body, False, True)  # world force at a body-frame point, for this step
