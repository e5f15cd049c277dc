"""The host's camera renderer: OpenGL rasterisation through EGL (moderngl on
Mesa; llvmpipe where there is no GPU), chosen by measurement over the numba
sphere tracer and Embree ray casting (bench/camera.py, docs/benchmarks.md).

A camera is rendered as one or more pinhole *views* from its projection
centre: a pinhole camera without distortion is one view at its own
intrinsics (each pixel centre is sampled exactly); any other model (Brown-
Conrady, CAHV family, fish-eye) is one pinhole view covering its rays, or
cube faces when its rays reach beyond 60 degrees off the axis, each at the
model's finest angular pixel pitch, and every pixel takes the nearest view
sample along its own ray (eels_gz.sensors.camera_models' ``pixel_rays``).

The fragment shader writes the lit linear colour (the tracer's Lambertian
shading: ambient, the world's sun, a light at the camera; the face normal
turned toward the camera), the range ``|p_eye|`` and the facet's plane in
float32. A pixel served by its own view takes that range; one sampled from
another view intersects its own ray with the sampled facet's plane, so its
range is exact on the facet wherever the nearest sample fell. Depth is range
x the ray's optical z, as the tracer gives it. Surfaces nearer than a
quarter of ``<near>`` are clipped (the tracer reports them as -inf depth).
The terrain is triangulated once per field (eels_gz.sensors.tessellate), the
robot's shapes each frame.

If moderngl or an EGL display cannot be had, :func:`gl_renderer` returns
None with the reason, and the cameras fall back on the tracer.
"""

from __future__ import annotations

import logging
import math
import os

import numpy as np

from eels_gz.sensors.camera import Frame, Lighting, PinholeCamera
from eels_gz.sensors.tessellate import shapes_triangles, terrain_triangles

log = logging.getLogger(__name__)

WIDE_ANGLE = math.radians(60.0)  # beyond this angle off the axis a camera is rendered on cube faces
MAX_VIEW_SIZE = 4096
PITCH_PERCENTILE = 2.0
CHUNK_TRIANGLES = 4096
MAX_TERRAINS = 4  # terrains kept uploaded per process

_VERTEX = """#version 330
uniform mat4 view;  // world -> eye (the view's pinhole frame: z forward, x right, y down)
uniform mat4 clip;  // eye -> clip
in vec3 p;
out vec3 pe;
void main() {
    vec4 e = view * vec4(p, 1.0);
    pe = e.xyz;
    gl_Position = clip * e;
}
"""
_FRAGMENT = """#version 330
uniform vec3 albedo;
uniform vec3 sun_eye;  // direction toward the sun, eye frame
uniform vec3 light;    // ambient, sun, headlight
uniform bool range_only;
in vec3 pe;
layout(location = 0) out vec4 out_colour;  // linear rgb, range (m)
layout(location = 1) out vec4 out_plane;   // the surface's plane in the eye frame: unit normal n, n . p (m)
void main() {
    float r = length(pe);
    if (range_only) {
        out_colour = vec4(r, 0.0, 0.0, 0.0);
        return;
    }
    vec3 ray = pe / r;
    vec3 n = normalize(cross(dFdx(pe), dFdy(pe)));
    if (dot(n, ray) > 0.0) n = -n;
    float l = light.x + light.y * max(dot(n, sun_eye), 0.0) + light.z * max(-dot(n, ray), 0.0);
    out_colour = vec4(clamp(albedo * l, 0.0, 1.0), r);
    out_plane = vec4(n, dot(n, pe));
}
"""

# cube faces: rotation of each face's pinhole frame in the camera's optical frame (columns: x, y, z axes)
_CUBE = [np.column_stack(c) for c in (
    ((1, 0, 0), (0, 1, 0), (0, 0, 1)), ((0, 0, -1), (0, 1, 0), (1, 0, 0)), ((0, 0, 1), (0, 1, 0), (-1, 0, 0)),
    ((1, 0, 0), (0, 0, -1), (0, 1, 0)), ((1, 0, 0), (0, 0, 1), (0, -1, 0)), ((-1, 0, 0), (0, 1, 0), (0, 0, -1)))]


def clip_matrix(f: float, cx: float, cy: float, w: int, h: int, near: float, far: float) -> np.ndarray:
    """Eye (z forward, y down) to clip coordinates of a pinhole whose integer pixel coordinates are pixel
    centres. Image row v goes to window row v (GL counts rows from the bottom, and reads them back first), so
    the read-back is the image, top row first, with no flip."""
    return np.array([[2 * f / w, 0.0, 2 * (cx + 0.5) / w - 1.0, 0.0],
                     [0.0, 2 * f / h, 2 * (cy + 0.5) / h - 1.0, 0.0],
                     [0.0, 0.0, (far + near) / (far - near), -2 * far * near / (far - near)],
                     [0.0, 0.0, 1.0, 0.0]])


class _View:
    """One pinhole view of a camera: rotation in the optical frame, intrinsics and the camera pixels it serves."""

    def __init__(self, R: np.ndarray, f: float, cx: float, cy: float, w: int, h: int):
        self.R, self.f, self.cx, self.cy, self.w, self.h = R, f, cx, cy, w, h
        self.pixels = np.zeros(0, dtype=np.intp)  # flat camera pixel indices
        self.index = np.zeros(0, dtype=np.intp)  # flat view pixel indices
        self.rays = np.zeros((0, 3))  # those camera pixels' rays in the view's frame


class CameraViews:
    """The views of one camera model and each pixel's sample in them (see the module docstring)."""

    def __init__(self, camera, rays_optical: np.ndarray):
        self.camera = camera
        h, w = camera.height, camera.width
        rays = rays_optical.reshape(-1, 3)
        self.ray_z = rays_optical[..., 2].astype(np.float32)
        ok = np.isfinite(rays).all(axis=1)
        self.valid = ok.reshape(h, w)
        if isinstance(camera, PinholeCamera) and camera.distortion.is_zero:
            v = _View(np.eye(3), camera.fx, camera.cx, camera.cy, w, h)
            self.views, self.direct = [v], True
            return
        self.direct = False
        pitch = _finest_pitch(rays_optical)
        theta = np.arccos(np.clip(rays[ok, 2], -1.0, 1.0))
        if theta.size and theta.max() < WIDE_ANGLE:
            tx, ty = rays[ok, 0] / rays[ok, 2], rays[ok, 1] / rays[ok, 2]
            f = 1.0 / pitch
            x0, x1, y0, y1 = tx.min(), tx.max(), ty.min(), ty.max()
            vw = min(MAX_VIEW_SIZE, int(math.ceil((x1 - x0) * f)) + 3)
            vh = min(MAX_VIEW_SIZE, int(math.ceil((y1 - y0) * f)) + 3)
            f = min(f, (vw - 3) / max(x1 - x0, 1e-12), (vh - 3) / max(y1 - y0, 1e-12))
            candidates = [_View(np.eye(3), f, 1.0 - x0 * f, 1.0 - y0 * f, vw, vh)]
        else:
            n = min(MAX_VIEW_SIZE, int(math.ceil(2.0 / pitch)))
            candidates = [_View(R, 0.5 * n, 0.5 * n - 0.5, 0.5 * n - 0.5, n, n) for R in _CUBE]
        face = np.full(len(rays), -1)
        if len(candidates) > 1:
            along = np.stack([rays @ v.R[:, 2] for v in candidates], axis=1)
            face[ok] = np.argmax(along[ok], axis=1)
        else:
            face[ok] = 0
        self.views = []
        for i, v in enumerate(candidates):
            pix = np.flatnonzero(face == i)
            if not pix.size:
                continue
            d = rays[pix] @ v.R  # the rays in the view's frame
            u = np.rint(v.f * d[:, 0] / d[:, 2] + v.cx).astype(np.intp).clip(0, v.w - 1)
            r = np.rint(v.f * d[:, 1] / d[:, 2] + v.cy).astype(np.intp).clip(0, v.h - 1)
            # render only the part of the view the camera's pixels sample (a cube face is often a sliver)
            u0, r0 = u.min(), r.min()
            v.cx, v.cy, v.w, v.h = v.cx - u0, v.cy - r0, int(u.max() - u0 + 1), int(r.max() - r0 + 1)
            u, r = u - u0, r - r0
            v.pixels, v.index, v.rays = pix, r * v.w + u, d
            self.views.append(v)


def _finest_pitch(rays: np.ndarray) -> float:
    """The angle (rad) between neighbouring pixels' rays, horizontally or vertically, that all but
    ``PITCH_PERCENTILE`` % of the pixels exceed: the view's pixels are at least as fine nearly everywhere.
    (Not the minimum: near a lens's fold neighbouring rays converge, and the view would grow without bound.)"""
    angles = []
    for a, b in ((rays[:, 1:], rays[:, :-1]), (rays[1:], rays[:-1])):
        c = np.einsum("...k,...k->...", a, b)
        c = c[np.isfinite(c)]
        angles.append(np.arccos(np.clip(c, -1.0, 1.0)))
    angles = np.concatenate(angles)
    angles = angles[angles > 0]
    return max(float(np.percentile(angles, PITCH_PERCENTILE)) if angles.size else 1e-3, 1e-5)


class TerrainChunks:
    """A terrain's triangles in spatial chunks of at most ``CHUNK_TRIANGLES`` (median splits along the longest
    axis), each with a bounding sphere, so that a view draws only the chunks its frustum meets: a camera looking
    at a wall nearby (the head's stereo pairs in a tube) then costs what it sees, not the whole scan."""

    def __init__(self, tris: np.ndarray):
        centroids = tris.mean(axis=1)
        order = np.arange(len(tris))
        pending, done = [order], []
        while pending:
            idx = pending.pop()
            if len(idx) <= CHUNK_TRIANGLES:
                done.append(idx)
                continue
            c = centroids[idx]
            axis = int(np.argmax(c.max(axis=0) - c.min(axis=0)))
            half = len(idx) // 2
            part = np.argpartition(c[:, axis], half)
            pending += [idx[part[:half]], idx[part[half:]]]
        self.triangles = tris[np.concatenate(done)]
        counts = np.array([len(d) for d in done])
        self.first = 3 * np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.count = 3 * counts
        self.centre = np.array([tris[d].reshape(-1, 3).min(axis=0) + tris[d].reshape(-1, 3).max(axis=0)
                                for d in done]) / 2
        self.radius = np.array([np.linalg.norm(tris[d].reshape(-1, 3) - c, axis=1).max()
                                for d, c in zip(done, self.centre)])
        self.vao = self.vbo = None

    def visible(self, R_wv: np.ndarray, eye: np.ndarray, v: _View, near: float, far: float) -> np.ndarray:
        """Which chunks' bounding spheres meet the view's frustum (conservative)."""
        p = (self.centre - eye) @ R_wv  # the chunk centres in the view frame
        r = self.radius
        ok = (p[:, 2] > near - r) & (p[:, 2] < far + r)
        # side planes through the eye: x / z between the image's left and right edges, y / z likewise
        for axis, lo, hi in ((0, (-0.5 - v.cx) / v.f, (v.w - 0.5 - v.cx) / v.f),
                             (1, (-0.5 - v.cy) / v.f, (v.h - 0.5 - v.cy) / v.f)):
            for slope, sign in ((lo, 1.0), (hi, -1.0)):
                n = np.zeros(3)
                n[axis], n[2] = sign, -sign * slope  # inside: sign (x - slope z) >= 0
                ok &= p @ n > -r * np.linalg.norm(n)
        return ok

    def draw(self, R_wv: np.ndarray, eye: np.ndarray, v: _View, near: float, far: float) -> None:
        ok = self.visible(R_wv, eye, v, near, far)
        if not ok.any():
            return
        # consecutive visible chunks in one draw call
        edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(np.int8), [0]])))
        for a, b in zip(edges[::2], edges[1::2]):
            self.vao.render(first=int(self.first[a]), vertices=int(self.first[b - 1] + self.count[b - 1]
                                                                    - self.first[a]))


class GLRenderer:
    """One EGL context (per process); terrain meshes cached per distance field."""

    def __init__(self):
        import moderngl

        self.mgl = moderngl
        self.ctx = moderngl.create_context(standalone=True, backend="egl")
        self.name = f"OpenGL {self.ctx.info['GL_VERSION']} ({self.ctx.info['GL_RENDERER']}) through EGL"
        self.prog = self.ctx.program(vertex_shader=_VERTEX, fragment_shader=_FRAGMENT)
        self._terrain: dict[int, tuple] = {}
        self._fbos: dict[tuple[int, int], object] = {}
        self._robot = None  # (vbo capacity, vbo, vao)
        self._robot_key, self._robot_count = None, 0

    def prepare(self, field) -> None:
        """Triangulate and upload a terrain field once; TypeError if it has no triangulation."""
        self._terrain_vao(field)

    def _terrain_vao(self, field):
        key = id(field)
        if key not in self._terrain:
            self.upload_terrain(field, terrain_triangles(field))
        return self._terrain[key][1]

    def upload_terrain(self, field, tris) -> None:
        """Upload a field's triangles (N, 3, 3), sorted into chunks (:class:`TerrainChunks`)."""
        if tris is None or not len(tris):
            self._terrain[id(field)] = (field, None)
            return
        chunks = TerrainChunks(tris)
        vbo = self.ctx.buffer(np.ascontiguousarray(chunks.triangles, dtype="f4").tobytes())
        chunks.vao = self.ctx.vertex_array(self.prog, [(vbo, "3f", "p")])
        chunks.vbo, chunks.triangles = vbo, None  # on the GPU now
        # the entry holds the field, so its id is not reused while cached; runs one after another in one
        # process (tests, sweeps) keep the last few terrains, not all
        while len(self._terrain) >= MAX_TERRAINS:
            _, old = self._terrain.pop(next(iter(self._terrain)))
            if old is not None:
                old.vao.release()
                old.vbo.release()
        self._terrain[id(field)] = (field, chunks)

    def _robot_vao(self, shapes, key):
        """The robot's triangles uploaded for this instant: ``shapes`` (a list or a callable giving it) are
        tessellated once per ``key`` (the cameras due at one instant on one link share them)."""
        if key is None or key != self._robot_key:
            shapes = shapes() if callable(shapes) else shapes
            tris = shapes_triangles(shapes) if shapes else np.zeros((0, 3, 3))
            self._robot_key, self._robot_count = key, len(tris) * 3
            if len(tris):
                data = np.ascontiguousarray(tris, dtype="f4").tobytes()
                if self._robot is None or self._robot[0] < len(data):
                    vbo = self.ctx.buffer(reserve=max(len(data), 1 << 16), dynamic=True)
                    self._robot = (vbo.size, vbo, self.ctx.vertex_array(self.prog, [(vbo, "3f", "p")]))
                self._robot[1].write(data)
        return (self._robot[2], self._robot_count) if self._robot_count else None

    def _fbo(self, w: int, h: int, mode: str):
        """A framebuffer per size and output: ``rgb8`` (RGBA8: shaded colour, quantized by GL), ``range``
        (R32F: range), ``full`` (RGBA32F colour + range, RGBA32F facet plane)."""
        key = (w, h, mode)
        if key not in self._fbos:
            if mode == "rgb8":
                colour = [self.ctx.texture((w, h), 4, dtype="f1")]
            elif mode == "range":
                colour = [self.ctx.texture((w, h), 1, dtype="f4")]
            else:
                colour = [self.ctx.texture((w, h), 4, dtype="f4"), self.ctx.texture((w, h), 4, dtype="f4")]
            self._fbos[key] = self.ctx.framebuffer(colour, self.ctx.depth_renderbuffer((w, h)))
        return self._fbos[key]

    def render(self, views: CameraViews, T_world_optical: np.ndarray, field, shapes, albedo: np.ndarray,
               lighting: Lighting, want: str = "both", shapes_key=None) -> Frame:
        """The camera's frame from its optical frame's world pose: ``rgb`` (lit linear colour, float32; uint8
        when ``want`` is ``rgb8``: a plain pinhole's image with no noise or lens effects) and range and depth
        (not with ``rgb8``; only they with ``depth``). ``shapes``: the robot's shapes (or a callable giving
        them), tessellated once per ``shapes_key``."""
        cam = views.camera
        h, w = cam.height, cam.width
        terrain = self._terrain_vao(field)
        robot = self._robot_vao(shapes, shapes_key)
        R_wo = T_world_optical[:3, :3]
        eye = T_world_optical[:3, 3] + R_wo @ np.asarray(cam.center, dtype=float)
        sun = -np.asarray(lighting.sun_direction, dtype=float)
        sun /= np.linalg.norm(sun)
        near = max(1e-3, 0.25 * cam.near)
        far = 1.01 * cam.far
        self.prog["light"].value = (lighting.ambient, lighting.sun, lighting.headlight)
        self.ctx.enable(self.mgl.DEPTH_TEST)
        bg = tuple(float(c) for c in lighting.background)
        draw = (R_wo, eye, near, far, sun, terrain, robot, albedo, bg)
        if views.direct and want == "rgb8":
            return Frame(None, None, None, None, self._draw(views.views[0], *draw, "rgb8"))
        if views.direct:
            mode = "range" if want == "depth" else "full"
            out = self._draw(views.views[0], *draw, mode)
            rgb, rng = (None, out) if mode == "range" else (out[0][..., :3], out[0][..., 3])
        else:
            rgb = np.empty((h * w, 3), dtype=np.float32)
            rng = np.full(h * w, np.inf, dtype=np.float32)
            rgb[:] = bg
            for v in views.views:
                out, plane = self._draw(v, *draw, "full")
                out, plane = out.reshape(-1, 4)[v.index], plane.reshape(-1, 4)[v.index]
                rgb[v.pixels] = out[:, :3]
                # the pixel's own ray against the sampled surface's plane: exact on a facet, wherever in the
                # facet the nearest view sample fell
                with np.errstate(divide="ignore", invalid="ignore"):
                    t = plane[:, 3] / np.einsum("ij,ij->i", plane[:, :3], v.rays)
                rng[v.pixels] = np.where(np.isfinite(out[:, 3]) & (t > 0), t, out[:, 3])
            rgb, rng = rgb.reshape(h, w, 3), rng.reshape(h, w)
        rng = np.where(views.valid, rng, np.inf)
        with np.errstate(invalid="ignore"):
            depth = np.where(views.valid, rng * views.ray_z, np.nan)
        return Frame(rng, depth, None, None, rgb)

    def _draw(self, v: _View, R_wo, eye, near, far, sun, terrain, robot, albedo, bg, mode: str):
        """One view in ``mode`` (see :meth:`_fbo`): (h, w, 3) uint8, (h, w) range, or (h, w, 4) colour + range
        and (h, w, 4) facet planes; row 0 at the top (see :func:`clip_matrix`)."""
        R_wv = R_wo @ v.R
        view = np.eye(4)
        view[:3, :3] = R_wv.T
        view[:3, 3] = -R_wv.T @ eye
        self.prog["view"].write(view.T.astype("f4").tobytes())
        self.prog["clip"].write(clip_matrix(v.f, v.cx, v.cy, v.w, v.h, near, far).T.astype("f4").tobytes())
        self.prog["sun_eye"].value = tuple(float(c) for c in R_wv.T @ sun)
        self.prog["range_only"].value = mode == "range"
        fbo = self._fbo(v.w, v.h, mode)
        fbo.use()
        fbo.clear(*((np.inf, 0.0, 0.0) if mode == "range" else bg), np.inf, depth=1.0)
        if terrain is not None:
            self.prog["albedo"].value = tuple(float(c) for c in albedo[0])
            terrain.draw(R_wv, eye, v, near, far)
        if robot is not None:
            self.prog["albedo"].value = tuple(float(c) for c in albedo[1])
            robot[0].render(vertices=robot[1])
        if mode == "rgb8":
            return np.frombuffer(fbo.read(components=3, alignment=1), dtype=np.uint8).reshape(v.h, v.w, 3)
        if mode == "range":
            return np.frombuffer(fbo.read(components=1, dtype="f4"), dtype=np.float32).reshape(v.h, v.w)
        out = np.frombuffer(fbo.read(components=4, dtype="f4"), dtype=np.float32).reshape(v.h, v.w, 4)
        plane = np.frombuffer(fbo.read(components=4, dtype="f4", attachment=1), dtype=np.float32)
        return out, plane.reshape(v.h, v.w, 4)


_RENDERER: list = []  # [GLRenderer | None, reason, pid]


def gl_renderer() -> tuple[GLRenderer | None, str]:
    """The process's GL renderer, made on first use, or None and why it cannot start (then cameras use the
    tracer). A forked process (a sweep's warm worker) makes its own: a GL context does not survive a fork."""
    if not _RENDERER or _RENDERER[2:] not in ([], [os.getpid()]):
        try:
            r = GLRenderer()
            _RENDERER[:] = [r, r.name, os.getpid()]
        except Exception as exc:  # no moderngl, no EGL display, no GL 3.3: the tracer serves
            _RENDERER[:] = [None, f"{type(exc).__name__}: {exc}".strip(), os.getpid()]
    return _RENDERER[0], _RENDERER[1]
