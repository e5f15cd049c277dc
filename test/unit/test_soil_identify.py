"""The steady single-corner balance and `calibrate soil` (eels_gz.soil.identify): the slip it finds balances
the slope, slip is measured as seed 004 measures it (nominal radius), and K identified from a flat-ground
slip gives it back. A made-up soil, not a shipped set: the seed-004 sets are predictions' inputs, checked in
test_soil_sets.py, and their K does not come from this identification (issue 44)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from click.testing import CliRunner

from eels_gz import registry
from eels_gz.cli import main
from eels_gz.description.xacro_loader import process_xacro
from eels_gz.errors import ConfigError, DescriptionError
from eels_gz.soil.grousers import contact_geometry
from eels_gz.soil.identify import (BISECTIONS, GRAVITY, MAX_SLIP, corner_slip, drawbar_pull, identify_shear_modulus,
                                   measured_slip, rover_corner, slope_slip)
from eels_gz.soil.params import SoilParams
from eels_gz.soil.wong_reece import pack_soil

SOIL = SoilParams(k_c=500.0, k_phi=1.5e6, n=1.0, cohesion=300.0, friction_angle_deg=36.0, shear_modulus_K=0.01,
                  c1=0.4, c2=0.3, slip_sinkage_n1=0.4, interface_friction_ratio=0.7, grain_size=0.002)


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def corner(wheels: str):
    entry = registry.robot("archimede")
    return rover_corner(process_xacro(entry.path, entry.args(None, wheels=wheels, soil="eac1a", gazebo="true")))


@pytest.mark.parametrize("wheels", ("low_grousers", "high_grousers"))
@pytest.mark.parametrize("slope", (0.0, 5.0, 10.0))
def test_the_steady_slip_balances_the_slope(wheels, slope):
    """At the returned slip the drawbar pull equals W sin(slope) under the load W cos(slope). The slip is
    bisected to MAX_SLIP / 2^BISECTIONS; the pull can differ by at most dDP/ds times that (dDP/ds < W / 0.01
    here: the pull rises by less than W over any 1 % of slip), so 1e-9 N is generous."""
    c = corner(wheels)
    g = contact_geometry(c.wheel, SOIL)
    packed = pack_soil(SOIL, GRAVITY)
    s = slope_slip(packed, g.radius, c.wheel.width, c.weight, slope, g.record())
    assert s is not None and 0.0 < s < MAX_SLIP
    a = math.radians(slope)
    tol = c.weight / 0.01 * MAX_SLIP / 2 ** BISECTIONS + 1e-9
    assert drawbar_pull(packed, g.radius, c.wheel.width, c.weight * math.cos(a), s, g.record()) == \
        pytest.approx(c.weight * math.sin(a), abs=tol)
    assert corner_slip(SOIL, c, slope) == pytest.approx(measured_slip(s, g.radius, c.nominal_radius), abs=1e-15)


def test_with_slip_sinkage_the_least_steady_slip_is_found():
    """Slip-sinkage makes the pull peak (here near s = 0.7 on the low-grouser wheel) and fall as the wheel digs
    in: the balance is the first slip that pulls enough, where the pull still rises with slip (a stable
    slip), found although the pull at MAX_SLIP is below the peak."""
    c = corner("low_grousers")
    g = contact_geometry(c.wheel, SOIL)
    packed = pack_soil(SOIL, GRAVITY)
    width, w = c.wheel.width, c.weight

    def pull(s, a):
        return drawbar_pull(packed, g.radius, width, w * math.cos(a), s, g.record())

    a = math.asin(3.0 / w)  # a pull of 3 N, below the peak and below the pull at MAX_SLIP
    assert pull(0.7, a) > 3.0 and pull(MAX_SLIP, a) < pull(0.7, a)
    s = slope_slip(packed, g.radius, width, w, math.degrees(a), g.record())
    assert s < 0.7 and pull(s, a) == pytest.approx(3.0, abs=1e-6)
    assert pull(s + 0.01, a) > pull(s, a)


def test_slip_is_measured_with_the_nominal_radius():
    """s_R = 1 - (1 - s)(r_c / R): a wheel rolling on a radius below its nominal one shows slip with none in the
    soil (the low-grouser wheel's rim and lugs, 82.3 mm at most, under Table 1's 85 mm)."""
    c = corner("low_grousers")
    assert (c.nominal_radius, c.wheel.radius, c.wheel.lug_height, c.wheel.lug_count) == (0.085, 0.0823, 0.0018, 16)
    assert measured_slip(0.0, 0.081, 0.085) == pytest.approx(4.0 / 85.0, rel=1e-12)
    assert measured_slip(0.2, 0.085, 0.085) == pytest.approx(0.2, rel=1e-12)
    assert measured_slip(1.0, 0.081, 0.085) == 1.0
    assert corner("high_grousers").nominal_radius == corner("high_grousers").wheel.radius == 0.093


def test_a_wheel_that_cannot_climb_is_none_and_more_k_slips_more():
    c = corner("low_grousers")
    assert corner_slip(SOIL, c, 60.0) is None  # tan 60 = 1.7 > any soil's pull ratio here
    flat = [corner_slip(replace(SOIL, shear_modulus_K=k), c, 0.0) for k in (0.002, 0.005, 0.01, 0.02)]
    assert all(x < y for x, y in zip(flat, flat[1:])), flat  # the monotonicity the identification's bisection needs


@pytest.mark.parametrize("target", (0.07, 0.15))
def test_the_identified_k_gives_the_target_slip(target):
    """The inverse: K is bisected in log K to a relative 1e-6; the flat slip is about proportional to K
    here (linear Janosi branch), so it lands within about 1e-6 x target of the target, plus the slip's
    own bisection: 1e-6 absolute covers both."""
    c = corner("high_grousers")
    k = identify_shear_modulus(SOIL, c, target)
    assert corner_slip(replace(SOIL, shear_modulus_K=k), c, 0.0) == pytest.approx(target, abs=1e-6)


def test_identification_errors_say_what_was_expected():
    c = corner("low_grousers")
    with pytest.raises(ConfigError, match=r"target slip 1\.2 must be in \(0, 0\.99\)"):
        identify_shear_modulus(SOIL, c, 1.2)
    with pytest.raises(ConfigError, match=r"flat-ground slip 0\.500 is not reached for K in \[0\.001, 0\.002\] m"):
        identify_shear_modulus(SOIL, c, 0.5, bounds=(0.001, 0.002))
    entry = registry.robot("archimede")
    with pytest.raises(DescriptionError, match="no soil_contact <wheel> elements"):
        rover_corner(process_xacro(entry.path, entry.args(None)), "archimede")


def test_calibrate_soil_command():
    ok = cli("calibrate", "soil", "dry_sand", "--wheels", "low_grousers", "--flat-slip", "0.1", "--json")
    assert ok.exit_code == 0, ok.output
    for key in ('"shear_modulus_K"', '"wheel_radius_m": 0.085', '"lug_height_m": 0.0018', '"lug_count": 16',
                '"contact_radius_m"'):
        assert key in ok.output
    bad = cli("calibrate", "soil", "no_such_soil", "--wheels", "low_grousers")
    assert bad.exit_code == 2 and "unknown soil parameter set 'no_such_soil'" in bad.output
    bad = cli("calibrate", "soil", "eac1a", "--wheels", "high_grousers", "--flat-slip", "1.5")
    assert bad.exit_code == 2 and "--flat-slip" in bad.output
    bad = cli("calibrate", "soil", "eac1a", "--wheels", "medium")
    assert bad.exit_code == 2 and "--wheels" in bad.output
