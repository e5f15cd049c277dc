"""Terrain meshes: load STL/OBJ/PLY, scale, check and repair, orient, decimate.

A terrain mesh must bound a solid (watertight, 2-manifold) so that its
signed distance field has a sign: positive outside the ice, negative inside.
A tube or a moulin is therefore a thick-walled *annular* solid, and the
hollow the robot moves in is outside it.

Repair, where it is sound:
- merge duplicate vertices (STL stores each triangle's corners separately),
  drop degenerate and duplicate faces;
- make the winding consistent and the normals point out of the solid
  (for nested shells, a shell inside another is a cavity wall, so its
  normals point into the cavity: that is how a tube given as an outer and an
  inner closed surface is read);
- fill small holes (trimesh fills holes bounded by 3 or 4 edges).
Refused, with the count and a location: empty input, non-manifold edges
(shared by more than two faces), and openings left after repair.

Decimation for collision uses quadric edge collapse from the pinned
``fast-simplification`` package (through trimesh).

An *open* mesh (a scanned wall with holes, a channel open at the top) is not
refused by :func:`prepare_any_mesh`: it is sampled into oriented points and
reconstructed like a scan (:mod:`eels_gz.terrain.pointcloud`), a one-sided
wall with the distance field's sign right across its holes and open edges.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import trimesh

from eels_gz.errors import TerrainError

log = logging.getLogger(__name__)

UNITS = {"m": 1.0, "cm": 0.01, "mm": 0.001, "km": 1000.0, "in": 0.0254, "ft": 0.3048}
FORMATS = (".stl", ".obj", ".ply")


def load_mesh(path: str | Path, scale: float = 1.0, units: str = "m") -> trimesh.Trimesh:
    """Load a triangle mesh file and scale it to metres (``scale`` times the unit's size)."""
    path = Path(path)
    if not path.is_file():
        raise TerrainError(f"{path}: mesh file does not exist")
    if path.suffix.lower() not in FORMATS:
        raise TerrainError(f"{path}: unsupported mesh format '{path.suffix}'; expected {', '.join(FORMATS)}")
    if units not in UNITS:
        raise TerrainError(f"{path}: unknown units '{units}'; expected one of {', '.join(UNITS)}")
    if not scale > 0:
        raise TerrainError(f"{path}: scale must be positive, got {scale}")
    try:
        mesh = trimesh.load(path, force="mesh", process=False)
    except Exception as exc:  # trimesh raises many types on unreadable files
        raise TerrainError(f"{path}: cannot read the mesh ({type(exc).__name__}: {exc})") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0 or len(mesh.vertices) == 0:
        raise TerrainError(f"{path}: the mesh is empty (no triangles)")
    check_points(np.asarray(mesh.vertices), str(path), "vertex")
    mesh.apply_scale(scale * UNITS[units])
    check_points(np.asarray(mesh.vertices), str(path), "vertex")  # and in metres
    return mesh


def check_points(points: np.ndarray, source: str, what: str = "point") -> None:
    """TerrainError naming the first of ``points`` (n, 3) that is not finite (NaN, inf) or lies more than
    eels_gz.ranges.COORDINATE_MAX from the origin: a broken file, never a terrain (and not "an open mesh"
    or "a tube" as the checks that come later would call it)."""
    from eels_gz.ranges import COORDINATE_MAX

    plural = {"vertex": "vertices"}.get(what, what + "s")
    bad = ~np.all(np.isfinite(points), axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise TerrainError(f"{source}: {int(bad.sum())} {plural} are not finite (the first, {what} {k}: "
                           f"{points[k].tolist()}); a terrain's coordinates are numbers: fix or remove them")
    far = np.abs(points).max(axis=1) > COORDINATE_MAX
    if far.any():
        k = int(np.argmax(far))
        raise TerrainError(f"{source}: {int(far.sum())} {plural} lie more than {COORDINATE_MAX:g} m from the origin "
                           f"(the first, {what} {k}: {points[k].tolist()}); an outlier or a nodata value? remove "
                           "them (or check the scale and units)")


def _where(mesh: trimesh.Trimesh, edges: np.ndarray) -> str:
    p = mesh.vertices[edges[0]].mean(axis=0)
    return f"({p[0]:.4g}, {p[1]:.4g}, {p[2]:.4g}) m"


def check_manifold(mesh: trimesh.Trimesh, source: str) -> None:
    """Refuse edges shared by more than two faces: no orientation makes them a solid boundary."""
    edges = np.sort(mesh.edges, axis=1)
    unique, counts = np.unique(edges, axis=0, return_counts=True)
    bad = unique[counts > 2]
    if len(bad):
        raise TerrainError(f"{source}: the mesh is non-manifold: {len(bad)} edges are shared by more than two faces "
                           f"(first near {_where(mesh, bad)}); it cannot be repaired into a solid")


def orient_shells(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """Orient every closed shell: outward if it is nested in an even number of
    other shells, inward (a cavity wall) if odd."""
    shells = mesh.split(only_watertight=False)
    if len(shells) == 1:
        trimesh.repair.fix_normals(shells[0], multibody=False)
        return shells[0]
    for s in shells:
        trimesh.repair.fix_normals(s, multibody=False)
    probes = [s.vertices[0] for s in shells]
    out = []
    for k, s in enumerate(shells):
        depth = sum(1 for m, other in enumerate(shells)
                    if m != k and other.is_watertight and bool(other.contains([probes[k]])[0]))
        if depth % 2 == 1:
            s.invert()
        out.append(s)
    return trimesh.util.concatenate(out)


def repair(mesh: trimesh.Trimesh, source: str) -> trimesh.Trimesh:
    """Repair where sound (see the module docstring) or raise TerrainError."""
    if len(mesh.faces) == 0:
        raise TerrainError(f"{source}: the mesh is empty (no triangles)")
    mesh = mesh.copy()
    n_faces = len(mesh.faces)
    mesh.merge_vertices()
    mesh.update_faces(mesh.nondegenerate_faces())
    mesh.update_faces(mesh.unique_faces())
    mesh.remove_unreferenced_vertices()
    if len(mesh.faces) == 0:
        raise TerrainError(f"{source}: the mesh is empty (every triangle is degenerate)")
    check_manifold(mesh, source)
    if not mesh.is_watertight:
        trimesh.repair.fill_holes(mesh)
    if not mesh.is_watertight:
        edges = np.sort(mesh.edges, axis=1)
        unique, counts = np.unique(edges, axis=0, return_counts=True)
        open_edges = unique[counts == 1]
        raise TerrainError(f"{source}: the mesh is open: {len(open_edges)} boundary edges remain after filling small "
                           f"holes (first near {_where(mesh, open_edges)}); close it into a solid (a thick sheet, "
                           "or a thick-walled tube) before using it as terrain")
    mesh = orient_shells(mesh)
    if not mesh.is_winding_consistent:
        raise TerrainError(f"{source}: the mesh's triangles cannot be wound consistently (a Moebius-like surface)")
    if not mesh.volume > 0:
        raise TerrainError(f"{source}: the mesh encloses no volume ({mesh.volume:.3g} m^3); terrain must be a solid")
    if len(mesh.faces) != n_faces:
        log.info("%s: repaired mesh has %d faces (was %d)", source, len(mesh.faces), n_faces)
    return mesh


def decimate(mesh: trimesh.Trimesh, max_faces: int, source: str = "mesh") -> trimesh.Trimesh:
    """Quadric-error decimation to at most ``max_faces`` faces. The collision mesh need not stay a
    closed solid (the distance grid is built from the full mesh): if decimation opens it, a warning
    says so and the open mesh is kept."""
    if len(mesh.faces) <= max_faces:
        return mesh
    if max_faces < 4:
        raise TerrainError(f"{source}: face budget {max_faces} is too small for a collision mesh; the default "
                           "is 40000")
    out = mesh.simplify_quadric_decimation(face_count=int(max_faces))
    out.merge_vertices()
    if out.is_watertight and out.volume > 0:
        out = orient_shells(out)
    else:
        log.warning("%s: decimating %d -> %d faces opened the solid; the collision mesh is used open (one-sided), "
                    "the distance grid comes from the full mesh", source, len(mesh.faces), len(out.faces))
    log.info("%s: decimated %d -> %d faces", source, len(mesh.faces), len(out.faces))
    return out


def is_open(mesh: trimesh.Trimesh) -> bool:
    """Whether the mesh, after merging duplicate vertices and filling 3-4 edge holes, still has boundary edges."""
    m = mesh.copy()
    m.merge_vertices()
    m.update_faces(m.nondegenerate_faces())
    if m.is_watertight:
        return False
    trimesh.repair.fill_holes(m)
    return not m.is_watertight


def surface_samples(mesh: trimesh.Trimesh, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Points on the mesh (its face centroids, plus area-weighted random samples up to ``count``) and
    their faces' unit normals, as the file winds them."""
    mesh = mesh.copy()
    mesh.update_faces(mesh.nondegenerate_faces())
    normals = mesh.face_normals
    points = mesh.triangles_center
    if count > len(points):
        extra, face = trimesh.sample.sample_surface(mesh, count - len(points), seed=seed)
        points, normals = np.concatenate([points, extra]), np.concatenate([normals, normals[face]])
    return np.asarray(points, float), np.asarray(normals, float)


def prepare_open_mesh(mesh: trimesh.Trimesh, source: str, opts=None):
    """A one-sided terrain (:class:`eels_gz.terrain.pointcloud.ScanSurface`) from an open mesh: its
    surface sampled into oriented points (twice the face count, at most the point budget), then
    reconstructed like a scan. The visual mesh is the file's own, decimated to the visual budget."""
    from eels_gz.terrain.pointcloud import ScanOptions, decimate_open, scan_surface

    opts = opts or ScanOptions()
    points, normals = surface_samples(mesh, min(opts.max_points, 2 * len(mesh.faces)), opts.seed)
    surface = scan_surface(points, opts, source, normals=normals)
    visual = decimate_open(mesh, opts.visual_faces, source)
    derived = dict(surface.derived, input_faces=int(len(mesh.faces)), visual_faces=int(len(visual.faces)))
    return type(surface)(surface.collision, visual, surface.field, derived)


def prepare_mesh(path: str | Path, scale: float = 1.0, units: str = "m", max_faces: int | None = None):
    """Load, repair, orient and (optionally) decimate a terrain mesh.
    Returns ``(full_mesh, collision_mesh)``."""
    mesh = repair(load_mesh(path, scale, units), str(path))
    collision = decimate(mesh, max_faces, str(path)) if max_faces else mesh
    return mesh, collision
