"""Terrain primitives for the shipped and user worlds.

Each generator takes a frozen parameter dataclass and returns a
:class:`Terrain`: a closed collision mesh in the world frame, a visual mesh,
and how to build the distance field (a heightfield raster for surfaces, a
signed distance grid of the mesh for volumes). All lengths are metres and
angles degrees on the command line (radians inside), and every random
choice is drawn from ``numpy.random.default_rng(seed)``, so one seed gives
one terrain.

Frames: z up; the robot's floor is at z = 0 where there is one (the plane,
the slope at x = 0, the floor between parallel walls, the bottom of the
U-channel and of the tube's bore, the ground of the rock field); the moulin
opens at z = 0 and descends to ``-depth``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import trimesh

from eels_gz.errors import TerrainError
from eels_gz.terrain.dem import Dem, triangulate
from eels_gz.terrain.meshes import repair


MAX_SLOPE_DEG = 35.0  # the steepest slope primitive
MAX_RASTER_POSTS = 1 << 25  # a primitive's heightfield at most as large as a DEM's default budget (dem.MAX_CELLS)


@dataclass(frozen=True)
class Slab:
    """One box of a terrain's collision, where the terrain is exactly a union of boxes: ``centre`` (m,
    world frame), ``size`` (m, x y z), turned by ``pitch`` (rad) about y. gz-sim 8 applies a collision's
    ``<surface><friction>`` to a box but not to a mesh (gz-physics' dartsim ``AttachMeshShape`` never
    reads it: DART's default 1), so such a terrain's collision is written as its boxes (docs/gazebo.md)."""

    centre: tuple[float, float, float]
    size: tuple[float, float, float]
    pitch: float = 0.0


@dataclass(frozen=True)
class Terrain:
    """A generated or imported terrain, ready for :mod:`eels_gz.terrain.writers`."""

    kind: str
    description: str
    collision: trimesh.Trimesh  # world frame, m
    visual: trimesh.Trimesh
    dem: Dem | None = None  # surfaces: the raster of the heightfield (and of <heightmap> when heightmap=True)
    heightmap: bool = False  # DEM worlds: Gazebo gets a <heightmap> (with the bullet detector)
    field_spacing: float | None = None  # volumes: voxel size (m) of the signed distance grid
    parameters: dict = field(default_factory=dict)
    field: object | None = None  # a field built already (scans: the grid of the oriented points)
    field_dem: Dem | None = None  # DEMs: the full raster of the heightfield when `dem` is a crop of it
    # the collision as boxes, when the terrain is exactly their union (Slab); the mesh stays the visual, the
    # distance field's source and the bounds' for the model's local origin
    slabs: tuple[Slab, ...] = ()

    def build_field(self):
        """The terrain's distance field: the one built already, the DEM's heightfield, or a grid of the
        collision mesh."""
        if self.field is not None:
            return self.field
        if self.field_dem is not None:
            return self.field_dem.to_heightfield()
        if self.dem is not None:
            return self.dem.to_heightfield()
        from eels_gz.terrain.fields import sdf_grid_from_mesh

        return sdf_grid_from_mesh(self.visual.vertices, self.visual.faces, spacing=self.field_spacing)


# --- parameters -----------------------------------------------------------------------------
def _check(cond: bool, kind: str, name: str, value, expected: str) -> None:
    if not cond:
        raise TerrainError(f"primitive '{kind}': {name} = {value!r} is invalid; expected {expected}")


@dataclass(frozen=True)
class IcePlaneParams:
    size: float = 20.0  # m, side of the square
    thickness: float = 0.5  # m

    def __post_init__(self):
        _check(self.size > 0, "ice_plane", "size", self.size, "> 0 m")
        _check(self.thickness > 0, "ice_plane", "thickness", self.thickness, "> 0 m")


@dataclass(frozen=True)
class SlopeParams:
    angle: float = 10.0  # deg, rising along +x
    length: float = 12.0  # m along x
    width: float = 6.0  # m along y
    thickness: float = 0.5  # m below the lowest point

    def __post_init__(self):
        _check(0.0 <= self.angle <= MAX_SLOPE_DEG, "slope", "angle", self.angle, f"0 to {MAX_SLOPE_DEG:g} degrees")
        _check(self.length > 0 and self.width > 0, "slope", "length/width", (self.length, self.width), "> 0 m")
        _check(self.thickness > 0, "slope", "thickness", self.thickness, "> 0 m")


@dataclass(frozen=True)
class SoilBinParams:
    length: float = 6.0  # m along x, the rig's travel
    width: float = 1.0  # m along y
    thickness: float = 0.5  # m

    def __post_init__(self):
        _check(self.length > 0 and self.width > 0, "soil_bin", "length/width", (self.length, self.width), "> 0 m")
        _check(self.thickness > 0, "soil_bin", "thickness", self.thickness, "> 0 m")


@dataclass(frozen=True)
class SandboxParams:
    angle: float = 10.0  # deg, the box tilted about y, rising along +x
    length: float = 5.0  # m along x
    width: float = 3.0  # m along y
    thickness: float = 0.5  # m below the lowest point

    def __post_init__(self):
        _check(0.0 <= self.angle <= 35.0, "sandbox", "angle", self.angle, "0 to 35 degrees")
        _check(self.length > 0 and self.width > 0, "sandbox", "length/width", (self.length, self.width), "> 0 m")
        _check(self.thickness > 0, "sandbox", "thickness", self.thickness, "> 0 m")


@dataclass(frozen=True)
class TubeParams:
    radius: float = 0.6  # m, mean bore radius
    length: float = 8.0  # m along x
    roughness: float = 0.02  # m, rms of the bore radius about its mean
    wall: float = 0.2  # m, wall thickness
    seed: int = 0
    voxel: float = 0.04  # m, distance grid spacing

    def __post_init__(self):
        _check(self.radius > 0 and self.length > 0, "tube", "radius/length", (self.radius, self.length), "> 0 m")
        _check(0 <= self.roughness < 0.2 * self.radius, "tube", "roughness", self.roughness, "0 to 0.2 x radius")
        _check(self.wall > 4 * self.roughness and self.wall > 0, "tube", "wall", self.wall, "> 4 x roughness")
        _check(self.voxel > 0, "tube", "voxel", self.voxel, "> 0 m")


@dataclass(frozen=True)
class ParallelWallsParams:
    # m between the walls: a stemming gap for EELS 1.5 (scenario wall_climb). Its bend motors
    # (0.7 rad limit) cross it from wall to wall in one inclined module, so that five screws
    # on alternating walls press with short levers; 0.8 m took four bends per crossing and
    # left three contacts, too few to hold (issue 8 notes).
    gap: float = 0.35
    height: float = 4.0  # m above the floor: over the 3.2 m robot standing 0.3 m up, with room to climb
    length: float = 8.0  # m along x
    wall: float = 0.3  # m, wall and floor thickness
    voxel: float = 0.04  # m

    def __post_init__(self):
        for name in ("gap", "height", "length", "wall", "voxel"):
            _check(getattr(self, name) > 0, "parallel_walls", name, getattr(self, name), "> 0 m")


@dataclass(frozen=True)
class UChannelParams:
    radius: float = 0.5  # m, radius of the half-round bottom
    wall_height: float = 0.5  # m of straight wall above the bottom's centre line
    length: float = 8.0  # m along x
    wall: float = 0.3  # m, thickness under and beside the channel
    voxel: float = 0.03  # m

    def __post_init__(self):
        for name in ("radius", "length", "wall", "voxel"):
            _check(getattr(self, name) > 0, "u_channel", name, getattr(self, name), "> 0 m")
        _check(self.wall_height >= 0, "u_channel", "wall_height", self.wall_height, ">= 0 m")


@dataclass(frozen=True)
class RockFieldParams:
    """ROAMS rock field: hemispheres ``z = sqrt(r^2 - rho^2)`` on flat ground.
    Rock count ~ Poisson(density x area); radius r = r_min + Exp(r_mean - r_min),
    redrawn above r_max; centres uniform over the field."""

    size: float = 12.0  # m, side of the square
    density: float = 0.25  # rocks per m^2
    r_min: float = 0.05  # m
    r_mean: float = 0.12  # m
    r_max: float = 0.4  # m
    seed: int = 0
    spacing: float = 0.02  # m, heightfield raster
    thickness: float = 0.3  # m, ground slab

    def __post_init__(self):
        k = "rock_field"
        _check(self.size > 0, k, "size", self.size, "> 0 m")
        # more rocks than fit side by side at their smallest is no rock field (and a raster of them no memory holds)
        packed = 1.0 / (math.pi * self.r_min ** 2)
        _check(0 <= self.density <= packed, k, "density", self.density,
               f"0 to {packed:.3g} rocks/m^2 (1 / (pi r_min^2): rocks of the smallest radius side by side)")
        _check((self.size / max(self.spacing, 1e-12)) ** 2 <= MAX_RASTER_POSTS, k, "size", self.size,
               f"at most {math.sqrt(MAX_RASTER_POSTS) * self.spacing:g} m at a {self.spacing:g} m raster "
               f"({MAX_RASTER_POSTS} posts)")
        _check(0 < self.r_min < self.r_mean < self.r_max, k, "r_min/r_mean/r_max",
               (self.r_min, self.r_mean, self.r_max), "0 < r_min < r_mean < r_max")
        _check(0 < self.spacing < self.r_min, k, "spacing", self.spacing, "0 < spacing < r_min")


@dataclass(frozen=True)
class MoulinParams:
    radius: float = 0.8  # m, mean shaft radius
    depth: float = 10.0  # m
    roughness: float = 0.05  # m, rms of the wall radius
    meander: float = 0.3  # m, amplitude of the shaft centre line's sideways wander
    wall: float = 0.6  # m, ice around the shaft (the top annulus is the glacier surface)
    seed: int = 0
    voxel: float = 0.07  # m
    # Below slot_top m under the opening the bore flattens, over slot_transition m, into an
    # elliptical slot slot_width m across (along y) and 2 radius long (along x), with wall
    # roughness slot_roughness (rms, m) and no sideways wander across it: the crevasse-like
    # section that a snake can stem across. slot_top = 0: round all the way down.
    slot_top: float = 0.0  # m
    slot_width: float = 0.4  # m
    slot_transition: float = 1.0  # m
    slot_roughness: float = 0.004  # m

    def __post_init__(self):
        k = "moulin"
        _check(self.radius > 0 and self.depth > 0, k, "radius/depth", (self.radius, self.depth), "> 0 m")
        _check(0 <= self.roughness < 0.2 * self.radius, k, "roughness", self.roughness, "0 to 0.2 x radius")
        _check(0 <= self.meander <= self.radius, k, "meander", self.meander, "0 to radius")
        _check(self.wall > 4 * self.roughness + self.meander, k, "wall", self.wall, "> 4 x roughness + meander")
        _check(self.voxel > 0, k, "voxel", self.voxel, "> 0 m")
        _check(0 <= self.slot_top < self.depth, k, "slot_top", self.slot_top, "0 (no slot) to depth m")
        _check(0 < self.slot_width <= 2 * self.radius, k, "slot_width", self.slot_width, "0 to 2 x radius m")
        _check(self.slot_transition > 0, k, "slot_transition", self.slot_transition, "> 0 m")
        _check(0 <= self.slot_roughness < 0.2 * self.slot_width, k, "slot_roughness", self.slot_roughness,
               "0 to 0.2 x slot_width m")

    def slot_blend(self, z: np.ndarray) -> np.ndarray:
        """0 above the slot, 1 in it, a smoothstep over the transition, at heights ``z`` (m, 0 at the
        opening); 0 everywhere without a slot."""
        if self.slot_top == 0.0:
            return np.zeros(np.shape(z))
        s = np.clip((-np.asarray(z, float) - self.slot_top) / self.slot_transition, 0.0, 1.0)
        return s * s * (3 - 2 * s)

    def half_width(self, z: np.ndarray) -> np.ndarray:
        """The bore's half-width along y (m) at heights ``z``: the radius above the slot,
        slot_width / 2 in it."""
        return self.radius + self.slot_blend(z) * (0.5 * self.slot_width - self.radius)


@dataclass(frozen=True)
class MarsDemParams:
    """Synthetic Mars-like DEM: fractal relief (spectral synthesis, power
    spectrum ~ f^-beta) plus degraded bowl craters (depth 0.1 D, rim 0.02 D,
    ejecta falling off as (R/rho)^3) with diameters log-uniform in [d_min, d_max]."""

    size: float = 32.0  # m, side of the square
    spacing: float = 0.25  # m between posts
    relief: float = 0.3  # m, rms of the fractal relief
    beta: float = 3.6  # spectral exponent (2 H + 2, Hurst H = 0.8)
    craters: int = 12
    d_min: float = 1.5  # m
    d_max: float = 8.0  # m
    seed: int = 0

    def __post_init__(self):
        k = "mars_dem"
        _check(self.size > 2 * self.spacing > 0, k, "size/spacing", (self.size, self.spacing), "size > 2 spacing > 0")
        _check(self.relief >= 0, k, "relief", self.relief, ">= 0 m")
        _check(self.craters >= 0, k, "craters", self.craters, ">= 0")
        _check(0 < self.d_min <= self.d_max, k, "d_min/d_max", (self.d_min, self.d_max), "0 < d_min <= d_max")


# --- geometry helpers ---------------------------------------------------------------------------
def _ear_clip(poly: np.ndarray) -> np.ndarray:
    """Triangles (indices) of a simple counter-clockwise polygon (K, 2)."""
    idx = list(range(len(poly)))
    tris = []

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    while len(idx) > 3:
        for k in range(len(idx)):
            i0, i1, i2 = idx[k - 1], idx[k], idx[(k + 1) % len(idx)]
            a, b, c = poly[i0], poly[i1], poly[i2]
            if cross(a, b, c) <= 1e-15:
                continue
            if any(cross(a, b, poly[m]) >= 0 and cross(b, c, poly[m]) >= 0 and cross(c, a, poly[m]) >= 0
                   for m in idx if m not in (i0, i1, i2)):
                continue
            tris.append((i0, i1, i2))
            idx.pop(k)
            break
        else:
            raise TerrainError("internal: polygon is not simple (ear clipping found no ear)")
    tris.append(tuple(idx))
    return np.array(tris)


def extrude_yz(poly_yz: np.ndarray, length: float) -> trimesh.Trimesh:
    """Closed solid: a counter-clockwise (y, z) cross-section extruded along x over [-length/2, length/2]."""
    k = len(poly_yz)
    x0, x1 = -length / 2, length / 2
    v = np.concatenate([np.column_stack([np.full(k, x0), poly_yz]), np.column_stack([np.full(k, x1), poly_yz])])
    caps = _ear_clip(poly_yz)
    i = np.arange(k)
    j = (i + 1) % k
    sides = np.concatenate([np.stack([i, j, j + k], 1), np.stack([i, j + k, i + k], 1)])
    faces = np.concatenate([caps[:, ::-1], caps + k, sides])
    return trimesh.Trimesh(v, faces, process=True)


def _rough_field(rng, shape: tuple[int, int], rms: float, modes: int = 24) -> np.ndarray:
    """Smooth random field on a (n_s, n_theta) grid, periodic in theta, rms ``rms``."""
    ns, nt = shape
    s = np.linspace(0, 1, ns)[:, None]
    theta = np.linspace(0, 2 * np.pi, nt, endpoint=False)[None, :]
    f = np.zeros(shape)
    for _ in range(modes):
        m = rng.integers(0, 7)
        n = rng.uniform(0, 6)
        f += rng.normal() / (1 + m + n) * np.cos(m * theta + 2 * np.pi * n * s + rng.uniform(0, 2 * np.pi))
    std = f.std()
    return f * (rms / std) if std > 0 and rms > 0 else np.zeros(shape)


def annulus(centre: np.ndarray, e1: np.ndarray, e2: np.ndarray, r_in: np.ndarray, r_out: float) -> trimesh.Trimesh:
    """Thick-walled tube: centre line ``centre`` (n_s, 3), bore radius ``r_in`` (n_s, n_theta)
    in the plane of ``e1``, ``e2``, constant outer radius; closed by annular end caps."""
    ns, nt = r_in.shape
    theta = np.linspace(0, 2 * np.pi, nt, endpoint=False)
    ring = np.cos(theta)[:, None] * e1 + np.sin(theta)[:, None] * e2  # (nt, 3)
    inner = centre[:, None, :] + r_in[:, :, None] * ring[None]
    outer = centre[:, None, :] + r_out * ring[None]
    v = np.concatenate([inner.reshape(-1, 3), outer.reshape(-1, 3)])
    off = ns * nt
    s, t = np.meshgrid(np.arange(ns - 1), np.arange(nt), indexing="ij")
    a = (s * nt + t).ravel()
    b = (s * nt + (t + 1) % nt).ravel()
    c, d = a + nt, b + nt
    quads = [np.stack([a, c, d], 1), np.stack([a, d, b], 1)]  # inner wall
    quads += [np.stack([a, d, c], 1) + off, np.stack([a, b, d], 1) + off]  # outer wall, opposite winding
    t = np.arange(nt)
    t1 = (t + 1) % nt
    last = (ns - 1) * nt
    quads += [np.stack([t, t1 + off, t + off], 1), np.stack([t, t1, t1 + off], 1)]  # start cap
    quads += [np.stack([last + t, last + t + off, last + t1 + off], 1),
              np.stack([last + t, last + t1 + off, last + t1], 1)]  # end cap
    return trimesh.Trimesh(v, np.concatenate(quads), process=True)


def _solid(mesh: trimesh.Trimesh, kind: str) -> trimesh.Trimesh:
    """Generated meshes go through the same checks as imported ones (outward, watertight)."""
    return repair(mesh, f"primitive '{kind}'")


# --- generators -----------------------------------------------------------------------------------
def _raster_terrain(kind: str, description: str, dem: Dem, params, heightmap: bool = False) -> Terrain:
    v, f = triangulate(dem, skirt_depth=getattr(params, "thickness", 0.5))
    mesh = _solid(trimesh.Trimesh(v, f, process=True), kind)
    return Terrain(kind, description, mesh, mesh, dem=dem, heightmap=heightmap,
                   parameters=dataclasses.asdict(params))


def ice_plane(p: IcePlaneParams) -> Terrain:
    h = p.size / 2
    dem = Dem(np.zeros((2, 2)), (-h, -h), (p.size, p.size), "ice_plane")
    return _raster_terrain("ice_plane", f"flat ice, {p.size:g} m square", dem, p)


def slope(p: SlopeParams) -> Terrain:
    # a plane is exact under bilinear interpolation: 1 m posts are enough for mesh and field
    nx, ny = max(2, math.ceil(p.length) + 1), max(2, math.ceil(p.width) + 1)
    x = np.linspace(-p.length / 2, p.length / 2, nx)
    heights = np.tile(x * math.tan(math.radians(p.angle)), (ny, 1))
    dem = Dem(heights, (-p.length / 2, -p.width / 2), (p.length / (nx - 1), p.width / (ny - 1)), "slope")
    return dataclasses.replace(_raster_terrain("slope", f"ice slope of {p.angle:g} deg rising along +x, z = 0 at x = 0",
                                               dem, p), slabs=(_plane_slab(p, p.angle),))


def _tilted_plane(kind: str, description: str, p, angle: float) -> Terrain:
    # a plane is exact under bilinear interpolation: 1 m posts are enough for mesh and field
    nx, ny = max(2, math.ceil(p.length) + 1), max(2, math.ceil(p.width) + 1)
    x = np.linspace(-p.length / 2, p.length / 2, nx)
    heights = np.tile(x * math.tan(math.radians(angle)), (ny, 1))
    dem = Dem(heights, (-p.length / 2, -p.width / 2), (p.length / (nx - 1), p.width / (ny - 1)), kind)
    return dataclasses.replace(_raster_terrain(kind, description, dem, p), slabs=(_plane_slab(p, angle),))


def _plane_slab(p, angle: float) -> Slab:
    """The box under a plane z = x tan(angle) over x in [-length/2, length/2], y in [-width/2, width/2]:
    its top face is the plane, ``thickness`` (the mesh's skirt depth) deep along the plane's normal."""
    a = math.radians(angle)
    t = getattr(p, "thickness", 0.5)
    return Slab((0.5 * t * math.sin(a), 0.0, -0.5 * t * math.cos(a)), (p.length / math.cos(a), p.width, t), -a)


def soil_bin(p: SoilBinParams) -> Terrain:
    """The single-wheel rig's soil bin: a flat surface, the soil level at z = 0 (the soil set is the run's)."""
    return _tilted_plane("soil_bin", f"flat soil bin {p.length:g} x {p.width:g} m, soil level at z = 0", p, 0.0)


def sandbox(p: SandboxParams) -> Terrain:
    """A tiltable sandbox (seed 004's PEL tests): a soil surface tilted by ``angle`` about y."""
    return _tilted_plane("sandbox", f"soil sandbox {p.length:g} x {p.width:g} m tilted {p.angle:g} deg, rising "
                                    "along +x, z = 0 at x = 0", p, p.angle)


def tube(p: TubeParams) -> Terrain:
    rng = np.random.default_rng(p.seed)
    nt = max(32, int(2 * np.pi * p.radius / 0.06))
    ns = max(2, int(p.length / 0.08) + 1)
    r_in = p.radius + _rough_field(rng, (ns, nt), p.roughness)
    z_axis = p.radius  # the bore's mean bottom at z = 0
    centre = np.column_stack([np.linspace(-p.length / 2, p.length / 2, ns), np.zeros(ns), np.full(ns, z_axis)])
    mesh = _solid(annulus(centre, np.array([0.0, 1, 0]), np.array([0.0, 0, 1]), r_in, p.radius + p.wall), "tube")
    desc = f"horizontal ice tube along x, bore radius {p.radius:g} m (rms roughness {p.roughness:g} m), axis at z = {z_axis:g} m"
    return Terrain("tube", desc, mesh, mesh, field_spacing=p.voxel, parameters=dataclasses.asdict(p))


def parallel_walls(p: ParallelWallsParams) -> Terrain:
    g, t, H = p.gap / 2, p.wall, p.height
    poly = np.array([(-g - t, -t), (g + t, -t), (g + t, H), (g, H), (g, 0), (-g, 0), (-g, H), (-g - t, H)])
    mesh = _solid(extrude_yz(poly, p.length), "parallel_walls")
    desc = f"two vertical ice walls {p.gap:g} m apart, {p.height:g} m high, on an ice floor at z = 0"
    slabs = (Slab((0.0, 0.0, -t / 2), (p.length, 2 * (g + t), t)),  # the floor, under both walls
             Slab((0.0, -g - t / 2, H / 2), (p.length, t, H)), Slab((0.0, g + t / 2, H / 2), (p.length, t, H)))
    return Terrain("parallel_walls", desc, mesh, mesh, field_spacing=p.voxel, parameters=dataclasses.asdict(p),
                   slabs=slabs)


def u_channel(p: UChannelParams) -> Terrain:
    R, t, W = p.radius, p.wall, p.wall_height
    n_arc = max(16, int(np.pi * R / 0.03))
    phi = np.linspace(np.pi, 2 * np.pi, n_arc + 1)  # left rim, down through the bottom, to the right rim
    arc = np.column_stack([R * np.cos(phi), R + R * np.sin(phi)])  # bottom of the U at z = 0
    top = R + W
    inner = np.concatenate([[(-R, top)], arc, [(R, top)]]) if W > 0 else arc
    outer = np.array([(R + t, top), (R + t, -t), (-R - t, -t), (-R - t, top)])
    # counter-clockwise: along the outer boundary's bottom, then back along the channel's inner surface
    poly = np.concatenate([outer[[2, 1, 0]], inner[::-1], outer[[3]]])
    mesh = _solid(extrude_yz(poly, p.length), "u_channel")
    desc = f"ice U-channel along x, half-round bottom of radius {p.radius:g} m at z = 0, walls {W:g} m above its centre"
    return Terrain("u_channel", desc, mesh, mesh, field_spacing=p.voxel, parameters=dataclasses.asdict(p))


def rocks(p: RockFieldParams) -> np.ndarray:
    """Rocks as rows (x, y, r) [m], deterministic per seed."""
    rng = np.random.default_rng(p.seed)
    n = rng.poisson(p.density * p.size**2)
    r = p.r_min + rng.exponential(p.r_mean - p.r_min, n)
    while (over := r > p.r_max).any():
        r[over] = p.r_min + rng.exponential(p.r_mean - p.r_min, int(over.sum()))
    half = p.size / 2 - r  # whole rocks inside the field
    xy = rng.uniform(-1, 1, (n, 2)) * half[:, None]
    return np.column_stack([xy, r])


def rock_heights(rock_rows: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """ROAMS surface z(x, y) = max(0, max_k sqrt(r_k^2 - rho_k^2)) on a grid (y rows, x columns)."""
    z = np.zeros((len(y), len(x)))
    dx, dy = x[1] - x[0], y[1] - y[0]
    for cx, cy, r in rock_rows:
        i0, i1 = np.searchsorted(x, cx - r - dx), np.searchsorted(x, cx + r + dx)
        j0, j1 = np.searchsorted(y, cy - r - dy), np.searchsorted(y, cy + r + dy)
        rho2 = (x[None, i0:i1] - cx) ** 2 + (y[j0:j1, None] - cy) ** 2
        z[j0:j1, i0:i1] = np.maximum(z[j0:j1, i0:i1], np.sqrt(np.clip(r * r - rho2, 0, None)))
    return z


def _hemisphere(cx: float, cy: float, r: float, sink: float, n_lon: int = 32, n_lat: int = 8) -> trimesh.Trimesh:
    """Closed rock: the hemisphere's vertices lie exactly on z = sqrt(r^2 - rho^2), with
    a short skirt down to z = -sink so the rock has no gap to the ground."""
    lat = np.linspace(0, np.pi / 2, n_lat + 1)[:-1]  # elevation of each ring, 0 at the rim
    lon = np.linspace(0, 2 * np.pi, n_lon, endpoint=False)
    rings = [np.column_stack([r * np.cos(lon), r * np.sin(lon), np.full(n_lon, -sink)])]
    rings += [np.column_stack([r * np.cos(a) * np.cos(lon), r * np.cos(a) * np.sin(lon), np.full(n_lon, r * np.sin(a))])
              for a in lat]
    v = np.concatenate(rings + [[[0, 0, r]], [[0, 0, -sink]]]) + [cx, cy, 0]
    top, bottom = len(v) - 2, len(v) - 1
    k = np.arange(n_lon)
    k1 = (k + 1) % n_lon
    faces = []
    for ring in range(len(rings) - 1):
        a, b = ring * n_lon, (ring + 1) * n_lon
        faces += [np.stack([a + k, a + k1, b + k1], 1), np.stack([a + k, b + k1, b + k], 1)]
    last = (len(rings) - 1) * n_lon
    faces += [np.stack([last + k, last + k1, np.full(n_lon, top)], 1), np.stack([k1, k, np.full(n_lon, bottom)], 1)]
    return trimesh.Trimesh(v, np.concatenate(faces), process=True)


def rock_field(p: RockFieldParams) -> Terrain:
    rows = rocks(p)
    n = int(round(p.size / p.spacing)) + 1
    x = np.linspace(-p.size / 2, p.size / 2, n)
    dem = Dem(rock_heights(rows, x, x), (-p.size / 2, -p.size / 2), (x[1] - x[0], x[1] - x[0]), "rock_field")
    ground = trimesh.creation.box(extents=(p.size, p.size, p.thickness))
    ground.apply_translation((0, 0, -p.thickness / 2))
    # rocks are separate closed bodies resting on (sunk 1 cm into) the ground slab: the collision
    # mesh is exact on the hemispheres; the heightfield (the raster) is the distance field
    mesh = trimesh.util.concatenate([ground] + [_hemisphere(cx, cy, r, 0.01) for cx, cy, r in rows])
    desc = (f"ROAMS rock field, {len(rows)} hemispherical rocks (r {p.r_min:g}-{p.r_max:g} m, mean {p.r_mean:g} m) "
            f"on {p.size:g} m flat ice, seed {p.seed}")
    return Terrain("rock_field", desc, mesh, mesh, dem=dem, parameters=dataclasses.asdict(p))


def moulin(p: MoulinParams) -> Terrain:
    rng = np.random.default_rng(p.seed)
    nt = max(32, int(2 * np.pi * p.radius / 0.1))
    ns = max(2, int(p.depth / 0.1) + 1)
    z = np.linspace(-p.depth, 0.0, ns)
    phase = rng.uniform(0, 2 * np.pi, 2)
    wander = p.meander * np.column_stack([np.sin(2 * np.pi * z / p.depth + phase[0]),
                                          np.sin(3 * np.pi * z / p.depth + phase[1])])
    wander -= wander[-1]  # the opening is centred on the origin
    blend = p.slot_blend(z)
    if p.slot_top > 0:  # across the slot (y) the centre line stays where the slot begins
        wander[:, 1] += blend * (np.interp(-p.slot_top, z, wander[:, 1]) - wander[:, 1])
    centre = np.column_stack([wander, z])
    b = p.half_width(z)[:, None]  # the ellipse's semi-axes: radius along x, b along y
    theta = np.linspace(0, 2 * np.pi, nt, endpoint=False)[None, :]
    bore = p.radius * b / np.sqrt((b * np.cos(theta)) ** 2 + (p.radius * np.sin(theta)) ** 2)
    rms = p.roughness + blend[:, None] * (p.slot_roughness - p.roughness)
    r_in = bore + (rms / p.roughness if p.roughness > 0 else 0.0) * _rough_field(rng, (ns, nt), p.roughness)
    mesh = _solid(annulus(centre, np.array([1.0, 0, 0]), np.array([0.0, 1, 0]), r_in, p.radius + p.wall), "moulin")
    desc = (f"rough vertical moulin shaft, radius {p.radius:g} m (rms {p.roughness:g} m), {p.depth:g} m deep "
            "from z = 0, synthetic stand-in for a scan")
    if p.slot_top > 0:
        desc += (f"; from {p.slot_top:g} m down a slot {p.slot_width:g} m across (y) and {2 * p.radius:g} m long"
                 f" (x)")
    return Terrain("moulin", desc, mesh, mesh, field_spacing=p.voxel, parameters=dataclasses.asdict(p))


def mars_heights(p: MarsDemParams) -> Dem:
    """The synthetic Mars-like DEM (posts every ``spacing`` m over ``size`` m, origin at the centre)."""
    rng = np.random.default_rng(p.seed)
    n = int(round(p.size / p.spacing)) + 1
    fx = np.fft.fftfreq(n, p.spacing)
    f = np.hypot(fx[None, :], fx[:, None])
    f[0, 0] = np.inf
    spectrum = f ** (-p.beta / 2) * np.exp(2j * np.pi * rng.uniform(size=(n, n)))
    z = np.fft.ifft2(spectrum).real
    z = (z - z.mean()) * (p.relief / z.std()) if p.relief > 0 and z.std() > 0 else np.zeros((n, n))
    x = np.linspace(-p.size / 2, p.size / 2, n)
    X, Y = np.meshgrid(x, x)
    for _ in range(p.craters):
        D = math.exp(rng.uniform(math.log(p.d_min), math.log(p.d_max)))
        cx, cy = rng.uniform(-p.size / 2, p.size / 2, 2)
        R, depth, rim = D / 2, 0.1 * D, 0.02 * D
        q = np.hypot(X - cx, Y - cy) / R
        z += np.where(q < 1, rim - depth * (1 - q * q), rim / np.maximum(q, 1) ** 3)
    return Dem(z, (-p.size / 2, -p.size / 2), (x[1] - x[0], x[1] - x[0]), "mars_dem")


def mars_dem(p: MarsDemParams) -> Terrain:
    from eels_gz.terrain.dem import square_posts

    dem = square_posts(mars_heights(p))
    desc = (f"synthetic Mars-like DEM, {p.size:g} m square at {p.spacing:g} m posts: fractal relief "
            f"(rms {p.relief:g} m) and {p.craters} craters, seed {p.seed}")
    return _raster_terrain("mars_dem", desc, dem, p, heightmap=True)


def dem_terrain(dem: Dem, max_faces: int | None = None, center: tuple[float, float] | None = None,
                radius: float | None = None, crop: tuple[float, float, float, float] | None = None) -> Terrain:
    """A DEM read by :func:`eels_gz.terrain.dem.read_dem` as a heightmap terrain: the full raster is
    the heightfield (screw contact, placement); Gazebo's heightmap and the host's mesh cover the
    engine region (:func:`eels_gz.terrain.dem.engine_region`) at full resolution."""
    from eels_gz.terrain.dem import MAX_FACES, engine_region

    budget = max_faces or MAX_FACES
    region = engine_region(dem, budget, center, radius, crop)
    v, f = triangulate(region, budget)
    mesh = _solid(trimesh.Trimesh(v, f, process=True), dem.source or "DEM")
    ny, nx = dem.shape
    my, mx = region.shape
    desc = (f"DEM {Path(dem.source).name}: {nx} x {ny} posts at {dem.spacing_xy[0]:.4g} x {dem.spacing_xy[1]:.4g} m;"
            f" engine region {mx} x {my} posts at {region.spacing_xy[0]:.4g} m")
    return Terrain("dem", desc, mesh, mesh, dem=region, heightmap=True, field_dem=dem,
                   parameters={"shape": [ny, nx], "spacing_xy": list(dem.spacing_xy), "origin_xy": list(dem.origin_xy),
                               "engine_shape": [my, mx], "engine_spacing_xy": list(region.spacing_xy),
                               "engine_origin_xy": list(region.origin_xy), "engine_faces": int(len(mesh.faces))})


def mesh_terrain(full: trimesh.Trimesh, collision: trimesh.Trimesh, voxel: float | None,
                 description: str) -> Terrain:
    """An imported (repaired, decimated) mesh; the distance grid is built from the full mesh."""
    terrain = Terrain("mesh", description, collision, full, field_spacing=voxel,
                      parameters={"faces": len(full.faces), "collision_faces": len(collision.faces), "voxel": voxel})
    return terrain


def scan_terrain(surface, kind: str, description: str) -> Terrain:
    """A reconstructed scan or open mesh (:class:`eels_gz.terrain.pointcloud.ScanSurface`): one-sided
    collision and visual meshes and the grid of its oriented points."""
    return Terrain(kind, description, surface.collision, surface.visual, field=surface.field,
                   field_spacing=surface.field.spacing, parameters=dict(surface.derived))


PRIMITIVES = {
    "ice_plane": (ice_plane, IcePlaneParams),
    "slope": (slope, SlopeParams),
    "soil_bin": (soil_bin, SoilBinParams),
    "sandbox": (sandbox, SandboxParams),
    "tube": (tube, TubeParams),
    "parallel_walls": (parallel_walls, ParallelWallsParams),
    "u_channel": (u_channel, UChannelParams),
    "rock_field": (rock_field, RockFieldParams),
    "moulin": (moulin, MoulinParams),
    "mars_dem": (mars_dem, MarsDemParams),
}


def primitive_parameters(kind: str) -> dict[str, object]:
    """Parameter names and defaults of a primitive kind."""
    _, params = _lookup(kind)
    return {f.name: f.default for f in dataclasses.fields(params)}


def _lookup(kind: str):
    if kind not in PRIMITIVES:
        raise TerrainError(f"unknown primitive '{kind}'; expected one of: {', '.join(PRIMITIVES)}")
    return PRIMITIVES[kind]


def make_primitive(kind: str, **arguments) -> Terrain:
    """Build primitive ``kind`` with the given parameters (the rest default).
    Unknown parameter names and out-of-range values raise TerrainError."""
    build, params = _lookup(kind)
    known = {f.name: f for f in dataclasses.fields(params)}
    unknown = sorted(set(arguments) - set(known))
    if unknown:
        raise TerrainError(f"primitive '{kind}' has no parameter(s) {', '.join(unknown)}; "
                           f"expected: {', '.join(known)}")
    typed = {}
    for name, value in arguments.items():
        kind_of = type(known[name].default)
        try:
            typed[name] = kind_of(value) if kind_of is not int else int(str(value), 0)
        except (TypeError, ValueError):
            raise TerrainError(f"primitive '{kind}': {name} = {value!r} is not a {kind_of.__name__}") from None
    return build(params(**typed))
