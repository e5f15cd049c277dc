"""The CAHV family and the fish-eye (eels_gz.sensors.camera_models): EELS-DARTS Fig. 8's CAHVOR camera against
an independent implementation of Gennery's model written here from /work/shared/REFERENCE.md §6, the fish-eye
against OpenCV's cv2.fisheye (a test oracle only), back-projection against projection, and the lens effects."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.errors import ConfigError
from eels_gz.sensors.camera_models import CahvoreCamera, FisheyeCamera, LensEffects

# EELS-DARTS Fig. 8 (journal version; REFERENCE.md §6): a camera 35 m above the ground looking straight down
FIG8 = dict(c=(0.0, 0.0, 35.0), a=(0.0, 0.0, -1.0), h=(734.264, 0.0, -310.0), v=(0.0, -714.264, -320.0))
FIG8_O, FIG8_R, FIG8_E = (0.0, 0.0, -1.0), (0.05, -0.21, 0.01), (0.12, -0.14, 0.13)
WIDTH, HEIGHT = 620, 640  # the principal point (hc, vc) = (310, 320) at the image centre


def cahvor_reference(P, C, A, H, V, O, R):
    """Gennery's CAHVOR, step by step as REFERENCE.md §6 states it (one point at a time, no numpy vector ops)."""
    out = []
    for p in P:
        pc = [p[i] - C[i] for i in range(3)]
        zeta = sum(pc[i] * O[i] for i in range(3))
        lam = [pc[i] - zeta * O[i] for i in range(3)]
        tau = sum(x * x for x in lam) / (zeta * zeta)
        mu = R[0] + R[1] * tau + R[2] * tau * tau
        q = [p[i] + mu * lam[i] - C[i] for i in range(3)]
        alpha = sum(q[i] * A[i] for i in range(3))
        out.append((sum(q[i] * H[i] for i in range(3)) / alpha, sum(q[i] * V[i] for i in range(3)) / alpha))
    return np.array(out)


def _ground_points(n: int, seed: int) -> np.ndarray:
    """Points on and above the ground (z from 0 to 10 m) within Fig. 8's field of view."""
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.uniform(-12, 12, n), rng.uniform(-12, 12, n), rng.uniform(0, 10, n)])


def test_fig8_cahvor_projects_as_gennerys_model():
    cam = CahvoreCamera(WIDTH, HEIGHT, **FIG8, o=FIG8_O, r=FIG8_R, kind="cahvor")
    P = _ground_points(500, 1)
    ref = cahvor_reference(P, FIG8["c"], FIG8["a"], FIG8["h"], FIG8["v"], FIG8_O, FIG8_R)
    # both evaluate the same closed form in double precision: agreement to round-off of ~1e3 px values
    assert np.abs(cam.project_sensor(P) - ref).max() < 1e-9
    # the distortion is not a no-op here: R moves these points by up to ~9 px toward the edges
    plain = CahvoreCamera(WIDTH, HEIGHT, **FIG8, kind="cahv").project_sensor(P)
    assert np.abs(plain - ref).max() > 5.0
    # the point under the camera (on O) is undistorted at the principal point (hc, vc)
    assert np.allclose(cam.project_sensor([[0.0, 0.0, 0.0]]), [[310.0, 320.0]], atol=1e-12)


def test_fig8_cahv_is_the_linear_model_and_its_pinhole():
    cam = CahvoreCamera(WIDTH, HEIGHT, **FIG8)
    assert (cam.hs, cam.hc, cam.vs, cam.vc) == pytest.approx((734.264, 310.0, 714.264, 320.0), abs=1e-12)
    P = _ground_points(50, 2)
    ref = cahvor_reference(P, FIG8["c"], FIG8["a"], FIG8["h"], FIG8["v"], FIG8_O, (0.0, 0.0, 0.0))
    assert np.abs(cam.project_sensor(P) - ref).max() < 1e-9


def test_cahvore_reduces_to_cahvor_at_perspective_linearity_without_pupil_shift():
    P = _ground_points(200, 3)
    cahvor = CahvoreCamera(WIDTH, HEIGHT, **FIG8, o=FIG8_O, r=FIG8_R, kind="cahvor").project_sensor(P)
    cahvore = CahvoreCamera(WIDTH, HEIGHT, **FIG8, o=FIG8_O, r=FIG8_R, linearity=1.0, kind="cahvore")
    assert np.abs(cahvore.project_sensor(P) - cahvor).max() < 1e-8


@pytest.mark.parametrize("kind, extra", [
    ("cahv", {}),
    ("cahvor", {"o": FIG8_O, "r": FIG8_R}),
    ("cahvore", {"o": FIG8_O, "r": FIG8_R, "e": FIG8_E, "linearity": 1.0}),
    ("cahvore", {"o": (0.05, 0.0, -math.sqrt(1 - 0.05**2)), "r": FIG8_R, "e": FIG8_E, "linearity": 0.0}),
])
def test_pixel_rays_project_back_onto_their_pixels(kind, extra):
    """Back-projection (Newton on the radial polynomial, CAHVORE's moving pupil) inverts projection."""
    cam = CahvoreCamera(64, 64, c=(0.0, 0.0, 35.0), a=(0.0, 0.0, -1.0), h=(75.0, 0.0, -32.0), v=(0.0, -75.0, -32.0),
                        kind=kind, **extra)
    rays, origins = cam.pixel_rays().reshape(-1, 3), cam.ray_origins().reshape(-1, 3)
    ok = np.isfinite(rays).all(axis=1)
    assert ok.mean() > 0.95
    u, v = np.meshgrid(np.arange(64.0), np.arange(64.0))
    back = cam.project(origins[ok] + 7.0 * rays[ok])
    assert np.abs(back - np.column_stack([u.ravel(), v.ravel()])[ok]).max() < 1e-6  # px
    assert np.allclose(np.linalg.norm(rays[ok], axis=1), 1.0)


def test_fisheye_projects_as_opencv_fisheye():
    cv2 = pytest.importorskip("cv2", reason="opencv-python-headless is a test dependency (pip install -e .[test])")
    for k in ((0.0, 0.0, 0.0, 0.0), (-0.02, 0.004, -0.0005, 0.0)):
        cam = FisheyeCamera(800, 600, math.radians(190.0), k=k)
        rng = np.random.default_rng(5)
        theta = rng.uniform(0.0, math.radians(85.0), 400)  # in front of the lens (cv2's model needs z > 0)
        phi = rng.uniform(-math.pi, math.pi, 400)
        pts = np.column_stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)])
        pts *= rng.uniform(0.5, 9.0, (400, 1))
        ref, _ = cv2.fisheye.projectPoints(pts.reshape(-1, 1, 3), np.zeros(3), np.zeros(3), cam.K, np.array(k))
        assert np.abs(cam.project(pts) - ref.reshape(-1, 2)).max() < 1e-6  # px (cv2 works in float32 in places)


def test_fisheye_is_equidistant_and_sees_beyond_90_degrees():
    cam = FisheyeCamera(400, 400, math.radians(200.0), cutoff=math.radians(95.0))
    rays = cam.pixel_rays()
    ok = np.isfinite(rays).all(axis=-1)
    u, v = np.meshgrid(np.arange(400.0), np.arange(400.0))
    r_px = np.hypot(u - cam.cx, v - cam.cy)
    theta = np.arccos(np.clip(rays[..., 2], -1, 1))
    # r = f theta: the angle off the axis grows linearly with the distance from the image centre
    assert np.allclose(theta[ok], r_px[ok] / cam.fx, atol=1e-12)
    assert theta[ok].max() > math.radians(94.0) and not ok[r_px / cam.fx > math.radians(95.0) + 1e-9].any()
    back = cam.project(rays[ok])
    assert np.abs(back - np.column_stack([u[ok], v[ok]])).max() < 1e-6


def test_vignetting_is_cos4_and_gamma_encodes():
    fx = FisheyeCamera(10, 10, math.radians(120.0))  # pixel (5, 5) on the axis
    rays = fx.pixel_rays()
    fx_gain = LensEffects(vignetting=0.6).factor(rays)
    theta = np.arccos(rays[..., 2])
    assert np.allclose(fx_gain, 0.4 + 0.6 * np.cos(theta) ** 4, atol=1e-15)
    assert fx_gain[5, 5] == 1.0 and fx_gain[0, 0] < fx_gain[0, 5] < 1.0  # brightest on the axis
    rgb = np.full((10, 10, 3), 0.25)
    out = LensEffects(vignetting=0.6, gamma=2.0).apply(rgb, fx_gain)
    assert np.allclose(out, np.sqrt(0.25 * fx_gain)[..., None])
    assert LensEffects().apply(rgb, None) is rgb  # no effects: today's images unchanged


def test_bad_models_are_refused():
    with pytest.raises(ConfigError, match="unit vector"):
        CahvoreCamera(8, 8, c=(0, 0, 0), a=(0, 0, 2), h=(1, 0, 0), v=(0, 1, 0))
    with pytest.raises(ConfigError, match="coplanar"):
        CahvoreCamera(8, 8, c=(0, 0, 0), a=(0, 0, 1), h=(1, 0, 0), v=(2, 0, 0))
    with pytest.raises(ConfigError, match="linearity"):
        CahvoreCamera(8, 8, **FIG8, kind="cahvore", linearity=2.0)
    with pytest.raises(ConfigError, match="horizontal_fov"):
        FisheyeCamera(8, 8, 7.0)
    with pytest.raises(ConfigError, match="vignetting"):
        LensEffects(vignetting=1.5)
