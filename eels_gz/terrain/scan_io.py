"""Read point-cloud scans: PLY, XYZ (text), LAS/LAZ, PCD and E57.

Each reader returns the points as a float64 (N, 3) array in the file's units
(scaled by the caller). Readers are the maintained libraries, imported when a
file of their format is read:

- ``.ply``: trimesh (vertices of a point-cloud or mesh PLY, ASCII or binary);
- ``.xyz`` / ``.txt`` / ``.csv``: numpy (x y z per line, extra columns
  ignored, ``#`` comments; spaces, tabs or commas between numbers);
- ``.las`` / ``.laz``: laspy (the scaled coordinates; LAZ through lazrs);
- ``.pcd``: pypcd4 (PCL's format, ascii / binary / binary_compressed);
- ``.e57``: pye57 (every scan of the file, in the file's common frame).

Non-finite points are dropped by :func:`load_points`, which also refuses a
scan with too few points to reconstruct a surface from.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from eels_gz.errors import TerrainError

log = logging.getLogger(__name__)

MIN_POINTS = 100
FORMATS = (".ply", ".xyz", ".txt", ".csv", ".las", ".laz", ".pcd", ".e57")


def _ply(path: Path) -> np.ndarray:
    import trimesh

    cloud = trimesh.load(path, process=False)
    return np.asarray(getattr(cloud, "vertices", np.zeros((0, 3))), float)


def _text(path: Path) -> np.ndarray:
    with open(path) as fh:
        first = next((line for line in fh if line.strip() and not line.lstrip().startswith("#")), "")
    delimiter = "," if "," in first else None
    pts = np.loadtxt(path, comments="#", delimiter=delimiter, ndmin=2)
    if pts.size and pts.shape[1] < 3:
        raise TerrainError(f"{path}: each line needs at least 3 numbers (x y z), got {pts.shape[1]}")
    return pts[:, :3] if pts.size else np.zeros((0, 3))


def _las(path: Path) -> np.ndarray:
    import laspy

    las = laspy.read(path)
    return np.column_stack([np.asarray(las.x, float), np.asarray(las.y, float), np.asarray(las.z, float)])


def _pcd(path: Path) -> np.ndarray:
    from pypcd4 import PointCloud

    cloud = PointCloud.from_path(path)
    missing = [f for f in ("x", "y", "z") if f not in cloud.fields]
    if missing:
        raise TerrainError(f"{path}: the PCD has no field(s) {', '.join(missing)}; fields are {list(cloud.fields)}")
    return np.asarray(cloud.numpy(("x", "y", "z")), float)


def _e57(path: Path) -> np.ndarray:
    import pye57

    e57 = pye57.E57(str(path))
    try:
        parts = []
        for k in range(e57.scan_count):
            data = e57.read_scan(k, ignore_missing_fields=True, transform=True)
            if "cartesianX" not in data:
                raise TerrainError(f"{path}: scan {k} has no cartesian coordinates (cartesianX/Y/Z)")
            parts.append(np.column_stack([data["cartesianX"], data["cartesianY"], data["cartesianZ"]]))
    finally:
        e57.close()
    return np.concatenate(parts).astype(float) if parts else np.zeros((0, 3))


READERS = {".ply": _ply, ".xyz": _text, ".txt": _text, ".csv": _text, ".las": _las, ".laz": _las,
           ".pcd": _pcd, ".e57": _e57}


def load_points(path: str | Path, scale: float = 1.0) -> np.ndarray:
    """Points (N, 3) in metres (the file's coordinates times ``scale``), non-finite rows dropped."""
    path = Path(path)
    if not path.is_file():
        raise TerrainError(f"{path}: point cloud file does not exist")
    suffix = path.suffix.lower()
    if suffix not in READERS:
        raise TerrainError(f"{path}: unsupported point cloud format '{suffix}'; expected one of {', '.join(FORMATS)}")
    if not (np.isfinite(scale) and scale > 0):
        raise TerrainError(f"{path}: scale must be a positive number, got {scale}")
    try:
        pts = READERS[suffix](path)
    except TerrainError:
        raise
    except Exception as exc:  # each reader raises its own types on a malformed file
        raise TerrainError(f"{path}: cannot read the point cloud ({type(exc).__name__}: {exc})") from None
    if pts.ndim != 2 or pts.shape[1] != 3:
        raise TerrainError(f"{path}: expected (N, 3) coordinates, got an array of shape {pts.shape}")
    finite = np.all(np.isfinite(pts), axis=1)
    if not finite.all():
        log.warning("%s: dropped %d non-finite points", path, int((~finite).sum()))
        pts = pts[finite]
    if len(pts) < MIN_POINTS:
        raise TerrainError(f"{path}: {len(pts)} valid points; surface reconstruction needs at least {MIN_POINTS}")
    return pts * scale if scale != 1.0 else pts
