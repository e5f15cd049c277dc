"""Steady slip of one wheel on a slope, and the shear modulus K that gives a measured flat-ground slip.

The balance (issue 34; docs/soil.md): a wheel carrying a corner's weight W straight up a slope alpha
presses W cos(alpha) into the soil and must pull W sin(alpha). At each slip s the sinkage carries the
load (``solve_sinkage``), and the steady slip is the one at which the drawbar pull DP(s) equals
W sin(alpha): on flat ground DP(s) = 0, i.e. the thrust equals the compaction resistance. A single
wheel, no load transfer and no bulldozing; with its lugs (``eels_gz.soil.grousers``), on the radius
its stresses act on.

That slip is the kernel's, s = 1 - v / (omega r_c) with r_c the contact radius. Seed 004 measures
slip with the wheel's nominal radius R and the rover's tracked motion (§4.1 names the difference of
effective and nominal radius as an error), s_R = 1 - v / (omega R) = 1 - (1 - s)(r_c / R)
(:func:`measured_slip`): a wheel that rolls on a radius below its nominal one shows slip with none in
the soil.

``eels-gz calibrate soil`` (a tool: the campaign's soil sets do not come from it, issue 44) finds the
Janosi K at which a corner shows a given flat-ground slip, measured as the paper does. The
compaction resistance does not depend on K, and the shear that balances it grows as j / K for small
j, so the slip that balances it grows with K (monotonically; :func:`identify_shear_modulus` checks
the bracket).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from eels_gz.description.model import RobotModel
from eels_gz.errors import ConfigError, DescriptionError
from eels_gz.rover.from_urdf import soil_contact_wheels, wheel_radius
from eels_gz.soil.grousers import WheelGeometry, contact_geometry
from eels_gz.soil.params import SoilParams
from eels_gz.soil.wong_reece import GL_U, GL_W, pack_soil, solve_sinkage, wong_reece

GRAVITY = 9.80665  # m/s^2: seed 004's sandbox is on Earth
SEED_004_FLAT_SLIP = 0.05  # seed 004 §4.2: "a median of the slip around 5%" on flat soil, both setups
SEED_004_SLOPES = (0.0, 5.0, 10.0, 15.0, 20.0)  # deg: the sandbox's slopes (seed 004 §3.1.2, Figs. 12-14)
MAX_SLIP = 0.99  # the largest slip searched: a wheel that needs more cannot climb
BISECTIONS = 50  # slip resolution 0.99 / 2^50: far below any figure quoted
SCAN = 99  # slips scanned for the first that pulls enough (steps of 0.01): a peak narrower than that is missed


@dataclass(frozen=True)
class Corner:
    """One corner of a four-wheeled rover: the soil contact's ``wheel``, the rover's ``nominal_radius``
    (m; its odometry's, the paper's slip), the ``weight`` it carries (N) and the soil contact's
    ``grousers`` switch."""

    wheel: WheelGeometry
    nominal_radius: float
    weight: float
    grousers: bool = True


def rover_corner(urdf: str, source: str = "<urdf>") -> Corner:
    """A corner of a four-wheeled rover's URDF built with a soil set: its first soil wheel (the soil
    contact system's ``<wheel>``), that wheel link's collision radius, a quarter of the robot's weight."""
    model = RobotModel.from_urdf(urdf, source)
    wheels, grousers = soil_contact_wheels(model)
    if not wheels:
        raise DescriptionError(f"{source}: no soil_contact <wheel> elements; build the description with a soil set")
    w = wheels[0]
    geometry = WheelGeometry(w["radius"], w["width"], w["lug_height"], w["lug_count"])
    return Corner(geometry, wheel_radius(model, w["link"]), model.total_mass / 4.0 * GRAVITY, grousers)


def drawbar_pull(soil, radius: float, width: float, load: float, slip: float, wheel=None) -> float:
    """Drawbar pull (N) of a driven wheel (contact radius, width in m; ``wheel`` its record, None for
    the plain cylinder) at kernel slip ``slip`` with the sinkage that carries ``load`` (N); ``soil`` a
    packed record (``pack_soil``)."""
    h = solve_sinkage(load, radius, width, 1.0, 1.0 - slip, soil, GL_U, GL_W, wheel)
    return wong_reece(radius, width, h, 1.0, 1.0 - slip, 0.0, 0.0, soil, GL_U, GL_W, wheel)[1]


def slope_slip(soil, radius: float, width: float, weight: float, slope_deg: float, wheel=None) -> float | None:
    """The steady kernel slip at which DP = weight sin(slope) under the load weight cos(slope) (a
    fraction), 0.0 if the wheel pulls enough without slip, None if no slip up to ``MAX_SLIP`` pulls
    enough (it cannot climb). With slip-sinkage DP may peak below MAX_SLIP and fall (the wheel digs
    in), so the slips are scanned in ``SCAN`` steps for the first that pulls enough, and the crossing
    bisected below it: the least steady slip, the one a wheel speeding up from rest reaches."""
    a = math.radians(slope_deg)
    load, need = weight * math.cos(a), weight * math.sin(a)
    if drawbar_pull(soil, radius, width, load, 0.0, wheel) >= need:
        return 0.0
    lo = 0.0
    for k in range(1, SCAN + 1):
        hi = MAX_SLIP * k / SCAN
        if drawbar_pull(soil, radius, width, load, hi, wheel) >= need:
            break
        lo = hi
    else:
        return None
    for _ in range(BISECTIONS):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if drawbar_pull(soil, radius, width, load, mid, wheel) < need else (lo, mid)
    return 0.5 * (lo + hi)


def measured_slip(slip: float, contact_radius: float, nominal_radius: float) -> float:
    """The kernel slip ``slip`` (on ``contact_radius``) as seed 004 measures it, with the nominal radius:
    1 - (1 - s) r_c / R."""
    return 1.0 - (1.0 - slip) * contact_radius / nominal_radius


def corner_slip(params: SoilParams, corner: Corner, slope_deg: float, gravity: float = GRAVITY) -> float | None:
    """The steady slip of ``corner`` on soil ``params`` up ``slope_deg``, measured as seed 004 does
    (nominal radius); None when it cannot climb."""
    g = contact_geometry(corner.wheel, params, corner.grousers)
    s = slope_slip(pack_soil(params, gravity), g.radius, corner.wheel.width, corner.weight, slope_deg, g.record())
    return None if s is None else measured_slip(s, g.radius, corner.nominal_radius)


def identify_shear_modulus(params: SoilParams, corner: Corner, target: float, gravity: float = GRAVITY,
                           bounds: tuple[float, float] = (1e-4, 0.1)) -> float:
    """Janosi's K (m) at which ``corner`` shows the flat-ground slip ``target`` (a fraction, measured with
    its nominal radius), the other keys of ``params`` kept. Bisection in log K over ``bounds`` (0.1 mm to
    10 cm: the published range of K is about 1 mm to a few cm), to a relative 1e-6. Raises ConfigError
    when the target is outside what ``bounds`` can give."""
    if not 0.0 < target < MAX_SLIP:
        raise ConfigError(f"identify_shear_modulus: target slip {target!r} must be in (0, {MAX_SLIP})")

    def flat(k: float) -> float:
        slip = corner_slip(replace(params, shear_modulus_K=k), corner, 0.0, gravity)
        return MAX_SLIP if slip is None else slip

    lo, hi = bounds
    at_lo, at_hi = flat(lo), flat(hi)
    if not at_lo <= target <= at_hi:
        raise ConfigError(f"identify_shear_modulus: flat-ground slip {target:.3f} is not reached for K in "
                          f"[{lo}, {hi}] m (slip {at_lo:.3f} to {at_hi:.3f}); the wheel or the other soil keys "
                          "cannot give it")
    while hi / lo > 1.0 + 1e-6:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if flat(mid) < target else (lo, mid)
    return math.sqrt(lo * hi)
