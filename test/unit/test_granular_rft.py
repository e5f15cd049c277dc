"""Granular RFT (eels_gz.granular.rft, .screw) against closed forms.

The generic fit's coefficients are written out in the formulas below as the
paper prints them (A00 + A10 + B11 + B01 + B-11 = 1 for a plate pushed down;
-C11 + C01 - C-11 for a vertical plate dragged). The stress is linear in
depth and the elements are midpoints of equal depth bands, so the midpoint
sums equal the depth integrals exactly: the tolerances are float rounding
(REL = 1e-12 relative). The regularised speed factor |v|/sqrt(|v|^2 + v_reg^2)
is part of each closed form, not a tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.contact.screw_points import ScrewGeometry
from eels_gz.granular.params import GranularParams
from eels_gz.granular.rft import GENERIC, alpha, element_forces, plane_wrench
from eels_gz.granular.screw import GranularScrewStep, screw_surface
from eels_gz.terrain.primitives import Plane

REL = 1e-12
ZETA = 3.05e6  # N/m^3
V_REG = 0.005  # m/s
A00, A10, B11, B01, BM11, C11, C01, CM11, D10 = GENERIC


def speed_factor(v: float) -> float:
    return v / math.sqrt(v * v + V_REG * V_REG)


def forces(normals, areas, vel, depth):
    return element_forces(normals, areas, vel, depth, ZETA, V_REG)


def test_the_generic_fit_is_normalised_and_mirror_symmetric():
    az, ax = alpha(0.0, 0.5 * math.pi)
    assert az == pytest.approx(A00 + A10 + B11 + B01 + BM11, rel=REL) and az == pytest.approx(1.0, abs=1e-12)
    assert ax == pytest.approx(0.0, abs=1e-12)
    rng = np.random.default_rng(1)
    beta, gamma = rng.uniform(-math.pi, math.pi, 200), rng.uniform(-math.pi, math.pi, 200)
    az, ax = alpha(beta, gamma)
    mz, mx = alpha(-beta, math.pi - gamma)
    np.testing.assert_allclose(mz, az, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mx, -ax, rtol=0, atol=1e-12)


def test_horizontal_plate_pushed_down_at_depth():
    """F_z = zeta alpha_z(0, pi/2) A |z| (the downward face leads; alpha_z = 1), no horizontal force."""
    n, area, depth, v = 25, 0.2 * 0.1, 0.04, 0.3
    f = forces(np.tile([0.0, 0.0, -1.0], (n, 1)), area / n, [0.0, 0.0, -v], depth)
    total = f.sum(axis=0)
    assert total[2] == pytest.approx(ZETA * 1.0 * area * depth * speed_factor(v), rel=REL)
    assert abs(total[0]) + abs(total[1]) < REL * total[2]
    # the upper face trails (moves away from the grains above it): nothing
    assert np.all(forces(np.tile([0.0, 0.0, 1.0], (n, 1)), area / n, [0.0, 0.0, -v], depth) == 0.0)


@pytest.mark.parametrize("heading", [0.0, 0.7, -2.4])
def test_vertical_plate_dragged_horizontally(heading):
    """A plate of width w from the surface to depth H, its face along the drag: F = zeta alpha_x w H^2/2
    back along the drag, with alpha_x(pi/2, 0) = -C11 + C01 - C-11, and a lift zeta (A00 - A10) w H^2/2;
    the same at any heading (the model has no preferred horizontal direction)."""
    w, height, v, rows = 0.1, 0.06, 0.2, 30
    e = np.array([math.cos(heading), math.sin(heading), 0.0])
    depth = (np.arange(rows) + 0.5) * height / rows
    f = forces(np.tile(e, (rows, 1)), w * height / rows, v * e, depth).sum(axis=0)
    half = w * height**2 / 2 * ZETA * speed_factor(v)
    np.testing.assert_allclose(f[:2], -(-C11 + C01 - CM11) * half * e[:2], rtol=REL, atol=REL * half)
    assert f[2] == pytest.approx((A00 - A10) * half, rel=REL)


def test_a_dragged_plate_s_moment_about_the_surface_and_a_surface_above_it():
    """The vertical plate of the drag test, its elements at their positions under a surface at z = h: the force
    is the closed form's, and its moment about the surface point above the plate is that of a load growing
    with depth, M_y = zeta alpha_x w H^3/3 (lift has no arm: it acts on the plate's plane). The midpoint sum
    of d^2 undershoots H^3/3 by H^3/(12 n^2): relative tolerance 1/(4 n^2) plus rounding. The elements above
    the surface (raised by the surface's height) feel nothing."""
    w, height, v, rows, h = 0.1, 0.06, 0.2, 30, 0.4
    depth = (np.arange(rows) + 0.5) * height / rows
    points = np.stack([np.zeros(rows), np.zeros(rows), h - depth], axis=1)
    normals = np.tile([1.0, 0.0, 0.0], (rows, 1))
    f, m = plane_wrench(points, normals, w * height / rows, [v, 0.0, 0.0], h, ZETA, V_REG, about=(0.0, 0.0, h))
    ax = -C11 + C01 - CM11
    scale = ZETA * speed_factor(v) * w
    assert f[0] == pytest.approx(-ax * scale * height**2 / 2, rel=REL)
    assert m[1] == pytest.approx(ax * scale * height**3 / 3, rel=1 / (4 * rows**2) + REL)
    assert m[1] < ax * scale * height**3 / 3  # the midpoint sum's sign of error
    assert abs(m[0]) + abs(m[2]) < REL * abs(m[1])
    f_low, _ = plane_wrench(points, normals, w * height / rows, [v, 0.0, 0.0], h - height, ZETA, V_REG)
    assert np.all(f_low == 0.0)


def test_a_plate_sliding_along_its_own_plane_meets_the_lateral_stress():
    """A vertical plate (normal +y) dragged edge-on along x, from the surface to depth H: the velocity is all
    across the element's plane (along e1), so the force is the lateral stress alpha_y = alpha_x(0, 0)
    = C11 + C01 + C-11 (Treers et al.'s simplest form) back along x, F = zeta alpha_y w H^2/2, and nothing
    else; dragged obliquely, the in-plane and lateral parts add with the velocity's components as weights."""
    w, height, v, rows = 0.1, 0.06, 0.2, 30
    depth = (np.arange(rows) + 0.5) * height / rows
    normals = np.tile([0.0, 1.0, 0.0], (rows, 1))
    f = forces(normals, w * height / rows, [v, 0.0, 0.0], depth).sum(axis=0)
    half = w * height**2 / 2 * ZETA * speed_factor(v)
    np.testing.assert_allclose(f, [-(C11 + C01 + CM11) * half, 0.0, 0.0], rtol=REL, atol=REL * half)
    c, s = math.cos(0.4), math.sin(0.4)
    g = forces(normals, w * height / rows, [v * c, v * s, 0.0], depth).sum(axis=0)
    np.testing.assert_allclose(g, [-(C11 + C01 + CM11) * half * c, -(-C11 + C01 - CM11) * half * s,
                                   (A00 - A10) * half * s], rtol=REL, atol=REL * half)


def mirrored(vectors, axis):
    out = np.array(vectors, dtype=float, copy=True)
    out[..., axis] *= -1.0
    return out


def test_mirror_images_feel_mirrored_forces():
    """Mirroring the elements in a vertical plane (x -> -x or y -> -y: beta -> -beta, gamma -> pi - gamma
    in the element's plane) mirrors the force; rotating them about z rotates it."""
    rng = np.random.default_rng(7)
    m = 500
    nrm = rng.normal(size=(m, 3))
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
    vel = rng.normal(scale=0.2, size=(m, 3))
    area, depth = rng.uniform(1e-4, 1e-3, m), rng.uniform(0.0, 0.1, m)
    f = forces(nrm, area, vel, depth)
    assert np.count_nonzero(np.abs(f).sum(axis=1)) > m // 3  # a good share of the elements lead
    for axis in (0, 1):
        fm = forces(mirrored(nrm, axis), area, mirrored(vel, axis), depth)
        np.testing.assert_allclose(fm, mirrored(f, axis), rtol=1e-9, atol=1e-9 * np.abs(f).max())
    c, s = math.cos(1.1), math.sin(1.1)
    rz = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    fr = forces(nrm @ rz.T, area, vel @ rz.T, depth)
    np.testing.assert_allclose(fr, f @ rz.T, rtol=1e-9, atol=1e-9 * np.abs(f).max())


def test_zero_above_the_surface_and_at_rest_continuous():
    nrm = np.tile([0.0, 0.0, -1.0], (3, 1))
    assert np.all(forces(nrm, 1e-3, [0.0, 0.0, -0.5], [0.0, -0.01, -1.0]) == 0.0)
    # at rest: no direction, no force; slow: the regularised share of the full one
    assert np.all(forces(nrm[:1], 1e-3, [0.0, 0.0, 0.0], [0.05]) == 0.0)
    slow = forces(nrm[:1], 1e-3, [0.0, 0.0, -1e-4], [0.05])[0, 2]
    assert slow == pytest.approx(ZETA * 1e-3 * 0.05 * speed_factor(1e-4), rel=REL)
    # a face turning from trailing to leading loads continuously (the leading ramp)
    angles = np.linspace(-0.2, 0.2, 81)
    n_tilt = np.stack([np.sin(angles), np.zeros_like(angles), -np.cos(angles)], axis=1)
    f = forces(n_tilt, 1e-3, [0.0, 0.0, 0.0] + np.array([0.3, 0.0, 0.0]), 0.05)  # dragged along x
    jumps = np.abs(np.diff(np.linalg.norm(f, axis=1)))
    assert jumps.max() < 0.1 * np.linalg.norm(f, axis=1).max()


def half_buried_screw(hand: int, omega: float, depth_axis: float = 0.0):
    geom = ScrewGeometry(radius=0.09, length=0.13, lead_angle=0.35, handedness=hand, name="s")
    params = GranularParams(zeta=ZETA, blade_elements_per_turn=72)
    step = GranularScrewStep([geom], [0.065], params, Plane(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0)))
    thrusts = []
    for phase in np.linspace(0.0, 2.0 * math.pi, 24, endpoint=False):  # the screw at 24 spin angles
        c, s = math.cos(phase), math.sin(phase)
        rot = np.array([[[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]]])
        out = step(np.array([[0.0, 0.0, depth_axis]]), rot, np.zeros((1, 3)), np.array([[omega, 0.0, 0.0]]))
        thrusts.append(out.force[0])
    return np.array(thrusts)


@pytest.mark.parametrize("hand", [1, -1])
@pytest.mark.parametrize("omega", [3.0, -3.0])
def test_a_screw_spinning_in_sand_is_pushed_along_its_thread(hand, omega):
    """A screw spinning in place with its axis at the surface: the grains push it along +x when
    h omega > 0, the direction it advances without slip (``ScrewGeometry.advance_speed``), at every spin
    angle; mirror hands give mirror thrusts; the grains also hold it up."""
    f = half_buried_screw(hand, omega)
    sign = math.copysign(1.0, hand * omega)
    assert np.all(sign * f[:, 0] > 0.0)
    assert np.all(f[:, 2] > 0.0)
    g = half_buried_screw(-hand, omega)
    np.testing.assert_allclose(g[:, 0].mean(), -f[:, 0].mean(), rtol=1e-6)


def test_screw_surface_areas_match_the_geometry():
    """Core area 2 pi r0 L; each blade face the helicoid's area over the length (closed form of
    int sqrt(rho^2 + c^2) d rho d theta, midpoint-summed in rho: tolerance the midpoint rule's, bounded
    by (drho^2 / 24) max|f''| / f over the rows)."""
    geom = ScrewGeometry(radius=0.09, length=0.13, lead_angle=0.35, handedness=1, name="s")
    p = GranularParams(zeta=ZETA)
    surf = screw_surface(geom, 0.065, p)
    assert surf.areas[~surf.blade].sum() == pytest.approx(2 * math.pi * 0.065 * 0.13, rel=REL)
    c = geom.lead / (2 * math.pi)
    span = 2 * math.pi * 0.13 / geom.lead

    def prim(r):
        return 0.5 * (r * math.sqrt(r * r + c * c) + c * c * math.asinh(r / c))

    exact = 2 * span * (prim(0.09) - prim(0.065))
    drho = 0.025 / p.blade_rows
    tol = drho**2 / 24 * (c * c / (c * c + 0.065**2) ** 1.5) / math.sqrt(c * c + 0.065**2)
    assert surf.areas[surf.blade].sum() == pytest.approx(exact, rel=tol)
    normals = np.linalg.norm(surf.normals, axis=1)
    np.testing.assert_allclose(normals, 1.0, rtol=1e-12)
