"""The wheel rig's kinematics (eels_gz.soil.rig): the carriage speed gives back the commanded slip under the
standard piecewise definition, and the averages carry the wheel_rig contract keys."""

from __future__ import annotations

import pytest

from eels_gz.soil.rig import RigAverages, carriage_speed


@pytest.mark.parametrize("slip", [-0.5, -0.1, 0.0, 0.05, 0.9])
def test_carriage_speed_gives_the_commanded_slip(slip):
    r, omega = 0.093, 2.4
    v = carriage_speed(r, omega, slip)
    back = (r * omega - v) / max(r * omega, v)  # driving: / (r omega); braking: / v
    assert back == pytest.approx(slip, abs=1e-12)


def test_slip_at_or_below_minus_one_is_refused():
    with pytest.raises(ValueError, match="slip must be > -1"):
        carriage_speed(0.085, 1.2, -1.0)


def test_averages_and_contract_keys():
    avg = RigAverages()
    assert avg.metrics(0.2, 16.0, 0.085, 0.07) == {}
    avg.add(1.0, 0.2, 0.010)
    avg.add(3.0, 0.4, 0.012)
    m = avg.metrics(0.2, 16.0, 0.085, 0.07)
    assert m == {"drawbar_pull_N": 2.0, "sinkage_m": pytest.approx(0.011), "wheel_torque_Nm": pytest.approx(0.3),
                 "normal_load_N": 16.0, "slip": 0.2, "wheel_radius_m": 0.085, "wheel_width_m": 0.07}
