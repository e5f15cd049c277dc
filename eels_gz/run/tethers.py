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

from dataclasses import dataclass

import numba
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


@numba.njit(cache=True)
def _tether_forces(T, v, w, body, point, anchor, kcl, out):  # pragma: no cover - compiled
    """Each tether's force (module docstring) into ``out`` (n, 3), its attachment point's position and
    velocity from the bodies' world poses ``T`` and twists ``v``, ``w`` (batched kinematics)."""
    for i in range(body.shape[0]):
        b = body[i]
        r = np.empty(3)
        for a in range(3):
            r[a] = T[b, a, 0] * point[i, 0] + T[b, a, 1] * point[i, 1] + T[b, a, 2] * point[i, 2]
        dx, dy, dz = T[b, 0, 3] + r[0] - anchor[i, 0], T[b, 1, 3] + r[1] - anchor[i, 1], T[b, 2, 3] + r[2] - anchor[i, 2]
        dist = np.sqrt(dx * dx + dy * dy + dz * dz)
        stretch = dist - kcl[i, 2]
        if stretch <= 0.0 or dist == 0.0:
            out[i, 0] = out[i, 1] = out[i, 2] = 0.0
            continue
        ux, uy, uz = dx / dist, dy / dist, dz / dist
        vx = v[b, 0] + w[b, 1] * r[2] - w[b, 2] * r[1]
        vy = v[b, 1] + w[b, 2] * r[0] - w[b, 0] * r[2]
        vz = v[b, 2] + w[b, 0] * r[1] - w[b, 1] * r[0]
        f = -(kcl[i, 0] * stretch + kcl[i, 1] * (ux * vx + uy * vy + uz * vz))
        out[i, 0], out[i, 1], out[i, 2] = f * ux, f * uy, f * uz


class TetherSet:
    """The tethers of one simulation; ``pre_update`` adds their forces for the coming step."""

    def __init__(self, sim, tethers: list[Tether], where: str = "<scenario>"):
        self.sim = sim
        self.tethers = tethers
        self._arrays = None  # (attachments, body indices, points, anchors, (k, c, length)): forces' arrays
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
        """World force (N) of each tether at the current state, in one compiled call: the attached
        bodies' poses and twists from the step's batched kinematics while they are current, else
        from DART."""
        held = self._arrays[0] if self._arrays is not None else ()
        if len(held) != len(self.attached) or any(a is not b for a, b in zip(held, self.attached)):
            # rebuilt when an attachment is replaced (the tuples are held, so compared by identity)
            self._arrays = (tuple(self.attached),
                            np.array([body.getIndexInSkeleton() for _, body, _, _ in self.attached], np.int64),
                            np.array([p for _, _, p, _ in self.attached], float).reshape(-1, 3),
                            np.array([a for _, _, _, a in self.attached], float).reshape(-1, 3),
                            np.array([[t.stiffness, t.damping, t.length] for t, _, _, _ in self.attached],
                                     float).reshape(-1, 3))
        _, index, points, anchors, kcl = self._arrays
        kin = self.sim.current_kinematics()
        if kin is not None:
            T, v, w = kin.T, kin.v, kin.w
        else:  # DART's own, body by body (origins' velocities, in the world)
            bodies = [body for _, body, _, _ in self.attached]
            T = np.array([b.getWorldTransform().matrix() for b in bodies], float).reshape(-1, 4, 4)
            v = np.array([b.getLinearVelocity() for b in bodies], float).reshape(-1, 3)
            w = np.array([b.getAngularVelocity() for b in bodies], float).reshape(-1, 3)
            index = np.arange(len(bodies), dtype=np.int64)
        out = np.empty((len(self.attached), 3))
        _tether_forces(T, v, w, index, points, anchors, kcl, out)
        return list(out)

    def pre_update(self, info, ecm) -> None:
        for (t, body, p_body, _), f in zip(self.attached, self.forces()):
            body.addExtForce(f, p_body, False, True)  # world force at a body-frame point, for this step
