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
import os
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


def _wait_for_publishers(node, wanted: set[str], timeout: float, stop: threading.Event) -> str | None:
    """Until every wanted topic has a publisher; the error. Called before any subscription: gz-transport's
    Python bindings hold the GIL in ``topic_list`` and ``request``, so a subscription's callback waiting
    for it on a transport thread would deadlock them."""
    end = time.monotonic() + timeout
    while not stop.is_set() and not wanted <= set(node.topic_list()):
        if time.monotonic() > end:
            return f"no publisher after {timeout:g} s on {', '.join(sorted(wanted - set(node.topic_list())))}"
        time.sleep(0.1)
    return None


def _start_world(world: str) -> str | None:
    """Unpause the world through its control service, from a ``gz service`` process (not this one's
    Node, whose blocking request would hold the GIL against the subscriptions' callbacks); the error."""
    import subprocess

    try:
        res = subprocess.run(["gz", "service", "-s", f"/world/{world}/control", "--reqtype", "gz.msgs.WorldControl",
                              "--reptype", "gz.msgs.Boolean", "--timeout", "5000", "--req", "pause: false"],
                             capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"gz service /world/{world}/control: {exc}"
    if res.returncode != 0 or "data: true" not in res.stdout:
        return f"/world/{world}/control did not start the world: {(res.stdout + res.stderr).strip()[-300:]}"
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
    out = open(args.out, "w")  # noqa: SIM115 - closed by the exit below, after the last write
    rec = Recorder(out)
    node = transport.Node()
    code = 0
    error = _wait_for_publishers(node, wanted, args.timeout, stop) if args.start else None
    if error is None:
        for topic, type_name in topics:
            if not node.subscribe(message_class(type_name), topic, rec.callback(topic, type_name)):
                error, code = f"could not subscribe to {topic} ({type_name})", 3
                break
    if error is None:
        rec.write({"event": "subscribed", "topics": [t for t, _ in topics]})
        if args.start:
            # the subscriptions connect to their publishers: the world's statistics arrive (5 Hz, paused too)
            end = time.monotonic() + args.timeout
            while not rec.stats.wait(0.1) and not stop.is_set() and time.monotonic() < end:
                pass
            time.sleep(0.3)
            error = None if stop.is_set() else (_start_world(args.world) if rec.stats.is_set() else
                                                 f"no world statistics after {args.timeout:g} s")
            if error is None and not stop.is_set():
                rec.write({"event": "started", "wall": time.time()})
    if error is not None:
        rec.write({"event": "error", "message": error})
        code = code or 4
    else:
        while not stop.is_set() and not rec.ended.is_set():
            stop.wait(0.05)
        rec.write({"event": "end", "by": "signal" if stop.is_set() else "paused"})
    out.flush()
    os.fsync(out.fileno())
    # leave without tearing down gz-transport's threads under a callback (that aborts the process)
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
