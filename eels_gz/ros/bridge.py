"""The embedded host's ROS 2 bridge, like ros_gz_bridge's parameter_bridge:
``config/bridge.yaml`` lists (ROS topic, gz topic, ROS type, gz type,
direction); gz-to-ROS entries subscribe to the host's in-process gz topics
and publish converted messages on ROS 2, ROS-to-gz entries do the reverse.

The ROS side is a backend with ``publisher(ros_topic, ros_type, qos)`` (an
object with ``publish(msg)``, msg a rosbags message) and
``subscription(ros_topic, ros_type, qos, callback)``: DDS
(eels_gz.ros.dds) or rclpy (eels_gz.ros.rclpy_backend).

Threads: gz-to-ROS messages are published in the host's thread while it
delivers (before each step's pre_update); ROS-to-gz messages arrive on the
backend's thread and are queued on the bus, which delivers them before the
next pre_update. A malformed command is logged with its reason and dropped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import yaml

from eels_gz.errors import ConfigError
from eels_gz.gzapi import msgs as gz_msgs
from eels_gz.gzapi import transport
from eels_gz.paths import asset
from eels_gz.ros import convert
from eels_gz.ros.qos import qos_for

log = logging.getLogger(__name__)

DIRECTIONS = ("GZ_TO_ROS", "ROS_TO_GZ", "BIDIRECTIONAL")
KEYS = ("ros_topic_name", "gz_topic_name", "ros_type_name", "gz_type_name", "direction")


@dataclass(frozen=True)
class BridgeEntry:
    ros_topic: str
    gz_topic: str
    ros_type: str
    gz_type: str
    direction: str


def bridge_file() -> Path:
    return asset("config") / "bridge.yaml"


def host_bridge_file() -> Path:
    """The embedded host's own commands (/enable_gravity, /set_pose), which Gazebo has no topics for."""
    return asset("config") / "bridge_host.yaml"


def load_bridge(path: str | Path | None = None, robot: str = "", fts_sensors=(), world: str = "",
                host: bool = True) -> list[BridgeEntry]:
    """Read a ros_gz_bridge YAML (default: config/bridge.yaml, plus config/bridge_host.yaml when ``host``).

    ``{world}`` and ``{robot}`` are replaced by the names; entries with
    ``{sensor}``/``{joint}`` are repeated per force-torque sensor, given as
    ``(joint, sensor)`` pairs."""
    if path is None:
        entries = _read_bridge(bridge_file(), robot, fts_sensors, world)
        return entries + (_read_bridge(host_bridge_file(), robot, fts_sensors, world) if host else [])
    return _read_bridge(Path(path), robot, fts_sensors, world)


def _read_bridge(path: Path, robot: str, fts_sensors, world: str) -> list[BridgeEntry]:
    from eels_gz.yamlio import load

    data = load(path, "the bridge configuration")  # ConfigError naming it: unreadable, not YAML, a duplicate key
    if not isinstance(data, list):
        raise ConfigError(f"{path}: expected a list of bridge entries, got {type(data).__name__}")
    entries = []
    for k, item in enumerate(data):
        if not isinstance(item, dict) or set(item) != set(KEYS):
            raise ConfigError(f"{path}: entry {k} must have exactly the keys {', '.join(KEYS)}, got {item!r}")
        if item["direction"] not in DIRECTIONS:
            raise ConfigError(f"{path}: entry {k} ({item['ros_topic_name']}): direction must be one of "
                              f"{', '.join(DIRECTIONS)}, got {item['direction']!r}")
        pair = (item["ros_type_name"], item["gz_type_name"])
        table = convert.GZ_TO_ROS if item["direction"] == "GZ_TO_ROS" else convert.ROS_TO_GZ
        if pair not in table:
            raise ConfigError(f"{path}: entry {k} ({item['ros_topic_name']}): no {item['direction']} conversion "
                              f"between {pair[0]} and {pair[1]}")
        entry = BridgeEntry(*(str(item[key]) for key in KEYS))
        if any("{sensor}" in t or "{joint}" in t for t in (entry.ros_topic, entry.gz_topic)):
            for joint, sensor in fts_sensors:
                entries.append(expand(entry, world=world, robot=robot, joint=joint, sensor=sensor))
        else:
            entries.append(expand(entry, world=world, robot=robot, joint="", sensor=""))
    return entries


def to_ros_gz_yaml(entries: list[BridgeEntry]) -> str:
    """Expanded entries in ros_gz_bridge's YAML format (for parameter_bridge's config_file)."""
    return yaml.safe_dump([dict(zip(KEYS, (e.ros_topic, e.gz_topic, e.ros_type, e.gz_type, e.direction)))
                           for e in entries], sort_keys=False)


def expand(entry: BridgeEntry, **names: str) -> BridgeEntry:
    return BridgeEntry(entry.ros_topic.format(**names), entry.gz_topic.format(**names), entry.ros_type,
                       entry.gz_type, entry.direction)


class RosBridge:
    """Bridges a host ``transport.Bus`` to a ROS 2 backend per bridge entries."""

    def __init__(self, bus: transport.Bus, entries: list[BridgeEntry], backend):
        self.backend = backend
        self.node = transport.node_on(bus)
        self.received = {e.ros_topic: 0 for e in entries}  # ROS-to-gz messages accepted
        self.rejected = {e.ros_topic: 0 for e in entries}
        for e in entries:
            gz_type = gz_msgs.MESSAGES[e.gz_type.rsplit(".", 1)[-1]]
            if e.direction in ("GZ_TO_ROS", "BIDIRECTIONAL"):
                pub = backend.publisher(e.ros_topic, e.ros_type, qos_for(e.ros_topic, e.ros_type))
                self.node.subscribe(gz_type, e.gz_topic, self._to_ros(pub, convert.GZ_TO_ROS[(e.ros_type, e.gz_type)]))
            if e.direction in ("ROS_TO_GZ", "BIDIRECTIONAL"):
                gz_pub = self.node.advertise(e.gz_topic, gz_type)
                backend.subscription(e.ros_topic, e.ros_type, qos_for(e.ros_topic, e.ros_type),
                                     self._to_gz(e, gz_pub, convert.ROS_TO_GZ[(e.ros_type, e.gz_type)]))

    @staticmethod
    def _to_ros(pub, conv):
        def callback(msg):
            # volatile topics: with no reader matched the sample would go
            # nowhere, so skip the conversion and the encoding
            if pub.has_subscribers():
                pub.publish(conv(msg))
        return callback

    def _to_gz(self, entry: BridgeEntry, gz_pub, conv):
        def callback(msg):
            try:
                out = conv(msg)
            except (ValueError, TypeError, AttributeError) as exc:
                self.rejected[entry.ros_topic] += 1
                log.warning("%s: malformed %s ignored: %s", entry.ros_topic, entry.ros_type, exc)
                return
            self.received[entry.ros_topic] += 1
            gz_pub.publish(out)
        return callback
