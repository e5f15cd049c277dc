"""Steady slip of one wheel on a slope, and the shear modulus K that gives a measured flat-ground slip.

The balance (issue 34; docs/soil.md "Shear modulus K, identified"): a wheel carrying a corner's
weight W straight up a slope alpha presses W cos(alpha) into the soil and must pull W sin(alpha).
At each slip s the sinkage carries the load (``solve_sinkage``), and the steady slip is the one at
which the drawbar pull DP(s) equals W sin(alpha): on flat ground DP(s) = 0, i.e. the thrust equals
the compaction resistance. A single wheel, no load transfer and no bulldozing.

Janosi's K is published for neither of seed 004's soils. What the paper does publish is the slip on
flat ground, about 5 % for both setups (§4.2). The flat-ground slip is a direct reading of K: the
compaction resistance does not depend on K, and the shear that balances it grows as j / K for small
j, so the slip that balances it grows with K (monotonically; :func:`identify_shear_modulus` checks the
bracket). One rule for every soil set: K is the value at which the set's wheel slips ``target`` on
flat ground.
"""

from __future__ import annotations

import math
from dataclasses import replace

from eels_gz.errors import ConfigError, DescriptionError
from eels_gz.rover.from_urdf import soil_wheels_from_urdf, total_mass
from eels_gz.soil.params import SoilParams
from eels_gz.soil.wong_reece import GL_U, GL_W, pack_soil, solve_sinkage, wong_reece

GRAVITY = 9.80665  # m/s^2: seed 004's sandbox is on Earth
SEED_004_FLAT_SLIP = 0.05  # seed 004 §4.2: "a median of the slip around 5%" on flat soil, both setups
SEED_004_SLOPES = (0.0, 5.0, 10.0, 15.0, 20.0)  # deg: the sandbox's slopes (seed 004 §3.1.2, Figs. 12-14)
MAX_SLIP = 0.99  # the largest slip searched: a wheel that needs more cannot climb
BISECTIONS = 50  # slip resolution 0.99 / 2^50: far below any figure quoted


def rover_corner(urdf: str, source: str = "<urdf>") -> tuple[float, float, float]:
    """(radius m, width m, weight N) of one corner of a four-wheeled rover's URDF built with a soil set:
    its first soil wheel (the soil contact system's ``<wheel>``) and a quarter of the robot's weight."""
    wheels = soil_wheels_from_urdf(urdf, source)
    if not wheels:
        raise DescriptionError(f"{source}: no soil_contact <wheel> elements; build the description with a soil set")
    _, radius, width = wheels[0]
    return radius, width, total_mass(urdf, source) / 4.0 * GRAVITY


def drawbar_pull(soil, radius: float, width: float, load: float, slip: float) -> float:
    """Drawbar pull (N) of a driven wheel (radius, width in m) at ``slip`` with the sinkage that
    carries ``load`` (N); ``soil`` a packed record (``pack_soil``)."""
    h = solve_sinkage(load, radius, width, 1.0, 1.0 - slip, soil, GL_U, GL_W)
    return wong_reece(radius, width, h, 1.0, 1.0 - slip, 0.0, 0.0, soil, GL_U, GL_W)[1]


def slope_slip(soil, radius: float, width: float, weight: float, slope_deg: float) -> float | None:
    """The steady slip at which DP = weight sin(slope) under the load weight cos(slope) (a fraction),
    0.0 if the wheel pulls enough without slip, None if even ``MAX_SLIP`` pulls less (it cannot climb).
    DP grows with the slip on these soils (Wong-Reece, driving): bisection."""
    a = math.radians(slope_deg)
    load, need = weight * math.cos(a), weight * math.sin(a)
    lo, hi = 0.0, MAX_SLIP
    if drawbar_pull(soil, radius, width, load, hi) < need:
        return None
    if drawbar_pull(soil, radius, width, load, lo) >= need:
        return 0.0
    for _ in range(BISECTIONS):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if drawbar_pull(soil, radius, width, load, mid) < need else (lo, mid)
    return 0.5 * (lo + hi)


def identify_shear_modulus(params: SoilParams, radius: float, width: float, weight: float, target: float,
                           gravity: float = GRAVITY, bounds: tuple[float, float] = (1e-4, 0.1)) -> float:
    """Janosi's K (m) at which a wheel (radius, width in m) carrying ``weight`` (N) slips ``target``
    (a fraction) on flat ground, the other keys of ``params`` kept. Bisection in log K over ``bounds``
    (0.1 mm to 10 cm: the published range of K is about 1 mm to a few cm), to a relative 1e-6.
    Raises ConfigError when the target is outside what ``bounds`` can give."""
    if not 0.0 < target < MAX_SLIP:
        raise ConfigError(f"identify_shear_modulus: target slip {target!r} must be in (0, {MAX_SLIP})")

    def flat(k: float) -> float:
        slip = slope_slip(pack_soil(replace(params, shear_modulus_K=k), gravity), radius, width, weight, 0.0)
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
