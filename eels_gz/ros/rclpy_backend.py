"""The rclpy backend of the bridge, used when ROS 2 is sourced.

Thin on purpose: messages cross as serialized CDR (rosbags encodes and
decodes; rclpy publishes bytes and subscribes with ``raw=True``), so the
conversions are the same as on DDS. Written against rclpy's documented API
(Jazzy); ROS 2 cannot be installed where the tests run, so this module is
not exercised there.
"""

from __future__ import annotations

import logging
import threading

from eels_gz.ros.messages import typestore
from eels_gz.ros.qos import QosSpec

log = logging.getLogger(__name__)


def available() -> bool:
    """True when rclpy imports (ROS 2 sourced)."""
    try:
        import rclpy  # noqa: F401
    except ImportError:
        return False
    return True


class RclpyNode:
    def __init__(self, domain_id: int = 0, name: str = "eels_gz_host"):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        self._rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=int(domain_id))
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # shutdown while spinning
            log.debug("rclpy executor stopped", exc_info=True)

    @staticmethod
    def _qos(spec: QosSpec):
        from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

        return QoSProfile(depth=spec.depth, history=HistoryPolicy.KEEP_LAST,
                          reliability=ReliabilityPolicy.RELIABLE if spec.reliable else ReliabilityPolicy.BEST_EFFORT)

    @staticmethod
    def _msg_class(ros_type: str):
        from rosidl_runtime_py.utilities import get_message

        return get_message(ros_type)

    def publisher(self, ros_topic: str, ros_type: str, qos: QosSpec):
        pub = self.node.create_publisher(self._msg_class(ros_type), ros_topic, self._qos(qos))
        store = typestore()

        class _Pub:
            def has_subscribers(self) -> bool:
                return pub.get_subscription_count() > 0

            def publish(self, msg) -> None:
                pub.publish(bytes(store.serialize_cdr(msg, ros_type)))  # rclpy accepts serialized bytes

        return _Pub()

    def subscription(self, ros_topic: str, ros_type: str, qos: QosSpec, callback):
        store = typestore()

        def on_raw(data: bytes) -> None:
            callback(store.deserialize_cdr(data, ros_type))

        return self.node.create_subscription(self._msg_class(ros_type), ros_topic, on_raw, self._qos(qos), raw=True)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self._rclpy.shutdown(context=self.context)
