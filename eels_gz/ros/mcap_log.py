"""An MCAP file of ROS 2 CDR messages (profile ``ros2``, schemas ``ros2msg``),
readable by Foxglove and by rosbag2's MCAP storage plugin.

Message times are simulated time, so the same run gives the same bytes.
Every channel carries the ``offered_qos_profiles`` the ros2 profile requires
(rosbag2's YAML, Jazzy spelling); latched topics (``/robot_description``,
``/tf_static``, the terrain) are offered transient local, as
robot_state_publisher and tf2's static broadcaster offer them, so ``ros2 bag
play`` republishes them to late subscribers.

The log is written in chunks, each closed when it spans ``chunk_period`` of
simulated time or grows past ``chunk_size`` bytes (so chunk boundaries, like
the bytes, depend on the run only), and every closed chunk is handed to the
operating system at once (and synced to the disk at most every
``SYNC_PERIOD`` s of wall time). :meth:`McapLog.close` writes the summary
section (statistics, chunk and message indexes) that the standard readers
use. A process killed before that (SIGKILL, power loss) leaves a file whose
complete chunks are intact but which has no summary: :func:`recover` copies
its complete chunks into a well-formed MCAP file (``eels-gz recover``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from mcap.writer import CompressionType, Writer

from eels_gz.own_files import RECOVER_LIBRARY
from eels_gz.ros.mcap_chunks import ChunkWriter
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


CHUNK_SIZE = 256 * 1024  # bytes
CHUNK_PERIOD = 1.0  # s of simulated time
SYNC_PERIOD = 5.0  # s of wall time between fsyncs (a closed chunk is always flushed to the OS)


class McapLog:
    def __init__(self, path: str | Path, chunk_size: int = CHUNK_SIZE, chunk_period: float = CHUNK_PERIOD):
        self.path = Path(path)
        self._file = open(self.path, "wb")
        self._writer = ChunkWriter(self._file, chunk_size)  # mcap's Writer's bytes, faster per message
        self._writer.start(profile="ros2", library="eels_gz")
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, tuple[int, str]] = {}
        self._seq: dict[str, int] = {}
        self._period_ns = round(chunk_period * 1e9)
        self._chunk_start: int | None = None
        self._written = self._file.tell()
        self._synced = time.monotonic()
        self._flush_to_os()

    def channel(self, topic: str, typename: str, latched: bool = False) -> None:
        if typename not in self._schemas:
            self._schemas[typename] = self._writer.register_schema(
                name=typename, encoding="ros2msg", data=msgdef(typename).encode())
        cid = self._writer.register_channel(topic=topic, message_encoding="cdr", schema_id=self._schemas[typename],
                                            metadata={"offered_qos_profiles": offered_qos(topic, typename, latched)})
        self._channels[topic] = (cid, typename)
        self._seq[topic] = 0
        if self._file.tell() != self._written:  # the registration closed a chunk (by size)
            self._chunk_start = None
            self._flush_to_os()

    def write(self, topic: str, t_ns: int, msg) -> None:
        self.write_cdr(topic, t_ns, encode(msg, self._channels[topic][1]))

    def write_cdr(self, topic: str, t_ns: int, data: bytes) -> None:
        """Write an already CDR-encoded message (e.g. eels_gz.ros.messages.TfTemplate's)."""
        cid, _ = self._channels[topic]
        try:
            seq = self._seq[topic]
            self._seq[topic] = seq + 1
            closed = self._writer.add_message(cid, t_ns, data, t_ns, seq)  # True: closed by size
            if self._chunk_start is None:
                self._chunk_start = t_ns
            if not closed and t_ns - self._chunk_start >= self._period_ns:
                self._writer.flush()  # closes the chunk in progress
                closed = True
            if closed:
                self._chunk_start = None
                self._flush_to_os()
        except OSError as exc:  # e.g. a full disk: name the file
            raise OSError(exc.errno, exc.strerror, str(self.path)) from exc

    def _flush_to_os(self, sync: bool = False) -> None:
        self._file.flush()
        self._written = self._file.tell()
        now = time.monotonic()
        if sync or now - self._synced >= SYNC_PERIOD:
            os.fsync(self._file.fileno())
            self._synced = now

    def close(self) -> None:
        """Close the chunk in progress and write the summary section; the file is closed even if that fails."""
        if self._file.closed:
            return
        try:
            self._writer.finish()
            self._flush_to_os(sync=True)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(self.path)) from exc
        finally:
            try:
                self._file.close()
            except OSError:
                pass  # the write that failed above is what the caller hears about


MCAP_MAGIC = b"\x89MCAP0\r\n"  # the first 8 bytes of every MCAP file (MCAP specification, "Magic")


def check_mcap(source: str | Path) -> None:
    """LogError unless ``source`` is readable and starts as an MCAP file does."""
    from eels_gz.errors import LogError

    try:
        with open(source, "rb") as f:
            magic = f.read(len(MCAP_MAGIC))
    except OSError as exc:
        raise LogError(f"cannot read '{source}': {exc.strerror}") from None
    if magic != MCAP_MAGIC:
        raise LogError(f"'{source}' is not an MCAP log (it does not start with the MCAP magic bytes); "
                       "recover reads the log.mcap of a run cut short")


class TargetWriteError(OSError):
    """Writing the recovered log failed (e.g. a full disk): not a torn end of the source."""


class _Target:
    """The recovered log's file, its write errors told apart from the source's read errors."""

    def __init__(self, f):
        self.f = f

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        try:
            while view:  # an unbuffered write may take part of the data (the last blocks of a disk)
                view = view[self.f.write(view):]
        except OSError as exc:
            raise TargetWriteError(exc.errno, exc.strerror) from None
        return len(data)

    def tell(self) -> int:
        return self.f.tell()

    def flush(self) -> None:
        try:
            self.f.flush()
        except OSError as exc:
            raise TargetWriteError(exc.errno, exc.strerror) from None

    def close(self) -> None:
        self.f.close()


def recover(source: str | Path, target: str | Path) -> dict:
    """Copy every complete record of an MCAP file cut short (no summary, a torn last chunk)
    into ``target``, a well-formed MCAP file with a summary section.

    Returns ``{"messages": n, "channels": n, "complete": bool, "stopped": reason}``;
    ``complete`` is True when ``source`` already ended properly.
    """
    from mcap.records import Channel, DataEnd, Footer, Header, Message, Schema
    from mcap.stream_reader import StreamReader

    check_mcap(source)
    counts = {"messages": 0, "channels": 0}
    complete, stopped = False, "end of file"
    schemas: dict[int, int] = {}
    channels: dict[int, int] = {}
    # unbuffered: a full disk fails the write that meets it (_Target), not a flush hidden in close()
    with open(source, "rb") as src, open(target, "wb", buffering=0) as raw:
        dst = _Target(raw)
        writer = Writer(dst, chunk_size=CHUNK_SIZE, compression=CompressionType.NONE)
        started = False
        try:
            for record in StreamReader(src, skip_magic=False, validate_crcs=True).records:
                if isinstance(record, Header):
                    # the library names recover (and what wrote the source): how --overwrite knows it ours
                    writer.start(profile=record.profile, library=f"{RECOVER_LIBRARY} (from {record.library})")
                    started = True
                elif isinstance(record, Schema) and record.id not in schemas:
                    schemas[record.id] = writer.register_schema(record.name, record.encoding, record.data)
                elif isinstance(record, Channel) and record.id not in channels:
                    channels[record.id] = writer.register_channel(
                        record.topic, record.message_encoding, schemas.get(record.schema_id, 0), record.metadata)
                    counts["channels"] += 1
                elif isinstance(record, Message) and record.channel_id in channels:
                    writer.add_message(channels[record.channel_id], record.log_time, record.data,
                                       record.publish_time, record.sequence)
                    counts["messages"] += 1
                elif isinstance(record, (DataEnd, Footer)):
                    complete = True
                    break
        except TargetWriteError:
            raise
        except Exception as exc:  # the torn end of the file: a truncated record or a bad CRC
            stopped = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if not started:
            writer.start(profile="ros2", library=RECOVER_LIBRARY)
        writer.finish()
    return {**counts, "complete": complete, "stopped": "complete" if complete else stopped}
