"""ROS 2 over DDS benchmarks (JSON on stdout or --out FILE):

1. loopback: a 36-joint sensor_msgs/JointState published at 1 kHz by
   eels_gz.ros.dds in this process, received by a separate process (reliable
   QoS, as /joint_states uses); loss and latency percentiles, the latency
   measured from the send time carried in the message's header stamp
   (same host, same clock). Targets: no loss, p99 < 2 ms.
2. the cost of --ros: wall time of the same `eels-gz run` with and without
   the ROS interface (DDS, state topics at ros.state_rate and at 1 kHz).
   Target: < 10 %.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
from rtf import emit

RECEIVER = textwrap.dedent("""
    import json, sys, time
    from eels_gz.ros.dds import DdsNode
    from eels_gz.ros.qos import QosSpec
    domain, n = int(sys.argv[1]), int(sys.argv[2])
    lat, seen = [], set()
    def cb(m):
        now = time.time_ns()
        lat.append(now - (m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec))
        seen.add(int(m.header.frame_id))
    node = DdsNode(domain)
    node.subscription("/joint_states", "sensor_msgs/msg/JointState", QosSpec(True, 1000), cb)
    print("ready", flush=True)
    end = time.monotonic() + 60
    while len(seen) < n and time.monotonic() < end:
        time.sleep(0.05)
        if sys.stdin in []: break
    time.sleep(0.2)
    print(json.dumps({"received": len(seen), "latency_ns": lat}), flush=True)
""")


def loopback(n: int, rate_hz: float, joints: int) -> dict:
    from eels_gz.ros import messages
    from eels_gz.ros.dds import DdsNode
    from eels_gz.ros.qos import QosSpec

    domain = 150 + os.getpid() % 50
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(RECEIVER)
    proc = subprocess.Popen([sys.executable, f.name, str(domain), str(n)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    node = DdsNode(domain)
    pub = node.publisher("/joint_states", "sensor_msgs/msg/JointState", QosSpec(True, 1000))
    names = [f"module_{k // 2 + 1}_{'bend' if k % 2 else 'twist'}" for k in range(joints)]
    q = np.linspace(-1, 1, joints)
    time.sleep(1.0)  # discovery
    period = 1.0 / rate_hz
    t0 = time.perf_counter()
    for k in range(n):
        target = t0 + k * period
        while time.perf_counter() < target:
            pass
        msg = messages.joint_state(time.time_ns(), names, q, q, q)
        msg.header.frame_id = str(k)
        pub.publish(msg)
    send_s = time.perf_counter() - t0
    out = json.loads(proc.communicate(timeout=90)[0].strip().splitlines()[-1])
    lat = np.array(out["latency_ns"], dtype=float) / 1e6
    return {"messages": n, "rate_hz": rate_hz, "joints": joints, "achieved_rate_hz": n / send_s,
            "received": out["received"], "lost": n - out["received"],
            "latency_ms": {"p50": float(np.percentile(lat, 50)), "p99": float(np.percentile(lat, 99)),
                           "max": float(lat.max())}}


def ros_cost(duration: float) -> dict:
    from eels_gz import config
    from eels_gz.run.runner import run

    def wall(ros: dict) -> float:
        cfg = config.resolve(overrides={"duration": duration, "log": {"mcap": False, "plot": False}, "ros": ros})
        with tempfile.TemporaryDirectory() as d:
            return run(cfg, d)["wall_time"]

    domain = 150 + os.getpid() % 50
    base = min(wall({"enabled": False}) for _ in range(2))
    default = min(wall({"enabled": True, "transport": "dds", "domain": domain}) for _ in range(2))
    full = min(wall({"enabled": True, "transport": "dds", "domain": domain, "state_rate": 1000.0}) for _ in range(2))
    return {"robot": config.resolve()["robot"]["name"], "sim_seconds": duration, "wall_without_ros_s": base,
            "wall_with_ros_s": default, "overhead_default_state_rate": default / base - 1,
            "wall_with_ros_1khz_s": full, "overhead_1khz_state_rate": full / base - 1}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the JSON here instead of stdout")
    ap.add_argument("--messages", type=int, default=5000)
    ap.add_argument("--duration", type=float, default=3.0, help="simulated s of the --ros cost runs")
    args = ap.parse_args()
    result = {"loopback": loopback(args.messages, 1000.0, 36), "ros_cost": ros_cost(args.duration)}
    emit(result, args.out)


if __name__ == "__main__":
    main()
