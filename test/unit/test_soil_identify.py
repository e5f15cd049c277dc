"""Janosi's K identified from a flat-ground slip (eels_gz.soil.identify; issue 34): the steady-slip
balance it rests on, the inverse it computes, the seed-004 sets it fixed, and its errors."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from click.testing import CliRunner

from eels_gz import registry
from eels_gz.description.xacro_loader import process_xacro
from eels_gz.errors import ConfigError, DescriptionError
from eels_gz.soil.identify import (BISECTIONS, GRAVITY, MAX_SLIP, drawbar_pull, identify_shear_modulus, rover_corner,
                                   slope_slip)
from eels_gz.soil.params import load_soil_params
from eels_gz.soil.wong_reece import pack_soil
from eels_gz.cli import main

# seed 004's setups: the soil set and the wheel set it was driven with (config/sweeps/archimede_slopes.yaml)
def cli(*args: str):
    return CliRunner().invoke(main, list(args))


SETUPS = (("lava_gravel", "low_grousers"), ("eac1a", "high_grousers"))


def corner(wheels: str, soil: str) -> tuple[float, float, float]:
    entry = registry.robot("archimede")
    return rover_corner(process_xacro(entry.path, entry.args(None, wheels=wheels, soil=soil, gazebo="true")))


@pytest.mark.parametrize("soil, wheels", SETUPS)
@pytest.mark.parametrize("slope", (0.0, 10.0, 20.0))
def test_the_steady_slip_balances_the_slope(soil, wheels, slope):
    """At the returned slip the drawbar pull equals W sin(slope) under the load W cos(slope). The slip is
    bisected to MAX_SLIP / 2^BISECTIONS; the pull can differ by at most dDP/ds times that (dDP/ds < W / 0.01
    here: the pull rises by less than W over any 1 % of slip), so 1e-9 N is generous."""
    r, b, w = corner(wheels, soil)
    packed = pack_soil(load_soil_params(soil), GRAVITY)
    s = slope_slip(packed, r, b, w, slope)
    assert s is not None and 0.0 < s < MAX_SLIP
    a = math.radians(slope)
    assert drawbar_pull(packed, r, b, w * math.cos(a), s) == pytest.approx(w * math.sin(a),
                                                                          abs=w / 0.01 * MAX_SLIP / 2 ** BISECTIONS + 1e-9)


def test_a_wheel_that_cannot_climb_is_none_and_more_k_slips_more():
    r, b, w = corner("low_grousers", "lava_gravel")
    params = load_soil_params("lava_gravel")
    assert slope_slip(pack_soil(params, GRAVITY), r, b, w, 60.0) is None  # tan 60 = 1.7 > any soil's pull ratio here
    flat = [slope_slip(pack_soil(replace(params, shear_modulus_K=k), GRAVITY), r, b, w, 0.0) for k in (0.002, 0.005, 0.01, 0.02)]
    assert all(x < y for x, y in zip(flat, flat[1:])), flat  # the monotonicity the identification's bisection needs


@pytest.mark.parametrize("target", (0.02, 0.05, 0.15))
def test_the_identified_k_gives_the_target_slip(target):
    """The inverse: K is bisected in log K to a relative 1e-6; the flat slip is about proportional to K
    here (linear Janosi branch), so it lands within about 1e-6 x target of the target, plus the slip's
    own bisection: 1e-6 absolute covers both."""
    r, b, w = corner("high_grousers", "eac1a")
    params = load_soil_params("eac1a")
    k = identify_shear_modulus(params, r, b, w, target)
    assert slope_slip(pack_soil(replace(params, shear_modulus_K=k), GRAVITY), r, b, w, 0.0) == pytest.approx(target, abs=1e-6)


@pytest.mark.parametrize("soil, wheels", SETUPS)
def test_the_seed_004_sets_carry_their_identified_k(soil, wheels):
    """config/soil/<set>.yaml's shear_modulus_K is the identification from seed 004's flat 5 %, printed to
    three significant digits: within half a unit of the third digit. A change of the set's other keys or
    of the wheels' xacro geometry fails here until K is identified again (`eels-gz calibrate soil`)."""
    r, b, w = corner(wheels, soil)
    params = load_soil_params(soil)
    k = identify_shear_modulus(params, r, b, w, 0.05)
    half_unit = 0.5 * 10.0 ** (math.floor(math.log10(k)) - 2)
    assert params.shear_modulus_K == pytest.approx(k, abs=half_unit)


def test_identification_errors_say_what_was_expected():
    r, b, w = corner("low_grousers", "lava_gravel")
    params = load_soil_params("lava_gravel")
    with pytest.raises(ConfigError, match=r"target slip 1\.2 must be in \(0, 0\.99\)"):
        identify_shear_modulus(params, r, b, w, 1.2)
    with pytest.raises(ConfigError, match=r"flat-ground slip 0\.500 is not reached for K in \[0\.001, 0\.002\] m"):
        identify_shear_modulus(params, r, b, w, 0.5, bounds=(0.001, 0.002))
    entry = registry.robot("archimede")
    with pytest.raises(DescriptionError, match="no soil_contact <wheel> elements"):
        rover_corner(process_xacro(entry.path, entry.args(None)), "archimede")


def test_calibrate_soil_command():
    ok = cli("calibrate", "soil", "lava_gravel", "--wheels", "low_grousers", "--json")
    assert ok.exit_code == 0, ok.output
    assert '"shear_modulus_K": 0.0056' in ok.output
    bad = cli("calibrate", "soil", "no_such_soil", "--wheels", "low_grousers")
    assert bad.exit_code == 2 and "unknown soil parameter set 'no_such_soil'" in bad.output
    bad = cli("calibrate", "soil", "eac1a", "--wheels", "high_grousers", "--flat-slip", "1.5")
    assert bad.exit_code == 2 and "--flat-slip" in bad.output
    bad = cli("calibrate", "soil", "eac1a", "--wheels", "medium")
    assert bad.exit_code == 2 and "--wheels" in bad.output
