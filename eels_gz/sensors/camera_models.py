"""Camera models beside the pinhole (eels_gz.sensors.camera): Gennery's CAHV,
CAHVOR and CAHVORE models, as JPL's flight cameras are calibrated, and the
equidistant fish-eye; lens effects (vignetting, gamma) shared by all models.

Every model gives the same interface as :class:`~eels_gz.sensors.camera.PinholeCamera`
(``width``, ``height``, ``near``, ``far``, ``project``, ``pixel_rays``, ``K``,
``P``, ``D``, ``distortion_model``, ``center``, ``effects``), in the REP-103
optical frame (z forward, x right, y down); pixel coordinates have integer
values at pixel centres.

**CAHV family** (Yakimovsky & Cunningham 1978; Gennery 2001, 2006; EELS-DARTS
§2.2.3, Fig. 8). The vectors C (m), A, O (unit), H, V (pixels) are given in
the *sensor* frame (Gazebo's: x forward, y left, z up), as a flight camera's
model is given in its mount frame; ``project`` and ``pixel_rays`` take and give
the optical frame. For a point P, with ``p = P - C``:

- CAHV: ``x = p.H / p.A``, ``y = p.V / p.A``;
- CAHVOR: ``zeta = p.O``, ``lambda = p - zeta O``, ``tau = |lambda|^2 / zeta^2``,
  ``mu = R0 + R1 tau + R2 tau^2``, then CAHV of ``p' = p + mu lambda``;
- CAHVORE (linearity L: 1 perspective, 0 fish-eye): the incidence angle theta
  of ``p`` about O solves ``zeta sin(theta) - |lambda| cos(theta) = (theta -
  sin(theta)) (E0 + E1 theta^2 + E2 theta^4)`` (the entrance pupil moves along
  O by ``s(theta) = (theta / sin(theta) - 1)(E0 + E1 theta^2 + E2 theta^4)``);
  ``chi = tan(L theta) / L`` (``sin`` for L < 0, ``theta`` for L = 0),
  ``p' = (|lambda| / chi) O + (1 + R0 + R1 chi^2 + R2 chi^4) lambda``, then CAHV.
  With L = 1 and E = 0 it is CAHVOR (``chi^2 = tau``).

Back-projection (``pixel_rays``) inverts CAHV in closed form and the radial
polynomial ``(1 + R0) chi + R1 chi^3 + R2 chi^5`` by Newton's method (as
JPL's cmod does); CAHVORE's rays start at the shifted pupil ``C + s O``
(``ray_origins``).

**Fish-eye** (SDF ``<lens><type>equidistant``; OpenCV's ``cv2.fisheye`` with
its k1..k4): ``r = f theta_d``, ``theta_d = theta (1 + k1 theta^2 + k2 theta^4 +
k3 theta^6 + k4 theta^8)``; ``f = (width / 2) / (hfov / 2)`` (gz's
``<scale_to_hfov>``), pixels beyond ``<cutoff_angle>`` see nothing.

**Lens effects** (EELS-DARTS' filter pipeline): vignetting
``(1 - v) + v cos^4(theta)`` of the pixel ray's angle theta to the optical
axis (natural cos^4 fall-off, ``v`` in [0, 1]), then gamma encoding
``I^(1 / gamma)`` of linear intensity, before noise and 8-bit quantization.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from eels_gz.errors import ConfigError

NEWTON_ITERATIONS = 100
NEWTON_TOLERANCE = 1e-12  # on chi (tan of the angle) or theta (rad): far below a pixel
# optical frame axes in the sensor frame (columns): z_opt = x_s, x_opt = -y_s, y_opt = -z_s (T_SENSOR_OPTICAL)
R_SENSOR_OPTICAL = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


@dataclass(frozen=True)
class LensEffects:
    """Vignetting strength ``vignetting`` in [0, 1] (cos^4 fall-off) and display ``gamma`` (> 0; 1: linear)."""

    vignetting: float = 0.0
    gamma: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.vignetting <= 1.0:
            raise ConfigError(f"vignetting must be in [0, 1], got {self.vignetting}")
        if not (self.gamma > 0.0 and math.isfinite(self.gamma)):
            raise ConfigError(f"gamma must be a positive number, got {self.gamma}")

    @property
    def is_identity(self) -> bool:
        return self.vignetting == 0.0 and self.gamma == 1.0

    def factor(self, rays_optical: np.ndarray) -> np.ndarray:
        """Vignetting gain (H, W) of unit rays (H, W, 3): ``(1 - v) + v cos^4(theta)``, 0 where there is no ray."""
        c = np.nan_to_num(rays_optical[..., 2], nan=0.0).clip(0.0, 1.0)
        return (1.0 - self.vignetting) + self.vignetting * c**4

    def apply(self, rgb: np.ndarray, gain: np.ndarray | None) -> np.ndarray:
        """Linear RGB (H, W, 3) in [0, 1] through vignetting (``gain`` from :meth:`factor`) and gamma."""
        if gain is not None and self.vignetting:
            rgb = rgb * gain[..., None]
        if self.gamma != 1.0:
            rgb = np.clip(rgb, 0.0, 1.0) ** (1.0 / self.gamma)
        return rgb


def _vec(v, name: str, unit: bool = False) -> np.ndarray:
    a = np.asarray(v, dtype=float).reshape(-1)
    if a.shape != (3,) or not np.isfinite(a).all():
        raise ConfigError(f"CAHVORE {name} must be 3 finite numbers, got {v!r}")
    if unit:
        n = np.linalg.norm(a)
        if not abs(n - 1.0) < 1e-6:
            raise ConfigError(f"CAHVORE {name} must be a unit vector, got {v!r} (norm {n})")
        a = a / n
    return a


def _radial_inverse(chi_d: np.ndarray, r: np.ndarray) -> np.ndarray:
    """chi with ``(1 + r0) chi + r1 chi^3 + r2 chi^5 = chi_d`` by Newton's method from chi_d; NaN where it
    does not converge or the polynomial is not increasing there (beyond the lens's fold)."""
    k1, k3, k5 = 1.0 + r[0], r[1], r[2]
    chi = chi_d.copy()
    with np.errstate(all="ignore"):
        for _ in range(NEWTON_ITERATIONS):
            c2 = chi * chi
            deriv = k1 + c2 * (3.0 * k3 + 5.0 * k5 * c2)
            step = (chi * (k1 + c2 * (k3 + k5 * c2)) - chi_d) / deriv
            chi = chi - step
            if np.nanmax(np.abs(step), initial=0.0) < NEWTON_TOLERANCE:
                break
        c2 = chi * chi
        ok = (np.abs(chi * (k1 + c2 * (k3 + k5 * c2)) - chi_d) < 1e-9) & (k1 + c2 * (3.0 * k3 + 5.0 * k5 * c2) > 0)
    return np.where(ok, chi, np.nan)


def check_image(width: float, height: float, near: float, far: float) -> None:
    """ConfigError unless the image size is positive integers and 0 <= near < far < inf (m)."""
    if int(width) != width or int(height) != height or width < 1 or height < 1:
        raise ConfigError(f"camera image size must be positive integers, got {width} x {height}")
    if not 0.0 <= near < far < math.inf:
        raise ConfigError(f"camera clip planes must satisfy 0 <= near < far < inf, got {near}, {far}")


@dataclass(frozen=True)
class CahvoreCamera:
    """Gennery's camera model (see the module docstring): ``kind`` cahv, cahvor or cahvore; vectors in the
    sensor frame; ``o`` defaults to ``a``, ``r`` and ``e`` to zero, ``linearity`` to 1 (perspective)."""

    width: int
    height: int
    c: tuple
    a: tuple
    h: tuple
    v: tuple
    o: tuple | None = None
    r: tuple = (0.0, 0.0, 0.0)
    e: tuple = (0.0, 0.0, 0.0)
    linearity: float = 1.0
    near: float = 0.1
    far: float = 100.0
    kind: str = "cahv"
    effects: LensEffects = field(default_factory=LensEffects)

    def __post_init__(self) -> None:
        check_image(self.width, self.height, self.near, self.far)
        if self.kind not in ("cahv", "cahvor", "cahvore"):
            raise ConfigError(f"camera model kind must be cahv, cahvor or cahvore, got '{self.kind}'")
        if not -1.0 <= self.linearity <= 1.0:
            raise ConfigError(f"CAHVORE linearity must be in [-1, 1], got {self.linearity}")
        A, H, V = _vec(self.a, "A", unit=True), _vec(self.h, "H"), _vec(self.v, "V")
        if abs(A @ np.cross(H, V)) < 1e-9:
            raise ConfigError("CAHV H, V and A are coplanar: no image plane")
        O = A if self.o is None else _vec(self.o, "O", unit=True)
        object.__setattr__(self, "_C", _vec(self.c, "C"))
        object.__setattr__(self, "_A", A)
        object.__setattr__(self, "_H", H)
        object.__setattr__(self, "_V", V)
        object.__setattr__(self, "_O", O)
        object.__setattr__(self, "_R", _vec(self.r, "R"))
        object.__setattr__(self, "_E", _vec(self.e, "E"))

    # --- CAHV's linear part: what camera_info can carry --------------------------------------------
    @property
    def hc(self) -> float:
        return float(self._A @ self._H)

    @property
    def vc(self) -> float:
        return float(self._A @ self._V)

    @property
    def hs(self) -> float:
        return float(np.linalg.norm(np.cross(self._A, self._H)))

    @property
    def vs(self) -> float:
        return float(np.linalg.norm(np.cross(self._A, self._V)))

    @property
    def K(self) -> np.ndarray:
        """The pinhole of CAHV's linear part (focal lengths hs, vs, principal point hc, vc; no skew term)."""
        return np.array([[self.hs, 0.0, self.hc], [0.0, self.vs, self.vc], [0.0, 0.0, 1.0]])

    @property
    def P(self) -> np.ndarray:
        return np.hstack([self.K, np.zeros((3, 1))])

    @property
    def D(self) -> np.ndarray:
        return np.zeros(5)

    distortion_model = "plumb_bob"  # camera_info carries CAHV's linear part only (no ROS model for O, R, E)

    @property
    def center(self) -> np.ndarray:
        """C in the optical frame (m)."""
        return R_SENSOR_OPTICAL.T @ self._C

    # --- the model, in the sensor frame ------------------------------------------------------------
    def project_sensor(self, points_sensor: np.ndarray) -> np.ndarray:
        """Image coordinates (N, 2) of points (N, 3) in the sensor frame (the model's own frame)."""
        p = np.asarray(points_sensor, dtype=float).reshape(-1, 3) - self._C
        if self.kind == "cahvore":
            p = self._cahvore_shift(p)
        elif self.kind == "cahvor":
            zeta = p @ self._O
            lam = p - zeta[:, None] * self._O
            tau = np.einsum("ij,ij->i", lam, lam) / (zeta * zeta)
            mu = self._R[0] + tau * (self._R[1] + tau * self._R[2])
            p = p + mu[:, None] * lam
        alpha = p @ self._A
        return np.column_stack([(p @ self._H) / alpha, (p @ self._V) / alpha])

    def _cahvore_shift(self, p: np.ndarray) -> np.ndarray:
        O, R, E, L = self._O, self._R, self._E, self.linearity
        zeta = p @ O
        lam3 = p - zeta[:, None] * O
        lam = np.linalg.norm(lam3, axis=1)
        theta = np.arctan2(lam, zeta)
        with np.errstate(all="ignore"):
            for _ in range(NEWTON_ITERATIONS):
                c, s = np.cos(theta), np.sin(theta)
                t2 = theta * theta
                ep = E[0] + t2 * (E[1] + t2 * E[2])
                dep = theta * (2.0 * E[1] + 4.0 * E[2] * t2)
                f = zeta * s - lam * c - (theta - s) * ep
                df = zeta * c + lam * s - (1.0 - c) * ep - (theta - s) * dep
                step = np.where(np.abs(df) > 1e-300, f / df, 0.0)
                theta = theta - step
                if np.nanmax(np.abs(step), initial=0.0) < NEWTON_TOLERANCE:
                    break
            if L > 1e-15:
                chi = np.tan(L * theta) / L
            elif L < -1e-15:
                chi = np.sin(L * theta) / L
            else:
                chi = theta
            small = theta < 1e-12
            c2 = chi * chi
            mu = R[0] + c2 * (R[1] + c2 * R[2])
            zp = np.where(small, zeta, lam / np.where(small, 1.0, chi))
            out = zp[:, None] * O + np.where(small, 1.0, 1.0 + mu)[:, None] * lam3
        return out

    def rays_sensor(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(origins, unit directions) (N, 3) in the sensor frame of image points (N, 2); NaN where none."""
        xy = np.asarray(xy, dtype=float).reshape(-1, 2)
        A, H, V, O, R = self._A, self._H, self._V, self._O, self._R
        # the CAHV ray: the intersection of the planes (H - x A).p = 0 and (V - y A).p = 0
        g = H[None, :] - xy[:, :1] * A
        f = V[None, :] - xy[:, 1:] * A
        d = np.cross(g, f) / (A @ np.cross(H, V))
        d *= np.sign(d @ A)[:, None]  # the half line in front of the camera
        origins = np.broadcast_to(self._C, d.shape).copy()
        if self.kind == "cahv" or not (R.any() or self.kind == "cahvore"):
            return origins, d / np.linalg.norm(d, axis=1, keepdims=True)
        zeta = d @ O
        lam3 = d - zeta[:, None] * O
        lam = np.linalg.norm(lam3, axis=1)
        with np.errstate(all="ignore"):
            chi = _radial_inverse(lam / zeta, R)
            u = np.where(lam[:, None] > 0, lam3 / np.where(lam > 0, lam, 1.0)[:, None], 0.0)
            if self.kind == "cahvor":
                theta = np.arctan(chi)
            else:
                L = self.linearity
                if L > 1e-15:
                    theta = np.arctan(L * chi) / L
                elif L < -1e-15:
                    theta = np.arcsin(L * chi) / L
                else:
                    theta = chi
                t2 = theta * theta
                s = np.where(theta > 1e-12, theta / np.sin(theta) - 1.0, 0.0) * (
                    self._E[0] + t2 * (self._E[1] + t2 * self._E[2]))
                origins = origins + s[:, None] * O
            rays = np.cos(theta)[:, None] * O + np.sin(theta)[:, None] * u
        bad = ~np.isfinite(rays).all(axis=1) | (zeta <= 0)
        rays[bad] = np.nan
        return origins, rays

    # --- the common interface, in the optical frame ------------------------------------------------
    def project(self, points_optical: np.ndarray) -> np.ndarray:
        """Pixel coordinates (N, 2) of points (N, 3) in the optical frame."""
        return self.project_sensor(np.asarray(points_optical, dtype=float).reshape(-1, 3) @ R_SENSOR_OPTICAL.T)

    def _pixels(self) -> np.ndarray:
        u, v = np.meshgrid(np.arange(self.width, dtype=float), np.arange(self.height, dtype=float))
        return np.column_stack([u.ravel(), v.ravel()])

    def pixel_rays(self) -> np.ndarray:
        """Unit rays (H, W, 3) in the optical frame through every pixel centre; NaN where there is none."""
        _, d = self.rays_sensor(self._pixels())
        return (d @ R_SENSOR_OPTICAL).reshape(self.height, self.width, 3)

    def ray_origins(self) -> np.ndarray:
        """Ray origins (H, W, 3) in the optical frame (m): C, or CAHVORE's moving entrance pupil."""
        o, _ = self.rays_sensor(self._pixels())
        return (o @ R_SENSOR_OPTICAL).reshape(self.height, self.width, 3)


class CameraMatrix:
    """The camera matrix of an image with square pixels and its principal point at the centre, for a
    class that gives ``fx`` (px), ``width`` and ``height``: ``fy``, ``cx``, ``cy``, ``K`` and ``P``."""

    @property
    def fy(self) -> float:
        return self.fx  # square pixels, as Gazebo's projection gives

    @property
    def cx(self) -> float:
        return 0.5 * self.width

    @property
    def cy(self) -> float:
        return 0.5 * self.height

    @property
    def K(self) -> np.ndarray:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    @property
    def P(self) -> np.ndarray:
        return np.hstack([self.K, np.zeros((3, 1))])


@dataclass(frozen=True)
class FisheyeCamera(CameraMatrix):
    """Equidistant fish-eye (see the module docstring): image size (px), horizontal field of view (rad, up to
    2 pi), clip planes (m), OpenCV fish-eye coefficients k1..k4 (k = 0: the ideal equidistant lens), cutoff
    angle (rad from the optical axis; pixels beyond it see nothing)."""

    width: int
    height: int
    hfov: float
    near: float = 0.1
    far: float = 100.0
    k: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    cutoff: float = math.pi
    effects: LensEffects = field(default_factory=LensEffects)

    def __post_init__(self) -> None:
        check_image(self.width, self.height, self.near, self.far)
        if not 0.0 < self.hfov <= 2.0 * math.pi:
            raise ConfigError(f"a fish-eye camera's horizontal_fov must be in (0, 2 pi] rad, got {self.hfov}")
        if len(self.k) != 4 or not all(math.isfinite(x) for x in self.k):
            raise ConfigError(f"fish-eye distortion needs 4 finite coefficients k1..k4, got {self.k}")
        if not 0.0 < self.cutoff <= math.pi:
            raise ConfigError(f"fish-eye cutoff_angle must be in (0, pi] rad, got {self.cutoff}")

    @property
    def fx(self) -> float:
        return 0.5 * self.width / (0.5 * self.hfov)

    @property
    def D(self) -> np.ndarray:
        return np.array(self.k, dtype=float)

    distortion_model = "equidistant"
    center = np.zeros(3)

    def _theta_d(self, theta: np.ndarray) -> np.ndarray:
        k1, k2, k3, k4 = self.k
        t2 = theta * theta
        return theta * (1.0 + t2 * (k1 + t2 * (k2 + t2 * (k3 + t2 * k4))))

    def project(self, points_optical: np.ndarray) -> np.ndarray:
        """Pixel coordinates (N, 2) of points (N, 3) in the optical frame (any direction but straight back)."""
        p = np.asarray(points_optical, dtype=float).reshape(-1, 3)
        r = np.hypot(p[:, 0], p[:, 1])
        theta = np.arctan2(r, p[:, 2])
        scale = np.where(r > 0, self._theta_d(theta) / np.where(r > 0, r, 1.0), 1.0 / np.where(p[:, 2] > 0, p[:, 2],
                                                                                                   1.0))
        return np.column_stack([self.fx * p[:, 0] * scale + self.cx, self.fy * p[:, 1] * scale + self.cy])

    def pixel_rays(self) -> np.ndarray:
        """Unit rays (H, W, 3) in the optical frame; NaN beyond the cutoff angle or the lens's fold."""
        u, v = np.meshgrid(np.arange(self.width, dtype=float), np.arange(self.height, dtype=float))
        x, y = (u - self.cx) / self.fx, (v - self.cy) / self.fy
        theta_d = np.hypot(x, y)
        theta = theta_d.copy()
        if any(self.k):
            k1, k2, k3, k4 = self.k
            with np.errstate(all="ignore"):
                for _ in range(NEWTON_ITERATIONS):
                    t2 = theta * theta
                    d = 1.0 + t2 * (3.0 * k1 + t2 * (5.0 * k2 + t2 * (7.0 * k3 + t2 * 9.0 * k4)))
                    step = (self._theta_d(theta) - theta_d) / d
                    theta = theta - step
                    if np.nanmax(np.abs(step), initial=0.0) < NEWTON_TOLERANCE:
                        break
                t2 = theta * theta
                slope = 1.0 + t2 * (3.0 * k1 + t2 * (5.0 * k2 + t2 * (7.0 * k3 + t2 * 9.0 * k4)))
                bad = ~((np.abs(self._theta_d(theta) - theta_d) < 1e-9) & (slope > 0))
            theta[bad] = np.nan
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.where(theta_d > 0, np.sin(theta) / np.where(theta_d > 0, theta_d, 1.0), 0.0)
        rays = np.stack([x * s, y * s, np.cos(theta)], axis=-1)
        rays[~(theta <= self.cutoff)] = np.nan
        return rays
