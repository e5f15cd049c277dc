"""What a replay shows, read from a run folder's ``log.mcap`` alone.

The run's log carries its own scene (eels_gz.dart.scene_log): the URDF on
``/robot_description``, the transforms on ``/tf_static`` and ``/tf``, the
terrain's triangles on ``/terrain/embedded``, the ground truth on
``/ground_truth/odom`` and, with screw contact, ``/screw_contact/forces``.
A replay needs nothing else: no share directory, no simulation.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree
from mcap.reader import make_reader
from scipy.spatial.transform import Rotation

from eels_gz.errors import ConfigError
from eels_gz.description.model import read_origin
from eels_gz.ros.messages import typestore

log = logging.getLogger(__name__)
WORLD = "world"
ROBOT_TOPICS = ("/robot_description", "/tf_static", "/tf")


@dataclass(frozen=True)
class Visual:
    """One visual of a link: kind box|cylinder|sphere|mesh, size (box edges; cylinder radius, length along its z;
    sphere radius), pose in the link frame (4x4), rgba or None, triangles (N, 3, 3) for meshes."""

    link: str
    kind: str
    size: tuple[float, ...]
    T_link: np.ndarray
    rgba: tuple[float, float, float, float] | None = None
    triangles: np.ndarray | None = None


@dataclass
class Run:
    """One run's replay: label, link visuals, per-frame world poses of the links that have visuals."""

    label: str
    folder: str
    visuals: list[Visual]
    links: list[str]  # the links with visuals, in pose order
    times: np.ndarray  # (F,) s
    positions: np.ndarray  # (F, L, 3) m, world
    quaternions: np.ndarray  # (F, L, 4) x, y, z, w
    trail: np.ndarray  # (F, 3) the root link's origin, m
    forces: list[np.ndarray] = field(default_factory=list)  # per frame (K, 2, 3): arrow start, end (m)
    terrain: list[tuple[np.ndarray, tuple]] = field(default_factory=list)  # (triangles (N, 3, 3), rgba)
    summary: dict = field(default_factory=dict)


def _matrix(tf) -> np.ndarray:
    t, q = tf.transform.translation, tf.transform.rotation
    T = np.eye(4)
    T[:3, :3] = Rotation.from_quat([q.x, q.y, q.z, q.w]).as_matrix()
    T[:3, 3] = (t.x, t.y, t.z)
    return T


def _pose_of(marker) -> np.ndarray:
    p, q = marker.pose.position, marker.pose.orientation
    T = np.eye(4)
    T[:3, :3] = Rotation.from_quat([q.x, q.y, q.z, q.w]).as_matrix() if (q.x, q.y, q.z, q.w) != (0, 0, 0, 0) \
        else np.eye(3)
    T[:3, 3] = (p.x, p.y, p.z)
    return T


def _mesh_triangles(filename: str, scale, where: str) -> np.ndarray:
    import trimesh

    from eels_gz.paths import share_dir

    if filename.startswith("package://eels_gz/"):
        path = share_dir() / filename[len("package://eels_gz/"):]
    elif filename.startswith("file://"):
        path = Path(filename[7:])
    else:
        path = Path(filename)
    try:
        mesh = trimesh.load(path, force="mesh")
    except Exception as exc:  # trimesh raises many kinds on a bad or missing file
        raise ConfigError(f"{where}: cannot load the visual mesh '{filename}' ({exc})") from None
    return np.asarray(mesh.vertices)[np.asarray(mesh.faces)] * np.asarray(scale, dtype=float)


def urdf_visuals(urdf: str, where: str) -> list[Visual]:
    """Every ``<visual>`` of a URDF, with its ``<material><color>`` if it has one."""
    try:
        root = etree.fromstring(urdf.encode())
    except etree.XMLSyntaxError as exc:
        raise ConfigError(f"{where}: /robot_description is not valid XML: {exc}") from None
    colors = {m.get("name"): m.find("color") for m in root.findall("material")}
    out = []
    for link in root.iter("link"):
        for vis in link.findall("visual"):
            geom = vis.find("geometry")
            shape = next(iter(geom), None) if geom is not None else None
            if shape is None:
                continue
            rgba = None
            mat = vis.find("material")
            if mat is not None:
                color = mat.find("color") if mat.find("color") is not None else colors.get(mat.get("name"))
                if color is not None:
                    rgba = tuple(float(v) for v in color.get("rgba").split())
            T = read_origin(vis, f"link '{link.get('name')}' visual", where)
            name = link.get("name")
            if shape.tag == "box":
                out.append(Visual(name, "box", tuple(float(v) for v in shape.get("size").split()), T, rgba))
            elif shape.tag == "cylinder":
                out.append(Visual(name, "cylinder", (float(shape.get("radius")), float(shape.get("length"))), T, rgba))
            elif shape.tag == "sphere":
                out.append(Visual(name, "sphere", (float(shape.get("radius")),), T, rgba))
            elif shape.tag == "mesh":
                scale = [float(v) for v in shape.get("scale", "1 1 1").split()]
                out.append(Visual(name, "mesh", (), T, rgba,
                                  _mesh_triangles(shape.get("filename"), scale, f"{where}: link '{name}'")))
    return out


def _link_poses(root_pose: np.ndarray, parents: dict[str, tuple[str, np.ndarray]], links: list[str],
                root: str) -> list[np.ndarray]:
    cache = {root: root_pose, WORLD: np.eye(4)}

    def world(name: str) -> np.ndarray:
        if name not in cache:
            if name not in parents:
                raise KeyError(name)
            parent, T = parents[name]
            cache[name] = world(parent) @ T
        return cache[name]

    return [world(n) for n in links]


RECOVERED_LOG = "log.recovered.mcap"  # what `eels-gz recover DIR/log.mcap` writes beside it


def _read_log(path: Path):
    """The replay's topics of log ``path``: (urdf, static tf, dynamic tf, odometry, forces, terrain);
    ConfigError naming the file (and ``eels-gz recover``) if it cannot be read."""
    store = typestore()
    urdf, static, dynamic, odom, forces, terrain = None, {}, [], [], [], []
    try:
        with open(path, "rb") as f:
            for schema, channel, message in make_reader(f).iter_messages(
                    topics=[*ROBOT_TOPICS, "/ground_truth/odom", "/screw_contact/forces", "/terrain/embedded"]):
                msg = store.deserialize_cdr(message.data, schema.name)
                topic = channel.topic
                if topic == "/robot_description":
                    urdf = msg.data
                elif topic == "/tf_static":
                    for tf in msg.transforms:
                        static[tf.child_frame_id] = (tf.header.frame_id, _matrix(tf))
                elif topic == "/tf":
                    dynamic.append((message.log_time, {tf.child_frame_id: (tf.header.frame_id, _matrix(tf))
                                                       for tf in msg.transforms}))
                elif topic == "/ground_truth/odom":
                    p = msg.pose.pose.position
                    odom.append((message.log_time, (p.x, p.y, p.z)))
                elif topic == "/screw_contact/forces":
                    pts = [[q.x, q.y, q.z] for m in msg.markers if m.action == m.ADD and m.type == m.LINE_LIST
                           for q in m.points]
                    forces.append((message.log_time, np.array(pts, dtype=float).reshape(-1, 2, 3)))
                elif topic == "/terrain/embedded":
                    for m in msg.markers:
                        pts = np.array([[q.x, q.y, q.z] for q in m.points]).reshape(-1, 3)
                        pts = pts @ _pose_of(m)[:3, :3].T + _pose_of(m)[:3, 3]
                        terrain.append((pts.reshape(-1, 3, 3), (m.color.r, m.color.g, m.color.b, m.color.a)))
    except Exception as exc:  # mcap raises its own errors on a truncated or corrupt file
        if isinstance(exc, ConfigError):
            raise
        folder = path.parent
        killed = " (a run killed before it finished leaves its folder as DIR.partial)" \
            if folder.name.endswith(".partial") else ""
        raise ConfigError(f"{path}: cannot read the log ({type(exc).__name__}: {exc}); a log cut short{killed} is "
                          f"readable up to its last complete chunk: `eels-gz recover {path}` writes that part to "
                          f"{folder / RECOVERED_LOG}, which `eels-gz view {folder}` then replays") from None
    return urdf, static, dynamic, odom, forces, terrain


def load_run(folder: str | Path, label: str | None = None, max_fps: float = 30.0) -> Run:
    """Read a run folder (``log.mcap``, and ``summary.json`` when present) into a Run."""
    folder = Path(folder)
    path = folder / "log.mcap"
    if not path.is_file():
        raise ConfigError(f"{folder}: no log.mcap (is this an `eels-gz run` output folder with log.mcap: true?)")
    recovered = folder / RECOVERED_LOG
    try:
        urdf, static, dynamic, odom, forces, terrain = _read_log(path)
    except ConfigError:
        if not recovered.is_file():
            raise
        log.warning("%s cannot be read (cut short); replaying %s", path, recovered)
        path = recovered
        urdf, static, dynamic, odom, forces, terrain = _read_log(path)
    missing = [t for t, ok in (("/robot_description", urdf), ("/tf", dynamic)) if not ok]
    if missing:
        raise ConfigError(f"{path}: no {' or '.join(missing)} messages: the log predates the 3D scene topics; "
                          "run the scenario again to replay it")
    visuals = urdf_visuals(urdf, str(path))
    links = sorted({v.link for v in visuals})
    roots = [c for c, (p, _) in dynamic[0][1].items() if p == WORLD]
    root = roots[0] if roots else links[0]
    keep = _decimate([t for t, _ in dynamic], max_fps)
    times, pos, quat, trail = [], [], [], []
    for k in keep:
        t_ns, tfs = dynamic[k]
        parents = {**static, **tfs}
        try:
            poses = _link_poses(parents[root][1], parents, links, root)
        except KeyError as exc:
            raise ConfigError(f"{path}: link {exc} has no transform to '{WORLD}' at t = {t_ns * 1e-9:.3f} s "
                              "(neither on /tf nor on /tf_static)") from None
        P = np.array(poses)
        times.append(t_ns * 1e-9)
        pos.append(P[:, :3, 3])
        quat.append(Rotation.from_matrix(P[:, :3, :3]).as_quat())
        trail.append(parents[root][1][:3, 3])
    frame_forces = []
    if forces:
        f_times = np.array([t for t, _ in forces])
        for k in keep:
            i = int(np.clip(np.searchsorted(f_times, dynamic[k][0]), 0, len(forces) - 1))
            frame_forces.append(forces[i][1])
    summary = {}
    if (folder / "summary.json").is_file():
        try:
            summary = json.loads((folder / "summary.json").read_text())
        except (OSError, json.JSONDecodeError):
            summary = {}
    # positions stay in double: a georeferenced world (UTM, 4.1e6 m) has them far from the origin, and the page
    # holds them in float32 relative to its scene origin (eels_gz.viewer.html)
    return Run(label or folder.name, str(folder), visuals, links, np.array(times), np.array(pos, dtype=float),
               np.array(quat, dtype=np.float32), np.array(trail, dtype=float), frame_forces, terrain, summary)


def _decimate(times_ns: list[int], max_fps: float) -> list[int]:
    """Indices of every k-th sample, k the smallest that keeps at most ``max_fps`` frames per simulated second
    (0: every sample); the last sample is always kept."""
    if len(times_ns) < 2 or max_fps <= 0:
        return list(range(len(times_ns)))
    dt = (times_ns[-1] - times_ns[0]) * 1e-9 / (len(times_ns) - 1)
    step = max(1, int(np.ceil(1.0 / (max_fps * dt) - 1e-9))) if dt > 0 else 1
    keep = list(range(0, len(times_ns), step))
    if keep[-1] != len(times_ns) - 1:
        keep.append(len(times_ns) - 1)
    return keep
