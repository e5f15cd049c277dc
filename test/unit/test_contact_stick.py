"""The stick-slip (bristle) friction of eels_gz/contact/stick.py.

- Sliding steadily, the bristle lines up with the slip and the force is
  Eq. 6 exactly (unregulated), with ``|e_v| = 1`` the isotropic law; checked
  against laws.friction_force with v_eps = 0 to 1e-9 relative.
- At rest under a tangential load below the friction limit a point mass
  holds: its slip stays below the bristle length z0 (the elastic deflection
  F / k_t with k_t = mu |e_v| F_n / z0 across the thread), with no creep; the
  regulator at the same load creeps at v = v_eps F / (mu |e_v| F_n) (closed
  form of the viscous regime), which is what the bristle removes.
- A load above the limit slides (no stiction beyond Eq. 6).
- Rolling resistance (point_terms.py): the patch's sideways travel zeta
  sets the normal force's offset rho = b zeta / z0 from the contact line,
  a moment F_n rho along the screw axis: elastic below z0, b F_n beyond it
  whichever way the patch travels, and nothing while the screw spins in
  place or screws along its axis (the propulsion closed forms stay as they
  are). A point that leaves contact forgets its travel.
- A missing or ill-shaped state array, or a bad dt, is a ContactError.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.contact.laws import ev_norm_of_load, friction_force
from eels_gz.contact.params import ContactParams
from eels_gz.contact.screw_points import ScrewGeometry, ScrewPointSet
from eels_gz.contact.screw_wrenches import new_contact_state, screw_wrenches
from eels_gz.errors import ContactError

R, L, ALPHA = 0.09, 0.26, 0.35  # m, m, rad
Z0 = 0.002  # m, bristle length under test
DEPTH = 0.001  # m, the screw's bottom line 1 mm into the ground


def plane(points: np.ndarray):
    return points[:, 2].copy(), np.tile([0.0, 0.0, 1.0], (len(points), 1))


def params(stick: float, v_eps: float = 0.05) -> ContactParams:
    return ContactParams(0.15, 3.0, 0.04, 25000.0, 400.0, v_eps, 4, 1, stick)


def one_screw():
    ps = ScrewPointSet.from_geometries([ScrewGeometry(R, L, ALPHA, 1)], 4, 1)
    pos = np.array([[0.0, 0.0, R - DEPTH]])
    return ps, pos, np.eye(3)[None]


@pytest.mark.parametrize("direction", [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.6, 0.8, 0.0)])
def test_steady_sliding_is_eq6_unregulated(direction):
    ps, pos, rot = one_screw()
    p = params(Z0)
    stick = new_contact_state(ps)
    v = 0.01 * np.array([direction])  # m/s: a 1 cm/s slide, 5x slower than v_eps
    for _ in range(400):  # 0.4 s at 1 ms: the 2 mm bristle is saturated after 0.2 s of 1 cm/s
        w = screw_wrenches(ps, p, pos, rot, v, np.zeros((1, 3)), plane, stick=stick, dt=1e-3)
    fn = w.normal_force[0]
    ev = float(ev_norm_of_load(fn.sum(), p.ev_a, p.ev_b))
    # across-thread direction of the bottom points: e_v = cos(a) x - h sin(a) e_theta, e_theta = x cross (-z) = +y
    e = np.array([math.cos(ALPHA), -math.sin(ALPHA), 0.0])
    expected = sum(friction_force(v[0], e, p.mu, ev, f, 0.0) for f in fn)
    tangential = w.force[0] - w.force[0] @ np.array([0, 0, 1.0]) * np.array([0, 0, 1.0])
    assert np.allclose(tangential, expected, rtol=1e-9, atol=1e-9 * np.linalg.norm(expected))
    # the regulator at the same slip gives less: (1 + (v_eps/v)^2)^-1/2 of it along the slip
    w_reg = screw_wrenches(ps, params(0.0), pos, rot, v, np.zeros((1, 3)), plane)
    assert np.linalg.norm(w_reg.force[0, :2]) < 0.5 * np.linalg.norm(expected)


def test_isotropic_when_ev_norm_is_one():
    ps, pos, rot = one_screw()
    p = ContactParams(0.15, 1.0, 0.0, 25000.0, 400.0, 0.05, 4, 1, Z0)
    stick = new_contact_state(ps)
    v = np.array([[0.003, 0.004, 0.0]])
    for _ in range(2000):
        w = screw_wrenches(ps, p, pos, rot, v, np.zeros((1, 3)), plane, stick=stick, dt=1e-3)
    f = w.force[0, :2]
    # antiparallel to the slip, magnitude mu F_n
    assert np.allclose(f / np.linalg.norm(f), -v[0, :2] / np.linalg.norm(v[0, :2]), atol=1e-12)
    assert np.linalg.norm(f) == pytest.approx(p.mu * w.normal_force.sum(), rel=1e-12)


def _hold(p: ContactParams, load: float, steps: int, mass: float = 5.0, dt: float = 1e-3) -> float:
    """A screw (as a point mass ``mass`` kg, no spin) pushed along its axis (across its threads) by
    ``load`` N, semi-implicit Euler like the engine; returns the distance it has moved (m)."""
    ps, pos, rot = one_screw()
    stick = new_contact_state(ps)
    x, v = 0.0, 0.0
    for _ in range(steps):
        w = screw_wrenches(ps, p, pos + [[x, 0.0, 0.0]], rot, np.array([[v, 0.0, 0.0]]), np.zeros((1, 3)),
                           plane, stick=stick, dt=dt)
        v += dt * (load + w.force[0, 0]) / mass
        x += dt * v
    return x


def test_a_load_within_the_limit_is_held_without_creep():
    p = params(Z0)
    fn = p.k * DEPTH * 4  # N, the four bottom points at 1 mm
    ev = float(ev_norm_of_load(fn, p.ev_a, p.ev_b))
    # along the axis the across-thread share is cos(alpha)^2: limit mu fn (1 + (ev - 1) cos^2 a)
    limit = p.mu * fn * (1.0 + (ev - 1.0) * math.cos(ALPHA) ** 2)
    load = 0.5 * limit
    moved_1s = _hold(p, load, 1000)
    moved_3s = _hold(p, load, 3000)
    assert abs(moved_1s) < Z0  # the elastic deflection only, below the bristle length
    assert abs(moved_3s - moved_1s) < 1e-6  # and no creep: under 1 um in 2 s
    # the regulator creeps at the speed where u = v / sqrt(v^2 + v_eps^2) = load / limit = 1/2
    creep = _hold(params(0.0), load, 3000) - _hold(params(0.0), load, 1000)
    v_reg = p.v_eps * 0.5 / math.sqrt(1.0 - 0.25)  # u = v / sqrt(v^2 + v_eps^2) = 1/2
    assert creep == pytest.approx(2.0 * v_reg, rel=0.05)


def test_a_load_beyond_the_limit_slides():
    p = params(Z0)
    fn = p.k * DEPTH * 4
    ev = float(ev_norm_of_load(fn, p.ev_a, p.ev_b))
    limit = p.mu * fn * (1.0 + (ev - 1.0) * math.cos(ALPHA) ** 2)
    # 1.5x the limit on 5 kg: after the bristle saturates it accelerates at about 0.5 limit / m
    moved = _hold(p, 1.5 * limit, 1000)
    assert moved > 0.3 * 0.5 * (0.5 * limit / 5.0) * 1.0 ** 2


def test_bad_bristle_arrays_are_refused():
    ps, pos, rot = one_screw()
    p = params(Z0)
    z = np.zeros((1, 3))
    with pytest.raises(ContactError, match="needs 'stick'"):
        screw_wrenches(ps, p, pos, rot, z, z, plane)
    with pytest.raises(ContactError, match="needs 'stick'"):
        screw_wrenches(ps, p, pos, rot, z, z, plane, stick=np.zeros((1, 4, 3)), dt=1e-3)  # the old bristle-only shape
    with pytest.raises(ContactError, match="'dt' must be"):
        screw_wrenches(ps, p, pos, rot, z, z, plane, stick=new_contact_state(ps), dt=float("nan"))


B = 0.0005  # m, rolling arm under test


def _sideways(p: ContactParams, path: list[float], spin: float = 0.0, dt: float = 1e-3):
    """The screw's axis led sideways (world y) at each speed of ``path`` (m/s, one step each), spinning
    at ``spin`` rad/s about its axis; returns the last wrench and the state."""
    ps, pos, rot = one_screw()
    stick = new_contact_state(ps)
    y = 0.0
    for v in path:
        w = screw_wrenches(ps, p, pos + [[0.0, y, 0.0]], rot, np.array([[0.0, v, 0.0]]),
                           np.array([[spin, 0.0, 0.0]]), plane, stick=stick, dt=dt)
        y += v * dt
    return w, stick


def _rolling_moment(w) -> float:
    """Torque about the axis beyond the point forces' r x F (N m)."""
    offsets = w.points[0] - (w.points[0].mean(axis=0) - [0.0, 0.0, -R])  # points relative to the link origin
    return float(w.torque[0, 0] - np.cross(offsets, w.point_force[0]).sum(axis=0)[0])


def test_the_seat_is_elastic_below_z0():
    p = ContactParams(0.15, 3.0, 0.04, 25000.0, 400.0, 0.05, 4, 1, Z0, roll_arm=B)
    # 0.6 z0 of sideways travel in 60 steps at 0.02 m/s, then 50 steps at rest
    w, stick = _sideways(p, [0.6 * Z0 / 0.06] * 60 + [0.0] * 50)
    fn = w.normal_force[0].sum()
    np.testing.assert_allclose(stick[0, :, 3], 0.6 * Z0, rtol=1e-9)
    # patch displaced +y: the normal force sits at rho = b zeta / z0 on the +y side, a moment +x
    assert _rolling_moment(w) == pytest.approx(B * fn * 0.6, rel=1e-9)


@pytest.mark.parametrize("speed", [0.05, -0.05])
def test_travel_beyond_z0_meets_the_full_rolling_resistance(speed):
    p = ContactParams(0.15, 3.0, 0.04, 25000.0, 400.0, 0.05, 4, 1, Z0, roll_arm=B)
    w, stick = _sideways(p, [speed] * 100)  # 5 mm of travel, 2.5 z0
    np.testing.assert_allclose(stick[0, :, 3], math.copysign(Z0, speed), rtol=1e-12)
    assert _rolling_moment(w) == pytest.approx(math.copysign(B, speed) * w.normal_force[0].sum(), rel=1e-9)
    # the regulated law: rho = b v / sqrt(v^2 + v_eps^2)
    reg = ContactParams(0.15, 3.0, 0.04, 25000.0, 400.0, 0.05, 4, 1, roll_arm=B)
    w_reg, _ = _sideways(reg, [speed])
    assert _rolling_moment(w_reg) == pytest.approx(
        B * w_reg.normal_force[0].sum() * speed / math.hypot(speed, reg.v_eps), rel=1e-9)


def test_spinning_in_place_and_screwing_leave_the_seat_alone():
    p = ContactParams(0.15, 3.0, 0.04, 25000.0, 400.0, 0.05, 4, 1, Z0, roll_arm=B)
    ps, pos, rot = one_screw()
    stick = new_contact_state(ps)
    for _ in range(200):  # spin at 3 rad/s while advancing along the axis at 0.05 m/s
        w = screw_wrenches(ps, p, pos, rot, np.array([[0.05, 0.0, 0.0]]), np.array([[3.0, 0.0, 0.0]]), plane,
                           stick=stick, dt=1e-3)
    assert np.all(stick[0, :, 3] == 0.0)
    assert _rolling_moment(w) == pytest.approx(0.0, abs=1e-12)


def test_a_point_out_of_contact_forgets_its_travel():
    p = ContactParams(0.15, 3.0, 0.04, 25000.0, 400.0, 0.05, 4, 1, Z0, roll_arm=B)
    ps, pos, rot = one_screw()
    stick = new_contact_state(ps)
    screw_wrenches(ps, p, pos, rot, np.array([[0.0, 0.5, 0.0]]), np.zeros((1, 3)), plane, stick=stick, dt=1e-3)
    assert np.all(stick[0, :, 3] > 0.0)
    screw_wrenches(ps, p, pos + [[0.0, 0.0, 0.01]], rot, np.zeros((1, 3)), np.zeros((1, 3)), plane,
                   stick=stick, dt=1e-3)
    assert np.all(stick == 0.0)
