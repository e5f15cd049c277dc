"""Start and stop the embedded host's ROS 2 interface: pick the backend
(``auto``: rclpy when ROS 2 is sourced, DDS otherwise), read
config/bridge.yaml for the robot's force-torque sensors, bridge the
simulation's gz topics."""

from __future__ import annotations

import logging
import os

from eels_gz.errors import ConfigError
from eels_gz.ros.bridge import RosBridge, load_bridge
from eels_gz.ros.camera_bridge import camera_entries, description_cameras

log = logging.getLogger(__name__)
TRANSPORTS = ("auto", "rclpy", "dds")
MAX_DOMAIN_ID = 232  # the highest domain id DDS's default port mapping allows


def choose_backend(kind: str) -> str:
    if kind not in TRANSPORTS:
        raise ConfigError(f"ros.transport must be one of {', '.join(TRANSPORTS)}, got {kind!r}")
    if kind != "auto":
        return kind
    from eels_gz.ros import rclpy_backend

    return "rclpy" if os.environ.get("ROS_DISTRO") and rclpy_backend.available() else "dds"


def make_backend(kind: str, domain_id: int):
    if not 0 <= int(domain_id) <= MAX_DOMAIN_ID:
        raise ConfigError(f"ros.domain must be in 0..{MAX_DOMAIN_ID}, got {domain_id}")
    chosen = choose_backend(kind)
    if chosen == "rclpy":
        from eels_gz.ros import rclpy_backend

        if not rclpy_backend.available():
            raise ConfigError("ros.transport 'rclpy' needs ROS 2 sourced (rclpy not importable); use 'dds' or 'auto'")
        return chosen, rclpy_backend.RclpyNode(domain_id)
    from eels_gz.ros.dds import DdsNode

    return chosen, DdsNode(domain_id)


class RosInterface:
    """The bridge of one simulation to ROS 2; ``close()`` when the run ends."""

    def __init__(self, sim, transport: str = "auto", domain_id: int = 0, bridge_file=None):
        robot = sim.robot_name
        fts = [(joint, name) for joint, name, kind, _ in sim.sensor_specs if kind == "force_torque"]
        self.entries = load_bridge(bridge_file, robot=robot, fts_sensors=fts, world=sim.spec.name)
        self.kind, self.backend = make_backend(transport, domain_id)
        # the cameras' image and camera_info topics (no template in config/bridge.yaml)
        self.entries = self.entries + camera_entries(description_cameras(sim.sensor_specs, sim.spec.name, robot))
        self.bridge = RosBridge(sim.transport, self.entries, self.backend)
        self.domain_id = int(domain_id)
        d = self.describe()
        log.info("ROS 2 interface over %s on ROS_DOMAIN_ID %d: %d topics (%d to ROS 2, %d from ROS 2)",
                 d["transport"], d["domain"], d["topics"], d["to_ros"], d["from_ros"])

    def describe(self) -> dict:
        """What the interface bridges: transport (rclpy or dds), domain id, and topic counts."""
        to_ros = sum(e.direction in ("GZ_TO_ROS", "BIDIRECTIONAL") for e in self.entries)
        from_ros = sum(e.direction in ("ROS_TO_GZ", "BIDIRECTIONAL") for e in self.entries)
        return {"transport": self.kind, "domain": self.domain_id, "topics": len(self.entries), "to_ros": to_ros,
                "from_ros": from_ros}

    def close(self) -> None:
        self.backend.close()
