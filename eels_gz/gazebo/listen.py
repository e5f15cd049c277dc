"""The listener: a process with Gazebo's Python bindings that records a gz-sim server's topics.

``python -m eels_gz.gazebo.listen --world NAME --out FILE [--topic TOPIC=TYPE ...] [--start]`` runs in
the environment of the gz-sim found (:mod:`eels_gz.gazebo.install`: its ``GZ_PARTITION`` and loopback
settings), so that the run's own process needs neither ``gz.transport13`` nor its protobuf runtime. It
subscribes to ``/world/NAME/stats`` and each topic, and with ``--start`` unpauses the world through its
``/world/NAME/control`` service once the server publishes its statistics and every topic has a
publisher (a server started paused loses no message to discovery). Every message is one JSON line in
FILE: ``{"topic", "type", "msg"}``, ``msg`` the message as protobuf's JSON mapping gives it with the
.proto field names (64-bit integers as strings; fields at their default left out). Events are lines
``{"event": ...}``: ``subscribed``, ``started``, ``paused`` (the world paused after having run: a
scenario's ``request_run_end`` pauses it; the listener then ends), ``error`` and ``end``. It ends on
SIGINT or SIGTERM too.

Imports only the standard library, protobuf and the gz bindings (no eels_gz module but this one).
"""

from __future__ import annotations

import argparse
import importlib
import json
import signal
import sys
import threading
import time

MSGS = "gz.msgs10"
TRANSPORT = "gz.transport13"
STATS = "gz.msgs.WorldStatistics"
# gz-msgs type name -> its *_pb2 module, where the module is not the lower-cased name
PB2 = {"WorldStatistics": "world_stats_pb2", "WorldControl": "world_control_pb2"}


def message_class(type_name: str):
    """The gz-msgs class of ``gz.msgs.NAME`` (or ``NAME``)."""
    name = type_name.rsplit(".", 1)[-1]
    return getattr(importlib.import_module(f"{MSGS}.{PB2.get(name, name.lower() + '_pb2')}"), name)


class Recorder:
    """JSON lines of every message received, written from gz-transport's threads under one lock."""

    def __init__(self, out):
        from google.protobuf.json_format import MessageToDict

        self.to_dict = MessageToDict
        self.out, self.lock = out, threading.Lock()
        self.ran = self.paused = False
        self.stats = threading.Event()
        self.ended = threading.Event()

    def write(self, record: dict) -> None:
        with self.lock:
            self.out.write(json.dumps(record) + "\n")
            self.out.flush()

    def callback(self, topic: str, type_name: str):
        def receive(msg) -> None:
            self.write({"topic": topic, "type": type_name,
                        "msg": self.to_dict(msg, preserving_proto_field_name=True)})
            if type_name == STATS:
                self.stats.set()
                if not msg.paused:
                    self.ran = True
                elif self.ran and not self.paused:
                    self.paused = True
                    self.write({"event": "paused", "sim_time": msg.sim_time.sec + 1e-9 * msg.sim_time.nsec})
                    self.ended.set()
        return receive


def _start(node, rec: Recorder, world: str, wanted: set[str], timeout: float, stop: threading.Event) -> str | None:
    """Unpause the world once its statistics arrive and every wanted topic has a publisher; the error."""
    end = time.monotonic() + timeout
    while not stop.is_set() and not (rec.stats.is_set() and wanted <= set(node.topic_list())):
        if time.monotonic() > end:
            missing = sorted(wanted - set(node.topic_list()))
            return f"no publisher after {timeout:g} s on {', '.join(missing) or 'the world statistics'}"
        time.sleep(0.05)
    if stop.is_set():
        return None
    time.sleep(0.2)  # the subscriptions connect to the publishers just discovered
    control = message_class("WorldControl")
    request = control()
    request.pause = False
    ok, reply = node.request(f"/world/{world}/control", request, control, message_class("Boolean"), 5000)
    if not (ok and reply.data):
        return f"/world/{world}/control did not start the world"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--topic", action="append", default=[], metavar="TOPIC=TYPE",
                        help="record TOPIC; --start waits for its publisher")
    parser.add_argument("--also", action="append", default=[], metavar="TOPIC=TYPE",
                        help="record TOPIC if it is published (not waited for)")
    parser.add_argument("--start", action="store_true", help="unpause the world once every topic has a publisher")
    parser.add_argument("--timeout", type=float, default=120.0, help="s to wait for the server's topics")
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    transport = importlib.import_module(TRANSPORT)
    topics = [(f"/world/{args.world}/stats", STATS)] + [tuple(t.split("=", 1)) for t in args.topic]
    wanted = {t for t, _ in topics}
    topics += [tuple(t.split("=", 1)) for t in args.also]
    with open(args.out, "w") as out:
        rec = Recorder(out)
        node = transport.Node()
        for topic, type_name in topics:
            if not node.subscribe(message_class(type_name), topic, rec.callback(topic, type_name)):
                rec.write({"event": "error", "message": f"could not subscribe to {topic} ({type_name})"})
                return 3
        rec.write({"event": "subscribed", "topics": [t for t, _ in topics]})
        if args.start:
            error = _start(node, rec, args.world, wanted, args.timeout, stop)
            if error is not None:
                rec.write({"event": "error", "message": error})
                return 4
            if not stop.is_set():
                rec.write({"event": "started", "wall": time.time()})
        while not stop.is_set() and not rec.ended.is_set():
            stop.wait(0.05)
        rec.write({"event": "end", "by": "signal" if stop.is_set() else "paused"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
