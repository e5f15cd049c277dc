"""The one rule a heightmap model must pass: its image and its triangulated mesh are the same
surface. ``eels-gz world dem`` applies it when it writes a model (a DEM it cannot write faithfully is
refused there), and the embedded host when it loads a world (eels_gz.sdf_reader): a model that
passes one passes the other."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def heightmap_mismatch(image: Path, vertices: np.ndarray, size, pos) -> str | None:
    """Where the top surface of a heightmap's triangulated mesh (its ``vertices``) leaves the image's surface
    (Gazebo's: height = pos.z + value / full scale x size.z over the extent ``size`` centred at
    ``pos``, row 0 north, bilinear between posts), or None when every top vertex lies on it
    within two grey levels. A mesh coarsened from the same raster passes; a mesh from another
    raster or resolution does not."""
    from PIL import Image
    from scipy.interpolate import RegularGridInterpolator

    try:
        with Image.open(image) as img:
            mode, data = img.mode, np.asarray(img)
    except OSError as exc:
        return f"cannot read the image ({exc})"
    full = {"L": 255.0, "I;16": 65535.0, "I;16B": 65535.0, "I": 65535.0}.get(mode)
    if full is None or data.ndim != 2 or min(data.shape) < 2:
        return f"the image is not a grayscale raster of at least 2 x 2 posts (mode '{mode}', shape {data.shape})"
    heights = pos[2] + data.astype(float)[::-1] / full * size[2]
    ny, nx = heights.shape
    x = pos[0] - size[0] / 2 + size[0] * np.arange(nx) / (nx - 1)
    y = pos[1] - size[1] / 2 + size[1] * np.arange(ny) / (ny - 1)
    tol = 2.0 * size[2] / full + 1e-6
    v = np.asarray(vertices, dtype=float)
    top = v[v[:, 2] >= pos[2] - tol]  # the posts; the skirt and floor lie below the lowest one
    top = top[(top[:, 0] >= x[0] - tol) & (top[:, 0] <= x[-1] + tol) & (top[:, 1] >= y[0] - tol)
              & (top[:, 1] <= y[-1] + tol)]
    if not len(top):
        return "the mesh has no vertex on the image's extent"
    surface = RegularGridInterpolator((y, x), heights, bounds_error=False, fill_value=None)
    dz = top[:, 2] - surface(np.column_stack([np.clip(top[:, 1], y[0], y[-1]), np.clip(top[:, 0], x[0], x[-1])]))
    k = int(np.argmax(np.abs(dz)))
    if abs(dz[k]) <= tol:
        return None
    return (f"at x={top[k, 0]:.3f}, y={top[k, 1]:.3f} m the mesh is at z={top[k, 2]:.4f} m, the image "
            f"({nx} x {ny} posts) at {top[k, 2] - dz[k]:.4f} m")
