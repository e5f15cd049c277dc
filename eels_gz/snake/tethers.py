"""Tethers (pure): spring-dampers from a point of a robot link to a fixed anchor in the world.

A scenario lists them under ``tethers:``; each entry is a mapping

- ``link``: a link (or frame) of the robot's original description; a link
  merged into its parent by a fixed joint is followed to the link that
  carries it (:meth:`eels_gz.description.model.RobotModel.fixed_carrier`);
- ``point``: [x, y, z] in that link's frame where the tether is attached
  (m, default the link origin);
- ``anchor``: [x, y, z] in the world (m), or ``auto`` for the attachment
  point's position when the run starts (after any placement);
- ``stiffness`` (N/m, > 0) and ``damping`` (N s/m, >= 0);
- ``length``: rest length (m, default 0).

The force on the link is f = -(k s + c ds/dt) u when the stretch
s = |p - anchor| - length is positive, u the unit vector from the anchor to
the attachment point p; a tether never pushes (s <= 0 gives no force). It
acts like a wrench a gz-sim system adds in pre_update: for one step, at p.
The system that applies them is ``plugins_py/tethers.py``; the scenario's
``tethers:`` reach it as ``<tether>`` elements (:func:`tether_elements`).
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
    if isinstance(value, str):
        value = value.split()
    try:
        v = tuple(float(x) for x in value)
    except (TypeError, ValueError):
        v = ()
    if len(v) != 3 or not all(np.isfinite(v)):
        raise ConfigError(f"{where}: tether '{what}' must be 3 finite numbers [x, y, z], got {value!r}")
    return v


def parse_tethers(items, where: str) -> list[Tether]:
    """Check a scenario's ``tethers:`` list (``where`` names its file in errors)."""
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


def _xyz(v) -> str:
    return " ".join(repr(float(x)) for x in v)


def tether_elements(tethers: list[Tether]) -> str:
    """The ``<tether .../>`` elements (XML text) of ``tethers`` for the tethers system's ``<plugin>``:
    attributes ``link``, ``point`` ("x y z", m), ``anchor`` ("x y z" or "auto"), ``stiffness``,
    ``damping``, ``length`` (numbers written with repr: they read back exactly)."""
    from xml.sax.saxutils import quoteattr

    return "".join(
        f"<tether link={quoteattr(t.link)} point=\"{_xyz(t.point)}\" "
        f"anchor=\"{'auto' if t.anchor is None else _xyz(t.anchor)}\" stiffness=\"{t.stiffness!r}\" "
        f"damping=\"{t.damping!r}\" length=\"{t.length!r}\"/>" for t in tethers)


def tether_from_attributes(get, where: str) -> Tether:
    """One tether from an element's attributes, ``get(name) -> str or None`` (the inverse of
    :func:`tether_elements`), checked as the scenario's ``tethers:`` entries are."""
    item = {k: get(k) for k in KEYS if get(k) is not None}
    if "point" in item:
        item["point"] = _vec3(item["point"], "point", where)
    if "anchor" in item and item["anchor"] != "auto":
        item["anchor"] = _vec3(item["anchor"], "anchor", where)
    for key in ("stiffness", "damping", "length"):
        if key in item:
            try:
                item[key] = float(item[key])
            except ValueError:
                raise ConfigError(f"{where}: tether '{key}' must be a number, got {item[key]!r}") from None
    return parse_tethers([item], where)[0]


@numba.njit(cache=True)
def tether_wrenches(pos, rot, lin, ang, point, anchor, kcl, force, moment):  # pragma: no cover - compiled
    """Each tether's world force (N) into ``force`` (n, 3) and its moment about its link's origin
    (N m) into ``moment``, from the links' origins' world positions ``pos`` (n, 3), rotations ``rot``
    (n, 3, 3) and twists ``lin``, ``ang`` (n, 3) (row i: the link tether i is attached to);
    ``point`` (n, 3) in the link frame, ``anchor`` (n, 3) in the world, ``kcl`` (n, 3): stiffness,
    damping, rest length. The law is the module docstring's."""
    for i in range(point.shape[0]):
        r = np.empty(3)
        for a in range(3):
            r[a] = rot[i, a, 0] * point[i, 0] + rot[i, a, 1] * point[i, 1] + rot[i, a, 2] * point[i, 2]
        dx, dy, dz = pos[i, 0] + r[0] - anchor[i, 0], pos[i, 1] + r[1] - anchor[i, 1], pos[i, 2] + r[2] - anchor[i, 2]
        dist = np.sqrt(dx * dx + dy * dy + dz * dz)
        stretch = dist - kcl[i, 2]
        if stretch <= 0.0 or dist == 0.0:
            for a in range(3):
                force[i, a] = 0.0
                moment[i, a] = 0.0
            continue
        ux, uy, uz = dx / dist, dy / dist, dz / dist
        vx = lin[i, 0] + ang[i, 1] * r[2] - ang[i, 2] * r[1]
        vy = lin[i, 1] + ang[i, 2] * r[0] - ang[i, 0] * r[2]
        vz = lin[i, 2] + ang[i, 0] * r[1] - ang[i, 1] * r[0]
        f = -(kcl[i, 0] * stretch + kcl[i, 1] * (ux * vx + uy * vy + uz * vz))
        fx, fy, fz = f * ux, f * uy, f * uz
        force[i, 0], force[i, 1], force[i, 2] = fx, fy, fz
        moment[i, 0] = r[1] * fz - r[2] * fy
        moment[i, 1] = r[2] * fx - r[0] * fz
        moment[i, 2] = r[0] * fy - r[1] * fx


def attachment_points(pos, rot, point) -> np.ndarray:
    """World positions (n, 3) of the attachment points ``point`` (n, 3, link frames) of links at
    ``pos`` (n, 3), ``rot`` (n, 3, 3)."""
    return pos + np.einsum("nij,nj->ni", rot, point)


TETHER_LOAD_METRICS = ("robot_mass_kg", "weight_n", "tether_force_total_n", "tether_force_vertical_n",
                       "tether_force_over_weight", "tether_tension_n", "settle_time_s")


def tether_load_metrics(t, forces, settle_time: float, mass: float, g, n_tethers: int) -> dict:
    """How the tethers carry the robot, averaged over the steps at or after ``settle_time`` (every
    step when none is): their total force (N, world), its part against gravity and its ratio to
    the robot's weight m g (1 when they carry it all and it hangs still), and each tether's tension
    (N). ``t``: step times (s after the run's start); ``forces``: per step, (n_tethers, 3) N on the
    robot; ``mass`` (kg); ``g`` (3,) m/s^2."""
    t = np.asarray(t, float)
    f = np.array(forces, float) if len(forces) else np.zeros((1, n_tethers, 3))
    late = t >= settle_time if len(t) else np.array([True])
    if not late.any():
        late = np.ones(len(f), bool)
    total = f[late].sum(axis=1).mean(axis=0)
    g = np.asarray(g, float)
    weight = mass * float(np.linalg.norm(g))
    up = -g / np.linalg.norm(g)
    return {
        "robot_mass_kg": mass,
        "weight_n": weight,
        "tether_force_total_n": total.tolist(),
        "tether_force_vertical_n": float(total @ up),
        "tether_force_over_weight": float(total @ up) / weight,
        "tether_tension_n": [float(np.linalg.norm(x)) for x in f[late].mean(axis=0)],
        "settle_time_s": settle_time,
    }
