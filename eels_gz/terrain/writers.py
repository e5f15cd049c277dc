"""Write a terrain model folder and a world that includes it. Reading them again (a world's terrain
distance field, its terrain records and soil) is :mod:`eels_gz.terrain.world_terrain`'s; its
``find_terrain_field``, ``terrain_records`` and ``world_soil`` stay importable from here, the path the
plugins of earlier releases name.

Model folder ``<models>/<name>/``:

- ``model.config``, ``model.sdf`` (one static model, one link);
- ``meshes/collision.stl`` (and ``meshes/visual.stl`` when the visual mesh
  differs), binary STL in metres, in the model frame;
- ``distance_field.npz``: the terrain's distance field (a heightfield or a
  signed distance grid, :func:`eels_gz.terrain.fields.save_field`), in the
  model frame. The fixed name next to ``model.sdf`` is how the screw-contact
  plugin finds it (:func:`~eels_gz.terrain.world_terrain.find_terrain_field`);
- ``terrain.json``: the generator, its parameters, the source file and the
  model's ``local_origin``;
- **local origin.** Meshes and field are written relative to the model's
  ``local_origin`` (:func:`local_origin`: the centre of the collision mesh's
  bounds rounded to ORIGIN_GRID, zero for a terrain near the world origin),
  and ``model.sdf`` carries it as the model's ``<pose>``, in full double
  precision. A scan or mesh in georeferenced coordinates (UTM: 4.1e6 m) thus
  stays where it was scanned while its binary STL, which holds float32
  (0.25-0.5 m steps at 4.1e6 m), keeps the precision of a terrain at the
  origin; every reader applies the pose (the hosts' SDF loaders,
  :func:`~eels_gz.terrain.world_terrain.find_terrain_field` for the screw contact, placement and sensors,
  the scene log and so the viewer). DEM (heightmap) terrains are written in
  world coordinates as before;
- DEM terrains only: ``heightmap.png`` (16-bit, square, 2^n + 1 posts, as
  Gazebo needs) named by a ``<heightmap>`` collision and visual, and
  ``heightmap.stl``, the triangulated DEM. dartpy has no heightmap shape, so
  the embedded host simulates a ``<heightmap>`` whose ``<uri>`` is
  ``X.png`` with the mesh ``X.stl`` beside it (see ``eels_gz/sdf_reader.py``).

The world ``<worlds>/<name>.sdf`` copies ``<physics>``, ``<gravity>`` and
the world's gz-sim system ``<plugin>``s (Physics, UserCommands,
SceneBroadcaster, and the Sensors, Imu and ForceTorque systems without which
Gazebo publishes no sensor data) from ``worlds/ice_plane.sdf`` and the ice
friction into the model's ``<surface>``, so those live once, in ice_plane.sdf. DEM worlds use
the bullet collision detector (with DART's default detector, bodies fall
through heightmaps in Gazebo).
"""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from lxml import etree

from eels_gz.errors import TerrainError
from eels_gz.paths import asset
from eels_gz.terrain.fields import HeightField, save_field, translated

# the readers' old path: plugins of earlier releases import find_terrain_field from here
from eels_gz.terrain.world_terrain import FIELD_FILE, find_terrain_field, terrain_records, world_soil  # noqa: F401

if TYPE_CHECKING:  # scipy's import (0.2 s) only for a run that reads a DEM
    from eels_gz.terrain.dem import Dem

log = logging.getLogger(__name__)

HEIGHTMAP_PNG = "heightmap.png"
HEIGHTMAP_MESH = "heightmap.stl"
SDF_VERSION = "1.9"
MAX_HEIGHTMAP_POSTS = 1025  # Gazebo heightmap images are square with 2^n + 1 posts
REFERENCE_WORLD = ("worlds", "ice_plane.sdf")
# m: a local origin is a multiple of this. Within ORIGIN_GRID / 2 of the world origin it is zero (the
# shipped terrains), and a model's float32 mesh coordinates stay below ORIGIN_GRID / 2 + its extent:
# float32 steps of 4 um at 50 m, against 0.25-0.5 m at a UTM northing of 4.1e6 m.
ORIGIN_GRID = 100.0


@dataclass(frozen=True)
class ReferencePhysics:
    """What every generated world takes from ``worlds/ice_plane.sdf``."""

    physics: etree._Element  # the <physics> element
    gravity: str  # text of <gravity>
    mu: float  # ice friction coefficient
    systems: tuple = ()  # the world's <plugin> elements (gz-sim systems)

    @classmethod
    def load(cls, path: Path | None = None) -> "ReferencePhysics":
        path = path or asset(*REFERENCE_WORLD)
        root = etree.parse(str(path)).getroot()
        physics, gravity = root.find("world/physics"), root.find("world/gravity")
        mu = root.find("world/model/link/collision/surface/friction/ode/mu")
        if physics is None or gravity is None or mu is None:
            raise TerrainError(f"{path}: the reference world needs <physics>, <gravity> and a collision "
                               "<surface><friction><ode><mu>")
        return cls(physics, gravity.text.strip(), float(mu.text), tuple(root.findall("world/plugin")))


def _check_name(name: str) -> None:
    if not name or not all(c.isalnum() or c in "_-" for c in name):
        raise TerrainError(f"terrain name '{name}' must be non-empty letters, digits, '_' or '-'")


def _write_xml(path: Path, root, comment: str | None = None) -> None:
    text = etree.tostring(root, pretty_print=True, encoding="unicode")
    if comment and "--" in comment:  # XML forbids "--" inside a comment
        comment = comment.replace("--", "- -")
    head = '<?xml version="1.0"?>\n' + (f"<!-- {comment} -->\n" if comment else "")
    path.write_text(head + text)


def _sub(parent, tag: str, text: str | None = None, **attrs):
    node = etree.SubElement(parent, tag, **attrs)
    if text is not None:
        node.text = text
    return node


def _fmt(values) -> str:
    return " ".join(f"{float(v):.9g}" for v in values)


def heightmap_raster(dem: Dem) -> tuple[np.ndarray, tuple[float, float, float], tuple[float, float, float]]:
    """16-bit image rows (north first), Gazebo ``<size>`` and ``<pos>`` of a DEM.
    Height = pos.z + value / 65535 * size.z, over the extent ``size`` centred at ``pos``."""
    ny, nx = dem.shape
    if nx != ny or nx > MAX_HEIGHTMAP_POSTS or (nx - 1) & (nx - 2):
        raise TerrainError(f"{dem.source}: a heightmap needs a square raster of 2^n + 1 posts (at most "
                           f"{MAX_HEIGHTMAP_POSTS}), got {nx} x {ny}; resample it with dem.square_posts")
    square = dem
    lo, hi = float(square.heights.min()), float(square.heights.max())
    span = max(hi - lo, 1e-6)
    image = np.round((square.heights - lo) / span * 65535).astype(np.uint16)[::-1]
    sx, sy = dem.size_xy
    cx, cy = dem.center_xy
    return image, (sx, sy, span), (cx, cy, lo)


def _check_heightmap(folder: Path, dem: Dem, size, pos) -> None:
    """TerrainError unless the image and mesh just written in ``folder`` are one surface, by the rule the
    host applies when it loads the world (eels_gz.terrain.heightmaps): a DEM whose heights a 16-bit image
    or the float32 mesh cannot hold (e.g. +-1e9 m of nodata) is refused here, not by `eels-gz run`."""
    import trimesh

    from eels_gz.terrain.heightmaps import heightmap_mismatch

    vertices = np.asarray(trimesh.load(folder / HEIGHTMAP_MESH, force="mesh").vertices)
    off = heightmap_mismatch(folder / HEIGHTMAP_PNG, vertices, size, pos)
    if off is not None:
        lo, hi = float(dem.heights.min()), float(dem.heights.max())
        raise TerrainError(f"{dem.source}: its heights ({lo:.6g} to {hi:.6g} m) cannot be written as a heightmap "
                           f"whose image and mesh agree ({off}; `eels-gz run` would refuse the world): check the "
                           "DEM's nodata value and units")


def _surface(collision, mu: float) -> None:
    ode = _sub(_sub(_sub(collision, "surface"), "friction"), "ode")
    _sub(ode, "mu", f"{mu:g}")
    _sub(ode, "mu2", f"{mu:g}")


def _geometry_mesh(parent, uri: str) -> None:
    _sub(_sub(_sub(parent, "geometry"), "mesh"), "uri", uri)


def _geometry_heightmap(parent, uri: str, size, pos) -> None:
    hm = _sub(_sub(parent, "geometry"), "heightmap")
    _sub(hm, "uri", uri)
    _sub(hm, "size", _fmt(size))
    _sub(hm, "pos", _fmt(pos))


COMPACT_ABOVE = 1_000_000  # values: larger fields are stored compact (fields.save_field)


def _large(field) -> bool:
    return np.asarray(field.heights if isinstance(field, HeightField) else field.values).size > COMPACT_ABOVE


def write_model(terrain, name: str, models_dir: str | Path, *, source: str = "", command: str = "",
                reference: ReferencePhysics | None = None, soil: str = "") -> Path:
    """Write the model folder ``models_dir/name`` (see the module docstring); returns it."""
    _check_name(name)
    reference = reference or ReferencePhysics.load()
    folder = Path(models_dir) / name
    folder.mkdir(parents=True, exist_ok=True)
    for stale in ("meshes/collision.stl", "meshes/visual.stl", HEIGHTMAP_PNG, HEIGHTMAP_MESH):
        (folder / stale).unlink(missing_ok=True)
    visual_uri = f"model://{name}/meshes/collision.stl"
    if not terrain.heightmap:
        origin = local_origin(terrain.collision)
        (folder / "meshes").mkdir(exist_ok=True)
        _in_model_frame(terrain.collision, origin).export(folder / "meshes" / "collision.stl")
        if terrain.visual is not terrain.collision:
            _in_model_frame(terrain.visual, origin).export(folder / "meshes" / "visual.stl")
            visual_uri = f"model://{name}/meshes/visual.stl"
    field = terrain.build_field()
    origin = np.zeros(3) if terrain.heightmap else local_origin(terrain.collision)
    if np.any(origin):
        field = translated(field, -origin)
    save_field(folder / FIELD_FILE, field, compact=_large(field))

    root = etree.Element("sdf", version=SDF_VERSION)
    model = _sub(root, "model", name=name)
    _sub(model, "static", "true")
    if np.any(origin):  # the local origin, in double precision (repr: the shortest exact decimal)
        _sub(model, "pose", " ".join(repr(float(v)) for v in origin) + " 0 0 0")
    link = _sub(model, "link", name=f"{name}_link")
    collision = _sub(link, "collision", name=f"{name}_collision")
    visual = _sub(link, "visual", name=f"{name}_visual")
    if terrain.heightmap:
        from PIL import Image

        image, size, pos = heightmap_raster(terrain.dem)
        Image.fromarray(image).save(folder / HEIGHTMAP_PNG)
        terrain.collision.export(folder / HEIGHTMAP_MESH)  # the host's stand-in for the heightmap
        _check_heightmap(folder, terrain.dem, size, pos)
        _geometry_heightmap(collision, f"model://{name}/{HEIGHTMAP_PNG}", size, pos)
        _geometry_heightmap(visual, f"model://{name}/{HEIGHTMAP_PNG}", size, pos)
    elif terrain.slabs:  # boxes, whose <surface> gz-sim applies (Slab): one collision each
        link.remove(collision)
        for k, slab in enumerate(terrain.slabs):
            box = etree.Element("collision", name=f"{name}_collision" if k == 0 else f"{name}_collision_{k}")
            link.insert(k, box)
            centre = np.asarray(slab.centre, float) - origin
            _sub(box, "pose", " ".join(repr(float(v)) for v in centre) + f" 0 {slab.pitch!r} 0")
            _sub(_sub(_sub(box, "geometry"), "box"), "size", " ".join(repr(float(v)) for v in slab.size))
            _surface(box, reference.mu)
        _geometry_mesh(visual, visual_uri)
    else:
        _geometry_mesh(collision, f"model://{name}/meshes/collision.stl")
        _geometry_mesh(visual, visual_uri)
    if not terrain.slabs or terrain.heightmap:
        _surface(collision, reference.mu)
    material = _sub(visual, "material")
    _sub(material, "ambient", "0.8 0.9 1.0 1" if terrain.kind != "mars_dem" else "0.75 0.45 0.3 1")
    _sub(material, "diffuse", "0.8 0.9 1.0 1" if terrain.kind != "mars_dem" else "0.75 0.45 0.3 1")
    _write_xml(folder / "model.sdf", root, f"Generated by eels-gz world ({terrain.kind}); the command line and "
               "parameters are in terrain.json. Friction from worlds/ice_plane.sdf.")

    config = etree.Element("model")
    _sub(config, "name", name)
    _sub(config, "version", "1.0")
    _sub(config, "sdf", "model.sdf", version=SDF_VERSION)
    author = _sub(config, "author")
    _sub(author, "name", "eels_gz")
    _sub(author, "email", "dev@eels-gz.invalid")
    _sub(config, "description", terrain.description)
    _write_xml(folder / "model.config", config)
    meta = {"kind": terrain.kind, "description": terrain.description, "parameters": terrain.parameters,
            "source": source, "command": command, "distance_field": FIELD_FILE}
    if np.any(origin):  # as model.sdf's <pose>: only a terrain away from the origin has one
        meta["local_origin"] = [float(v) + 0.0 for v in origin]  # + 0.0: never -0.0
    if soil:
        meta["soil"] = soil  # the soil set a wheeled robot's soil contact takes on it (world_soil)
    (folder / "terrain.json").write_text(json.dumps(meta, indent=2, sort_keys=True, default=float) + "\n")
    return folder


def local_origin(mesh) -> np.ndarray:
    """The model frame's origin in the world (m) for a terrain mesh in world coordinates: the centre of
    its bounds rounded to ORIGIN_GRID (module docstring)."""
    lo, hi = np.asarray(mesh.bounds, dtype=float)
    return np.round(0.5 * (lo + hi) / ORIGIN_GRID) * ORIGIN_GRID


def _in_model_frame(mesh, origin: np.ndarray):
    """``mesh`` (world frame) moved into the model frame whose origin is ``origin``, in double precision."""
    if not np.any(origin):
        return mesh
    moved = mesh.copy()
    moved.apply_translation(-origin)
    return moved


def write_world(terrain, name: str, worlds_dir: str | Path, *, command: str = "",
                reference: ReferencePhysics | None = None) -> Path:
    """Write ``worlds_dir/name.sdf`` including ``model://name``; returns its path."""
    _check_name(name)
    reference = reference or ReferencePhysics.load()
    root = etree.Element("sdf", version=SDF_VERSION)
    world = _sub(root, "world", name=name)
    physics = copy.deepcopy(reference.physics)
    physics.tail = None
    if terrain.heightmap:
        detector = physics.find("dart/collision_detector")
        if detector is None:
            detector = _sub(physics.find("dart") if physics.find("dart") is not None else _sub(physics, "dart"),
                            "collision_detector")
        detector.text = "bullet"  # Gazebo: with DART's default detector bodies fall through heightmaps
    world.append(physics)
    _sub(world, "gravity", reference.gravity)
    for system in reference.systems:
        plugin = copy.deepcopy(system)
        plugin.tail = None
        world.append(plugin)
    light = _sub(world, "light", type="directional", name="sun")
    _sub(light, "cast_shadows", "true")
    _sub(light, "pose", "0 0 10 0 0 0")
    _sub(light, "diffuse", "0.9 0.9 0.9 1")
    _sub(light, "direction", "-0.5 0.1 -0.9")
    include = _sub(world, "include")
    _sub(include, "uri", f"model://{name}")
    Path(worlds_dir).mkdir(parents=True, exist_ok=True)
    path = Path(worlds_dir) / f"{name}.sdf"
    etree.indent(root, space="  ")
    _write_xml(path, root, f"Generated by eels-gz world ({terrain.kind}), see model://{name}/terrain.json: "
               f"{terrain.description}. Physics, gravity, systems and friction follow worlds/ice_plane.sdf.")
    return path


def write_terrain(terrain, name: str, models_dir: str | Path, worlds_dir: str | Path, *, source: str = "",
                  command: str = "", soil: str = "") -> tuple[Path, Path]:
    """Model folder and world file for ``terrain``; returns ``(model_folder, world_file)``. ``soil``: the
    terrain's soil set (config/soil/), recorded in terrain.json (:func:`world_soil`)."""
    reference = ReferencePhysics.load()
    folder = write_model(terrain, name, models_dir, source=source, command=command, reference=reference, soil=soil)
    world = write_world(terrain, name, worlds_dir, command=command, reference=reference)
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    # debug: a command writes into a staging folder and says itself where the terrain ends up
    log.debug("wrote %s (%.2f MB) and %s", folder, total / 1e6, world)
    return folder, world
