"""What the listener recorded (:mod:`eels_gz.gazebo.listen`), turned into a run's outputs: the messages
as the embedded host's gz messages (:mod:`eels_gz.gzapi.msgs`), so that ros_gz_bridge's conversions of
:mod:`eels_gz.ros.convert` give their ROS 2 form for ``log.mcap``, and the base's trajectory."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from eels_gz.gzapi import msgs as gz
from eels_gz.ros import convert
from eels_gz.ros.bridge import BridgeEntry

GROUND_TRUTH = "/ground_truth/odom"
STATS = "gz.msgs.WorldStatistics"


def gz_message(type_name: str, fields: dict):
    """The host gz message ``type_name`` (``gz.msgs.NAME``) holding ``fields`` (protobuf's JSON mapping,
    .proto names): fields the host's message lacks are left out, 64-bit integers read back from strings."""
    return _build(gz.MESSAGES[type_name.rsplit(".", 1)[-1]], fields)


def _build(cls, fields: dict):
    msg = cls()
    for name, value in fields.items():
        if name not in cls._FIELDS:
            continue
        if name in cls._MESSAGE_FIELDS:
            getattr(msg, name).CopyFrom(_build(cls._MESSAGE_FIELDS[name], value))
        elif name in cls._REPEATED:
            kind, target = cls._REPEATED[name], getattr(msg, name)
            for item in value:
                target.append(item if kind is None else _build(kind, item))
        else:
            default = cls._FIELDS[name]
            setattr(msg, name, type(default)(value) if isinstance(default, (int, float)) and
                    not isinstance(default, bool) else value)
    return msg


def stamp_ns(msg, field_name: str = "") -> int:
    """A message's header stamp (or its Time field ``field_name``) in ns."""
    t = getattr(msg, field_name) if field_name else msg.header.stamp
    return int(t.sec) * 1_000_000_000 + int(t.nsec)


def _seconds(t: dict) -> float:
    return int(t.get("sec", 0)) + 1e-9 * int(t.get("nsec", 0))


def world_clock(records: list[dict]) -> tuple[float, float]:
    """(simulated s, wall s the world ran) of the last world statistics recorded: gz-sim's real-time
    stopwatch runs only while the world runs, so the server's start and a paused world are not in it."""
    last = next((rec["msg"] for rec in reversed(records) if rec.get("type") == STATS), None)
    if last is None:
        return 0.0, 0.0
    return _seconds(last.get("sim_time", {})), _seconds(last.get("real_time", {}))


@dataclass
class Trajectory:
    """The base's ground truth at the listener's rate: time (s), position (m), orientation (w, x, y, z)."""

    t: list = field(default_factory=list)
    pos: list = field(default_factory=list)
    quat: list = field(default_factory=list)

    def add(self, odom) -> None:
        self.t.append(stamp_ns(odom) * 1e-9)
        p, q = odom.pose.position, odom.pose.orientation
        self.pos.append((p.x, p.y, p.z))
        self.quat.append((q.w, q.x, q.y, q.z))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.array(self.t), np.array(self.pos).reshape(-1, 3), np.array(self.quat).reshape(-1, 4)


def write_log(records: list[dict], entries: list[BridgeEntry], mcap) -> tuple[Trajectory, dict[str, int]]:
    """Write the recorded messages of the bridged topics ``entries`` (gz -> ROS) to ``mcap`` (an
    :class:`eels_gz.ros.mcap_log.McapLog`, or None) under their ROS 2 names, with ``/clock`` from the
    world's statistics; the ground-truth trajectory and the message count per ROS topic."""
    by_gz = {e.gz_topic: e for e in entries}
    counts: dict[str, int] = {}
    traj = Trajectory()
    channels: set[str] = set()

    def write(topic: str, typename: str, t_ns: int, msg) -> None:
        counts[topic] = counts.get(topic, 0) + 1
        if mcap is None:
            return
        if topic not in channels:
            mcap.channel(topic, typename)
            channels.add(topic)
        mcap.write(topic, t_ns, msg)

    for rec in records:
        if "topic" not in rec:
            continue
        if rec["type"] == STATS:  # the world's clock (the host has no WorldStatistics message)
            clock = gz.Clock()
            clock.sim.CopyFrom(gz_message("gz.msgs.Time", rec["msg"].get("sim_time", {})))
            write("/clock", "rosgraph_msgs/msg/Clock", stamp_ns(clock, "sim"), convert.clock(clock))
            continue
        msg = gz_message(rec["type"], rec["msg"])
        entry = by_gz.get(rec["topic"])
        if entry is None:
            continue
        if entry.ros_topic == GROUND_TRUTH:
            traj.add(msg)
        write(entry.ros_topic, entry.ros_type, stamp_ns(msg), convert.GZ_TO_ROS[(entry.ros_type, entry.gz_type)](msg))
    return traj, counts
