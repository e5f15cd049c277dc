"""An MCAP file of ROS 2 CDR messages (profile ``ros2``, schemas ``ros2msg``),
readable by Foxglove and by rosbag2's MCAP storage plugin.

Message times are simulated time, so the same run gives the same bytes.
Every channel carries the ``offered_qos_profiles`` the ros2 profile requires
(rosbag2's YAML, Jazzy spelling); latched topics (``/robot_description``,
``/tf_static``, the terrain) are offered transient local, as
robot_state_publisher and tf2's static broadcaster offer them, so ``ros2 bag
play`` republishes them to late subscribers.
"""

from __future__ import annotations

from pathlib import Path

from mcap.writer import CompressionType, Writer

from eels_gz.ros.messages import encode, msgdef
from eels_gz.ros.qos import qos_for

_INFINITE = "{sec: 2147483647, nsec: 4294967295}"


def offered_qos(topic: str, typename: str, latched: bool = False) -> str:
    """rosbag2's ``offered_qos_profiles`` YAML of one publisher of ``topic``."""
    qos = qos_for(topic, typename)
    return (f"- history: keep_last\n  depth: {1 if latched else qos.depth}\n"
            f"  reliability: {'reliable' if qos.reliable or latched else 'best_effort'}\n"
            f"  durability: {'transient_local' if latched else 'volatile'}\n"
            f"  deadline: {_INFINITE}\n  lifespan: {_INFINITE}\n  liveliness: automatic\n"
            f"  liveliness_lease_duration: {_INFINITE}\n  avoid_ros_namespace_conventions: false\n")


class McapLog:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._file = open(self.path, "wb")
        self._writer = Writer(self._file, compression=CompressionType.NONE)
        self._writer.start(profile="ros2", library="eels_gz")
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, tuple[int, str]] = {}
        self._seq: dict[str, int] = {}

    def channel(self, topic: str, typename: str, latched: bool = False) -> None:
        if typename not in self._schemas:
            self._schemas[typename] = self._writer.register_schema(
                name=typename, encoding="ros2msg", data=msgdef(typename).encode())
        cid = self._writer.register_channel(topic=topic, message_encoding="cdr", schema_id=self._schemas[typename],
                                            metadata={"offered_qos_profiles": offered_qos(topic, typename, latched)})
        self._channels[topic] = (cid, typename)
        self._seq[topic] = 0

    def write(self, topic: str, t_ns: int, msg) -> None:
        cid, typename = self._channels[topic]
        self._writer.add_message(channel_id=cid, log_time=t_ns, publish_time=t_ns,
                                 data=encode(msg, typename), sequence=self._seq[topic])
        self._seq[topic] += 1

    def write_cdr(self, topic: str, t_ns: int, data: bytes) -> None:
        """Write an already CDR-encoded message (eels_gz.ros.messages.TfTemplate)."""
        cid, _ = self._channels[topic]
        self._writer.add_message(channel_id=cid, log_time=t_ns, publish_time=t_ns, data=data,
                                 sequence=self._seq[topic])
        self._seq[topic] += 1

    def close(self) -> None:
        if self._file.closed:
            return
        self._writer.finish()
        self._file.close()
