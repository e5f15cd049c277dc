"""World wrenches of the soil on a set of wheels, from their poses and velocities.

Each wheel is a rigid cylinder about its link's y axis (the axle, the rover
macros' naming contract), centred on the link origin: ``radius`` to its lug
tips, ``width``, and its lugs (``lug_height`` above the rim, ``lug_count``; 0
for a smooth rim). Where the soil shears, the lugs' passive thrust and the
radius r the stresses act on (r_rim + lambda h_g) are ``eels_gz.soil.grousers``';
``grousers=False`` takes every wheel as the cylinder through its lug tips with
the soil's own strength (the model before issue 44). The ripple of discrete
lugs (Irani et al., J. Terramech. 48, 2011) is not modelled: the lugs' thrust
is smeared over their pitch.

Per wheel and step: the terrain normal n and the signed distance d of the
centre (``Field.query``); sinkage h = r - d; the heading x = a x n (a the
axle), the lateral axis y = n x x; the velocities along them and the spin
about a; then ``wong_reece.soil_wrenches``. The wrench about the wheel
centre: F = F_x x + F_y y + F_z n, M = T_y a + M_x x. Each wheel carries
its shear displacements from step to step (``wong_reece.shear_state_step``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from eels_gz.soil.grousers import WheelGeometry, contact_geometry
from eels_gz.soil.params import SoilParams
from eels_gz.soil.wong_reece import GL_U, GL_W, pack_soil, soil_world_wrenches


@dataclass
class SoilWrenches:
    """Per wheel (n,): the wrench about the wheel centre in world axes (N, N m), and what made it."""

    force: np.ndarray
    torque: np.ndarray
    sinkage: np.ndarray       # m, of the contact radius (SoilContactStep.contact_radius), <= 0 off the ground
    local: np.ndarray         # (n, 5): F_x, F_y, F_z, T_y, M_x in the wheel's ground frame


@dataclass
class SoilContactStep:
    """The soil model over a fixed set of wheels (radius to the lug tips and width in m, lug height
    in m and lug count, one entry each; no lugs by default); ``grousers`` False: every wheel is the
    cylinder through its tips with the soil's own strength. ``contact_radius`` (the radius the
    stresses act on) and ``wheels`` (the kernels' wheel records) are derived."""

    radius: np.ndarray
    width: np.ndarray
    params: SoilParams
    gravity: float = 9.81
    lug_height: np.ndarray | None = None
    lug_count: np.ndarray | None = None
    grousers: bool = True
    soil: np.ndarray = field(init=False)
    contact_radius: np.ndarray = field(init=False)
    wheels: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.radius = np.ascontiguousarray(self.radius, dtype=np.float64)
        self.width = np.ascontiguousarray(self.width, dtype=np.float64)
        if self.radius.shape != self.width.shape or self.radius.ndim != 1:
            raise ValueError("SoilContactStep: radius and width must be 1-D arrays of one entry per wheel")
        if np.any(self.radius <= 0.0) or np.any(self.width <= 0.0):
            raise ValueError("SoilContactStep: wheel radius and width must be > 0 m")
        n = self.radius.size
        heights = np.zeros(n) if self.lug_height is None else np.asarray(self.lug_height, dtype=float)
        counts = np.zeros(n, int) if self.lug_count is None else np.asarray(self.lug_count)
        if heights.shape != (n,) or counts.shape != (n,):
            raise ValueError("SoilContactStep: lug_height and lug_count must have one entry per wheel")
        self.lug_height, self.lug_count = heights, counts
        geometry = [contact_geometry(WheelGeometry(float(r), float(b), float(hg), int(nl)), self.params, self.grousers)
                    for r, b, hg, nl in zip(self.radius, self.width, heights, counts)]
        self.contact_radius = np.array([g.radius for g in geometry])
        self.wheels = np.ascontiguousarray([g.record() for g in geometry]).reshape(n, 3)
        self.soil = pack_soil(self.params, self.gravity)
        self.state = np.zeros((n, 3))  # shear displacements D_a, D_b, D_y per wheel (m)

    def reset(self) -> None:
        """Forget the shear displacements (a world reset)."""
        self.state[:] = 0.0

    def __call__(self, terrain, pos: np.ndarray, rot: np.ndarray, lin: np.ndarray,
                 ang: np.ndarray, dt: float) -> SoilWrenches:
        """Wrenches for wheel centres ``pos`` (n, 3), orientations ``rot`` (n, 3, 3), linear and
        angular velocities ``lin``, ``ang`` (n, 3), all world, over a step of ``dt`` s (the
        shear state advances by it); ``terrain`` a field with ``query``."""
        dist, normal = terrain.query(pos)
        n = self.radius.size
        out = SoilWrenches(force=np.empty((n, 3)), torque=np.empty((n, 3)), sinkage=np.empty(n),
                           local=np.empty((n, 5)))
        soil_world_wrenches(self.contact_radius, self.width, dist, np.ascontiguousarray(normal),
                            np.ascontiguousarray(rot), np.ascontiguousarray(lin), np.ascontiguousarray(ang),
                            self.state, float(dt), self.soil, self.wheels, GL_U, GL_W, out.local, out.force,
                            out.torque, out.sinkage)
        return out


SDF_DEFAULT_GRAVITY = 9.80665  # m/s^2: sdformat's default <gravity> 0 0 -9.8066


def world_gravity(world_file: str | Path) -> float:
    """|g| (m/s^2) of an SDF world file's ``<world><gravity>``, sdformat's default when it has none."""
    import xml.etree.ElementTree as ET

    node = ET.parse(str(world_file)).getroot().find("world/gravity")
    if node is None or not (node.text or "").strip():
        return SDF_DEFAULT_GRAVITY
    try:
        g = np.array([float(x) for x in node.text.split()])
    except ValueError:
        raise ValueError(f"{world_file}: <gravity> '{node.text.strip()}' is not three numbers") from None
    if g.shape != (3,):
        raise ValueError(f"{world_file}: <gravity> '{node.text.strip()}' is not three numbers")
    return float(np.linalg.norm(g))
