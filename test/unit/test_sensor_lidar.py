"""Lidar model (eels_gz.sensors.lidar) against closed forms: a downward grid
over ice_plane's terrain field returns points on the plane at range
h / sin(depression) within 1 mm; a user pattern file's origins and
directions are honoured; shapes are hit at their faces; the diffuse
intensity is cos(incidence); bad patterns are refused with the reason."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz import registry
from eels_gz.errors import ConfigError
from eels_gz.sensors.imu import imu_reading, imu_values
from eels_gz.sensors.lidar import Shape, cast, diffuse_intensity, grid_pattern, load_pattern
from eels_gz.terrain.world_terrain import find_terrain_field

RANGE_TOL = 1e-3  # m, the 1 mm


@pytest.fixture(scope="module")
def ice_field():
    return find_terrain_field(registry.world_path("ice_plane"))


def _pose(x, y, z, R=np.eye(3)):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, (x, y, z)
    return T


def test_downward_grid_on_ice_plane(ice_field):
    x, y, h = 0.3, -0.2, 1.3
    gap = float(ice_field.query(np.array([[x, y, h]]))[0][0])  # exact height above the plane
    pat = grid_pattern(8, 24, -math.pi, math.pi, -math.pi / 2, -math.pi / 8, 0.05, 20.0)
    scan = cast(pat, _pose(x, y, h), ice_field)
    depression = -np.arcsin(pat.directions[:, 2])
    expected = gap / np.sin(depression)
    assert np.all(np.isfinite(scan.ranges))
    assert np.max(np.abs(scan.ranges - expected)) < RANGE_TOL
    world_z = h + scan.points[:, 2]
    assert np.max(np.abs(world_z - (h - gap))) < RANGE_TOL
    # beams above the horizon return nothing
    up = cast(grid_pattern(2, 4, -1, 1, 0.1, 0.5, 0.05, 20.0), _pose(x, y, h), ice_field)
    assert np.all(np.isnan(up.ranges)) and np.all(np.isnan(up.intensity))


def test_range_limits(ice_field):
    h = float(ice_field.query(np.array([[0.0, 0.0, 2.0]]))[0][0])
    pat = grid_pattern(1, 1, 0, 0, -math.pi / 2, -math.pi / 2, 0.05, 0.5 * h)  # the ground is beyond range_max
    assert np.isnan(cast(pat, _pose(0, 0, 2.0), ice_field).ranges[0])


def test_user_pattern_file_is_honoured(tmp_path, ice_field):
    beams = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, -1.0],
                      [0.1, 0.2, 0.3, 0.0, 0.0, -2.0],     # not normalized in the file
                      [-0.2, 0.0, -0.1, 1.0, 0.0, -1.0]])
    f = tmp_path / "unit.csv"
    f.write_text("# ox, oy, oz, dx, dy, dz\n" + "\n".join(",".join(map(str, b)) for b in beams))
    pat = load_pattern(f, 0.0, 50.0)
    h = 1.0
    gap = float(ice_field.query(np.array([[0.0, 0.0, h]]))[0][0])
    scan = cast(pat, _pose(0, 0, h), ice_field)
    d = beams[:, 3:] / np.linalg.norm(beams[:, 3:], axis=1, keepdims=True)
    expected = (gap + beams[:, 2]) / -d[:, 2]
    assert np.max(np.abs(scan.ranges - expected)) < RANGE_TOL
    assert np.allclose(scan.points, beams[:, :3] + expected[:, None] * d, atol=RANGE_TOL)
    np.save(tmp_path / "unit.npy", beams)
    assert np.allclose(load_pattern(tmp_path / "unit.npy", 0.0, 50.0).directions, d)


@pytest.mark.parametrize("shape, expected", [
    (Shape("box", (0.2, 1.0, 1.0), _pose(2.0, 0, 0)), 1.9),
    (Shape("sphere", (0.5,), _pose(3.0, 0, 0)), 2.5),
    (Shape("cylinder", (0.25, 2.0), _pose(1.0, 0, 0)), 0.75),  # side of a z-axis cylinder
    # the same cylinder lying along x: the beam enters through its cap at x = 1.5 - 1.0 / 2
    (Shape("cylinder", (0.25, 1.0), _pose(1.5, 0, 0, np.array([[0, 0, 1], [0, 1, 0], [-1, 0, 0]]))), 1.0),
])
def test_shapes_are_hit_at_their_faces(shape, expected):
    pat = grid_pattern(1, 1, 0, 0, 0, 0, 0.0, 10.0)  # one beam along +x
    scan = cast(pat, np.eye(4), None, [shape])
    assert scan.ranges[0] == pytest.approx(expected, abs=1e-9)
    assert scan.intensity[0] == pytest.approx(1.0, abs=1e-9)  # normal incidence


def test_diffuse_intensity_is_cosine():
    n = np.array([[0.0, 0.0, 1.0]] * 3)
    d = np.array([[0, 0, -1.0], [math.sin(math.pi / 3), 0, -math.cos(math.pi / 3)], [1.0, 0, 0]])
    assert np.allclose(diffuse_intensity(n, d, albedo=0.8), [0.8, 0.4, 0.0])


@pytest.mark.parametrize("text, match", [
    ("0 0 0 1 0\n", "one beam per row"),
    ("0 0 0 0 0 0\n", "beam 0 has a zero direction"),
    ("0 0 0 1 0 0\n0 0 nan 1 0 0\n", "beam 1 is not finite"),
    ("a b c d e f\n", "cannot read"),
])
def test_bad_pattern_files(tmp_path, text, match):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(ConfigError, match=match):
        load_pattern(f, 0.0, 10.0)


def test_bad_grid_and_ranges():
    with pytest.raises(ConfigError, match="range limits"):
        grid_pattern(1, 1, 0, 0, 0, 0, 5.0, 1.0)
    with pytest.raises(ConfigError, match="horizontal samples"):
        grid_pattern(1, 0, 0, 0, 0, 0, 0.0, 1.0)
    with pytest.raises(ConfigError, match="vertical max_angle"):
        grid_pattern(2, 1, 0, 0, 0.5, -0.5, 0.0, 1.0)


def test_imu_reading_at_rest_and_rotated():
    g = np.array([0.0, 0.0, -9.81])
    w, f = imu_reading(np.eye(3), np.zeros(3), np.zeros(3), g)
    assert np.allclose(f, [0, 0, 9.81]) and np.allclose(w, 0)
    # rolled -90 deg about x: the sensor's y axis (R's second column) points up, so +g reads on y
    R = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]], dtype=float)
    _, f = imu_reading(R, np.zeros(3), np.zeros(3), g)
    assert np.allclose(f, [0, 9.81, 0])
    # free fall reads zero specific force
    _, f = imu_reading(np.eye(3), np.zeros(3), g, g)
    assert np.allclose(f, 0)


@pytest.mark.parametrize("seed", range(4))
def test_compiled_imu_sample_is_the_reading_and_the_quaternion(seed):
    """imu_values (the host's per-sample kernel) = imu_reading of R_world_body R_body_sensor and that
    rotation's quaternion (w >= 0), to rounding (1e-12); random poses cover Shepperd's four branches
    (and the half-turns about each axis force the three non-trace ones)."""
    from scipy.spatial.transform import Rotation

    from eels_gz.gzapi.gzmath import matrix_to_quat

    rng = np.random.default_rng(seed)
    turns = [np.diag([1.0, -1.0, -1.0]), np.diag([-1.0, 1.0, -1.0]), np.diag([-1.0, -1.0, 1.0])]
    for k in range(50):
        T_wb, T_bs = np.eye(4), np.eye(4)
        T_wb[:3, :3] = turns[k] if k < 3 else Rotation.random(random_state=rng).as_matrix()
        T_bs[:3, :3] = np.eye(3) if k < 3 else Rotation.random(random_state=rng).as_matrix()
        T_wb[:3, 3], T_bs[:3, 3] = rng.normal(size=3), rng.normal(size=3)
        w, a, g = rng.normal(size=3), rng.normal(size=3), np.array([0.0, 0.0, -9.81])
        out = np.empty(10)
        imu_values(T_wb, T_bs, w, a, g, out)
        R = T_wb[:3, :3] @ T_bs[:3, :3]
        gyro, acc = imu_reading(R, w, a, g)
        np.testing.assert_allclose(out[:3], gyro, atol=1e-12)
        np.testing.assert_allclose(out[3:6], acc, atol=1e-12)
        np.testing.assert_allclose(out[6:], matrix_to_quat(R), atol=1e-12)


def test_plane_closed_form_equals_sphere_tracing():
    """Plane.raycast (closed form) gives what sphere tracing converges to,
    to the tracing tolerance, where tracing converges (rays at least 10 deg
    below the horizon; flatter ones need more steps than it takes)."""
    from eels_gz.sensors.lidar import TRACE_TOLERANCE, sphere_trace
    from eels_gz.terrain.primitives import Plane

    plane = Plane(point=(0.0, 0.0, 0.2), normal=(0.1, 0.0, 1.0))

    class Traced:  # the same field without its closed form
        query = staticmethod(plane.query)

    rng = np.random.default_rng(4)
    elev = rng.uniform(np.radians(10), np.radians(90), 500)
    az = rng.uniform(-np.pi, np.pi, 500)
    dirs = np.column_stack([np.cos(elev) * np.cos(az), np.cos(elev) * np.sin(az), -np.sin(elev)])
    origins = np.column_stack([rng.uniform(-1, 1, (500, 2)), rng.uniform(0.5, 2.0, 500)])
    t_exact, n_exact = plane.raycast(origins, dirs, 0.0, 50.0)
    t_trace, n_trace = sphere_trace(Traced(), origins, dirs, 0.0, 50.0)
    hit = np.isfinite(t_trace)
    assert hit.all() and np.isfinite(t_exact).all()
    # tracing stops within its tolerance above the surface, along a ray at
    # least sin(10 deg - 6 deg tilt) steep: t error <= tol / sin(4 deg)
    assert np.abs(t_trace - t_exact).max() <= TRACE_TOLERANCE / np.sin(np.radians(4))
    np.testing.assert_allclose(n_exact, n_trace, atol=1e-12)
    # rays going up, or starting below the ice, meet nothing
    t_up, _ = plane.raycast(origins, -dirs, 0.0, 50.0)
    assert np.isinf(t_up).all()


@pytest.mark.parametrize("kind, size", [("box", (0.3, 0.2, 0.5)), ("sphere", (0.25,)), ("cylinder", (0.1, 0.6))])
def test_rays_at_a_rotated_shape_hit_its_surface(kind, size):
    """Rays from outside aimed at a point inside a rotated, moved shape hit it,
    at a point on its surface, first along the ray (no nearer sample inside)."""
    from eels_gz.sensors.lidar import Shape, ray_shapes

    rng = np.random.default_rng(11)
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, (0.4, -0.2, 1.0)
    d_out = rng.normal(size=(200, 3))
    d_out /= np.linalg.norm(d_out, axis=1)[:, None]
    origins = T[:3, 3] + 3.0 * d_out
    targets = T[:3, 3] + 0.02 * rng.normal(size=(200, 3))
    dirs = targets - origins
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    t, normals = ray_shapes([Shape(kind, size, T)], origins, dirs)
    assert np.isfinite(t).all()
    local = (origins + t[:, None] * dirs - T[:3, 3]) @ R

    def inside(p):
        if kind == "box":
            return np.all(np.abs(p) <= 0.5 * np.array(size) + 1e-12, axis=-1)
        if kind == "sphere":
            return np.linalg.norm(p, axis=-1) <= size[0] + 1e-12
        return (np.hypot(p[..., 0], p[..., 1]) <= size[0] + 1e-12) & (np.abs(p[..., 2]) <= 0.5 * size[1] + 1e-12)

    assert inside(local).all()  # on the surface (within round-off) ...
    before = (origins + (t - 1e-6)[:, None] * dirs - T[:3, 3]) @ R
    assert not inside(before).any()  # ... and the first contact along the ray
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_grid_culling_finds_the_brute_force_hits(seed):
    """A grid pattern tests each shape only against the beams in the cone its bounding
    sphere subtends; the hits (ranges and normals) are exactly the brute-force ones."""
    from eels_gz.sensors.lidar import Shape, grid_pattern, ray_shapes, ray_shapes_grid

    rng = np.random.default_rng(seed)
    pattern = grid_pattern(16, 360, -np.pi, np.pi, -0.26, 0.26, 0.1, 30.0)
    shapes = []
    for k in range(60):
        kind = ("box", "sphere", "cylinder")[k % 3]
        size = (tuple(rng.uniform(0.05, 0.6, 3)) if kind == "box" else (rng.uniform(0.05, 0.4),) if kind == "sphere"
                else (rng.uniform(0.05, 0.3), rng.uniform(0.1, 0.8)))
        T = np.eye(4)
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        w, x, y, z = q
        T[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
        T[:3, 3] = rng.uniform(-3, 3, 3) * (0.1 if k < 5 else 1.0)  # a few around the sensor
        shapes.append(Shape(kind, size, T))
    T_ws = np.eye(4)
    T_ws[:3, :3] = shapes[7].T[:3, :3]
    T_ws[:3, 3] = rng.uniform(-0.5, 0.5, 3)
    d_w = pattern.directions @ T_ws[:3, :3].T
    o_w = pattern.origins @ T_ws[:3, :3].T + T_ws[:3, 3]
    t_ref, n_ref = ray_shapes(shapes, o_w, d_w)
    t_grid, n_grid = ray_shapes_grid(shapes, pattern, T_ws, d_w)
    assert np.isfinite(t_ref).sum() > 500  # the comparison covers many hits
    np.testing.assert_array_equal(t_grid, t_ref)
    np.testing.assert_array_equal(n_grid, n_ref)


def test_pack_xyzi_is_the_float32_rows_and_is_dense():
    """The PointCloud2 payload: x y z intensity as little-endian float32 rows, dense only without NaN."""
    from eels_gz.sensors.lidar import pack_xyzi

    rng = np.random.default_rng(3)
    points, intensity = rng.normal(size=(50, 3)), rng.uniform(size=50)
    for hole in (None, 17):
        if hole is not None:
            points[hole], intensity[hole] = np.nan, np.nan
        out = np.empty((50, 4), dtype="<f4")
        dense = pack_xyzi(points, intensity, out)
        assert dense == (hole is None)
        want = np.column_stack([points, intensity]).astype("<f4")
        assert out.tobytes() == want.tobytes()
