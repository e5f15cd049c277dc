"""eels_gz.ros.mcap_chunks.ChunkWriter writes mcap's Writer's bytes.

Both writers get the same calls (schemas, channels registered before and
between messages, a channel that never carries a message, times out of
order, chunks closed by size and by explicit flushes) and the files are
compared byte for byte; the file is then read back by mcap's reader with its
CRCs checked.
"""

from __future__ import annotations

import io
import random

import pytest
from mcap.reader import make_reader
from mcap.writer import CompressionType, Writer

from eels_gz.ros.mcap_chunks import ChunkWriter


def _calls(seed: int, n: int) -> list[tuple]:
    rng = random.Random(seed)
    calls = [("start", "ros2", "eels_gz"), ("schema", "std_msgs/msg/String", "ros2msg", b"string data"),
             ("channel", "/a", "cdr", 1, {"offered_qos_profiles": "- history: keep_last\n"}),
             ("channel", "/never", "cdr", 1, {})]
    t = 1_000
    for k in range(n):
        if k == n // 3:
            calls += [("schema", "std_msgs/msg/Int32", "ros2msg", b"int32 data"), ("channel", "/b", "cdr", 2, {})]
        t += rng.randrange(0, 2_000_000)
        channel = 1 if k < n // 3 else rng.choice((1, 3))
        log_time = t - rng.randrange(0, 3_000_000) if rng.random() < 0.1 else t  # some out of order
        calls.append(("message", channel, log_time, rng.randbytes(rng.randrange(0, 400)), t, k))
        if rng.random() < 0.02:
            calls.append(("flush",))
    return calls + [("finish",)]


def _play(writer, calls: list[tuple]) -> list:
    closed = []
    for name, *args in calls:
        if name == "start":
            writer.start(profile=args[0], library=args[1])
        elif name == "schema":
            writer.register_schema(name=args[0], encoding=args[1], data=args[2])
        elif name == "channel":
            writer.register_channel(topic=args[0], message_encoding=args[1], schema_id=args[2], metadata=args[3])
        elif name == "message":
            closed.append(writer.add_message(channel_id=args[0], log_time=args[1], data=args[2], publish_time=args[3],
                                             sequence=args[4]))
        else:
            getattr(writer, name)()
    return closed


@pytest.mark.parametrize("seed, n, chunk_size", [(0, 500, 4096), (1, 2000, 1024), (2, 50, 1 << 20), (3, 0, 4096),
                                                 (4, 300, 1)])
def test_the_bytes_are_mcaps_writers(seed, n, chunk_size):
    calls = _calls(seed, n)
    ours, theirs = io.BytesIO(), io.BytesIO()
    _play(ChunkWriter(ours, chunk_size), calls)
    _play(Writer(theirs, chunk_size=chunk_size, compression=CompressionType.NONE), calls)
    assert ours.getvalue() == theirs.getvalue()
    ours.seek(0)
    reader = make_reader(ours, validate_crcs=True)
    read = [(c.topic, m.log_time, m.data, m.sequence) for _, c, m in reader.iter_messages(log_time_order=False)]
    sent = [c for c in calls if c[0] == "message"]
    topics = {1: "/a", 3: "/b"}
    assert read == [(topics[c[1]], c[2], c[3], c[5]) for c in sent]


def test_add_message_says_when_it_closed_a_chunk():
    stream = io.BytesIO()
    writer = ChunkWriter(stream, chunk_size=200)
    writer.start("ros2", "eels_gz")
    writer.register_schema("s", "ros2msg", b"")
    channel = writer.register_channel("/a", "cdr", 1, {})
    before = stream.tell()
    assert writer.add_message(channel, 1, b"x" * 10, 1) is False
    assert stream.tell() == before  # still in the chunk in progress
    assert writer.add_message(channel, 2, b"x" * 200, 2) is True
    assert stream.tell() > before
