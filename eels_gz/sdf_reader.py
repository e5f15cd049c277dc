"""Read the SDF subset the embedded host supports into plain dataclasses. No engine here:
:mod:`eels_gz.dart.dart_build` builds DART from what this reads, and the run, the export, the launch and
the sweep read worlds with it where no engine is installed (its old path, ``eels_gz.dart.sdf_world``,
re-exports it).

Supported (everything else is an SdfError naming the element, file and line):

- ``<world>``: ``<physics>`` (max_step_size, real_time_factor,
  real_time_update_rate, ``<dart><collision_detector>``, ``<dart><solver><solver_type>``
  dantzig|pgs), ``<gravity>``,
  ``<model>``, ``<include>`` (``model://`` URIs), ``<plugin>``;
- ``<model>``: ``<static>``, ``<pose>``, ``<link>``, ``<plugin>``;
- ``<link>``: ``<pose>``, ``<inertial>``, ``<collision>``;
- ``<collision>``: ``<pose>``, ``<geometry>`` (box, plane, cylinder,
  sphere, mesh; ``<heightmap>`` through the triangulated ``.stl`` beside its
  image), ``<surface>`` friction ``mu``/``mu2``/``fdir1`` and
  ``<contact><collide_bitmask>``.

Render-only elements (``<visual>``, ``<light>``, ``<scene>``, ``<gui>``,
``<magnetic_field>``, ``<atmosphere>``) are accepted and not simulated: the
host has no renderer. Their content is not interpreted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree

from eels_gz.description.validity import (MASS, WORLD_LENGTH, InvalidValue, check_gravity, check_inertia,
                                         check_scale, check_value)
from eels_gz.errors import SdfError
from eels_gz.gzapi.element import Element
from eels_gz.gzapi.system_loader import PluginSpec  # noqa: F401  (re-exported: the plugins a world or model names)
from eels_gz.gzapi.gzmath import Pose3d, pose_matrix
from eels_gz.paths import resource_paths
from eels_gz.terrain.heightmaps import heightmap_mismatch  # the rule `world dem` applies too

log = logging.getLogger(__name__)
RENDER_ONLY = {"visual", "light", "scene", "gui", "magnetic_field", "atmosphere"}
PYTHON_LOADER = "gz-sim-python-system-loader-system"


@dataclass(frozen=True)
class Surface:
    mu: float = 1.0
    mu2: float = 1.0
    fdir1: tuple[float, float, float] | None = None
    collide_bitmask: int = 0xFF


@dataclass(frozen=True)
class Geometry:
    kind: str  # box | plane | cylinder | sphere | mesh
    size: tuple[float, ...] = ()  # box (x, y, z); plane (x, y)
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
    radius: float = 0.0
    length: float = 0.0
    mesh_file: str = ""
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)


@dataclass(frozen=True)
class CollisionSpec:
    name: str
    pose: np.ndarray  # 4x4 in the link frame
    geometry: Geometry
    surface: Surface


@dataclass(frozen=True)
class Inertial:
    mass: float
    pose: np.ndarray  # 4x4, centre of mass frame in the link frame
    inertia: np.ndarray  # 3x3 about the centre of mass


@dataclass
class LinkSpec:
    name: str
    pose: np.ndarray  # 4x4 in the model frame
    inertial: Inertial | None
    collisions: list[CollisionSpec]


@dataclass
class ModelSpec:
    name: str
    pose: np.ndarray  # 4x4 in the world
    static: bool
    links: list[LinkSpec]
    plugins: list[PluginSpec]
    file: str


# <dart><solver><solver_type> values gz-physics' dartsim plugin accepts (WorldFeatures::SetWorldSolver)
SOLVERS = {"dantzig": "dantzig", "DantzigBoxedLcpSolver": "dantzig", "pgs": "pgs", "PgsBoxedLcpSolver": "pgs"}


@dataclass
class WorldSpec:
    name: str
    file: str
    dt: float = 0.001
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.80665)
    collision_detector: str | None = None
    solver: str | None = None  # <dart><solver><solver_type>: dantzig or pgs (gz-physics' dartsim names)
    models: list[ModelSpec] = field(default_factory=list)
    plugins: list[PluginSpec] = field(default_factory=list)

    def step(self, dt: float | None = None) -> float:
        """The step (s) a run takes in this world: ``dt`` when set (a run's physics.dt), else the world's
        ``<max_step_size>`` (gz-sim's 0.001 when the world gives none). The one default of a run's step."""
        return float(dt or self.dt)


class _Reader:
    """Walks one SDF file; every access checks the element is known."""

    def __init__(self, file: Path):
        self.file = file

    def err(self, node, msg: str) -> SdfError:
        return SdfError(msg, str(self.file), getattr(node, "sourceline", None))

    @staticmethod
    def name(node) -> str:
        return etree.QName(node).localname

    def children(self, node, allowed: set[str]):
        for child in node:
            if not isinstance(child.tag, str):
                continue
            tag = self.name(child)
            if tag not in allowed:
                raise self.err(
                    child,
                    f"element <{tag}> inside <{self.name(node)}> is not supported by the embedded host "
                    f"(supported here: {', '.join(sorted(allowed))})",
                )
            yield tag, child

    def attrs(self, node, allowed: set[str]) -> None:
        for key in node.attrib:
            if key not in allowed:
                raise self.err(node, f"attribute '{key}' of <{self.name(node)}> is not supported by the embedded host")

    def floats(self, node, n: int | None = None) -> tuple[float, ...]:
        try:
            values = tuple(float(v) for v in (node.text or "").split())
        except ValueError:
            raise self.err(node, f"<{self.name(node)}> expects numbers, got '{(node.text or '').strip()}'") from None
        if n is not None and len(values) != n:
            raise self.err(node, f"<{self.name(node)}> expects {n} numbers, got {len(values)}")
        if not all(np.isfinite(values)):  # NaN or infinite: no physical value (description/validity.py)
            raise self.err(node, f"<{self.name(node)}> expects finite numbers, got '{(node.text or '').strip()}'")
        return values

    def valid(self, node, check, *args) -> None:
        """Apply a check of eels_gz.description.validity to a value of ``node``: an error naming the
        file, line and element; its warning (an implausible value) logged with them."""
        try:
            note = check(*args)
        except InvalidValue as exc:
            raise self.err(node, f"<{self.name(node)}>: {exc}") from None
        if note:
            log.warning("%s:%s: <%s>: %s", self.file, getattr(node, "sourceline", "?"), self.name(node), note)

    def length(self, node) -> float:
        """A shape's size (m): finite, positive, within validity.WORLD_LENGTH."""
        v = self.number(node, positive=True)
        self.valid(node, check_value, v, WORLD_LENGTH, self.name(node))
        return v

    def number(self, node, positive: bool = False) -> float:
        (v,) = self.floats(node, 1)
        if positive and not v > 0:
            raise self.err(node, f"<{self.name(node)}> must be positive, got {v}")
        return v

    def boolean(self, node) -> bool:
        t = (node.text or "").strip().lower()
        if t in ("true", "1"):
            return True
        if t in ("false", "0"):
            return False
        raise self.err(node, f"<{self.name(node)}> expects true or false, got '{t}'")

    def pose(self, node) -> np.ndarray:
        self.attrs(node, {"relative_to"})
        if node.attrib.get("relative_to", "") not in ("",):
            raise self.err(node, "<pose relative_to=...> is not supported by the embedded host; give poses in the parent frame")
        values = self.floats(node)
        if len(values) == 0:
            return np.eye(4)
        if len(values) != 6:
            raise self.err(node, f"<pose> expects 6 numbers (x y z roll pitch yaw), got {len(values)}")
        return pose_matrix(Pose3d(*values))

    # --- geometry and surface ---------------------------------------------
    def geometry(self, node) -> Geometry:
        shapes = list(self.children(node, {"box", "plane", "cylinder", "sphere", "mesh", "heightmap"}))
        if len(shapes) != 1:
            raise self.err(node, f"<geometry> must hold exactly one shape, found {len(shapes)}")
        kind, shape = shapes[0]
        fields = dict(self.children(shape, {
            "box": {"size"}, "plane": {"normal", "size"}, "cylinder": {"radius", "length"},
            "sphere": {"radius"}, "mesh": {"uri", "scale"}, "heightmap": {"uri", "size", "pos"},
        }[kind]))
        if kind == "heightmap":
            return self.heightmap(shape, fields)
        if kind == "box":
            size = self.floats(self.required(shape, fields, "size"), 3)
            if min(size) <= 0:
                raise self.err(fields["size"], f"box <size> must be positive, got {size}")
            for v in size:
                self.valid(fields["size"], check_value, v, WORLD_LENGTH, "box size")
            return Geometry("box", size=size)
        if kind == "plane":
            normal = self.floats(fields["normal"], 3) if "normal" in fields else (0.0, 0.0, 1.0)
            if np.linalg.norm(normal) == 0:
                raise self.err(fields["normal"], "plane <normal> must not be zero")
            size = self.floats(fields["size"], 2) if "size" in fields else (1000.0, 1000.0)
            for v in size if "size" in fields else ():
                self.valid(fields["size"], check_value, v, WORLD_LENGTH, "plane size")
            return Geometry("plane", size=size, normal=tuple(np.asarray(normal) / np.linalg.norm(normal)))
        if kind == "cylinder":
            return Geometry("cylinder", radius=self.length(self.required(shape, fields, "radius")),
                            length=self.length(self.required(shape, fields, "length")))
        if kind == "sphere":
            return Geometry("sphere", radius=self.length(self.required(shape, fields, "radius")))
        uri_node = self.required(shape, fields, "uri")
        scale = self.floats(fields["scale"], 3) if "scale" in fields else (1.0, 1.0, 1.0)
        if "scale" in fields:
            self.valid(fields["scale"], check_scale, scale)
        return Geometry("mesh", mesh_file=str(self.resolve_uri(uri_node)), scale=scale)

    def heightmap(self, node, fields: dict) -> Geometry:
        """dartpy has no heightmap shape: a heightmap ``X.png`` is simulated with the
        triangulated DEM ``X.stl`` beside it (written by ``eels-gz world dem``), in
        the link frame, checked against the heightmap's <size> and <pos>."""
        uri_node = self.required(node, fields, "uri")
        image = self.resolve_uri(uri_node)
        mesh_file = image.with_suffix(".stl")
        if not mesh_file.is_file():
            raise self.err(uri_node, f"<heightmap> '{image.name}' has no triangulated sibling '{mesh_file.name}': dartpy "
                           "has no heightmap shape, so the host simulates the mesh beside the image; write both "
                           "with `eels-gz world dem FILE`")
        size = self.floats(fields["size"], 3) if "size" in fields else (1.0, 1.0, 1.0)
        pos = self.floats(fields["pos"], 3) if "pos" in fields else (0.0, 0.0, 0.0)
        import trimesh

        try:
            vertices = np.asarray(trimesh.load(mesh_file, force="mesh").vertices)
            lo, hi = vertices.min(axis=0), vertices.max(axis=0)
        except Exception as exc:
            raise self.err(uri_node, f"cannot read the heightmap's mesh '{mesh_file}' ({exc})") from None
        tol = 1e-3 * max(size) + 1e-6
        expected_lo = (pos[0] - size[0] / 2, pos[1] - size[1] / 2)
        expected_hi = (pos[0] + size[0] / 2, pos[1] + size[1] / 2, pos[2] + size[2])
        if (np.abs(lo[:2] - expected_lo).max() > tol or np.abs(hi - expected_hi).max() > tol):
            raise self.err(node, f"the heightmap's mesh '{mesh_file.name}' spans {np.round(lo, 4).tolist()} to "
                           f"{np.round(hi, 4).tolist()} m, but <size> {size} and <pos> {pos} give x, y from "
                           f"{expected_lo} to {expected_hi[:2]} and top z {expected_hi[2]}: regenerate it")
        off = heightmap_mismatch(image, vertices, size, pos)
        if off is not None:
            raise self.err(node, f"the heightmap image '{image.name}' and its mesh '{mesh_file.name}' differ: {off}; "
                           "Gazebo would simulate the image and the host the mesh; regenerate both with "
                           "`eels-gz world dem`")
        return Geometry("mesh", mesh_file=str(mesh_file))

    def required(self, node, fields: dict, key: str):
        if key not in fields:
            raise self.err(node, f"<{self.name(node)}> is missing its <{key}>")
        return fields[key]

    def resolve_uri(self, node) -> Path:
        uri = (node.text or "").strip()
        path = resolve_uri(uri, self.file.parent)
        if path is None or not path.is_file():
            raise self.err(node, f"cannot find '{uri}' (searched GZ_SIM_RESOURCE_PATH and the package's models/)")
        return path

    def surface(self, node) -> Surface:
        mu = mu2 = 1.0
        fdir1 = None
        bitmask = 0xFF
        for tag, child in self.children(node, {"friction", "contact", "bounce"}):
            if tag == "bounce":
                continue  # restitution is not modelled; DART's default (0) is Gazebo's default
            if tag == "contact":
                for t2, c2 in self.children(child, {"collide_bitmask"}):
                    bitmask = int((c2.text or "").strip(), 0)
                continue
            for t2, ode in self.children(child, {"ode"}):
                f = dict(self.children(ode, {"mu", "mu2", "fdir1"}))
                mu = self.number(f["mu"]) if "mu" in f else 1.0
                mu2 = self.number(f["mu2"]) if "mu2" in f else mu
                if "fdir1" in f:
                    fdir1 = self.floats(f["fdir1"], 3)
                if mu < 0 or mu2 < 0:
                    raise self.err(ode, f"friction must be non-negative, got mu={mu}, mu2={mu2}")
                if mu2 != mu:
                    raise self.err(
                        f.get("mu2", ode),
                        f"anisotropic friction (mu={mu} != mu2={mu2}) is not supported by the embedded "
                        "host: dartpy 6.20 binds only an isotropic friction coefficient",
                    )
        return Surface(mu=mu, mu2=mu2, fdir1=fdir1, collide_bitmask=bitmask)

    # --- link, model, world -------------------------------------------------
    def link(self, node) -> LinkSpec:
        self.attrs(node, {"name"})
        pose, inertial, collisions = np.eye(4), None, []
        for tag, child in self.children(node, {"pose", "inertial", "collision"} | RENDER_ONLY):
            if tag == "pose":
                pose = self.pose(child)
            elif tag == "inertial":
                inertial = self.inertial(child)
            elif tag == "collision":
                self.attrs(child, {"name"})
                c = dict(self.children(child, {"pose", "geometry", "surface"}))
                collisions.append(CollisionSpec(
                    name=child.attrib.get("name", f"collision_{len(collisions)}"),
                    pose=self.pose(c["pose"]) if "pose" in c else np.eye(4),
                    geometry=self.geometry(self.required(child, c, "geometry")),
                    surface=self.surface(c["surface"]) if "surface" in c else Surface(),
                ))
        return LinkSpec(self.attr(node, "name"), pose, inertial, collisions)

    def inertial(self, node) -> Inertial:
        f = dict(self.children(node, {"mass", "pose", "inertia"}))
        mass = self.number(self.required(node, f, "mass"), positive=True)
        self.valid(f["mass"], check_value, mass, MASS, "mass")
        I = np.eye(3)
        if "inertia" in f:
            v = {t: self.number(c) for t, c in self.children(f["inertia"], {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"})}
            I = np.array([[v.get("ixx", 1.0), v.get("ixy", 0.0), v.get("ixz", 0.0)],
                          [v.get("ixy", 0.0), v.get("iyy", 1.0), v.get("iyz", 0.0)],
                          [v.get("ixz", 0.0), v.get("iyz", 0.0), v.get("izz", 1.0)]])
            if np.any(np.linalg.eigvalsh(I) <= 0):
                raise self.err(f["inertia"], "inertia matrix must be positive definite")
            self.valid(f["inertia"], check_inertia, I)
        return Inertial(mass, self.pose(f["pose"]) if "pose" in f else np.eye(4), I)

    def attr(self, node, key: str) -> str:
        if key not in node.attrib or not node.attrib[key]:
            raise self.err(node, f"<{self.name(node)}> needs a '{key}' attribute")
        return node.attrib[key]

    def plugin(self, node) -> PluginSpec:
        self.attrs(node, {"name", "filename"})
        filename, name = self.attr(node, "filename"), self.attr(node, "name")
        element = Element(node, str(self.file))
        module = ""
        if filename == PYTHON_LOADER or filename.endswith("python-system-loader-system"):
            module, found = element.get_string("module_name", "")
            if not found or not module:
                raise self.err(node, "Python system loader <plugin> needs a <module_name>")
        return PluginSpec(filename, name, module, element)

    def model(self, node, pose_override: np.ndarray | None = None, name_override: str | None = None,
              static_override: bool | None = None) -> ModelSpec:
        self.attrs(node, {"name", "canonical_link", "placement_frame"})
        pose, static, links, plugins = np.eye(4), False, [], []
        for tag, child in self.children(node, {"static", "pose", "link", "plugin", "self_collide"}):
            if tag == "static":
                static = self.boolean(child)
            elif tag == "pose":
                pose = self.pose(child)
            elif tag == "link":
                links.append(self.link(child))
            elif tag == "plugin":
                plugins.append(self.plugin(child))
            elif tag == "self_collide" and self.boolean(child):
                raise self.err(child, "<self_collide>true</self_collide> is not supported by the embedded host")
        if not links:
            raise self.err(node, f"model '{node.attrib.get('name', '?')}' has no <link>")
        if not static:
            for link in links:
                if link.inertial is None:
                    raise self.err(node, f"link '{link.name}' of non-static model needs an <inertial> with a <mass>")
            if len(links) > 1:
                raise self.err(node, "non-static SDF models with several links (joints) are not supported by the "
                               "embedded host; load articulated robots from their URDF/xacro description")
        return ModelSpec(
            name=name_override or self.attr(node, "name"),
            pose=pose if pose_override is None else pose_override,
            static=static if static_override is None else static_override,
            links=links, plugins=plugins, file=str(self.file),
        )

    def include(self, node) -> ModelSpec:
        f = dict(self.children(node, {"uri", "name", "pose", "static"}))
        uri_node = self.required(node, f, "uri")
        uri = (uri_node.text or "").strip()
        folder = resolve_uri(uri, self.file.parent)
        if folder is None or not folder.exists():
            raise self.err(uri_node, f"cannot find model '{uri}' (searched GZ_SIM_RESOURCE_PATH and the package's models/)")
        model_file = folder / "model.sdf" if folder.is_dir() else folder
        if not model_file.is_file():
            raise self.err(uri_node, f"model '{uri}' has no model.sdf in {folder}")
        sub = _Reader(model_file)
        root = parse_xml(model_file)
        model_nodes = [c for t, c in sub.children(root, {"model"})]
        if len(model_nodes) != 1:
            raise sub.err(root, f"expected exactly one <model> in an included model file, found {len(model_nodes)}")
        return sub.model(
            model_nodes[0],
            pose_override=self.pose(f["pose"]) if "pose" in f else None,
            name_override=(f["name"].text or "").strip() if "name" in f else None,
            static_override=self.boolean(f["static"]) if "static" in f else None,
        )

    def world(self, node) -> WorldSpec:
        self.attrs(node, {"name"})
        spec = WorldSpec(name=self.attr(node, "name"), file=str(self.file))
        allowed = {"physics", "gravity", "model", "include", "plugin", "spherical_coordinates", "wind"} | RENDER_ONLY
        physics_seen = False
        for tag, child in self.children(node, allowed):
            if tag == "physics":
                if physics_seen:
                    raise self.err(child, "several <physics> profiles are not supported; keep one")
                physics_seen = True
                self.physics(child, spec)
            elif tag == "gravity":
                spec.gravity = self.floats(child, 3)
                self.valid(child, check_gravity, spec.gravity)
            elif tag == "model":
                spec.models.append(self.model(child))
            elif tag == "include":
                spec.models.append(self.include(child))
            elif tag == "plugin":
                spec.plugins.append(self.plugin(child))
            elif tag in ("spherical_coordinates", "wind"):
                continue  # no effect on the simulated dynamics here
        names = [m.name for m in spec.models]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise self.err(node, f"duplicate model names in world: {', '.join(sorted(dup))}")
        return spec

    def physics(self, node, spec: WorldSpec) -> None:
        self.attrs(node, {"name", "type", "default"})
        if node.attrib.get("type", "dart") not in ("dart", "ode"):
            # the host is DART; an explicit non-DART engine would make results incomparable
            raise self.err(node, f"physics type '{node.attrib['type']}' is not supported; the embedded host is DART")
        for tag, child in self.children(node, {"max_step_size", "real_time_factor", "real_time_update_rate", "dart"}):
            if tag == "max_step_size":
                spec.dt = self.number(child, positive=True)
            elif tag == "dart":
                for t2, c2 in self.children(child, {"collision_detector", "solver"}):
                    if t2 == "collision_detector":
                        spec.collision_detector = (c2.text or "").strip()
                        continue
                    for _, c3 in self.children(c2, {"solver_type"}):
                        value = (c3.text or "").strip()
                        if value not in SOLVERS:
                            raise self.err(c3, f"<solver_type> must be one of {', '.join(SOLVERS)} (the LCP "
                                               f"solvers gz-physics' DART plugin knows), got '{value}'")
                        spec.solver = SOLVERS[value]


def resolve_uri(uri: str, base: Path) -> Path | None:
    """Resolve ``model://``, ``file://``, ``package://eels_gz/`` and relative URIs."""
    from eels_gz.paths import share_dir

    if uri.startswith("model://"):
        rest = uri[len("model://"):]
        for root in resource_paths():
            candidate = root / rest
            if candidate.exists():
                return candidate
        return None
    if uri.startswith("file://"):
        return Path(uri[len("file://"):])
    if uri.startswith("package://"):
        pkg, _, rest = uri[len("package://"):].partition("/")
        return share_dir() / rest if pkg == "eels_gz" else None
    path = Path(uri)
    return path if path.is_absolute() else base / path


def parse_xml(file: Path):
    try:
        tree = etree.parse(str(file), etree.XMLParser(remove_comments=False))
    except OSError:
        raise SdfError("cannot read the file", str(file)) from None
    except etree.XMLSyntaxError as exc:
        raise SdfError(f"malformed XML: {exc.msg}", str(file), exc.lineno) from None
    return tree.getroot()


def load_world(file: str | Path) -> WorldSpec:
    """Parse an SDF world file into a WorldSpec, strictly (see module docstring)."""
    file = Path(file)
    if not file.is_file():
        raise SdfError("world file does not exist", str(file))
    reader = _Reader(file)
    root = parse_xml(file)
    if reader.name(root) != "sdf":
        raise reader.err(root, f"root element must be <sdf>, got <{reader.name(root)}>")
    reader.attrs(root, {"version"})
    worlds = [c for t, c in reader.children(root, {"world"})]
    if len(worlds) != 1:
        raise reader.err(root, f"expected exactly one <world>, found {len(worlds)}")
    return reader.world(worlds[0])
