"""ROS 2 over DDS without rclpy: cyclonedds with ROS 2's wire conventions.

- topics ``rt/<topic>``, types ``pkg::msg::dds_::Name_`` (eels_gz.ros.idl);
- samples are XCDR1 (``CDR_LE``), the representation rmw_cyclonedds_cpp uses;
  what is written is rosbags' CDR encoding of the message, byte for byte
  (the generated IDL classes serialize to the same bytes: test/ros checks it);
- received samples are decoded by cyclonedds into the generated IDL classes,
  whose attributes carry the ROS field names.

A ROS 2 node with rmw_cyclonedds_cpp on the same domain sees these topics.
"""

from __future__ import annotations

import logging
from typing import Callable

from cyclonedds._clayer import ddspy_write
from cyclonedds.core import Listener, Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from eels_gz.ros.idl import dds_topic_name, idl_class
from eels_gz.ros.messages import encode
from eels_gz.ros.qos import QosSpec

log = logging.getLogger(__name__)


def dds_qos(spec: QosSpec) -> Qos:
    reliability = (Policy.Reliability.Reliable(max_blocking_time=duration(milliseconds=100)) if spec.reliable
                   else Policy.Reliability.BestEffort)
    return Qos(reliability, Policy.History.KeepLast(spec.depth), Policy.Durability.Volatile,
               Policy.DataRepresentation(use_cdrv0_representation=True))


class DdsPublisher:
    """Writes ROS 2 messages (rosbags objects) of one type on one topic."""

    def __init__(self, participant, ros_topic: str, ros_type: str, qos: QosSpec):
        self.ros_topic, self.ros_type = ros_topic, ros_type
        topic = Topic(participant, dds_topic_name(ros_topic), idl_class(ros_type))
        self._writer = DataWriter(participant, topic, qos=dds_qos(qos))

    def has_subscribers(self) -> bool:
        """Whether a reader is matched: with none, a volatile sample goes nowhere."""
        return self._writer.get_publication_matched_status().current_count > 0

    def publish(self, msg) -> None:
        self.publish_cdr(encode(msg, self.ros_type))

    def close(self) -> None:
        """Delete the DDS writer now (cyclonedds deletes an entity in ``__del__``, idempotently)."""
        self._writer.__del__()

    def publish_cdr(self, data: bytes) -> None:
        """Write already-encoded CDR bytes (encapsulation header included)."""
        padded = data.ljust((len(data) + 3) & ~3, b"\0")  # DDS payloads are 4-byte aligned
        ret = ddspy_write(self._writer._ref, padded)
        if ret < 0:
            raise RuntimeError(f"DDS write on {self.ros_topic} failed with code {ret}")


class DdsSubscription:
    """Calls ``callback(msg)`` from a DDS thread for each received sample."""

    def __init__(self, participant, ros_topic: str, ros_type: str, qos: QosSpec, callback: Callable):
        self.ros_topic, self.ros_type = ros_topic, ros_type
        self._callback = callback
        topic = Topic(participant, dds_topic_name(ros_topic), idl_class(ros_type))
        self._reader = DataReader(participant, topic, qos=dds_qos(qos),
                                  listener=Listener(on_data_available=self._on_data))

    def close(self) -> None:
        """Delete the DDS reader, and with it its listener, now: left to the garbage collector, a reader
        could outlive its Python listener within one collected cycle, and a sample a writer of this
        process delivers to it in that window calls freed memory (seen as a crash in a later test)."""
        self._reader.__del__()

    def _on_data(self, reader) -> None:
        try:
            samples = reader.take(N=64)
        except Exception:  # a sample that does not decode is dropped with its reason
            log.exception("%s: received a sample that does not decode as %s", self.ros_topic, self.ros_type)
            return
        for sample in samples:
            if not isinstance(sample, idl_class(self.ros_type)):
                continue  # an invalid sample (disposal notice)
            try:
                self._callback(sample)
            except Exception:
                log.exception("%s: handling a %s failed", self.ros_topic, self.ros_type)


class DdsNode:
    """A DDS participant on ``domain_id`` that creates ROS 2 publishers and subscriptions."""

    def __init__(self, domain_id: int = 0):
        self.domain_id = int(domain_id)
        self.participant = DomainParticipant(self.domain_id)
        self._entities: list = []

    def publisher(self, ros_topic: str, ros_type: str, qos: QosSpec) -> DdsPublisher:
        pub = DdsPublisher(self.participant, ros_topic, ros_type, qos)
        self._entities.append(pub)
        return pub

    def subscription(self, ros_topic: str, ros_type: str, qos: QosSpec, callback: Callable) -> DdsSubscription:
        sub = DdsSubscription(self.participant, ros_topic, ros_type, qos, callback)
        self._entities.append(sub)
        return sub

    def close(self) -> None:
        """Delete the readers, the writers and the participant, in that order, now."""
        for entity in sorted(self._entities, key=lambda e: not isinstance(e, DdsSubscription)):
            entity.close()
        self._entities.clear()
        if self.participant is not None:
            self.participant.__del__()
        self.participant = None
