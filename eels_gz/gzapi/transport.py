"""In-process publish/subscribe for the embedded host, with gz-transport's
Python API (``gz.transport13``): ``Node().advertise(topic, msg_type)``
returns a publisher with ``publish(msg)``; ``Node().subscribe(msg_type,
topic, callback)`` returns True when subscribed.

Delivery is deterministic and synchronous with the step loop:

- ``publish`` stores a copy of the message (the publisher may reuse its
  object, as with protobuf serialization) in the bus's queue; any thread may
  publish (the ROS bridge does from its DDS listener);
- the host calls ``Bus.deliver()`` at the start of every step, before the
  systems' ``pre_update``: every message queued since the last call is handed
  to the topic's subscribers in publish order, in the host's thread. So a
  message published during step k (in any of its phases) is seen by
  subscribers before step k+1's ``pre_update``; a message published by a
  callback during delivery is delivered in the same call;
- subscribers of one topic share the delivered message object: treat it as
  read-only;
- a subscriber whose type differs from the published message's type does not
  receive it (gz-transport matches types too); this is logged once per pair.

Topic names are normalized as gz-transport does: a leading ``/`` is added,
and names with whitespace, ``@``, ``:=`` or ``//`` are invalid.

Each ``Simulation`` owns a ``Bus``; ``Node()`` binds to the active bus
(``activate``), which the host sets before it configures systems.

``Node`` and ``Publisher`` offer what gz-transport 13's Python classes offer
(a subset, with the same argument forms; test/conformance checks them). The
host's own publishers use two host-side functions: ``node_on(bus)`` (a Node
on a given bus) and ``publish_owned(pub, msg)`` (hands over a freshly built
message without the defensive copy).
"""

from __future__ import annotations

import logging
import re
import threading
from collections import deque
from typing import Any, Callable

from eels_gz.gzapi.msgs import Message

log = logging.getLogger(__name__)

_INVALID = re.compile(r"\s|@|:=|//")


def full_name(msg_type) -> str:
    """``gz.msgs.Twist`` for a host message class or a gz.msgs protobuf class."""
    return msg_type.DESCRIPTOR.full_name


def normalize_topic(topic: str) -> str | None:
    """gz-transport's topic name rules; None for an invalid name."""
    if not isinstance(topic, str) or not topic.strip("/") or _INVALID.search(topic):
        return None
    return topic if topic.startswith("/") else "/" + topic


class Bus:
    """The topics of one simulation: subscribers and the queue of published messages."""

    def __init__(self) -> None:
        self._subs: dict[str, list[tuple[str, Callable[[Any], None], "Node"]]] = {}
        self._queue: deque = deque()
        self._lock = threading.Lock()
        self._warned: set[tuple[str, str, str]] = set()
        self.advertised: dict[str, str] = {}  # topic -> message type full name

    def _enqueue(self, topic: str, msg, copy: bool = True) -> None:
        if copy:
            msg = msg.copy() if isinstance(msg, Message) else _proto_copy(msg)
        item = (topic, msg)
        with self._lock:
            self._queue.append(item)

    def pending(self) -> int:
        """Messages waiting for the next ``deliver``."""
        return len(self._queue)

    def deliver(self) -> int:
        """Hand every queued message to its subscribers; returns how many were delivered."""
        count = 0
        queue = self._queue
        while queue:
            with self._lock:
                topic, msg = queue.popleft()
            type_name = full_name(type(msg))
            for sub_type, callback, _node in tuple(self._subs.get(topic, ())):
                if sub_type != type_name:
                    key = (topic, sub_type, type_name)
                    if key not in self._warned:
                        self._warned.add(key)
                        log.warning("topic %s: a subscriber of %s does not receive %s messages",
                                    topic, sub_type, type_name)
                    continue
                try:
                    callback(msg)
                except Exception:  # a faulty callback must not stop the simulation (gz-transport logs it too)
                    log.exception("topic %s: subscriber callback %r failed", topic, callback)
            count += 1
        return count

    def _subscribe(self, topic: str, type_name: str, callback, node: "Node") -> None:
        self._subs.setdefault(topic, []).append((type_name, callback, node))

    def _unsubscribe(self, topic: str, node: "Node") -> bool:
        subs = self._subs.get(topic, [])
        kept = [s for s in subs if s[2] is not node]
        self._subs[topic] = kept
        return len(kept) != len(subs)

    def topic_list(self) -> list[str]:
        """Topics with a publisher or a subscriber, sorted (``Node.topic_list``)."""
        return sorted(set(self.advertised) | {t for t, s in self._subs.items() if s})


def _proto_copy(msg):
    new = type(msg)()
    new.CopyFrom(msg)
    return new


_default_bus = Bus()
_active_bus = _default_bus


def activate(bus: Bus | None) -> Bus:
    """Make ``bus`` the one new ``Node`` objects use (None: the process default); returns the previous."""
    global _active_bus
    previous = _active_bus
    _active_bus = bus if bus is not None else _default_bus
    return previous


def active_bus() -> Bus:
    return _active_bus


class Publisher:
    """Returned by ``Node.advertise``; ``publish(msg)`` queues a copy for delivery."""

    def __init__(self, bus: Bus | None, topic: str, type_name: str) -> None:
        self._bus, self._topic, self._type_name = bus, topic, type_name

    def valid(self) -> bool:
        return self._bus is not None

    def has_connections(self) -> bool:
        return self._bus is not None and bool(self._bus._subs.get(self._topic))

    def publish(self, proto_msg) -> bool:
        """Queue ``proto_msg``; False (and nothing sent) for an invalid publisher or a message of another type."""
        return self._publish(proto_msg, True)

    def _publish(self, msg, copy: bool) -> bool:
        if self._bus is None:
            return False
        name = full_name(type(msg))
        if name != self._type_name:
            log.error("publisher of %s on %s: cannot publish a %s", self._type_name, self._topic, name)
            return False
        self._bus._enqueue(self._topic, msg, copy)
        return True


def publish_owned(pub: Publisher, msg) -> bool:
    """Host side: ``pub.publish(msg)`` without the defensive copy; the caller must not touch ``msg`` again."""
    return pub._publish(msg, False)


def topic_of(pub: Publisher) -> tuple[str, str]:
    """Host side: (topic, message type full name) of a publisher."""
    return pub._topic, pub._type_name


class Node:
    """gz-transport's ``Node`` on the host's in-process bus."""

    def __init__(self, *options: Any) -> None:
        # gz-transport: Node() or Node(NodeOptions); the options (namespace, partition) are not used here
        if len(options) > 1:
            raise TypeError(f"Node() takes at most one NodeOptions argument ({len(options)} given)")
        self._bus = _active_bus
        self._subscribed: set[str] = set()

    def advertise(self, topic: str, msg_type, options: Any = None) -> Publisher:
        """A publisher of ``msg_type`` on ``topic``; ``valid()`` is False for an invalid topic name
        or a topic already advertised with another type."""
        name = normalize_topic(topic)
        type_name = full_name(msg_type)
        if name is None:
            log.error("advertise: invalid topic name %r", topic)
            return Publisher(None, str(topic), type_name)
        known = self._bus.advertised.setdefault(name, type_name)
        if known != type_name:
            log.error("advertise %s as %s: already advertised as %s", name, type_name, known)
            return Publisher(None, name, type_name)
        return Publisher(self._bus, name, type_name)

    def subscribe(self, msg_type, topic: str, callback: Callable[[Any], None], options: Any = None) -> bool:
        """Call ``callback(msg)`` for each ``msg_type`` message on ``topic``; False for an invalid name."""
        name = normalize_topic(topic)
        if name is None or not callable(callback):
            log.error("subscribe: invalid topic name %r or callback %r", topic, callback)
            return False
        self._bus._subscribe(name, full_name(msg_type), callback, self)
        self._subscribed.add(name)
        return True

    def unsubscribe(self, topic: str) -> bool:
        name = normalize_topic(topic)
        if name is None or name not in self._subscribed:
            return False
        self._subscribed.discard(name)
        return self._bus._unsubscribe(name, self)

    def subscribed_topics(self) -> list[str]:
        return sorted(self._subscribed)

    def topic_list(self) -> list[str]:
        return self._bus.topic_list()


def node_on(bus: Bus) -> Node:
    """Host side: a Node on ``bus`` (plugins' ``Node()`` binds to the active bus)."""
    node = Node()
    node._bus = bus
    return node
