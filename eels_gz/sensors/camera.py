"""Pinhole cameras with Brown-Conrady lens distortion, and the ray-casting
renderer (the *tracer*) that draws any camera model: the host's fall-back
when OpenGL cannot start (eels_gz.dart.gl_render is its default renderer;
the other models are in eels_gz.sensors.camera_models).

Frames (REP-103): the camera looks along +z of its *optical* frame, x to
the right of the image and y down; Gazebo's sensor frame looks along +x
(x forward, y left, z up). ``T_SENSOR_OPTICAL`` turns one into the other,
as the ``*_optical_frame`` links of urdf/eels_macros.xacro do.

Model (what Gazebo's camera_info says, gz-sensors CameraSensor::PopulateInfo):
``fx = fy = width / (2 tan(hfov / 2))``, principal point ``(width / 2,
height / 2)`` in pixels whose integer coordinates are pixel centres (OpenCV's
and ROS's convention), distortion ``plumb_bob`` with ``D = (k1, k2, p1, p2,
k3)``. SDF's ``<distortion><center>`` (normalized image coordinates, default
0.5 0.5) is the centre the distortion is taken about; at the default it is
the principal point and the model is exactly OpenCV's ``projectPoints``::

    x, y = X / Z - c_x, Y / Z - c_y            (c: the centre, normalized)
    r2 = x^2 + y^2
    x_d = x (1 + k1 r2 + k2 r2^2 + k3 r2^3) + 2 p1 x y + p2 (r2 + 2 x^2)
    y_d = y (1 + k1 r2 + k2 r2^2 + k3 r2^3) + p1 (r2 + 2 y^2) + 2 p2 x y
    u = fx (x_d + c_x) + cx,   v = fy (y_d + c_y) + cy

Rendering inverts it once per camera: every pixel's ray (``pixel_rays``,
the distortion undone by fixed-point iteration, pixels it cannot reach are
NaN rays) is cast each frame against the terrain's distance field (sphere
tracing, in numba for grid fields) and the robot's shapes
(eels_gz.sensors.lidar). Colour: the surface's albedo lit by the world's sun
and by a light at the camera, plus ambient; depth: the distance along the
optical axis (z), +inf beyond ``far`` and -inf nearer than ``near``, as
gz-rendering's depth camera gives it. Noise: SDF ``<noise>`` gaussian per
pixel (colour in [0, 1] units before 8-bit quantization, depth in metres).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba
import numpy as np

from eels_gz.errors import ConfigError
from eels_gz.sensors.camera_models import CameraMatrix, LensEffects, check_image
from eels_gz.terrain._kernels import sdf_grid_point
from eels_gz.sensors.lidar import MAX_TRACE_STEPS, TRACE_TOLERANCE, Shape, ray_shapes, sphere_trace

# optical frame (z forward, x right, y down) in the sensor frame (x forward, y left, z up): rpy (-pi/2, 0, -pi/2)
T_SENSOR_OPTICAL = np.array([[0.0, 0.0, 1.0, 0.0],
                             [-1.0, 0.0, 0.0, 0.0],
                             [0.0, -1.0, 0.0, 0.0],
                             [0.0, 0.0, 0.0, 1.0]])
UNDISTORT_ITERATIONS = 30
UNDISTORT_TOLERANCE = 1e-10  # normalized image units: 1e-10 x f is far below a pixel


@dataclass(frozen=True)
class Distortion:
    """SDF ``<distortion>``: radial k1, k2, k3, tangential p1, p2, centre in normalized image coordinates."""

    k1: float = 0.0
    k2: float = 0.0
    k3: float = 0.0
    p1: float = 0.0
    p2: float = 0.0
    center: tuple[float, float] = (0.5, 0.5)

    @property
    def is_zero(self) -> bool:
        return self.k1 == self.k2 == self.k3 == self.p1 == self.p2 == 0.0

    def apply(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Distorted normalized coordinates of undistorted ones (both about the distortion centre)."""
        r2 = x * x + y * y
        radial = 1.0 + r2 * (self.k1 + r2 * (self.k2 + r2 * self.k3))
        xd = x * radial + 2.0 * self.p1 * x * y + self.p2 * (r2 + 2.0 * x * x)
        yd = y * radial + self.p1 * (r2 + 2.0 * y * y) + 2.0 * self.p2 * x * y
        return xd, yd

    def undo(self, xd: np.ndarray, yd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Undistorted coordinates by Newton's method from ``(xd, yd)``; NaN where it does not reach
        ``UNDISTORT_TOLERANCE`` or lands beyond the fold of the lens (Jacobian determinant <= 0, or a negative
        radial factor), i.e. where no ray of the undistorted view reaches that image point."""
        if self.is_zero:
            return xd.copy(), yd.copy()
        k1, k2, k3, p1, p2 = self.k1, self.k2, self.k3, self.p1, self.p2
        x, y = xd.copy(), yd.copy()
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for _ in range(UNDISTORT_ITERATIONS):
                r2 = x * x + y * y
                radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3))
                dradial = k1 + r2 * (2.0 * k2 + 3.0 * r2 * k3)  # d radial / d r2
                fx, fy = self.apply(x, y)
                fx, fy = fx - xd, fy - yd
                a = radial + 2.0 * x * x * dradial + 2.0 * p1 * y + 6.0 * p2 * x  # d xd / d x
                b = 2.0 * x * y * dradial + 2.0 * p1 * x + 2.0 * p2 * y  # d xd / d y = d yd / d x
                c = radial + 2.0 * y * y * dradial + 6.0 * p1 * y + 2.0 * p2 * x  # d yd / d y
                det = a * c - b * b
                x, y = x - (c * fx - b * fy) / det, y - (a * fy - b * fx) / det
            ex, ey = self.apply(x, y)
            r2 = x * x + y * y
            radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3))
            # a root past the fold, or where the radial factor turned negative (the image flipped), is no ray
            bad = ~((np.hypot(ex - xd, ey - yd) < UNDISTORT_TOLERANCE) & (det > 0.0) & (radial > 0.0))
        x[bad] = np.nan
        y[bad] = np.nan
        return x, y


@dataclass(frozen=True)
class PinholeCamera(CameraMatrix):
    """An SDF ``<camera>``: image size (px), horizontal field of view (rad), clip planes (m), distortion."""

    width: int
    height: int
    hfov: float
    near: float = 0.1
    far: float = 100.0
    distortion: Distortion = field(default_factory=Distortion)
    effects: LensEffects = field(default_factory=LensEffects)

    distortion_model = "plumb_bob"
    center = np.zeros(3)  # the projection centre in the optical frame (m)

    def __post_init__(self) -> None:
        check_image(self.width, self.height, self.near, self.far)
        if not 0.0 < self.hfov < math.pi:
            raise ConfigError(f"a pinhole camera's horizontal_fov must be in (0, pi) rad, got {self.hfov}")

    @property
    def fx(self) -> float:
        return self.width / (2.0 * math.tan(0.5 * self.hfov))

    @property
    def D(self) -> np.ndarray:
        """plumb_bob coefficients (k1, k2, p1, p2, k3), as CameraInfo carries them."""
        d = self.distortion
        return np.array([d.k1, d.k2, d.p1, d.p2, d.k3])

    def _center(self) -> tuple[float, float]:
        """The distortion centre in normalized coordinates about the principal point."""
        c = self.distortion.center
        return (c[0] * self.width - self.cx) / self.fx, (c[1] * self.height - self.cy) / self.fy

    def project(self, points_optical: np.ndarray) -> np.ndarray:
        """Pixel coordinates (N, 2) of points (N, 3) in the optical frame (z > 0), distortion applied."""
        p = np.asarray(points_optical, dtype=float).reshape(-1, 3)
        cx_n, cy_n = self._center()
        xd, yd = self.distortion.apply(p[:, 0] / p[:, 2] - cx_n, p[:, 1] / p[:, 2] - cy_n)
        return np.column_stack([self.fx * (xd + cx_n) + self.cx, self.fy * (yd + cy_n) + self.cy])

    def pixel_rays(self) -> np.ndarray:
        """Unit ray directions (height, width, 3) in the optical frame through every pixel centre; NaN rows
        where the distortion cannot be undone (outside the lens's image)."""
        cx_n, cy_n = self._center()
        u, v = np.meshgrid(np.arange(self.width, dtype=float), np.arange(self.height, dtype=float))
        x, y = self.distortion.undo((u - self.cx) / self.fx - cx_n, (v - self.cy) / self.fy - cy_n)
        d = np.stack([x + cx_n, y + cy_n, np.ones_like(x)], axis=-1)
        return d / np.linalg.norm(d, axis=-1, keepdims=True)


# --- rendering -----------------------------------------------------------------------------
@numba.njit(parallel=True, cache=True)
def _trace_sdf_grid(values, ox, oy, oz, h, origin, dirs, t_min, t_max, tol, max_steps, out_t, out_n):
    """Sphere trace every ray from one origin through a grid distance field (eels_gz.terrain.fields.SdfGrid)."""
    for i in numba.prange(dirs.shape[0]):
        dx, dy, dz = dirs[i, 0], dirs[i, 1], dirs[i, 2]
        out_t[i] = np.inf
        if not (dx == dx):  # a NaN ray: no pixel there
            continue
        t = t_min
        for _ in range(max_steps):
            d, nx, ny, nz = sdf_grid_point(values, ox, oy, oz, h, origin[0] + t * dx, origin[1] + t * dy,
                                           origin[2] + t * dz)
            if d < tol:
                out_t[i] = t
                out_n[i, 0], out_n[i, 1], out_n[i, 2] = nx, ny, nz
                break
            t += max(d, tol)
            if t > t_max:
                break


def trace_terrain(field, origin: np.ndarray, dirs: np.ndarray, t_min: float, t_max: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Distance along each unit ray from ``origin`` to the terrain (inf where none within t_max) and the normal:
    numba for grid fields, closed forms where the field has one, unions member by member."""
    from eels_gz.terrain.fields import SdfGrid
    from eels_gz.terrain.primitives import Union

    n = len(dirs)
    if field is None:
        return np.full(n, np.inf), np.zeros((n, 3))
    if isinstance(field, Union):
        t, normals = np.full(n, np.inf), np.zeros((n, 3))
        for member in field.fields:
            tm, nm = trace_terrain(member, origin, dirs, t_min, t_max)
            closer = tm < t
            t[closer], normals[closer] = tm[closer], nm[closer]
        return t, normals
    if isinstance(field, SdfGrid):
        t, normals = np.empty(n), np.zeros((n, 3))
        _trace_sdf_grid(field.values, *field.origin, field.spacing, np.ascontiguousarray(origin, float),
                        np.ascontiguousarray(dirs, float), float(t_min), float(t_max), TRACE_TOLERANCE,
                        MAX_TRACE_STEPS, t, normals)
        return t, normals
    ok = np.isfinite(dirs).all(axis=1)
    t, normals = np.full(n, np.inf), np.zeros((n, 3))
    if ok.any():
        t[ok], normals[ok] = sphere_trace(field, np.broadcast_to(origin, (int(ok.sum()), 3)).copy(), dirs[ok],
                                          t_min, t_max)
    return t, normals


@dataclass(frozen=True)
class Lighting:
    """Lambertian shading: ambient + sun (world direction the light travels) + a light at the camera."""

    sun_direction: tuple[float, float, float] = (-0.5, 0.1, -0.9)
    ambient: float = 0.15
    sun: float = 0.45
    headlight: float = 0.4
    background: tuple[float, float, float] = (0.03, 0.03, 0.05)


@dataclass(frozen=True)
class Frame:
    """One rendered frame: range (H, W) m along each ray (inf: nothing), planar depth (H, W) m, hit normals
    (H, W, 3), albedo index (H, W): -1 nothing, 0 terrain, 1 robot. A renderer that shades as it rasterizes
    (eels_gz.dart.gl_render) gives ``rgb`` (H, W, 3) linear colour instead of normals (then ``normal`` and
    ``what`` may be None)."""

    range: np.ndarray
    depth: np.ndarray
    normal: np.ndarray | None
    what: np.ndarray | None
    rgb: np.ndarray | None = None


def render(camera: PinholeCamera, rays_optical: np.ndarray, T_world_optical: np.ndarray, field=None,
           shapes: list[Shape] = ()) -> Frame:
    """Cast the camera's pixel rays from its pose against the terrain field and the shapes (the tracer). Any
    camera model of eels_gz.sensors.camera_models; rays start at its ``center`` (CAHVORE's pupil shift is not
    rendered)."""
    h, w = camera.height, camera.width
    R = T_world_optical[:3, :3]
    origin = T_world_optical[:3, 3] + R @ np.asarray(camera.center, dtype=float)
    d_opt = rays_optical.reshape(-1, 3)
    d_world = d_opt @ R.T
    t, normals = trace_terrain(field, origin, d_world, 0.0, camera.far / max(1e-9, float(np.nanmin(d_opt[:, 2]))))
    what = np.where(np.isfinite(t), 0, -1)
    if shapes:
        ok = np.isfinite(d_world).all(axis=1)
        ts, ns = np.full(len(t), np.inf), np.zeros_like(normals)
        ts[ok], ns[ok] = ray_shapes(list(shapes), np.broadcast_to(origin, (int(ok.sum()), 3)).copy(), d_world[ok])
        closer = ts < t
        t[closer], normals[closer], what[closer] = ts[closer], ns[closer], 1
    with np.errstate(invalid="ignore"):
        depth = t * d_opt[:, 2]
    depth = np.where(np.isnan(d_opt[:, 2]), np.nan, depth)
    return Frame(t.reshape(h, w), depth.reshape(h, w), normals.reshape(h, w, 3), what.reshape(h, w))


def shade(frame: Frame, rays_world: np.ndarray, albedo: np.ndarray, lighting: Lighting = Lighting()) -> np.ndarray:
    """Linear RGB (H, W, 3) in [0, 1]: ``albedo`` (K, 3) indexed by ``frame.what``."""
    n = frame.normal
    sun = -np.asarray(lighting.sun_direction, dtype=float)
    sun /= np.linalg.norm(sun)
    lambert_sun = np.clip(n @ sun, 0.0, 1.0)
    lambert_head = np.clip(-np.einsum("hwk,hwk->hw", n, rays_world), 0.0, 1.0)
    light = lighting.ambient + lighting.sun * lambert_sun + lighting.headlight * lambert_head
    rgb = albedo[np.clip(frame.what, 0, None)] * light[..., None]
    rgb[frame.what < 0] = lighting.background
    return np.clip(rgb, 0.0, 1.0)


def depth_image(frame: Frame, camera: PinholeCamera) -> np.ndarray:
    """float32 depth (H, W) m: +inf beyond far (or nothing hit), -inf nearer than near, NaN outside the lens."""
    d = frame.depth.astype(np.float64)
    out = np.where(np.isnan(d), np.nan, np.where(d > camera.far, np.inf, np.where(d < camera.near, -np.inf, d)))
    return out.astype(np.float32)


def to_rgb8(rgb: np.ndarray, noise_stddev: float = 0.0, noise_mean: float = 0.0,
            rng: np.random.Generator | None = None) -> np.ndarray:
    """8-bit RGB of linear [0, 1] colour, with SDF gaussian image noise (in [0, 1] units) added first."""
    if noise_stddev or noise_mean:
        rng = rng or np.random.default_rng()
        rgb = rgb + noise_mean + noise_stddev * rng.standard_normal(rgb.shape)
    return np.clip(np.rint(np.clip(rgb, 0.0, 1.0) * 255.0), 0, 255).astype(np.uint8)
