"""Surface elements of screws, and the RFT wrench of the grains on them.

Screw frame as in ``eels_gz.contact.screw_points``: the axis is the link's x
axis, the screw spans ``x_center +- length/2``. The screw is a core cylinder of
``root_radius`` and one helical blade (a helicoid, single start) from the core
to the blade-tip ``radius``, of lead ``2 pi radius tan(lead_angle)`` (the lead
angle is measured at the tip from the circumferential direction; handedness
+1 right, -1 left). On the helicoid x = x0 + c theta (c = h lead / 2 pi) the
normal at radius rho is proportional to rho e_x - c e_theta (the across-thread
direction of ``screw_points``); each blade element is loaded on both faces
(the blade's thickness and its tip edge carry no area). The core's ends are
inside the robot's shells and are left out.

Unlike the contact points of the screw-ice model, the elements turn with the
screw: RFT needs the blade where it is. All numbers of the geometry come from
the ``<screw>`` elements the xacro writes from the variant record.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from eels_gz.contact.screw_points import ScrewGeometry
from eels_gz.errors import ContactError
from eels_gz.granular.implicit import STATE_WIDTH, implicit_wrench, link_slopes
from eels_gz.granular.params import GranularParams
from eels_gz.granular.rft import GENERIC, body_elements_world, rft_element_forces, sum_wrenches


@dataclass(frozen=True)
class ScrewSurface:
    """Surface elements of one screw in its link frame: positions (M, 3) m, outward normals (M, 3),
    areas (M,) m^2, and which are blade elements (M,) bool."""

    points: np.ndarray
    normals: np.ndarray
    areas: np.ndarray
    blade: np.ndarray


def screw_surface(geom: ScrewGeometry, root_radius: float, params: GranularParams) -> ScrewSurface:
    """The core and blade elements of ``geom`` (``root_radius`` m, the core's) at the resolution of
    ``params``; ContactError naming the screw when the root radius is not inside the tip radius."""
    if not (0.0 < root_radius < geom.radius):
        raise ContactError(f"screw '{geom.name}': 'root_radius' = {root_radius!r}; expected a core radius "
                           f"in (0, radius = {geom.radius}) m")
    pts, nrm, area, blade = [], [], [], []
    # core: midpoints of equal axial segments and ring sectors
    xs = geom.x_center + geom.length * ((np.arange(params.core_axial) + 0.5) / params.core_axial - 0.5)
    phis = 2.0 * math.pi * (np.arange(params.core_ring) + 0.5) / params.core_ring
    core_area = geom.length / params.core_axial * 2.0 * math.pi * root_radius / params.core_ring
    for x in xs:
        for phi in phis:
            er = np.array([0.0, math.cos(phi), math.sin(phi)])
            pts.append(np.array([x, 0.0, 0.0]) + root_radius * er)
            nrm.append(er)
            area.append(core_area)
            blade.append(False)
    # blade: the helicoid over the screw's length, both faces
    lead = geom.lead
    c = geom.handedness * lead / (2.0 * math.pi)
    span = 2.0 * math.pi * geom.length / lead  # rad of helix over the length
    n_theta = max(1, int(math.ceil(span / (2.0 * math.pi) * params.blade_elements_per_turn)))
    dtheta = span / n_theta
    rows = params.blade_rows
    drho = (geom.radius - root_radius) / rows
    x_start = geom.x_center - 0.5 * geom.length * geom.handedness  # x grows with theta for a right hand
    for j in range(n_theta):
        theta = (j + 0.5) * dtheta
        x = x_start + c * theta
        er = np.array([0.0, math.cos(theta), math.sin(theta)])
        et = np.array([0.0, -math.sin(theta), math.cos(theta)])
        for k in range(rows):
            rho = root_radius + (k + 0.5) * drho
            n = rho * np.array([1.0, 0.0, 0.0]) - c * et
            norm = float(np.linalg.norm(n))
            dA = math.sqrt(rho * rho + c * c) * drho * dtheta
            p = np.array([x, 0.0, 0.0]) + rho * er
            for sign in (1.0, -1.0):
                pts.append(p)
                nrm.append(sign * n / norm)
                area.append(dA)
                blade.append(True)
    return ScrewSurface(np.array(pts), np.array(nrm), np.array(area), np.array(blade))


@dataclass
class GranularWrenches:
    """Per screw (S,): the wrench of the grains about the link origin in world axes (N, N m)."""

    force: np.ndarray
    torque: np.ndarray
    immersed: np.ndarray  # (S,) area of the screw's elements below the surface, m^2 (both blade faces counted)


@dataclass
class GranularScrewStep:
    """RFT on a fixed set of screws: ``geometries`` with their core radii ``root_radii`` (m), the medium
    ``params``, and ``terrain`` (a distance field, ``eels_gz.terrain``: its zero set is the grains' surface,
    depth = minus the signed distance). ``coefficients``: the Fourier fit (the generic one).

    ``mass`` (S,) kg and ``inertia`` (S,) kg m^2, the screw links' own mass and smallest principal moment:
    given, the wrench is integrated implicitly (``eels_gz.granular.implicit``; call with ``dt``); None, the
    explicit law (what the closed-form tests check)."""

    geometries: Sequence[ScrewGeometry]
    root_radii: Sequence[float]
    params: GranularParams
    terrain: object
    coefficients: np.ndarray = field(default_factory=lambda: GENERIC.copy())
    mass: np.ndarray | None = None
    inertia: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not self.geometries or len(self.geometries) != len(self.root_radii):
            raise ContactError("GranularScrewStep: expected one root radius per screw geometry, at least one screw")
        surfaces = [screw_surface(g, r, self.params) for g, r in zip(self.geometries, self.root_radii)]
        self.p_link = np.ascontiguousarray(np.concatenate([s.points for s in surfaces]))
        self.n_link = np.ascontiguousarray(np.concatenate([s.normals for s in surfaces]))
        self.areas = np.ascontiguousarray(np.concatenate([s.areas for s in surfaces]))
        self.link_of = np.concatenate([np.full(len(s.areas), k, dtype=np.int64) for k, s in enumerate(surfaces)])
        m = self.areas.size
        self._p, self._n, self._v, self._r, self._f = (np.empty((m, 3)) for _ in range(5))
        self.coefficients = np.ascontiguousarray(self.coefficients, dtype=float)
        s = len(self.geometries)
        self.state = np.zeros((s, STATE_WIDTH))  # the implicit step's history per screw
        self._slope = np.zeros((s, 2))
        if (self.mass is None) != (self.inertia is None):
            raise ContactError("GranularScrewStep: give both the screws' mass and inertia (implicit step) or neither")
        if self.mass is not None:
            self.mass = np.ascontiguousarray(self.mass, dtype=float)
            self.inertia = np.ascontiguousarray(self.inertia, dtype=float)
            if self.mass.shape != (s,) or self.inertia.shape != (s,) or np.any(self.mass <= 0.0) \
                    or np.any(self.inertia <= 0.0):
                raise ContactError(f"GranularScrewStep: expected {s} positive masses (kg) and inertias (kg m^2)")

    def reset(self) -> None:
        """Forget the implicit step's history (a world reset)."""
        self.state[:] = 0.0

    @property
    def n_screws(self) -> int:
        return len(self.geometries)

    def __call__(self, pos, rot, lin, ang, dt: float | None = None) -> GranularWrenches:
        """The wrenches on the screws whose link frames are at ``pos`` (S, 3) m, ``rot`` (S, 3, 3), moving
        at ``lin`` (S, 3) m/s and ``ang`` (S, 3) rad/s (world); ``dt`` (s): the step they will act over
        (the implicit step's; required with ``mass``)."""
        s = self.n_screws
        arrays = [np.ascontiguousarray(a, dtype=float) for a in (pos, rot, lin, ang)]
        if arrays[0].shape != (s, 3) or arrays[1].shape != (s, 3, 3) or arrays[2].shape != (s, 3) \
                or arrays[3].shape != (s, 3):
            raise ContactError(f"GranularScrewStep: expected states of {s} screws, got shapes "
                               f"{[a.shape for a in arrays]}")
        body_elements_world(*arrays, self.link_of, self.p_link, self.n_link, self._p, self._n, self._v, self._r)
        dist, _ = self.terrain.query(self._p)
        depth = np.ascontiguousarray(-np.asarray(dist, dtype=float))
        p = self.params
        rft_element_forces(self._n, self.areas, self._v, depth, p.zeta, p.velocity_reg, p.leading_band,
                           self.coefficients, self._f)
        force, torque, immersed = np.empty((s, 3)), np.empty((s, 3)), np.empty(s)
        sum_wrenches(self.link_of, self._r, self._f, depth, self.areas, s, force, torque, immersed)
        if self.mass is not None:
            if dt is None or not dt > 0.0:
                raise ContactError(f"GranularScrewStep: the implicit step needs the step dt > 0 s, got {dt!r}")
            link_slopes(self.link_of, self._v, self._r, depth, self.areas, p.zeta, p.velocity_reg, s, self._slope)
            f0, t0 = force, torque
            force, torque = np.empty((s, 3)), np.empty((s, 3))
            implicit_wrench(self.state, f0, t0, arrays[2], arrays[3], self._slope, self.mass, self.inertia,
                            float(dt), force, torque)
        return GranularWrenches(force, torque, immersed)
