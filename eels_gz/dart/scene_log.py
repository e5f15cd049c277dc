"""The 3D scene of a run in ``log.mcap``, in the messages ROS tools draw:

- ``/robot_description`` (std_msgs/String): the robot's URDF as the xacro
  made it (before the multibody optimizer, so every link and frame is there),
  offered transient local as robot_state_publisher does;
- ``/tf_static`` (tf2_msgs/TFMessage): every fixed joint of that URDF, once,
  transient local, as robot_state_publisher publishes them;
- ``/tf`` (tf2_msgs/TFMessage) at ``log.rate``: ``world -> <root link>``
  (the ground truth) and every moving joint, ``parent -> child`` at the
  simulated state, so every link of the URDF has a pose at every sample;
- ``/terrain`` (visualization_msgs/MarkerArray, transient local): the
  world's static collision geometry, meshes as MESH_RESOURCE markers with
  ``package://eels_gz/...`` URIs (``file://`` for a mesh outside the
  package), primitives as CUBE / CYLINDER / SPHERE markers;
- ``/terrain/embedded`` (visualization_msgs/MarkerArray, transient local):
  the same terrain as TRIANGLE_LIST markers, the triangles in the message
  (simplified to at most ``EMBED_MAX_TRIANGLES`` per mesh), for a viewer
  that cannot resolve package or file URIs;
- ``/screw_contact/forces`` (visualization_msgs/MarkerArray) at
  ``log.rate`` when the screw contact plugin runs: one LINE_LIST marker
  (id 0, replaced each sample) with a segment per screw in contact, from the
  normal-force-weighted centre of its contact points along the total
  contact force, ``ARROW_M_PER_N`` metres per newton (one marker rather than
  an ARROW per screw: a tenth of the cost per sample; the replay draws them
  as arrows).

Times are simulated time; the latched topics are stamped 0.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
from lxml import etree

from eels_gz.description.model import read_origin
from eels_gz.paths import share_dir
from eels_gz.ros import messages

log = logging.getLogger(__name__)

WORLD_FRAME = "world"
EMBED_MAX_TRIANGLES = 20000
ARROW_M_PER_N = 0.002  # contact force arrows: 2 mm per newton (a 100 N screw load is 0.2 m long)
ARROW_SHAFT_M = 0.015  # line width
TERRAIN_RGBA = (0.8, 0.9, 1.0, 1.0)  # the shipped worlds' ice <material>, used where a model names none
FORCE_RGBA = (1.0, 0.2, 0.1, 1.0)
LATCHED = ("/robot_description", "/tf_static", "/terrain", "/terrain/embedded")


@dataclass(frozen=True)
class UrdfJoint:
    name: str
    kind: str
    parent: str
    child: str
    origin: np.ndarray  # 4x4, child frame in the parent at zero joint position


def urdf_joints(model) -> tuple[str, list[UrdfJoint]]:
    """The root link and the joints of a robot model (eels_gz.description.model; ``world`` links are not
    frames of the robot)."""
    joints = [UrdfJoint(j.name, j.type, j.parent, j.child,
                        read_origin(model.joint_elements[j.name], f"joint '{j.name}'", "/robot_description"))
              for j in model.joints.values()]
    links = model.links
    roots = [n for n in links if n not in model.parent_joint and n != "world"]
    if not roots and "world" in links:  # a fixed-base rig: its tree hangs from `world` by moving joints
        return "world", joints
    return (roots[0] if roots else links[0]), [j for j in joints if j.parent != "world"]


def package_uri(path: str | Path) -> str:
    """``package://eels_gz/<path in the share>`` for a file of the package, else ``file://<absolute path>``."""
    path = Path(path).resolve()
    try:
        return "package://eels_gz/" + path.relative_to(share_dir().resolve()).as_posix()
    except ValueError:
        return path.as_uri()


def _model_rgba(model_file: str) -> tuple[float, float, float, float]:
    """The first ``<visual><material><diffuse>`` of a model's SDF file, else the ice colour."""
    try:
        node = etree.parse(model_file).getroot().find(".//visual/material/diffuse")
        values = [float(v) for v in node.text.split()] if node is not None and node.text else []
    except (OSError, etree.XMLSyntaxError, ValueError):
        values = []
    return tuple(values) if len(values) == 4 else TERRAIN_RGBA


def terrain_rgb(spec) -> tuple[float, float, float]:
    """The colour of a world's first static model (its visual's diffuse), else the ice colour."""
    for model in spec.models:
        if model.static:
            return _model_rgba(model.file)[:3]
    return TERRAIN_RGBA[:3]


def sun_direction(world_file: str | Path) -> np.ndarray:
    """Direction (unit, world) the world's first directional ``<light>`` travels; straight down if none."""
    try:
        for light in etree.parse(str(world_file)).getroot().iter("light"):
            if light.get("type") == "directional" and light.findtext("direction"):
                d = np.array([float(v) for v in light.findtext("direction").split()])
                if d.shape == (3,) and np.linalg.norm(d) > 0:
                    return d / np.linalg.norm(d)
    except (OSError, etree.XMLSyntaxError, ValueError):
        pass
    return np.array([0.0, 0.0, -1.0])


def _triangles(geometry, max_triangles: int) -> np.ndarray:
    """(N, 3, 3) triangles of a collision geometry in its own frame."""
    g = geometry
    if g.kind != "plane":
        import trimesh  # only here: importing it costs about a second
    if g.kind == "mesh":
        mesh = trimesh.load(g.mesh_file, force="mesh")
        mesh.apply_scale(np.asarray(g.scale, dtype=float)) if tuple(g.scale) != (1.0, 1.0, 1.0) else None
        if len(mesh.faces) > max_triangles:
            import fast_simplification

            v, f = fast_simplification.simplify(np.asarray(mesh.vertices, np.float32), np.asarray(mesh.faces),
                                                target_reduction=1.0 - max_triangles / len(mesh.faces))
            mesh = trimesh.Trimesh(v, f, process=False)
    elif g.kind == "plane":
        n = np.asarray(g.normal, dtype=float)
        u = np.cross(n, [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0])
        u /= np.linalg.norm(u)
        v = np.cross(n, u)
        a, b = 0.5 * g.size[0], 0.5 * g.size[1]
        c = [a * u + b * v, -a * u + b * v, -a * u - b * v, a * u - b * v]
        return np.array([[c[0], c[1], c[2]], [c[0], c[2], c[3]]])
    elif g.kind == "box":
        mesh = trimesh.creation.box(extents=g.size)
    elif g.kind == "cylinder":
        mesh = trimesh.creation.cylinder(radius=g.radius, height=g.length, sections=48)
    else:
        mesh = trimesh.creation.icosphere(subdivisions=3, radius=g.radius)
    return np.asarray(mesh.vertices)[np.asarray(mesh.faces)]


def terrain_markers(spec, max_triangles: int = EMBED_MAX_TRIANGLES) -> tuple[list, list]:
    """(resource markers, embedded markers) of a WorldSpec's static collision geometry."""
    resource, embedded = [], []
    for model in spec.models:
        if not model.static:
            continue
        rgba = _model_rgba(model.file)
        for link in model.links:
            for col in link.collisions:
                T = np.asarray(model.pose) @ np.asarray(link.pose) @ np.asarray(col.pose)
                g, k = col.geometry, len(resource)
                ns = f"{model.name}/{link.name}/{col.name}"
                if g.kind == "mesh":
                    resource.append(messages.marker(0, WORLD_FRAME, ns, k, "MESH_RESOURCE", T=T, scale=g.scale,
                                                    rgba=rgba, mesh_resource=package_uri(g.mesh_file)))
                elif g.kind == "plane":
                    # a CUBE marker's z is along the plane normal: turn local z onto it
                    n = np.asarray(g.normal, dtype=float)
                    R = _z_onto(n)
                    P = T.copy()
                    P[:3, :3] = T[:3, :3] @ R
                    resource.append(messages.marker(0, WORLD_FRAME, ns, k, "CUBE", T=P,
                                                    scale=(g.size[0], g.size[1], 1e-3), rgba=rgba))
                elif g.kind == "box":
                    resource.append(messages.marker(0, WORLD_FRAME, ns, k, "CUBE", T=T, scale=g.size, rgba=rgba))
                elif g.kind == "cylinder":
                    resource.append(messages.marker(0, WORLD_FRAME, ns, k, "CYLINDER", T=T,
                                                    scale=(2 * g.radius, 2 * g.radius, g.length), rgba=rgba))
                else:
                    resource.append(messages.marker(0, WORLD_FRAME, ns, k, "SPHERE", T=T,
                                                    scale=(2 * g.radius,) * 3, rgba=rgba))
                tris = _triangles(g, max_triangles)
                embedded.append(messages.marker(0, WORLD_FRAME, ns, k, "TRIANGLE_LIST", T=T, rgba=rgba,
                                                points=tris.reshape(-1, 3)))
    return resource, embedded


def _z_onto(n: np.ndarray) -> np.ndarray:
    """A rotation taking +z onto the unit vector n."""
    n = n / np.linalg.norm(n)
    z = np.array([0.0, 0.0, 1.0])
    v, c = np.cross(z, n), float(np.dot(z, n))
    if np.linalg.norm(v) < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    K = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + K + K @ K / (1.0 + c)


class SceneLog:
    """Writes the scene topics of one run into an McapLog (see the module docstring)."""

    def __init__(self, sim, mcap, model):
        """``model``: the robot model of the URDF as given (before the optimizer: every link and frame)."""
        self.sim, self.mcap = sim, mcap
        self.root, joints = urdf_joints(model)
        self.fixed = [j for j in joints if j.kind == "fixed"]
        self.moving = [j for j in joints if j.kind != "fixed"]
        self.screw = [s.system for s in sim.systems if s.module == "screw_contact"]
        # /tf: world -> root, then parent -> child of every moving joint, as indices into self.links
        self.links = [self.root] + sorted({n for j in self.moving for n in (j.parent, j.child)} - {self.root})
        index = {name: k for k, name in enumerate(self.links)}
        self.edges = np.array([(0, 0)] + [(index[j.parent], index[j.child]) for j in self.moving], dtype=np.int64)
        # each link is a body of the simulated skeleton at a fixed offset (the optimizer's frames, else itself)
        skel, frames = sim.robot_skeleton, sim.robot_frames
        names = [frames[n].body if n in frames else n for n in self.links]
        # a fixed base (a rig): the URDF's root `world` link is no body but the world frame, an identity
        # pose appended after the bodies' own
        self.world_root = skel.getBodyNode(names[0]) is None
        self.bodies = [skel.getBodyNode(b) for b in dict.fromkeys(names) if skel.getBodyNode(b) is not None]
        order = {b.getName(): k for k, b in enumerate(self.bodies)}
        order[names[0]] = order.get(names[0], len(self.bodies))
        self.link_body = np.array([order[b] for b in names], dtype=np.int64)
        self.link_offset = np.array([frames[n].pose if n in frames else np.eye(4) for n in self.links])
        # world -> root, except for a rig whose root is the world frame itself
        self.tf = messages.TfTemplate([(WORLD_FRAME, self.root)] * (not self.world_root)
                                      + [(j.parent, j.child) for j in self.moving])
        self.state = next((st for st in sim.states if st.skel is skel), None)
        self.body_index = np.array([b.getIndexInSkeleton() for b in self.bodies]
                                   + ([skel.getNumBodyNodes()] if self.world_root else []), dtype=np.int64)
        self._tf = np.empty((len(self.edges), 4, 4))  # the /tf transforms of a sample
        self.forces = messages.PointListTemplate(
            lambda t_ns, points: messages.marker(t_ns, WORLD_FRAME, "screw_contact", 0, "LINE_LIST",
                                                 scale=(ARROW_SHAFT_M, 0, 0), rgba=FORCE_RGBA, points=points))
        mcap.channel("/robot_description", messages.STRING, latched=True)
        mcap.channel("/tf_static", messages.TF_MESSAGE, latched=True)
        mcap.channel("/tf", messages.TF_MESSAGE)
        mcap.channel("/terrain", messages.MARKER_ARRAY, latched=True)
        mcap.channel("/terrain/embedded", messages.MARKER_ARRAY, latched=True)
        if self.screw:
            mcap.channel("/screw_contact/forces", messages.MARKER_ARRAY)
        mcap.write("/robot_description", 0, messages.string(model.urdf))
        mcap.write("/tf_static", 0, messages.tf_message(
            [messages.transform(0, j.parent, j.child, j.origin) for j in self.fixed]))
        resource, embedded = terrain_markers(sim.spec)
        mcap.write("/terrain", 0, messages.marker_array(resource))
        mcap.write("/terrain/embedded", 0, messages.marker_array(embedded))

    def sample(self, t_ns: int) -> None:
        kin = self.state.kinematics() if self.state is not None else None
        if kin is not None:
            bodies, index = kin.T, self.body_index
        else:
            bodies = np.array([b.getWorldTransform().matrix() for b in self.bodies])
            index = np.arange(len(self.bodies) + self.world_root)
        if self.world_root:
            bodies = np.concatenate([bodies, np.eye(4)[None]])
        _tf_transforms(bodies, index, self.link_body, self.link_offset, self.edges, self._tf)
        self.mcap.write_cdr("/tf", t_ns, self.tf.encode(t_ns, self._tf[1:] if self.world_root else self._tf))
        if self.screw:
            self.mcap.write_cdr("/screw_contact/forces", t_ns, self.forces.encode(t_ns, self.force_segments()))

    def force_markers(self, t_ns: int) -> list:
        """One LINE_LIST marker (id 0, replaced at each sample): a segment per screw in contact."""
        return [messages.marker(t_ns, WORLD_FRAME, "screw_contact", 0, "LINE_LIST", scale=(ARROW_SHAFT_M, 0, 0),
                                rgba=FORCE_RGBA, points=self.force_segments())]

    def force_segments(self) -> np.ndarray:
        """The LINE_LIST's points (2K, 3): from each contacting screw's centre of pressure along its force."""
        segments = []
        for system in self.screw:
            w = system.last
            if w is not None:
                segments.append(_screw_segments(w.normal_force, w.points, w.force, ARROW_M_PER_N))
        return np.concatenate(segments) if segments else np.zeros((0, 3))


@numba.njit(cache=True)
def _tf_transforms(bodies, body_index, link_body, link_offset, edges, out):  # pragma: no cover - compiled
    """/tf's transforms (E, 4, 4) into ``out``: world -> root, then parent^-1 child of each edge (parent,
    child), the links' world poses being ``bodies[body_index[link_body[l]]] @ link_offset[l]``."""
    n = link_body.size
    world = np.zeros((n, 4, 4))
    for lk in range(n):
        B, F = bodies[body_index[link_body[lk]]], link_offset[lk]
        for i in range(3):
            for j in range(4):
                world[lk, i, j] = B[i, 0] * F[0, j] + B[i, 1] * F[1, j] + B[i, 2] * F[2, j] + B[i, 3] * F[3, j]
        world[lk, 3, 3] = 1.0
    out[0] = world[0]
    for e in range(1, edges.shape[0]):
        P, C = world[edges[e, 0]], world[edges[e, 1]]
        for i in range(3):
            for j in range(3):
                out[e, i, j] = P[0, i] * C[0, j] + P[1, i] * C[1, j] + P[2, i] * C[2, j]  # rigid: P^-1 = P^T
            out[e, i, 3] = (P[0, i] * (C[0, 3] - P[0, 3]) + P[1, i] * (C[1, 3] - P[1, 3])
                            + P[2, i] * (C[2, 3] - P[2, 3]))
            out[e, 3, i] = 0.0
        out[e, 3, 3] = 1.0


@numba.njit(cache=True)
def _screw_segments(normal_force, points, force, m_per_n):  # pragma: no cover - compiled
    """(2K, 3): for each of the K screws with a positive normal force, its centre of pressure (the points
    weighted by their normal forces, negative ones counting 0) and that point plus ``m_per_n`` x its force."""
    out = np.empty((2 * normal_force.shape[0], 3))
    k = 0
    for s in range(normal_force.shape[0]):
        total, cx, cy, cz = 0.0, 0.0, 0.0, 0.0
        for i in range(normal_force.shape[1]):
            f = normal_force[s, i]
            if f > 0.0:
                total += f
                cx += f * points[s, i, 0]
                cy += f * points[s, i, 1]
                cz += f * points[s, i, 2]
        if total > 0.0:
            out[2 * k, 0], out[2 * k, 1], out[2 * k, 2] = cx / total, cy / total, cz / total
            for j in range(3):
                out[2 * k + 1, j] = out[2 * k, j] + m_per_n * force[s, j]
            k += 1
    return out[:2 * k]
