"""A rosbags type store that starts with only the ROS 2 (Jazzy) types eels_gz names, read from the
user cache, and completes itself from rosbags' full Jazzy store the first time anything else is asked.

rosbags' Jazzy store imports seven generated modules (every ROS 2 release since Dashing), each
defining hundreds of dataclasses: about 0.15 s of a short run's start, for the ten or so types its
log writes. Here the field definitions of the types eels_gz names (:data:`KNOWN`, with every type
they nest) are taken once from that full store and kept in the user cache (``eels_gz.usercache``,
keyed by the installed rosbags), and later processes register only those with rosbags' own
``Typestore.register``: the same field definitions, so the same message definitions and the same
CDR bytes (test/ros/test_small_store.py compares them with the full store's). Asking for a type
outside :data:`KNOWN` (or listing the store) loads the full store into this one first, so the
store answers as rosbags' Jazzy store does.
"""

from __future__ import annotations

import hashlib
import json
import logging

from rosbags.interfaces import Nodetype
from rosbags.typesys.store import Typestore

from eels_gz import usercache

log = logging.getLogger(__name__)

#: The message types eels_gz builds, logs or bridges (their nested types follow).
KNOWN = (
    "builtin_interfaces/msg/Duration", "builtin_interfaces/msg/Time", "rosgraph_msgs/msg/Clock",
    "std_msgs/msg/Header", "std_msgs/msg/String", "std_msgs/msg/Bool", "std_msgs/msg/ColorRGBA",
    "geometry_msgs/msg/Point", "geometry_msgs/msg/Quaternion", "geometry_msgs/msg/Vector3",
    "geometry_msgs/msg/Pose", "geometry_msgs/msg/PoseStamped", "geometry_msgs/msg/PoseWithCovariance",
    "geometry_msgs/msg/Twist", "geometry_msgs/msg/TwistWithCovariance", "geometry_msgs/msg/Transform",
    "geometry_msgs/msg/TransformStamped", "geometry_msgs/msg/Wrench", "geometry_msgs/msg/WrenchStamped",
    "nav_msgs/msg/Odometry", "sensor_msgs/msg/JointState", "sensor_msgs/msg/Imu", "sensor_msgs/msg/Image",
    "sensor_msgs/msg/CompressedImage", "sensor_msgs/msg/CameraInfo", "sensor_msgs/msg/RegionOfInterest",
    "sensor_msgs/msg/PointCloud2", "sensor_msgs/msg/PointField", "sensor_msgs/msg/LaserScan",
    "visualization_msgs/msg/Marker", "visualization_msgs/msg/MarkerArray", "visualization_msgs/msg/MeshFile",
    "tf2_msgs/msg/TFMessage",
)
_FULL = "rosbags.typesys.stores.ros2_jazzy"


def _full_store() -> Typestore:
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_JAZZY)


def _closure(fielddefs: dict, names) -> dict:
    """``names`` and every type they nest, with their field definitions."""
    out, todo = {}, [n for n in names if n in fielddefs]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out[name] = fielddefs[name]
        for _, desc in fielddefs[name][1]:
            while desc[0] in (Nodetype.ARRAY, Nodetype.SEQUENCE):
                desc = desc[1][0]
            if desc[0] == Nodetype.NAME:
                todo.append(desc[1])
    return out


def _desc(d) -> tuple:
    """A field description read back from JSON: tuples and Nodetype, as rosbags writes them."""
    kind = Nodetype(d[0])
    if kind == Nodetype.NAME:
        return (kind, d[1])
    if kind == Nodetype.BASE:
        return (kind, (d[1][0], d[1][1]))
    return (kind, (_desc(d[1][0]), d[1][1]))


def _decode(text: str) -> dict:
    raw = json.loads(text)
    return {name: ([tuple(c) for c in consts], [(f, _desc(d)) for f, d in fields])
            for name, (consts, fields) in raw.items()}


def _cached_defs() -> dict:
    """The field definitions of :data:`KNOWN` and what they nest: from the user cache, else taken
    from the full store (and cached)."""
    folder = usercache.cache_dir()
    key = json.dumps([usercache.module_stamp(_FULL), sorted(KNOWN)])
    path = None if folder is None else folder / "rosbags" / (hashlib.sha256(key.encode()).hexdigest()[:24] + ".json")
    if path is not None:
        try:
            return _decode(path.read_text())
        except (OSError, ValueError, TypeError, KeyError, IndexError) as exc:
            log.debug("small store: no cached definitions at %s: %s", path, exc)
    defs = _closure(_full_store().fielddefs, KNOWN)
    if path is not None:
        usercache.write_atomic(path, json.dumps(defs))
    return defs


class _Lazy(dict):
    """A dict of the store that completes the store before answering about a missing key or
    listing itself."""

    def __init__(self, store: "SmallStore") -> None:
        super().__init__()
        self._store = store

    def __missing__(self, key):
        if self._store.complete():
            return dict.__getitem__(self, key)
        raise KeyError(key)

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or (self._store.complete() and dict.__contains__(self, key))

    def get(self, key, default=None):
        return self[key] if key in self else default

    def keys(self):
        self._store.complete()
        return dict.keys(self)

    def values(self):
        self._store.complete()
        return dict.values(self)

    def items(self):
        self._store.complete()
        return dict.items(self)

    def __iter__(self):
        self._store.complete()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._store.complete()
        return dict.__len__(self)


class SmallStore(Typestore):
    """rosbags' Jazzy type store, its types registered as they are needed (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self._complete = False
        defs = _cached_defs()
        plain = Typestore()
        plain.register(defs)
        self.types, self.fielddefs = _Lazy(self), _Lazy(self)
        dict.update(self.types, plain.types)
        dict.update(self.fielddefs, plain.fielddefs)

    def complete(self) -> bool:
        """Load every type of the full Jazzy store not here yet; True the first time (then there
        may be new keys), False after."""
        if self._complete:
            return False
        self._complete = True
        full = _full_store()
        for name in full.fielddefs.keys() - dict.keys(self.fielddefs):
            dict.__setitem__(self.fielddefs, name, full.fielddefs[name])
            dict.__setitem__(self.types, name, full.types[name])
        log.debug("small store: completed from rosbags' full Jazzy store")
        return True
