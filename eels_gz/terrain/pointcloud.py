"""Point clouds (moulin and lidar scans) to a one-sided terrain: a signed
distance grid, a collision mesh and a visual mesh.

A scan of a moulin is a wall seen from one side, with occlusion holes, open
ends, varying density, noise, outliers and no normals. The terrain is built
from the scan's *oriented points* (``docs/worlds.md`` records the measurements
behind each choice):

1. **Budget.** Over ``max_points`` the scan is subsampled (a warning says by
   how much).
2. **Defaults from the scan.** The point spacing ``s`` (median distance to
   the nearest neighbour), the noise (rms off the local plane) and the extent
   give the distance-grid voxel ``h`` (``2 s`` or 3 x the noise, or coarser so
   the grid holds at most ``max_nodes`` nodes), the hole-filling radius ``R``
   (8 voxels, at least 0.25 m) and the smoothing radius (1.5 voxels). A value
   given by the user that cannot work is refused here, before the long steps,
   with a value that would.
3. **Cluster** the points into cells of ``h / 2`` (mean position): the grid
   cannot resolve more, and averaging lowers the noise.
4. **Normals** by local PCA (``K_NORMALS`` neighbours); **outliers** (points
   isolated from their neighbours, or far off their neighbours' plane) are
   dropped; normals again.
5. **Orientation** toward the free side: ``axis`` (a shaft or channel seen
   from inside: toward the centre of the cross-section along the scan's
   principal axis), ``up`` (a surface scanned from above), or a scanner
   ``viewpoint``; ``auto`` picks ``axis`` when the cross-sections are hollow,
   else ``up``. Neighbour voting then fixes isolated flips.
6. **Signed distance grid** (:mod:`eels_gz.terrain._scan_field`): near the
   scan, the implicit moving least-squares (IMLS) distance, the
   Gaussian-weighted mean of the distances to the points' tangent planes,
   averaged over the noise; a little farther, an algebraic sphere fitted to
   the points and normals, which carries the wall across holes narrower than
   ``2 R``; beyond ``R``, the distance to the scan with the sign of the
   nearest wall's side, so inside and outside stay right across holes and
   beyond the open ends.
7. **Meshes.** Marching cubes of the grid's zero level where a point is
   within ``R``: a one-sided wall (not a closed solid), holes narrower than
   ``2 R`` closed, small loose pieces dropped; decimated to ``max_faces`` for
   collision and ``visual_faces`` for the visual (fast-simplification's
   quadric edge collapse).

Every derived value is returned in :attr:`ScanSurface.derived` (written to
``terrain.json`` and printed by ``eels-gz world pointcloud``).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import trimesh
from scipy.spatial import cKDTree

from eels_gz.errors import TerrainError
from eels_gz.terrain.progress import Steps
from eels_gz.terrain.scan_io import MIN_POINTS, load_points

log = logging.getLogger(__name__)

MAX_POINTS = 2_000_000  # points kept from a scan (memory and time of the neighbour searches)
MAX_NODES = 4_000_000  # distance-grid nodes: ~8 MB stored (2-byte values), the model folder stays under 20 MB
MAX_FACES = 40_000  # collision mesh
VISUAL_FACES = 120_000
K_NORMALS = 16  # neighbours of the PCA normal
SPACING_VOXELS = 2.0  # default voxel in point spacings ...
NOISE_VOXELS = 3.0  # ... and in the scan's noise (rms off the local plane): no finer than the wall is known
SMOOTHING_VOXELS = 1.5  # Gaussian weights of the IMLS distance (sigma, in voxels): the noise averaged down
FILL_VOXELS = 8.0  # default hole-filling radius in voxels ...
FILL_MIN = 0.25  # ... and at least this (m): holes up to 0.5 m across are closed
ORIENT = ("auto", "axis", "up", "viewpoint", "winding")  # winding: a mesh's normals as the file winds them
MIN_PIECE = 0.002  # mesh pieces with fewer than this share of the faces (and < 200) are dropped


MIN_BUDGETS = {"max_points": MIN_POINTS, "max_nodes": 1000, "max_faces": 100, "visual_faces": 100}  # smallest
# budgets of ScanOptions that can reconstruct a surface (eels-gz world checks them when it parses its options)


@dataclass(frozen=True)
class ScanOptions:
    """What the user may set; None derives it from the scan."""

    voxel: float | None = None  # m, distance-grid spacing
    fill_radius: float | None = None  # m, holes narrower than twice this are closed
    orient: str = "auto"
    viewpoint: tuple[float, float, float] | None = None  # m, scanner position for orient = viewpoint
    max_points: int = MAX_POINTS
    max_nodes: int = MAX_NODES
    max_faces: int = MAX_FACES
    visual_faces: int = VISUAL_FACES
    seed: int = 0  # subsampling over the point budget


@dataclass(frozen=True)
class ScanSurface:
    """A reconstructed one-sided terrain: meshes (world frame, m), the field and what was derived."""

    collision: trimesh.Trimesh
    visual: trimesh.Trimesh
    field: object  # SdfGrid
    derived: dict = field(default_factory=dict)


# --- step 1-2: budget and defaults ----------------------------------------------------------------
def budget(points: np.ndarray, max_points: int, source: str, seed: int = 0, what: str = "points") -> np.ndarray:
    """At most ``max_points`` rows of ``points`` (a seeded random subset, with a warning)."""
    if max_points < 1:
        raise TerrainError(f"{source}: the {what} budget must be at least 1, got {max_points}")
    if len(points) <= max_points:
        return points
    keep = np.sort(np.random.default_rng(seed).choice(len(points), max_points, replace=False))
    log.warning("%s: %d %s are over the budget of %d (--max-points); downsampled %.2f x to %d (random, seed %d)",
                source, len(points), what, max_points, len(points) / max_points, max_points, seed)
    return points[keep]


def median_spacing(points: np.ndarray, tree: cKDTree | None = None, sample: int = 20_000) -> float:
    """Median distance (m) from a point to its nearest neighbour (over a sample of the points)."""
    tree = tree or cKDTree(points)
    q = points if len(points) <= sample else points[np.random.default_rng(1).choice(len(points), sample, False)]
    d, _ = tree.query(q, k=2, workers=-1)
    return float(np.median(d[:, 1]))


def scan_noise(points: np.ndarray, tree: cKDTree, sample: int = 4000, k: int = 24) -> float:
    """The scan's noise (m): rms distance of the points to their neighbourhood's plane (PCA over ``k``
    neighbours, at a sample of the points)."""
    q = points if len(points) <= sample else points[np.random.default_rng(2).choice(len(points), sample, False)]
    _, idx = tree.query(q, k=min(k, len(points)), workers=-1)
    nbr = points[idx]
    x = nbr - nbr.mean(axis=1)[:, None, :]
    eig = np.linalg.eigvalsh(np.einsum("nki,nkj->nij", x, x) / idx.shape[1])
    return float(np.sqrt(np.median(eig[:, 0])))


STRAY_SPACINGS = 50.0  # a point whose STRAY_K-th neighbour is this many typical such distances away is no surface
STRAY_K = 4


def drop_strays(points: np.ndarray, source: str) -> tuple[np.ndarray, int]:
    """``points`` without the strays far from the scan (a reflection, a bird, a bad return): those whose
    STRAY_K-th nearest neighbour lies more than STRAY_SPACINGS times the scan's median such distance away.
    Dropped with a warning, and counted (terrain.json's ``strays_removed``), before the scan's extent
    and grid are derived: one stray a kilometre off would otherwise coarsen the grid to nothing."""
    k = min(STRAY_K + 1, len(points))
    reach = cKDTree(points).query(points, k=k, workers=-1)[0][:, -1]
    typical = float(np.median(reach))
    stray = reach > STRAY_SPACINGS * max(typical, 1e-12)
    n = int(stray.sum())
    if n == 0 or n > len(points) // 2:  # not strays: the scan itself is that sparse
        return points, 0
    log.warning("%s: dropped %d stray point(s) far from the scan (their %s nearest neighbour over %.3g m away, "
                "%g x the scan's typical %.3g m)", source, n, _ordinal(STRAY_K), STRAY_SPACINGS * typical,
                STRAY_SPACINGS, typical)
    return points[~stray], n


def _ordinal(k: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(k, f"{k}th")


def derive(points: np.ndarray, opts: ScanOptions, source: str, tree: cKDTree | None = None) -> dict:
    """The reconstruction's values from the scan (spacing, extent) and ``opts``; refuses values
    that cannot work with a message naming one that would."""
    if opts.orient not in ORIENT:
        raise TerrainError(f"{source}: orientation '{opts.orient}' is unknown; expected one of {', '.join(ORIENT)}")
    if opts.orient == "viewpoint" and opts.viewpoint is None:
        raise TerrainError(f"{source}: orientation 'viewpoint' needs the scanner position (--viewpoint X Y Z)")
    for name in MIN_BUDGETS:
        if int(getattr(opts, name)) < MIN_BUDGETS[name]:
            raise TerrainError(f"{source}: {name} = {getattr(opts, name)} is too small; the default is "
                               f"{getattr(ScanOptions(), name)}")
    tree = tree or cKDTree(points)
    spacing = median_spacing(points, tree)
    if not spacing > 0:
        raise TerrainError(f"{source}: the points coincide (median spacing 0); no surface can be reconstructed")
    lo, hi = points.min(axis=0), points.max(axis=0)
    extent = hi - lo
    if not extent.max() > 20 * spacing:
        raise TerrainError(f"{source}: the scan spans {extent.max():.4g} m at a point spacing of {spacing:.4g} m; "
                           "a surface needs a scan at least 20 spacings across")
    noise = scan_noise(points, tree)
    h_spacing = max(SPACING_VOXELS * spacing, NOISE_VOXELS * noise)
    fill_given = opts.fill_radius
    if fill_given is not None and not (math.isfinite(fill_given) and fill_given > 0):
        raise TerrainError(f"{source}: fill radius must be a positive length in m, got {fill_given}")

    def fill_of(h: float) -> float:
        return fill_given if fill_given is not None else max(FILL_VOXELS * h, FILL_MIN)

    def shape_of(h: float) -> np.ndarray:
        return (np.ceil((extent + 2 * (fill_of(h) + 3 * h)) / h) + 1).astype(int)

    def fits(h: float) -> bool:
        return int(np.prod(shape_of(h))) <= opts.max_nodes

    def smallest_fitting(h: float) -> float:
        h = max(h, (float(np.prod(extent)) / opts.max_nodes) ** (1 / 3))
        while not fits(h):
            h *= 1.005
        return h

    if opts.voxel is not None:
        h = float(opts.voxel)
        if not (math.isfinite(h) and h > 0):
            raise TerrainError(f"{source}: voxel must be a positive length in m, got {opts.voxel}")
        if not fits(h):
            need = smallest_fitting(h)
            raise TerrainError(f"{source}: voxel {h:.4g} m gives a grid of {int(np.prod(shape_of(h)))} nodes over "
                               f"the scan's {extent[0]:.3g} x {extent[1]:.3g} x {extent[2]:.3g} m, over the budget "
                               f"of {opts.max_nodes}; use --voxel {math.ceil(need * 1e4) / 1e4:.4g} or more "
                               "(or raise --max-nodes)")
        if h > extent.max() / 20:
            raise TerrainError(f"{source}: voxel {h:.4g} m is too coarse for a scan spanning {extent.max():.3g} m; "
                               f"use --voxel {extent.max() / 20:.4g} or less")
        source_of_h = "given"
    else:
        h = smallest_fitting(h_spacing)
        source_of_h = (f"grid budget of {opts.max_nodes} nodes" if h > h_spacing else
                       "2 x point spacing" if SPACING_VOXELS * spacing >= NOISE_VOXELS * noise else "3 x scan noise")
    fill = fill_of(h)
    if fill < 2 * h:
        raise TerrainError(f"{source}: fill radius {fill:.4g} m is under 2 voxels ({2 * h:.4g} m): the wall would "
                           f"not close between neighbouring cells; use --fill-radius {2 * h:.4g} or more")
    pad = fill + 3 * h
    shape = shape_of(h)
    origin = lo - pad
    return {"points_used": int(len(points)), "point_spacing": spacing, "scan_noise": noise, "extent": extent.tolist(),
            "bounds": [lo.tolist(), hi.tolist()], "voxel": h, "voxel_from": source_of_h,
            "cluster_cell": h / 2, "smoothing_radius": SMOOTHING_VOXELS * h, "fill_radius": fill,
            "grid_shape": shape.tolist(), "grid_nodes": int(np.prod(shape)), "grid_origin": origin.tolist()}


# --- step 3-5: cluster, normals, outliers, orientation -------------------------------------------
def cluster(points: np.ndarray, cell: float, normals: np.ndarray | None = None):
    """Mean position (and mean normal) of the points in each cubic cell of ``cell`` m; also the counts."""
    q = np.floor((points - points.min(axis=0)) / cell).astype(np.int64)
    dims = q.max(axis=0) + 1
    key = (q[:, 0] * dims[1] + q[:, 1]) * dims[2] + q[:, 2]
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    out = np.column_stack([np.bincount(inverse, points[:, k]) for k in range(3)]) / counts[:, None]
    if normals is None:
        return out, None, counts
    n = np.column_stack([np.bincount(inverse, normals[:, k]) for k in range(3)])
    norm = np.linalg.norm(n, axis=1)
    keep = norm > 1e-9  # opposite normals in one cell cancel: the cell is dropped
    return out[keep], n[keep] / norm[keep, None], counts[keep]


def pca_normals(points: np.ndarray, tree: cKDTree, k: int = K_NORMALS):
    """Unit normals (unoriented), each point's offset from its neighbours' plane (m), and the
    mean distance to its k neighbours (m)."""
    k = min(k, len(points))
    dist, idx = tree.query(points, k=k, workers=-1)
    nbr = points[idx]
    centre = nbr.mean(axis=1)
    x = nbr - centre[:, None, :]
    cov = np.einsum("nki,nkj->nij", x, x) / k
    _, vec = np.linalg.eigh(cov)
    normal = vec[:, :, 0]
    offset = np.abs(np.einsum("ni,ni->n", points - centre, normal))
    return normal, offset, dist[:, 1:].mean(axis=1)


def outliers(offset: np.ndarray, mean_dist: np.ndarray, h: float) -> np.ndarray:
    """Points isolated from their neighbours (mean neighbour distance over 3 x the median and over
    2 voxels) or off their neighbours' plane (over 4 x the typical offset and over half a voxel)."""
    med = float(np.median(mean_dist))
    off = 1.4826 * float(np.median(offset))
    return (mean_dist > max(3 * med, 2 * h)) | (offset > max(4 * off, 0.5 * h))


def _slab_centres(points: np.ndarray, h: float):
    """Centres of the cross-sections along the principal axis: for each point, its slab's centroid,
    and the share of the points in hollow slabs (under 5 % of the slab's points within 0.4 x its rms
    radius of the centroid: a ring, not a strip; a few stray points do not change that)."""
    c = points.mean(axis=0)
    _, vec = np.linalg.eigh(np.cov((points - c).T))
    axis = vec[:, 2]
    t = (points - c) @ axis
    width = max(4 * h, float(np.ptp(t)) / 200)
    slab = np.floor((t - t.min()) / width).astype(np.int64)
    counts = np.bincount(slab)
    n = np.maximum(counts, 1)
    centres = np.column_stack([np.bincount(slab, points[:, k], minlength=len(counts)) for k in range(3)]) / n[:, None]
    dist = np.linalg.norm(points - centres[slab], axis=1)
    rms = np.sqrt(np.bincount(slab, dist**2, len(counts)) / n)
    inner = np.bincount(slab, (dist < 0.4 * rms[slab]).astype(float), len(counts)) / n
    hollow = (inner < 0.05) & (counts > 0)
    return centres[slab], float(np.sum(counts[hollow]) / len(points)), axis


def orient(points: np.ndarray, normals: np.ndarray, tree: cKDTree, opts: ScanOptions, h: float) -> tuple:
    """Normals turned toward the free side (module docstring, step 5); returns them and the method used."""
    method = opts.orient
    hollow_share = None
    if method in ("auto", "axis"):
        target, hollow_share, _ = _slab_centres(points, h)
        if method == "auto":
            method = "axis" if hollow_share > 0.6 else "up"
    if method == "axis":
        toward = target - points
    elif method == "up":
        toward = np.broadcast_to(np.array([0.0, 0.0, 1.0]), points.shape)
    else:
        toward = np.asarray(opts.viewpoint, float)[None, :] - points
    n = np.where((np.einsum("ni,ni->n", normals, toward) < 0)[:, None], -normals, normals)
    # neighbour voting: a normal that disagrees with most of its neighbours' is turned
    _, idx = tree.query(points, k=min(K_NORMALS, len(points)), workers=-1)
    flipped = 0
    for _ in range(2):
        vote = np.einsum("ni,nki->n", n, n[idx[:, 1:]])
        bad = vote < 0
        flipped += int(bad.sum())
        n[bad] *= -1
    # one pass of neighbour averaging: a single badly fitted normal (a hole's rim, a stray point) is outvoted
    n = n[idx].sum(axis=1)
    n /= np.maximum(np.linalg.norm(n, axis=1), 1e-12)[:, None]
    return n, {"orientation": method, "hollow_share": hollow_share, "orientation_vote_flips": flipped}


# --- the pipeline ------------------------------------------------------------------------------------
def scan_surface(points: np.ndarray, opts: ScanOptions = ScanOptions(), source: str = "point cloud",
                 normals: np.ndarray | None = None, points_read: int | None = None) -> ScanSurface:
    """Reconstruct a scan (module docstring). ``normals`` (unit, toward free space) skip steps 4-5
    (a mesh's face normals)."""
    from eels_gz.terrain._scan_field import grid_field, wall_meshes

    if len(points) < MIN_POINTS:
        raise TerrainError(f"{source}: {len(points)} points; surface reconstruction needs at least {MIN_POINTS}")
    steps = Steps(source, 6)
    derived: dict = {"points_read": int(points_read if points_read is not None else len(points))}
    with steps.step(f"defaults from {len(points)} points"):
        if normals is None:
            points = budget(points, opts.max_points, source, opts.seed)
        else:
            keep = budget(np.arange(len(points))[:, None].astype(float), opts.max_points, source, opts.seed,
                          "surface samples")[:, 0].astype(int)
            points, normals = points[keep], normals[keep]
        if opts.orient == "winding" and normals is None:
            raise TerrainError(f"{source}: orientation 'winding' is for meshes; a point cloud has no winding")
        if normals is None:  # before the extent is taken from them: one stray point would set the grid
            points, derived["strays_removed"] = drop_strays(points, source)
        derived.update(derive(points, opts, source))
        h = derived["voxel"]
    with steps.step("clustering"):
        pts, nrm, _ = cluster(points, derived["cluster_cell"], normals)
        derived["cluster_points"] = int(len(pts))
    with steps.step("normals and outliers"):
        if nrm is None:
            tree = cKDTree(pts)
            normal, offset, mean_dist = pca_normals(pts, tree)
            bad = outliers(offset, mean_dist, h)
            derived["outliers_removed"] = int(bad.sum())
            pts = pts[~bad]
            tree = cKDTree(pts)
            normal, offset, _ = pca_normals(pts, tree)
            derived["noise_rms"] = float(np.sqrt(np.mean(offset**2)))
            nrm, info = orient(pts, normal, tree, opts, h)
            derived.update(info)
        else:
            derived["outliers_removed"] = 0
            if opts.orient == "winding":
                derived["orientation"] = "winding"
            else:
                nrm, info = orient(pts, nrm, cKDTree(pts), opts, h)
                derived.update(info)
        if len(pts) < MIN_POINTS:
            raise TerrainError(f"{source}: {len(pts)} points left after clustering and outlier removal; "
                               f"need {MIN_POINTS}")
    with steps.step(f"signed distance grid {tuple(derived['grid_shape'])}"):
        grid, near = grid_field(pts, nrm, np.array(derived["grid_origin"]), h, tuple(derived["grid_shape"]),
                                derived["fill_radius"], derived["smoothing_radius"], steps)
    with steps.step("wall mesh (marching cubes)"):
        surface = wall_meshes(grid, near, source)
        derived["wall_faces"] = int(len(surface.faces))
    with steps.step("decimation"):
        collision = decimate_open(surface, opts.max_faces, source)
        visual = decimate_open(surface, opts.visual_faces, source)
        derived.update({"collision_faces": int(len(collision.faces)), "visual_faces": int(len(visual.faces))})
    derived["seconds"] = steps.seconds
    return ScanSurface(collision, visual, grid, derived)


def decimate_open(mesh: trimesh.Trimesh, max_faces: int, source: str = "mesh") -> trimesh.Trimesh:
    """Quadric decimation of an open (one-sided) mesh to at most ``max_faces`` faces."""
    if len(mesh.faces) <= max_faces:
        return mesh
    out = mesh.simplify_quadric_decimation(face_count=int(max_faces))
    out.merge_vertices()
    out.update_faces(out.nondegenerate_faces())
    log.info("%s: decimated %d -> %d faces", source, len(mesh.faces), len(out.faces))
    return out


def prepare_pointcloud(path: str | Path, scale: float = 1.0, opts: ScanOptions = ScanOptions()) -> ScanSurface:
    """Load and reconstruct a scan file (:func:`scan_surface`)."""
    points = load_points(path, scale)
    surface = scan_surface(points, opts, str(path), points_read=len(points))
    return surface
