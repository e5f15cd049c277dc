"""The pinhole camera model and its ray-cast rendering (eels_gz.sensors.camera)
against closed forms, and its distortion against OpenCV's (a test oracle
only: opencv-python-headless is in the test extra, not a dependency)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.errors import ConfigError
from eels_gz.sensors.camera import (T_SENSOR_OPTICAL, Distortion, PinholeCamera, depth_image, render, shade,
                                    to_rgb8, trace_terrain)
from eels_gz.sensors.lidar import TRACE_TOLERANCE
from eels_gz.terrain.fields import SdfGrid
from eels_gz.terrain.primitives import Plane, Tube

DISTORTED = Distortion(k1=-0.28, k2=0.07, k3=-0.008, p1=1.2e-3, p2=-8e-4)


def _look(R_world_optical, position):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R_world_optical, position
    return T


def _down(h):
    """An optical frame at height h looking straight down (z_opt = -z_world), image x along world x."""
    return _look(np.array([[1.0, 0, 0], [0, -1.0, 0], [0, 0, -1.0]]), (0.3, -0.2, h))


def test_intrinsics_are_gazebos():
    cam = PinholeCamera(640, 480, 1.5708)
    # gz-sensors: fx = fy = width / (2 tan(hfov / 2)), principal point at the image centre
    assert cam.fx == pytest.approx(640 / (2 * math.tan(0.7854)), rel=1e-15) and cam.fy == cam.fx
    assert (cam.cx, cam.cy) == (320.0, 240.0)
    assert np.array_equal(cam.P[:, :3], cam.K) and np.all(cam.P[:, 3] == 0)
    assert cam.D.tolist() == [0, 0, 0, 0, 0]
    assert PinholeCamera(4, 3, 1.0, distortion=DISTORTED).D.tolist() == [-0.28, 0.07, 1.2e-3, -8e-4, -0.008]


def test_optical_frame_is_rep_103():
    R = T_SENSOR_OPTICAL[:3, :3]
    # optical z (view) = sensor x (forward); optical x (image right) = sensor -y; optical y (image down) = -z
    assert np.array_equal(R @ [0, 0, 1], [1, 0, 0]) and np.array_equal(R @ [1, 0, 0], [0, -1, 0])
    assert np.array_equal(R @ [0, 1, 0], [0, 0, -1]) and np.linalg.det(R) == 1


def test_depth_of_a_plane_seen_straight_down_is_its_height():
    cam = PinholeCamera(64, 48, 1.2, near=0.05, far=20.0)
    fr = render(cam, cam.pixel_rays(), _down(1.37), Plane())
    # planar depth (along the optical axis) of a plane parallel to the image: the height, at every pixel
    assert np.allclose(depth_image(fr, cam), 1.37, rtol=0, atol=1e-6)  # float32 output
    assert np.allclose(fr.depth, 1.37, rtol=0, atol=1e-12)  # the closed-form plane raycast
    assert np.all(fr.what == 0)


def test_depth_of_a_tilted_view_of_a_plane_against_closed_form():
    cam = PinholeCamera(80, 60, 1.4, near=0.05, far=50.0, distortion=DISTORTED)
    pitch = math.radians(35)  # optical axis 35 deg below the horizon, looking along +x
    z = np.array([math.cos(pitch), 0, -math.sin(pitch)])
    x = np.array([0.0, -1.0, 0.0])
    R = np.column_stack([x, np.cross(z, x), z])
    h = 0.8
    rays = cam.pixel_rays()
    fr = render(cam, rays, _look(R, (0, 0, h)), Plane())
    d_world = rays.reshape(-1, 3) @ R.T
    t = np.where(d_world[:, 2] < 0, -h / d_world[:, 2], np.inf)  # ray meets z = 0 at t
    expected = (t * rays.reshape(-1, 3)[:, 2]).reshape(cam.height, cam.width)
    hit = np.isfinite(expected) & (expected < cam.far)
    assert hit.mean() > 0.4
    assert np.allclose(fr.depth[hit], expected[hit], rtol=1e-12, atol=1e-12)


def _tube_view(cam, field, R=None):
    """Camera on the axis of a bore of radius 0.6 m along x (axis at z = 0.6), looking along +x."""
    R = np.array([[0.0, 0, 1], [-1, 0, 0], [0, -1, 0]]) if R is None else R
    return render(cam, cam.pixel_rays(), _look(R, (0.0, 0.0, 0.6)), field), R


def _bore_depth(cam, R, x_end, radius=0.6):
    """Closed-form depth of the bore wall (inf where a ray leaves by the open end at x_end first), ray directions."""
    rays = cam.pixel_rays().reshape(-1, 3)
    d = rays @ R.T
    radial = np.hypot(d[:, 1], d[:, 2])
    with np.errstate(divide="ignore"):
        t = radius / radial  # the wall at distance radius from the axis
    t = np.where(t * d[:, 0] <= x_end, t, np.inf)
    return (t * rays[:, 2]).reshape(cam.height, cam.width), d


def test_depth_of_the_tube_bore_against_closed_form():
    cam = PinholeCamera(48, 36, 1.5708, near=0.05, far=20.0)
    tube = Tube(radius=0.6, length=40.0, center=np.array([0.0, 0.0, 0.6]))
    fr, R = _tube_view(cam, tube)
    expected, d = _bore_depth(cam, R, 20.0)
    hit = np.isfinite(expected)
    assert np.array_equal(np.isfinite(fr.depth), hit) and 0.9 < hit.mean() < 1.0  # the axial pixel sees out
    # sphere tracing stops within TRACE_TOLERANCE of the wall: along a ray that is tol / cos(incidence) at most,
    # cos(incidence) being the ray's radial component
    cos_min = np.hypot(d[:, 1], d[:, 2])[hit.reshape(-1)].min()
    assert np.abs(fr.depth[hit] - expected[hit]).max() <= TRACE_TOLERANCE / cos_min


def test_depth_of_a_gridded_bore_against_closed_form():
    """The numba path: a distance grid sampled from the exact bore at h = 0.02 m. Trilinear interpolation of a
    cylinder's distance errs by at most h^2 / 8 x |curvature| = h^2 / (8 R) per axis, 3 x that in all."""
    h = 0.02
    tube = Tube(radius=0.6, length=8.0, center=np.array([2.0, 0.0, 0.6]))
    xs, ys, zs = np.arange(-0.1, 4.1, h), np.arange(-0.8, 0.8 + h / 2, h), np.arange(-0.2, 1.4 + h / 2, h)
    P = np.stack(np.meshgrid(xs, ys, zs, indexing="ij"), axis=-1).reshape(-1, 3)
    grid = SdfGrid(tube.query(P)[0].reshape(len(xs), len(ys), len(zs)), (xs[0], ys[0], zs[0]), h)
    cam = PinholeCamera(48, 36, 1.2, near=0.05, far=20.0)
    fr, R = _tube_view(cam, grid)
    expected, d = _bore_depth(cam, R, 3.9)  # hits well inside the grid (it ends at x = 4 m)
    inside = np.isfinite(expected)
    assert inside.mean() > 0.9
    # value error of the interpolant, turned into distance along a ray by the smallest incidence cosine
    tol = (3 * h * h / (8 * 0.6) + TRACE_TOLERANCE) / np.hypot(d[:, 1], d[:, 2])[inside.reshape(-1)].min()
    assert np.abs(fr.depth[inside] - expected[inside]).max() < tol
    # and the closed-form primitive and its grid agree through trace_terrain as the cameras call it
    t_grid, _ = trace_terrain(grid, np.array([0.0, 0.0, 0.6]), d, 0.0, 20.0)
    assert np.isfinite(t_grid[inside.reshape(-1)]).all()


def test_distorted_projection_equals_opencv():
    cv2 = pytest.importorskip("cv2", reason="opencv-python-headless is a test dependency (pip install -e .[test])")
    cam = PinholeCamera(640, 480, 1.3, distortion=DISTORTED)
    rng = np.random.default_rng(3)
    pts = np.column_stack([rng.uniform(-0.7, 0.7, 500), rng.uniform(-0.5, 0.5, 500), np.ones(500)])
    pts *= rng.uniform(0.5, 9.0, (500, 1))
    ref, _ = cv2.projectPoints(pts, np.zeros(3), np.zeros(3), cam.K, cam.D)
    # both evaluate the same polynomial in double precision
    assert np.abs(cam.project(pts) - ref.reshape(-1, 2)).max() < 1e-9


def test_off_centre_distortion_equals_opencv_about_that_centre():
    """SDF <center> away from 0.5 0.5: the distortion is taken about that point, which is OpenCV's model with
    the principal point there, applied to the normalized coordinates shifted by the same amount."""
    cv2 = pytest.importorskip("cv2", reason="opencv-python-headless is a test dependency (pip install -e .[test])")
    d = Distortion(k1=-0.2, k2=0.03, p1=5e-4, p2=2e-4, center=(0.46, 0.53))
    cam = PinholeCamera(640, 480, 1.3, distortion=d)
    c = np.array([0.46 * 640, 0.53 * 480])
    shift = (c - [cam.cx, cam.cy]) / cam.fx
    rng = np.random.default_rng(4)
    pts = np.column_stack([rng.uniform(-0.6, 0.6, 300), rng.uniform(-0.4, 0.4, 300), np.ones(300)])
    K = cam.K.copy()
    K[:2, 2] = c
    shifted = pts.copy()
    shifted[:, :2] -= shift
    ref, _ = cv2.projectPoints(shifted, np.zeros(3), np.zeros(3), K, cam.D)
    assert np.abs(cam.project(pts) - ref.reshape(-1, 2)).max() < 1e-9


def test_pixel_rays_project_back_onto_their_pixels():
    cam = PinholeCamera(160, 120, 1.0, distortion=DISTORTED)
    rays = cam.pixel_rays()
    assert np.isfinite(rays).all()
    u, v = np.meshgrid(np.arange(160.0), np.arange(120.0))
    back = cam.project(rays.reshape(-1, 3))
    assert np.abs(back - np.column_stack([u.ravel(), v.ravel()])).max() < 1e-6  # px
    assert np.allclose(np.linalg.norm(rays, axis=-1), 1.0)
    # barrel distortion (k1 < 0): the corner pixels see further out than an ideal pinhole's
    ideal = PinholeCamera(160, 120, 1.0).pixel_rays()
    assert rays[0, 0, 2] < ideal[0, 0, 2]


def test_pixels_beyond_the_lens_fold_have_no_ray():
    """DISTORTED's radial map r (1 - 0.28 r^2 + 0.07 r^4 - 0.008 r^6) peaks at r_d = 1.0009 (r = 1.84): a wide image's
    corners, at r_d up to 1.34, show nothing; everything well inside is a ray."""
    cam = PinholeCamera(160, 120, 1.5, distortion=Distortion(k1=-0.28, k2=0.07, k3=-0.008))
    r = np.linspace(0, 2.5, 20001)
    fold = (r * (1 - 0.28 * r**2 + 0.07 * r**4 - 0.008 * r**6)).max()
    u, v = np.meshgrid(np.arange(160.0), np.arange(120.0))
    r_d = np.hypot((u - cam.cx) / cam.fx, (v - cam.cy) / cam.fy)
    ok = np.isfinite(cam.pixel_rays()).all(axis=-1)
    assert not ok[r_d > fold].any() and ok[r_d < 0.97 * fold].all()
    assert 0.02 < (~ok).mean() < 0.5


def test_depth_clips_as_gazebo_and_colour_noise_has_its_stddev():
    cam = PinholeCamera(40, 30, 1.0, near=1.0, far=2.0)
    assert np.all(depth_image(render(cam, cam.pixel_rays(), _down(3.0), Plane()), cam) == np.inf)
    assert np.all(depth_image(render(cam, cam.pixel_rays(), _down(0.5), Plane()), cam) == -np.inf)
    fr = render(cam, cam.pixel_rays(), _down(1.5), Plane())
    rays_world = cam.pixel_rays() @ _down(1.5)[:3, :3].T
    rgb = shade(fr, rays_world, np.array([[0.5, 0.5, 0.5], [1, 0, 0]]))
    clean = to_rgb8(rgb)
    noisy = to_rgb8(rgb, noise_stddev=0.05, rng=np.random.default_rng(0))
    diff = (noisy.astype(float) - clean) / 255.0
    # 3600 samples: the estimated stddev is within 5 % (and 1/255 quantization) of 0.05
    assert diff.std() == pytest.approx(0.05, rel=0.05, abs=1 / 255)
    assert abs(diff.mean()) < 3 * 0.05 / math.sqrt(diff.size)


def test_bad_cameras_are_refused():
    with pytest.raises(ConfigError, match="horizontal_fov"):
        PinholeCamera(64, 48, 3.5)
    with pytest.raises(ConfigError, match="clip"):
        PinholeCamera(64, 48, 1.0, near=2.0, far=1.0)
    with pytest.raises(ConfigError, match="image size"):
        PinholeCamera(0, 48, 1.0)
