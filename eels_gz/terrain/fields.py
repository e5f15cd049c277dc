"""Signed distance fields of terrain: the interface, a raster heightfield, a
sampled 3D grid, and the ``.npz`` file format that stores either.

Conventions shared by every field (analytic primitives included):

- ``query(points)`` takes an (N, 3) array of world points [m] and returns the
  signed distance (N,) [m], positive in free space (outside the terrain
  solid) and negative inside it, and the unit outward normal (N, 3), which
  points out of the terrain along the distance gradient;
- ``bounds`` is the axis-aligned box ``(lo, hi)`` [m] where the field is
  sampled (infinite for unbounded analytic shapes);
- ``kind`` names the implementation; it is the ``kind`` key in files.

The Python ``query`` methods are thin wrappers around the numba kernels in
:mod:`eels_gz.terrain._kernels`, which other kernels may call directly.
"""

from __future__ import annotations

import logging
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from eels_gz.errors import TerrainError
from eels_gz.terrain import _kernels

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
"""Version of the ``.npz`` distance-field format written by :func:`save_field`."""

FILE_KINDS = ("heightfield", "sdf_grid")


@runtime_checkable
class DistanceField(Protocol):
    """What the screw contact and the world tools need from a terrain field."""

    kind: str

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned box ``(lo, hi)`` [m] where the field is defined."""
        ...

    def query(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Signed distance (N,) [m] and unit outward normal (N, 3) at ``points`` (N, 3) [m]."""
        ...


def as_points(points: np.ndarray, who: str) -> np.ndarray:
    """``points`` as a C-contiguous float64 (N, 3) array, or a TerrainError
    naming ``who`` (the field) and what was expected."""
    arr = np.asarray(points)
    if arr.dtype.kind not in "fiu":
        raise TerrainError(f"{who}.query: points must be a real-valued (N, 3) array, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise TerrainError(f"{who}.query: points must have shape (N, 3), got {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.float64)


def refuse_non_finite(points: np.ndarray, who: str) -> None:
    """Raise a TerrainError naming the first non-finite query point."""
    bad = ~np.isfinite(points).all(axis=1)
    first = int(np.argmax(bad))
    raise TerrainError(
        f"{who}.query: {int(bad.sum())} query point(s) are not finite; first is row {first}: {points[first].tolist()}"
    )


def _positive_finite(value: float, name: str, who: str) -> float:
    v = float(value)
    if not np.isfinite(v) or v <= 0.0:
        raise TerrainError(f"{who}: {name} must be a positive finite length in metres, got {value!r}")
    return v


def _vector(value, n: int, name: str, who: str) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (n,) or not np.isfinite(arr).all():
        raise TerrainError(f"{who}: {name} must be {n} finite numbers, got {value!r}")
    return arr


def _frozen(arr: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(arr)
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, eq=False)
class HeightField:
    """Bilinear surface over a raster: ``heights[j, i]`` [m] is the surface z
    at ``x = x0 + i dx``, ``y = y0 + j dy``; the solid is below the surface.

    The signed distance is the vertical gap scaled by the local slope,
    ``(z - h) / sqrt(1 + |grad h|^2)``, exact for a planar patch and a
    first-order approximation elsewhere (it underestimates the distance to a
    curved surface by O(gap^2 x curvature)); the normal is
    ``(-h_x, -h_y, 1) / sqrt(1 + |grad h|^2)``. Beyond the raster the edge
    rows and columns extend outward at constant height (queries are clamped
    onto the raster).
    """

    heights: np.ndarray
    origin_xy: tuple[float, float]
    spacing_xy: tuple[float, float]
    kind: ClassVar[str] = "heightfield"

    def __post_init__(self) -> None:
        who = "HeightField"
        h = np.asarray(self.heights)
        if h.ndim != 2 or h.shape[0] < 2 or h.shape[1] < 2 or h.dtype.kind not in "fiu":
            raise TerrainError(f"{who}: heights must be a real (ny, nx) array with nx, ny >= 2, "
                               f"got shape {h.shape} dtype {h.dtype}")
        h = np.asarray(h, dtype=np.float64)
        nan = ~np.isfinite(h)
        if nan.any():
            j, i = (int(c) for c in np.argwhere(nan)[0])
            raise TerrainError(f"{who}: heights hold {int(nan.sum())} non-finite (NaN/inf) value(s) of "
                               f"{h.size}; first at row j={j}, column i={i}; fill nodata before building the field")
        x0, y0 = _vector(self.origin_xy, 2, "origin_xy", who)
        dx, dy = (_positive_finite(s, f"spacing_xy[{a}]", who)
                  for a, s in enumerate(_vector(self.spacing_xy, 2, "spacing_xy", who)))
        object.__setattr__(self, "heights", _frozen(h))
        object.__setattr__(self, "origin_xy", (float(x0), float(y0)))
        object.__setattr__(self, "spacing_xy", (dx, dy))

    @property
    def shape(self) -> tuple[int, int]:
        """Raster shape ``(ny, nx)``."""
        return self.heights.shape

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The raster footprint in x, y [m]; unbounded in z."""
        ny, nx = self.heights.shape
        x0, y0 = self.origin_xy
        dx, dy = self.spacing_xy
        return (np.array([x0, y0, -np.inf]), np.array([x0 + (nx - 1) * dx, y0 + (ny - 1) * dy, np.inf]))

    def query(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Signed distance (N,) [m] and unit outward normal (N, 3) at ``points`` (N, 3) [m]."""
        pts = as_points(points, "HeightField")
        d = np.empty(len(pts))
        n = np.empty((len(pts), 3))
        bad = _kernels.heightfield_query(self.heights, *self.origin_xy, *self.spacing_xy, pts, d, n)
        if bad:
            refuse_non_finite(pts, "HeightField")
        return d, n

    def height(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Surface height [m] at ``(x, y)`` [m] (arrays of one shape, or scalars)."""
        xb, yb = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
        pts = np.stack([xb.ravel(), yb.ravel(), np.zeros(xb.size)], axis=1)
        d, n = self.query(pts)
        # d = (0 - h) * n_z, so h = -d / n_z (n_z >= 1/sqrt(1 + |grad|^2) > 0)
        return (-d / n[:, 2]).reshape(xb.shape)


@dataclass(frozen=True, eq=False)
class SdfGrid:
    """Signed distance sampled at ``origin + spacing (i, j, k)`` in
    ``values[i, j, k]`` [m] (float32 or float64), positive in free space.

    Trilinear interpolation inside the box; the normal is the normalized
    gradient of the interpolant. Outside the box the field is the value at
    the nearest box point plus the distance to the box: continuous, exact for
    a field that is exact on the box faces and grows linearly away from
    them, and never negative far outside.
    """

    values: np.ndarray
    origin: tuple[float, float, float]
    spacing: float
    kind: ClassVar[str] = "sdf_grid"

    def __post_init__(self) -> None:
        who = "SdfGrid"
        v = np.asarray(self.values)
        if v.ndim != 3 or min(v.shape) < 2 or v.dtype.kind not in "fiu":
            raise TerrainError(f"{who}: values must be a real (nx, ny, nz) array with every size >= 2, "
                               f"got shape {v.shape} dtype {v.dtype}")
        if v.dtype not in (np.float32, np.float64):
            v = v.astype(np.float64)
        bad = ~np.isfinite(v)
        if bad.any():
            i, j, k = (int(c) for c in np.argwhere(bad)[0])
            raise TerrainError(f"{who}: values hold {int(bad.sum())} non-finite value(s); first at ({i}, {j}, {k})")
        origin = _vector(self.origin, 3, "origin", who)
        object.__setattr__(self, "values", _frozen(v))
        object.__setattr__(self, "origin", tuple(float(c) for c in origin))
        object.__setattr__(self, "spacing", _positive_finite(self.spacing, "spacing", who))

    @property
    def shape(self) -> tuple[int, int, int]:
        """Grid shape ``(nx, ny, nz)`` in nodes."""
        return self.values.shape

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The grid box [m] (first and last node)."""
        lo = np.array(self.origin)
        return lo, lo + self.spacing * (np.array(self.values.shape) - 1)

    def query(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Signed distance (N,) [m] and unit outward normal (N, 3) at ``points`` (N, 3) [m]."""
        pts = as_points(points, "SdfGrid")
        d = np.empty(len(pts))
        n = np.empty((len(pts), 3))
        bad = _kernels.sdf_grid_query(self.values, *self.origin, self.spacing, pts, d, n)
        if bad:
            refuse_non_finite(pts, "SdfGrid")
        return d, n


def sdf_grid_from_mesh(vertices: np.ndarray, faces: np.ndarray, spacing: float | None = None,
                       resolution: int | None = None, padding: float | None = None,
                       dtype: type = np.float32) -> SdfGrid:
    """Sample the signed distance of the solid bounded by a watertight,
    consistently oriented triangle mesh on a regular grid (positive outside
    the solid; a tube solid seen from inside has a positive bore).

    ``spacing`` [m] is the voxel size; or ``resolution`` is the number of
    nodes along the longest side of the padded box (default 128 when neither
    is given). ``padding`` [m] is added around the mesh bounding box
    (default 3 voxels). Exactly-coincident vertices are merged; inward-facing
    meshes are flipped with a warning; non-watertight or non-manifold meshes
    are refused with a TerrainError that locates the first bad edge.
    """
    from eels_gz.terrain._mesh_sdf import build_sdf_grid

    values, origin, h = build_sdf_grid(vertices, faces, spacing=spacing, resolution=resolution,
                                       padding=padding, dtype=dtype)
    return SdfGrid(values, origin, h)


QUANTUM_STEPS = 32000
"""A compact sdf_grid stores ``round(values / quantum)`` as int16 with ``quantum = max|values| / QUANTUM_STEPS``."""


def translated(field: HeightField | SdfGrid, shift: np.ndarray) -> HeightField | SdfGrid:
    """``field`` moved by ``shift`` (3,), m; the same field when the shift is zero."""
    if not np.any(shift):
        return field
    if isinstance(field, HeightField):
        return HeightField(field.heights + shift[2], (field.origin_xy[0] + shift[0], field.origin_xy[1] + shift[1]),
                           field.spacing_xy)
    if isinstance(field, SdfGrid):
        return SdfGrid(field.values, tuple(np.asarray(field.origin) + shift), field.spacing)
    raise TerrainError(f"cannot move a {type(field).__name__} field")


def save_field(path: str | Path, field: HeightField | SdfGrid, compact: bool = False) -> Path:
    """Write ``field`` to ``path`` (``.npz``, compressed) with its ``kind``,
    arrays and the format version; returns the path written.

    ``compact`` halves large files: an sdf_grid's values are stored as int16
    steps of ``quantum`` (key ``values_q``; the error is at most
    ``quantum / 2``, 27 um for a field spanning 1.7 m), a heightfield's heights as
    float32 (key ``heights_f32``; relative error 6e-8). :func:`load_field`
    reads both forms."""
    path = Path(path)
    if isinstance(field, HeightField):
        heights = dict(heights_f32=field.heights.astype(np.float32)) if compact else dict(heights=field.heights)
        arrays = dict(**heights, origin_xy=np.array(field.origin_xy), spacing_xy=np.array(field.spacing_xy))
    elif isinstance(field, SdfGrid):
        if compact:
            top = float(np.abs(field.values).max())
            quantum = top / QUANTUM_STEPS if top > 0 else 1.0
            values = dict(values_q=np.round(field.values / quantum).astype(np.int16), quantum=np.array(quantum))
        else:
            values = dict(values=field.values)
        arrays = dict(**values, origin=np.array(field.origin), spacing=np.array(field.spacing))
    else:
        raise TerrainError(f"save_field({path}): only {', '.join(FILE_KINDS)} fields can be saved, "
                           f"got {type(field).__name__}")
    with open(path, "wb") as fh:  # keep the name as given (np.savez would append .npz)
        np.savez_compressed(fh, kind=np.array(field.kind), format_version=np.array(FORMAT_VERSION), **arrays)
    log.debug("wrote %s field %s", field.kind, path)
    return path


def _expand_compact(data: dict, path: Path) -> None:
    """Turn the compact keys of :func:`save_field` back into ``values`` / ``heights``."""
    if "values_q" in data and "values" not in data:
        q = data.get("quantum")
        if q is None or q.shape != () or not np.isfinite(q) or not q > 0:
            raise TerrainError(f"{path}: a compact sdf_grid needs a positive scalar 'quantum', got {q!r}")
        data["values"] = data.pop("values_q").astype(np.float32) * np.float32(q)
    if "heights_f32" in data and "heights" not in data:
        data["heights"] = data.pop("heights_f32")


_FILE_KEYS = {"heightfield": ("heights", "origin_xy", "spacing_xy"), "sdf_grid": ("values", "origin", "spacing")}


def load_field(path: str | Path) -> HeightField | SdfGrid:
    """Read a field written by :func:`save_field`; a missing, truncated,
    malformed or unknown-kind file gives a TerrainError naming the file."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            data = {k: npz[k] for k in npz.files}
    except FileNotFoundError:
        raise TerrainError(f"{path}: distance-field file not found") from None
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise TerrainError(f"{path}: not a readable distance-field .npz file ({type(exc).__name__}: {exc}); "
                           f"expected one written by eels_gz.terrain.save_field") from None
    if not isinstance(data, dict) or "kind" not in data or "format_version" not in data:
        raise TerrainError(f"{path}: missing 'kind' or 'format_version' key; expected a distance-field file "
                           f"written by eels_gz.terrain.save_field")
    kind = str(data["kind"])
    if kind not in _FILE_KEYS:
        raise TerrainError(f"{path}: unknown field kind {kind!r}; expected one of {', '.join(FILE_KINDS)}")
    version = data["format_version"]
    if version.shape != () or version.dtype.kind not in "iu" or int(version) != FORMAT_VERSION:
        raise TerrainError(f"{path}: format_version {version!r} is not supported; expected {FORMAT_VERSION}")
    _expand_compact(data, path)
    missing = [k for k in _FILE_KEYS[kind] if k not in data]
    if missing:
        raise TerrainError(f"{path}: {kind} file lacks key(s) {', '.join(missing)}")
    try:
        if kind == "heightfield":
            return HeightField(data["heights"], tuple(data["origin_xy"]), tuple(data["spacing_xy"]))
        return SdfGrid(data["values"], tuple(data["origin"]), float(data["spacing"]))
    except (TerrainError, TypeError, ValueError) as exc:
        raise TerrainError(f"{path}: malformed {kind} arrays: {exc}") from None
