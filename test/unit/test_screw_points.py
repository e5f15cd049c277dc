"""Screw contact-point sets: thread geometry, the no-slip kinematic identity
v = h omega r tan(alpha) (one lead per revolution), independence from the
spin angle, the "down" anchoring, the axial layout, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.contact.screw_points import (
    ScrewGeometry,
    ScrewPointSet,
    across_thread_direction,
    thread_tangent,
)
from eels_gz.errors import ContactError

R, L, ALPHA = 0.09, 0.26, 0.35  # m, m, rad: a typical screw (any values in range would do)
TOL = 1e-12  # unit vectors built from a handful of products: rounding ~1e-16 per operation


def rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def random_rotation(rng) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q if np.linalg.det(q) > 0 else -q


def point_set(handedness=(1, -1), axial=4, ring=4, x_center=0.0) -> ScrewPointSet:
    geoms = [ScrewGeometry(R, L, ALPHA, h, x_center, name=f"s{i}") for i, h in enumerate(handedness)]
    return ScrewPointSet.from_geometries(geoms, axial, ring)


def test_thread_directions_orthonormal_in_tangent_plane():
    rng = np.random.default_rng(1)
    axis = np.tile([1.0, 0.0, 0.0], (50, 1))
    phi = rng.uniform(0, 2 * np.pi, 50)
    radial = np.column_stack([np.zeros(50), np.cos(phi), np.sin(phi)])
    for h in (1, -1):
        t = thread_tangent(axis, radial, ALPHA, h)
        ev = across_thread_direction(axis, radial, ALPHA, h)
        np.testing.assert_allclose((t * ev).sum(1), 0.0, atol=TOL)
        np.testing.assert_allclose((ev * radial).sum(1), 0.0, atol=TOL)
        np.testing.assert_allclose(np.linalg.norm(ev, axis=1), 1.0, atol=TOL)
        # the thread climbs h * tan(alpha) along the axis per unit of arc length
        np.testing.assert_allclose(t[:, 0] / np.linalg.norm(np.cross(axis, radial) * np.cos(ALPHA), axis=1),
                                   h * math.tan(ALPHA), rtol=TOL)


@pytest.mark.parametrize("omega", [2.0, -3.5])
def test_kinematic_identity_no_slip_across_blade(omega):
    rng = np.random.default_rng(2)
    ps = point_set()
    rot = np.stack([random_rotation(rng) for _ in range(ps.n_screws)])
    pos = rng.normal(size=(ps.n_screws, 3))
    points, offsets, ev = ps.world_points(pos, rot)
    axis = rot[:, :, 0]
    for s, h in enumerate(ps.handedness):
        geom = ScrewGeometry(R, L, ALPHA, int(h))
        v = geom.advance_speed(omega)
        assert v == pytest.approx(h * omega * R * math.tan(ALPHA), rel=1e-15)
        vel = v * axis[s] + np.cross(omega * axis[s], offsets[s])  # rigid screw motion
        # component along e_v: v cos(a) - h omega r sin(a) = 0; terms are ~|omega| r = 0.3 m/s
        np.testing.assert_allclose((vel * ev[s]).sum(1), 0.0, atol=TOL)
        # one lead per revolution
        assert abs(v) * 2 * math.pi / abs(omega) == pytest.approx(2 * math.pi * R * math.tan(ALPHA), rel=1e-14)
        assert geom.lead == pytest.approx(2 * math.pi * R * math.tan(ALPHA), rel=1e-15)
        # any other axial speed slips across the blade by (v' - v) cos(alpha)
        vel2 = (v + 0.01) * axis[s] + np.cross(omega * axis[s], offsets[s])
        np.testing.assert_allclose((vel2 * ev[s]).sum(1), 0.01 * math.cos(ALPHA), atol=TOL)


def test_right_handed_screw_advances_forward_for_positive_spin():
    # right-handed thread, positive spin about +x: the blade contact moves toward +x
    assert ScrewGeometry(R, L, ALPHA, 1).advance_speed(1.0) > 0
    assert ScrewGeometry(R, L, ALPHA, -1).advance_speed(1.0) < 0


def test_points_do_not_depend_on_spin_angle():
    rng = np.random.default_rng(3)
    ps = point_set()
    base = np.stack([random_rotation(rng) for _ in range(2)])
    pos = rng.normal(size=(2, 3))
    ref = ps.world_points(pos, base)
    for spin in (0.3, 1.7, -2.9):
        spun = base @ rot_x(spin)  # same axis, different spin angle
        for a, b in zip(ref, ps.world_points(pos, spun)):
            np.testing.assert_allclose(a, b, rtol=0, atol=TOL)


def test_first_ring_point_faces_down():
    # horizontal screws at any yaw and spin, and a pitched one: the first point of each ring is the
    # lowest point of that ring's circle, at height z_center(x) - r cos(pitch)
    ps = point_set(handedness=(1, 1, 1), axial=3, ring=6)
    pitch = 0.4
    rot = np.stack([rot_z(0.7) @ rot_x(1.1), rot_z(-2.0) @ rot_x(-0.4),
                    rot_z(0.2) @ np.array([[math.cos(pitch), 0, -math.sin(pitch)], [0, 1, 0],
                                           [math.sin(pitch), 0, math.cos(pitch)]]) @ rot_x(0.5)])
    pos = np.array([[0.0, 0.0, 1.0], [1.0, 2.0, 0.5], [0.0, 0.0, 0.0]])
    points, offsets, _ = ps.world_points(pos, rot)
    rings = points.reshape(3, 3, 6, 3)  # (screw, station, ring point, xyz)
    lowest = rings[..., 2].argmin(axis=2)
    np.testing.assert_array_equal(lowest, 0)
    centers_z = pos[:, None, 2] + ps.stations * rot[:, None, 2, 0]
    cos_tilt = np.sqrt(1 - rot[:, 2, 0] ** 2)
    np.testing.assert_allclose(rings[:, :, 0, 2], centers_z - R * cos_tilt[:, None], atol=TOL)
    np.testing.assert_allclose(np.linalg.norm(offsets - ps.stations.repeat(6, 1)[..., None] * rot[:, None, :, 0],
                                              axis=2), R, atol=TOL)


def test_down_anchor_follows_given_direction_and_vertical_axis_fallback():
    ps = point_set(handedness=(1,), axial=1, ring=4)
    pts, _, _ = ps.world_points(np.zeros((1, 3)), np.eye(3)[None], down=(0.0, 1.0, 0.0))
    np.testing.assert_allclose(pts[0, 0], [0.0, R, 0.0], atol=TOL)
    # axis along "down": the ring is anchored on the link's -z axis instead
    vertical = np.array([[0, 0, 1], [0, 1, 0], [-1, 0, 0]], float)  # link x -> world -z
    pts, _, ev = ps.world_points(np.zeros((1, 3)), vertical[None])
    np.testing.assert_allclose(pts[0, 0], -R * vertical[:, 2], atol=TOL)
    assert np.all(np.isfinite(ev))


def test_axial_layout_and_count():
    ps = point_set(handedness=(1,), axial=5, ring=3, x_center=0.1)
    assert ps.points_per_screw == 15
    # midpoints of 5 equal segments of [x_c - L/2, x_c + L/2]
    np.testing.assert_allclose(ps.stations[0], 0.1 + L * (np.arange(5) + 0.5) / 5 - L / 2, rtol=1e-15)
    np.testing.assert_allclose(ps.ring_angles, [0, 2 * np.pi / 3, 4 * np.pi / 3], rtol=1e-15)
    points, _, _ = ps.world_points(np.zeros((1, 3)), np.eye(3)[None])
    assert points.shape == (1, 15, 3)
    np.testing.assert_allclose(points[0, ::3, 0], ps.stations[0], atol=TOL)  # index = station * ring + j


@pytest.mark.parametrize("kwargs, match", [
    (dict(radius=0.0), "'radius'"),
    (dict(length=-1.0), "'length'"),
    (dict(lead_angle=0.0), "'lead_angle'"),
    (dict(lead_angle=math.pi / 2), "'lead_angle'"),
    (dict(handedness=0), "'handedness'"),
    (dict(handedness=True), "'handedness'"),
    (dict(x_center=math.nan), "'x_center'"),
])
def test_bad_geometry(kwargs, match):
    args = dict(radius=R, length=L, lead_angle=ALPHA, handedness=1, name="module_3_screw") | kwargs
    with pytest.raises(ContactError, match=f"module_3_screw.*{match}"):
        ScrewGeometry(**args)


def test_bad_layout_and_pose_shapes():
    g = ScrewGeometry(R, L, ALPHA, 1)
    with pytest.raises(ContactError, match="points_axial"):
        ScrewPointSet.from_geometries([g], 0, 4)
    with pytest.raises(ContactError, match="points_ring"):
        ScrewPointSet.from_geometries([g], 4, 2.0)
    with pytest.raises(ContactError, match="no screws"):
        ScrewPointSet.from_geometries([], 4, 4)
    ps = ScrewPointSet.from_geometries([g, g], 2, 2)
    with pytest.raises(ContactError, match=r"link_pos \(2, 3\)"):
        ps.world_points(np.zeros((3, 3)), np.tile(np.eye(3), (3, 1, 1)))
    with pytest.raises(ContactError, match="'down'"):
        ps.world_points(np.zeros((2, 3)), np.tile(np.eye(3), (2, 1, 1)), down=np.zeros((3, 3)))
