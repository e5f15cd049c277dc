"""The run log's MCAP writer (eels_gz.ros.mcap_chunks.ChunkWriter) against mcap's own Writer, in one run.

Both write the same messages, in the mix of a screw-contact run's log (per 10 ms: a clock, joint
states, odometry, /tf, screw force markers and two IMU messages, and a lidar cloud every 100 ms, at
their sizes), into memory, chunked as the log is (256 KiB, uncompressed). Reports the cost per
message of each and their ratio, and checks that the bytes are equal; then the same without the lidar
clouds (``without_lidar``), timed in the same rounds.
"""

from __future__ import annotations

import argparse
import io
import time
from pathlib import Path

from mcap.writer import CompressionType, Writer
from rtf import emit

from eels_gz.ros.mcap_chunks import ChunkWriter
from eels_gz.ros.mcap_log import CHUNK_SIZE

SIZES = {"/clock": 12, "/joint_states": 1852, "/ground_truth/odom": 724, "/tf": 4500, "/screw_contact/forces": 1195,
         "/imu": 316, "/lidar/points": 92301}  # bytes, from a 2 s screw_spin log


def messages(seconds: float, lidar: bool = True) -> list[tuple[int, int, bytes]]:
    topics = list(SIZES)
    payload = {t: bytes(range(256)) * (SIZES[t] // 256) + bytes(SIZES[t] % 256) for t in topics}
    out = []
    for k in range(int(round(seconds * 200))):  # 5 ms ticks
        t = k * 5_000_000
        out.append((topics.index("/imu") + 1, t, payload["/imu"]))
        if k % 2 == 0:
            out += [(topics.index(n) + 1, t, payload[n]) for n in topics[:5]]
        if lidar and k % 20 == 0:
            out.append((topics.index("/lidar/points") + 1, t, payload["/lidar/points"]))
    return out


def write(make, msgs) -> tuple[float, bytes]:
    stream = io.BytesIO()
    writer = make(stream)
    writer.start(profile="ros2", library="eels_gz")
    schema = writer.register_schema(name="s", encoding="ros2msg", data=b"")
    for topic in SIZES:
        writer.register_channel(topic=topic, message_encoding="cdr", schema_id=schema, metadata={})
    t0 = time.perf_counter()
    for seq, (channel, t, data) in enumerate(msgs):
        writer.add_message(channel_id=channel, log_time=t, data=data, publish_time=t, sequence=seq)
    writer.finish()
    return time.perf_counter() - t0, stream.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="simulated seconds of log")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    cases = {"all": messages(a.seconds), "without_lidar": messages(a.seconds, lidar=False)}
    ours: dict = {c: [] for c in cases}
    theirs: dict = {c: [] for c in cases}
    same = True
    for _ in range(a.rounds):
        for case, msgs in cases.items():
            t_ours, b_ours = write(lambda s: ChunkWriter(s, CHUNK_SIZE), msgs)
            t_theirs, b_theirs = write(lambda s: Writer(s, chunk_size=CHUNK_SIZE, compression=CompressionType.NONE),
                                       msgs)
            ours[case].append(t_ours)
            theirs[case].append(t_theirs)
            same = same and b_ours == b_theirs

    def figures(case: str) -> dict:
        n = len(cases[case])
        return {"messages": n, "chunk_writer_us_per_message": 1e6 * min(ours[case]) / n,
                "mcap_writer_us_per_message": 1e6 * min(theirs[case]) / n,
                "speedup": min(theirs[case]) / min(ours[case])}

    emit({**figures("all"), "log_seconds": a.seconds, "rounds": a.rounds, "same_bytes": same,
          "without_lidar": figures("without_lidar")}, a.out)

if __name__ == "__main__":
    main()
