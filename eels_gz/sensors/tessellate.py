"""Triangles of what the cameras see, for a rasterising renderer
(eels_gz.dart.gl_render): the terrain's distance field and the robot's
collision shapes, as (N, 3, 3) world vertices (m).

- ``Plane`` / ``Slope``: a square of ``PLANE_HALF_SIZE`` about the foot of
  the origin on the plane, cut into ``PLANE_CELLS`` x ``PLANE_CELLS`` cells
  (small triangles keep float32 interpolation exact to well under 1 mm);
- ``Tube``: its bore, ``TUBE_SEGMENTS`` facets around (chord error
  ``r (1 - cos(pi / n))``: 0.011 mm at r = 0.6 m), cut along the axis;
- ``SdfGrid``: the zero level set by marching cubes (scikit-image), the same
  surface the tracer's trilinear field has at the grid's vertices and edges;
- ``HeightField``: two triangles per raster cell;
- ``Union``: its members.

Other analytic primitives have no tessellation: :func:`terrain_triangles`
raises ``TypeError`` and the cameras use the tracer.
"""

from __future__ import annotations

import math

import numpy as np

PLANE_HALF_SIZE = 2000.0  # m
PLANE_CELLS = 64
TUBE_SEGMENTS = 512
TUBE_CUT = 0.5  # m, facet length along the axis
INFINITE_TUBE_LENGTH = 2000.0  # m, what an unbounded tube is drawn as
SPHERE_SEGMENTS = (32, 16)  # around, pole to pole
CYLINDER_SEGMENTS = 48


def _grid_quads(P: np.ndarray) -> np.ndarray:
    """Triangles (N, 3, 3) of a (n, m, 3) grid of points, two per cell."""
    a, b, c, d = P[:-1, :-1], P[1:, :-1], P[1:, 1:], P[:-1, 1:]
    return np.concatenate([np.stack([a, b, c], axis=-2).reshape(-1, 3, 3),
                           np.stack([a, c, d], axis=-2).reshape(-1, 3, 3)])


def _plane(point: np.ndarray, normal: np.ndarray) -> np.ndarray:
    n = normal / np.linalg.norm(normal)
    helper = np.eye(3)[int(np.argmin(np.abs(n)))]
    e1 = np.cross(n, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    foot = point - (point @ n) * n  # the plane's point nearest the world origin
    s = np.linspace(-PLANE_HALF_SIZE, PLANE_HALF_SIZE, PLANE_CELLS + 1)
    P = foot + s[:, None, None] * e1 + s[None, :, None] * e2
    return _grid_quads(P)


def _tube(tube) -> np.ndarray:
    a = tube.axis
    helper = np.eye(3)[int(np.argmin(np.abs(a)))]
    e1 = np.cross(a, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(a, e1)
    length = tube.length if math.isfinite(tube.length) else INFINITE_TUBE_LENGTH
    s = np.linspace(-length / 2, length / 2, max(2, int(math.ceil(length / TUBE_CUT)) + 1))
    phi = np.linspace(0.0, 2 * math.pi, TUBE_SEGMENTS + 1)
    ring = tube.radius * (np.cos(phi)[:, None] * e1 + np.sin(phi)[:, None] * e2)
    P = tube.center + s[:, None, None] * a + ring[None, :, :]
    return _grid_quads(P)


def _sdf_grid(grid) -> np.ndarray:
    from skimage.measure import marching_cubes

    values = np.array(grid.values, dtype=np.float32)  # a writable copy (the field's array is frozen)
    if values.min() > 0 or values.max() < 0:
        return np.zeros((0, 3, 3))
    verts, faces, _, _ = marching_cubes(values, level=0.0, spacing=(grid.spacing,) * 3)
    return (verts + np.asarray(grid.origin))[faces]


def _heightfield(hf) -> np.ndarray:
    h = np.asarray(hf.heights, dtype=float)
    ny, nx = h.shape
    x = hf.origin_xy[0] + hf.spacing_xy[0] * np.arange(nx)
    y = hf.origin_xy[1] + hf.spacing_xy[1] * np.arange(ny)
    X, Y = np.meshgrid(x, y)
    return _grid_quads(np.stack([X, Y, h], axis=-1))


def terrain_triangles(field) -> np.ndarray | None:
    """World triangles (N, 3, 3) of a terrain distance field (see the module docstring); None for no field."""
    from eels_gz.terrain.fields import HeightField, SdfGrid
    from eels_gz.terrain.primitives import Plane, Slope, Tube, Union

    if field is None:
        return None
    if isinstance(field, Union):
        parts = [terrain_triangles(f) for f in field.fields]
        return np.concatenate([p for p in parts if p is not None and len(p)] or [np.zeros((0, 3, 3))])
    if isinstance(field, Slope):
        field = field.plane
    if isinstance(field, Plane):
        return _plane(field.point, field.normal)
    if isinstance(field, Tube):
        return _tube(field)
    if isinstance(field, SdfGrid):
        return _sdf_grid(field)
    if isinstance(field, HeightField):
        return _heightfield(field)
    raise TypeError(f"no triangulation of a {type(field).__name__} terrain for the GL renderer")


def _unit_box() -> np.ndarray:
    c = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return np.array([[c[a], c[b], c[d]] for a, b, _, d in quads] + [[c[b], c[cc], c[d]] for _, b, cc, d in quads])


def _unit_sphere() -> np.ndarray:
    n, m = SPHERE_SEGMENTS
    phi, th = np.linspace(0, 2 * math.pi, n + 1), np.linspace(0, math.pi, m + 1)
    P = np.stack([np.sin(th)[:, None] * np.cos(phi), np.sin(th)[:, None] * np.sin(phi),
                  np.cos(th)[:, None] * np.ones_like(phi)], axis=-1)
    return _grid_quads(P)


def _unit_cylinder() -> np.ndarray:
    """Radius 1, length 1 along z, with caps."""
    phi = np.linspace(0, 2 * math.pi, CYLINDER_SEGMENTS + 1)
    ring = np.stack([np.cos(phi), np.sin(phi), np.zeros_like(phi)], axis=-1)
    P = np.stack([ring + [0, 0, -0.5], ring + [0, 0, 0.5]])
    side = _grid_quads(P)
    caps = []
    for z in (-0.5, 0.5):
        r = ring + [0, 0, z]
        centre = np.broadcast_to([0.0, 0.0, z], r[:-1].shape)
        caps.append(np.stack([centre, r[:-1], r[1:]], axis=1))
    return np.concatenate([side] + caps)


_UNIT = {"box": _unit_box(), "sphere": _unit_sphere(), "cylinder": _unit_cylinder()}


def shapes_triangles(shapes) -> np.ndarray:
    """World triangles (N, 3, 3) of collision shapes (eels_gz.sensors.lidar.Shape: box edges, sphere radius,
    cylinder radius and length along z, at pose T)."""
    out = []
    for s in shapes:
        if s.kind == "box":
            scale = np.asarray(s.size[:3], dtype=float)
        elif s.kind == "sphere":
            scale = np.full(3, float(s.size[0]))
        else:
            scale = np.array([s.size[0], s.size[0], s.size[1]], dtype=float)
        out.append((_UNIT[s.kind] * scale) @ s.T[:3, :3].T + s.T[:3, 3])
    return np.concatenate(out) if out else np.zeros((0, 3, 3))
