"""Terrain: distance fields (heightfield, mesh SDF grid, analytic primitives)
and, in sibling modules, DEM / mesh / point-cloud ingest and world writers.

The distance-field interface is :class:`DistanceField`: ``query(points)``
returns the signed distance (positive in free space) and the unit outward
normal of the terrain.
"""

from eels_gz.terrain.fields import (
    DistanceField,
    HeightField,
    SdfGrid,
    load_field,
    save_field,
    sdf_grid_from_mesh,
)
from eels_gz.terrain.primitives import (
    Box,
    Hemisphere,
    ParallelWalls,
    Plane,
    Slope,
    Sphere,
    Tube,
    UChannel,
    Union,
)

__all__ = [
    "Box",
    "DistanceField",
    "HeightField",
    "Hemisphere",
    "ParallelWalls",
    "Plane",
    "SdfGrid",
    "Slope",
    "Sphere",
    "Tube",
    "UChannel",
    "Union",
    "load_field",
    "save_field",
    "sdf_grid_from_mesh",
]
