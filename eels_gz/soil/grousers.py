"""Grousers (lugs) on a rigid wheel in soil: which surface shears, the passive thrust of the lugs,
and the radius the wheel's stresses act on (issue 44). Pure: numpy only; the compiled kernels of
``wong_reece`` apply what this module computes per wheel.

A wheel is a rim of radius r_rim and width b carrying N radial lugs of height h_g (its tip radius
r_rim + h_g is the ``radius`` of the soil system's ``<wheel>``). Three pieces, each a standard form:

- **Where the soil shears** (lug height against grain size, d50 the soil's ``grain_size``). When
  the lugs are much taller than the grains, the soil between them is carried with the wheel and fails
  on the surface through the lug tips with its own strength c + sigma tan(phi) (Wong, "Theory of
  Ground Vehicles", lugged running gear; Bekker 1969). When they are no taller than a grain, there is
  no soil between them to carry: the grains slide on the rim, at the wheel-grain interface, whose
  strength is c_a + sigma tan(delta) with delta < phi (Potyondy, Geotechnique 11, 1961: delta / phi
  of 0.54-0.98 for dry sand on steel, wood and concrete; the same ratio is taken for the adhesion
  c_a / c). Between the two, the trapped fraction

      chi = clip((h_g / d50 - 1) / (rho_1 - 1), 0, 1)

  rises from 0 (a lug no taller than one grain) to 1 at h_g = rho_1 d50 (``lug_trap_ratio``; 10 by
  default: a shear band in granular soil is about ten grains thick, Roscoe, Geotechnique 20, 1970,
  so one fits between lugs that tall). chi of the strength is the soil's own, 1 - chi the interface
  with the lugs' thrust (below).
- **The lugs' passive thrust** (the soil wedge in front of each lug, as Sutoh et al., J. Terramech.
  50, 2013 (seed 004's ref. 49) and Irani, Bauer & Warkentin, J. Terramech. 48, 2011 build on; those
  papers were not at hand: the standard form they rest on is used). Each lug's untrapped height
  e = (1 - chi) h_g stands out of the shearing rim into the soil and pushes a Rankine passive wedge
  (vertical smooth wall, level ground; Rankine 1857 with Bell's cohesion term):

      P / b = K_p (q e + gamma e^2 / 2) + 2 c sqrt(K_p) e,   K_p = tan^2(45 deg + phi / 2),

  with the surcharge q the rim's normal stress sigma above the lug. Smeared over the lug pitch (a
  lug at every 2 pi / N of the rim), the lugs add the tangential stress p_lug = N P / (2 pi r b) to
  the interface's strength, never more in all than the soil's own on the surface through the tips
  (that surface is always a possible failure, so it bounds what rim and lugs transmit: the upper-bound
  theorem of plasticity). The lugs' thrust is mobilised with the shear displacement j as the rim's
  shear is (Janosi), with the soil's K.
- **The radius the stresses act on**: Ding et al. (Intell. Serv. Robot. 4, 2011; seed 004's ref. 32;
  not at hand: their form is used as it is quoted in later work) write a lugged wheel's shearing radius
  as r_rim + lambda h_g with a lug-effect coefficient lambda in [0, 1]. Here lambda is not fitted: the
  trapped fraction rolls on the tips (chi), and of the rest the lugs' share of the frictional strength
  w = A / (tan(delta) + A), A = min(N K_p e / (2 pi r_rim), tan(phi) - tan(delta)), does:

      lambda = chi + (1 - chi) w.

  The Bekker normal stress, the shear and the slip's kinematics are taken on that cylinder (its
  sinkage is the terrain's distance below it).

Switched off (``grousers=False``: the soil system's ``<grousers>false</grousers>``), every wheel is the
cylinder through its lug tips with the soil's own strength: the assumption of the model before issue
44 (the soil between the lugs moves with the wheel), with no lug thrust.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from eels_gz.soil.params import SoilParams

LUG_TRAP_MIN = 1.0  # h_g / d50 at and below which no soil is trapped between the lugs: a lug no taller than a grain


def rankine_passive_coefficient(phi: float) -> float:
    """K_p = tan^2(45 deg + phi / 2) (phi in rad): Rankine's passive earth pressure coefficient of a
    vertical smooth wall against level ground."""
    return math.tan(0.25 * math.pi + 0.5 * phi) ** 2


def passive_force(gamma: float, cohesion: float, surcharge: float, phi: float, height: float) -> float:
    """Rankine passive force per unit width (N/m) on a vertical smooth wall of ``height`` (m) pushed into
    soil of unit weight ``gamma`` (N/m^3), cohesion (Pa) and friction angle ``phi`` (rad), under a
    ``surcharge`` (Pa) on its top: the integral over the wall of K_p (q + gamma y) + 2 c sqrt(K_p)."""
    kp = rankine_passive_coefficient(phi)
    return kp * (surcharge * height + 0.5 * gamma * height * height) + 2.0 * cohesion * math.sqrt(kp) * height


def trap_fraction(lug_height: float, grain_size: float, trap_ratio: float) -> float:
    """chi: the fraction of the shear carried through trapped soil (module docstring), 0 for a wheel
    without lugs, 1 for lugs taller than ``trap_ratio`` grains (a soil of grain size 0 traps always)."""
    if lug_height <= 0.0:
        return 0.0
    if grain_size <= 0.0:
        return 1.0
    return min(max((lug_height / grain_size - LUG_TRAP_MIN) / (trap_ratio - LUG_TRAP_MIN), 0.0), 1.0)


@dataclass(frozen=True)
class WheelGeometry:
    """A lugged wheel (m): ``radius`` to the lug tips, ``width``, ``lug_height`` above the rim (0: a
    smooth rim) and ``lug_count``."""

    radius: float
    width: float
    lug_height: float = 0.0
    lug_count: int = 0

    def __post_init__(self) -> None:
        if not (self.radius > 0.0 and self.width > 0.0):
            raise ValueError(f"wheel: radius and width must be > 0 m, got {self.radius}, {self.width}")
        if not 0.0 <= self.lug_height < self.radius:
            raise ValueError(f"wheel: lug_height must be in [0, radius), got {self.lug_height} m")
        if self.lug_count < 0 or (self.lug_height > 0.0) != (self.lug_count > 0):
            raise ValueError(f"wheel: lug_count {self.lug_count} and lug_height {self.lug_height} m must both "
                             "be > 0 (lugs) or both 0 (a smooth rim)")

    @property
    def rim_radius(self) -> float:
        return self.radius - self.lug_height


@dataclass(frozen=True)
class ContactGeometry:
    """What the kernels take for one wheel on one soil (module docstring): the ``radius`` (m) the
    stresses act on, r_rim + lambda h_g; the trapped fraction ``chi``; the lugs' untrapped height
    ``lug_protrusion`` e (m); ``lugs_per_radian`` N / (2 pi); and lambda (``lug_effect``)."""

    radius: float
    chi: float
    lug_protrusion: float
    lugs_per_radian: float
    lug_effect: float

    def record(self) -> np.ndarray:
        """The wheel record of the kernels: (chi, e, N / 2 pi)."""
        return np.array([self.chi, self.lug_protrusion, self.lugs_per_radian])


def contact_geometry(wheel: WheelGeometry, params: SoilParams, grousers: bool = True) -> ContactGeometry:
    """The contact geometry of ``wheel`` on soil ``params`` (module docstring); ``grousers`` False
    gives the cylinder through the lug tips with the soil's own strength and no lug thrust."""
    if not grousers:
        return ContactGeometry(wheel.radius, 1.0, 0.0, 0.0, 1.0)
    chi = trap_fraction(wheel.lug_height, params.grain_size, params.lug_trap_ratio)
    e = (1.0 - chi) * wheel.lug_height
    per_rad = wheel.lug_count / (2.0 * math.pi)
    phi = params.friction_angle
    tan_phi, tan_delta = math.tan(phi), math.tan(params.interface_friction_ratio * phi)
    lugs = min(per_rad * rankine_passive_coefficient(phi) * e / wheel.rim_radius, max(tan_phi - tan_delta, 0.0))
    share = lugs / (tan_delta + lugs) if tan_delta + lugs > 0.0 else 0.0
    lam = chi + (1.0 - chi) * share
    return ContactGeometry(wheel.rim_radius + lam * wheel.lug_height, chi, e, per_rad, lam)
