"""Point clouds (moulin and lidar scans) to a terrain mesh.

Surface reconstruction: a *thickened shell*. The unsigned distance from each
voxel of a grid to the nearest scan point (scipy's k-d tree) is contoured by
marching cubes (scikit-image) at the shell half-thickness ``t``. The result is
the boundary of the set of points within ``t`` of the scan: a closed,
watertight solid whatever the scan's shape, with no normals needed. A scanned
wall becomes an ice slab of thickness ``2 t`` centred on the scan, so the
free surface the robot meets lies ``t`` in front of the scanned one; ``t``
defaults to 1.5 times the median point spacing (enough to bridge gaps between
neighbouring points) and is reported. Holes in the scan wider than ``2 t``
stay holes (the shell has them as tunnels), and the moulin's open top and
bottom stay open. The mesh then goes through the same repair and decimation
as ``eels-gz world mesh``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import trimesh
from scipy.spatial import cKDTree

from eels_gz.errors import TerrainError

log = logging.getLogger(__name__)

MIN_POINTS = 100
MAX_VOXELS = 4_000_000  # memory/time bound of the reconstruction grid


def load_points(path: str | Path, scale: float = 1.0) -> np.ndarray:
    """Points (N, 3) in metres from a ``.ply`` (vertices) or ``.xyz`` (x y z per line, extra columns ignored)."""
    path = Path(path)
    if not path.is_file():
        raise TerrainError(f"{path}: point cloud file does not exist")
    suffix = path.suffix.lower()
    try:
        if suffix == ".xyz":
            pts = np.loadtxt(path, comments="#", ndmin=2)
            if pts.size and pts.shape[1] < 3:
                raise TerrainError(f"{path}: each line needs at least 3 numbers (x y z), got {pts.shape[1]}")
            pts = pts[:, :3] if pts.size else np.zeros((0, 3))
        elif suffix == ".ply":
            cloud = trimesh.load(path, process=False)
            pts = np.asarray(getattr(cloud, "vertices", np.zeros((0, 3))), float)
        else:
            raise TerrainError(f"{path}: unsupported point cloud format '{suffix}'; expected .ply or .xyz")
    except TerrainError:
        raise
    except Exception as exc:
        raise TerrainError(f"{path}: cannot read the point cloud ({type(exc).__name__}: {exc})") from None
    pts = pts[np.all(np.isfinite(pts), axis=1)] * scale
    if len(pts) < MIN_POINTS:
        raise TerrainError(f"{path}: {len(pts)} valid points; surface reconstruction needs at least {MIN_POINTS}")
    return pts


def median_spacing(points: np.ndarray) -> float:
    """Median distance (m) from a point to its nearest neighbour."""
    d, _ = cKDTree(points).query(points, k=2)
    return float(np.median(d[:, 1]))


def reconstruct(points: np.ndarray, voxel: float | None = None, half_thickness: float | None = None,
                source: str = "point cloud") -> trimesh.Trimesh:
    """Thickened-shell surface of a point cloud (see the module docstring).

    ``voxel`` (m) defaults to half the median point spacing (at least the
    bounding box over 158 voxels per axis, so the grid stays under
    ``MAX_VOXELS``); ``half_thickness`` (m) to 1.5 times the median spacing.
    """
    from skimage.measure import marching_cubes

    if len(points) < MIN_POINTS:
        raise TerrainError(f"{source}: {len(points)} points; surface reconstruction needs at least {MIN_POINTS}")
    spacing = median_spacing(points)
    if not spacing > 0:
        raise TerrainError(f"{source}: the points coincide; no surface can be reconstructed")
    t = half_thickness if half_thickness is not None else 1.5 * spacing
    lo, hi = points.min(axis=0) - 2 * t, points.max(axis=0) + 2 * t
    h = voxel if voxel is not None else 0.5 * spacing
    h = max(h, (np.prod(hi - lo) / MAX_VOXELS) ** (1 / 3))
    if not (t > h):
        raise TerrainError(f"{source}: shell half-thickness {t:.4g} m must exceed the voxel size {h:.4g} m")
    shape = np.ceil((hi - lo) / h).astype(int) + 1
    axes = [lo[k] + h * np.arange(shape[k]) for k in range(3)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    dist, _ = cKDTree(points).query(grid, distance_upper_bound=2 * t)
    dist = np.minimum(dist, 2 * t).reshape(shape)
    verts, faces, _, _ = marching_cubes(dist, level=t, spacing=(h, h, h))
    # the winding is made outward by meshes.repair (fix_normals on each closed shell)
    mesh = trimesh.Trimesh(verts + lo, faces, process=True)
    log.info("%s: %d points, spacing %.4g m, voxel %.4g m, shell half-thickness %.4g m -> %d faces",
             source, len(points), spacing, h, t, len(mesh.faces))
    return mesh


def prepare_pointcloud(path: str | Path, scale: float = 1.0, voxel: float | None = None,
                       half_thickness: float | None = None, max_faces: int | None = None):
    """Load, reconstruct, repair and decimate. Returns ``(full_mesh, collision_mesh)``."""
    from eels_gz.terrain.meshes import decimate, repair

    points = load_points(path, scale)
    mesh = repair(reconstruct(points, voxel, half_thickness, str(path)), str(path))
    return mesh, (decimate(mesh, max_faces, str(path)) if max_faces else mesh)
