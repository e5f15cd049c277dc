"""An MCAP writer for the log's hot path: the bytes of :class:`mcap.writer.Writer`
(uncompressed chunks, every index, statistics, summary offsets and CRCs), at
about half its cost per message.

``mcap``'s writer builds each message record through a dataclass and five
small stream writes. :class:`ChunkWriter` packs a message record with one
``struct`` call into the chunk in progress and its index entry into a list;
everything written once per chunk or per file (the chunk record, its message
indexes, schemas, channels and the summary section) is built from
``mcap.records`` as the library builds it. ``bench/mcap_writer.py`` times
both on a screw-contact run's mix of messages (2.1 against 4.6 µs a small
message here). The output is the library's byte for byte
(``test/unit/test_mcap_chunks.py`` feeds both the same calls and compares
the files), so any MCAP reader reads it as it reads the library's.
"""

from __future__ import annotations

import struct
import zlib
from typing import BinaryIO

from mcap.data_stream import RecordBuilder
from mcap.opcode import Opcode
from mcap.records import ChunkIndex, Channel, DataEnd, Footer, Header, Schema, Statistics, SummaryOffset
from mcap.writer import MCAP0_MAGIC

_MESSAGE = struct.Struct("<BQHIQQ")  # opcode, record length, channel id, sequence, log time, publish time
_MESSAGE_FIELDS = 2 + 4 + 8 + 8  # the record's length before its data
_INDEX_HEAD = struct.Struct("<BQHI")  # opcode, record length, channel id, byte length of the entries
# opcode, record length, message start and end times, uncompressed size and CRC, the compression's name
# (length 0: none), the records' length
_CHUNK_HEAD = struct.Struct("<BQQQQIIQ")
_CHUNK_FIELDS = 8 + 8 + 8 + 4 + 4 + 8  # the record's length before its records


class ChunkWriter:
    """The subset of :class:`mcap.writer.Writer` the run log uses, with the same
    results: ``Writer(stream, chunk_size, compression=CompressionType.NONE)``.

    :meth:`add_message` returns True when the message closed a chunk (the
    chunk grew past ``chunk_size`` bytes) and the chunk's bytes were handed
    to ``stream``.
    """

    def __init__(self, stream: BinaryIO, chunk_size: int):
        self._stream = stream
        self._chunk_size = chunk_size
        self._chunk = bytearray()  # the records of the chunk in progress
        self._index: dict[int, list[int]] = {}  # channel -> [log time, offset in the chunk, ...]
        self._chunk_start = self._chunk_end = 0  # the chunk's message times [ns]
        self._chunk_messages = 0
        self._schemas: dict[int, Schema] = {}
        self._channels: dict[int, Channel] = {}
        self._chunk_indexes: list[ChunkIndex] = []
        self._counts: dict[int, int] = {}  # messages per channel, in the order of their first message
        self._messages = self._chunks = 0
        self._start = self._end = 0  # the file's message times [ns]

    def start(self, profile: str, library: str) -> None:
        self._stream.write(MCAP0_MAGIC)
        self._write(Header(profile, library))

    def register_schema(self, name: str, encoding: str, data: bytes) -> int:
        schema = Schema(id=len(self._schemas) + 1, data=data, encoding=encoding, name=name)
        self._schemas[schema.id] = schema
        self._add_to_chunk(schema)
        return schema.id

    def register_channel(self, topic: str, message_encoding: str, schema_id: int, metadata: dict[str, str]) -> int:
        channel = Channel(id=len(self._channels) + 1, topic=topic, message_encoding=message_encoding,
                          schema_id=schema_id, metadata=metadata)
        self._channels[channel.id] = channel
        self._add_to_chunk(channel)
        return channel.id

    def add_message(self, channel_id: int, log_time: int, data: bytes, publish_time: int, sequence: int = 0) -> bool:
        chunk = self._chunk
        if self._messages == 0 or log_time < self._start:
            self._start = log_time
        if log_time > self._end:
            self._end = log_time
        if self._chunk_messages == 0 or log_time < self._chunk_start:
            self._chunk_start = log_time
        if log_time > self._chunk_end:
            self._chunk_end = log_time
        entries = self._index.get(channel_id)
        if entries is None:
            entries = self._index[channel_id] = []
        entries += (log_time, len(chunk))
        chunk += _MESSAGE.pack(Opcode.MESSAGE, _MESSAGE_FIELDS + len(data), channel_id, sequence, log_time,
                               publish_time)
        chunk += data
        self._counts[channel_id] = self._counts.get(channel_id, 0) + 1
        self._messages += 1
        self._chunk_messages += 1
        if len(chunk) > self._chunk_size:
            self._close_chunk()
            return True
        return False

    def flush(self) -> None:
        """Close the chunk in progress (if it has messages) and flush the stream."""
        self._close_chunk()
        self._stream.flush()

    def finish(self) -> None:
        """Close the chunk in progress and write the summary section and the footer."""
        self._close_chunk()
        self._write(DataEnd(0))
        start = self._stream.tell()
        summary = RecordBuilder()
        offsets = []

        def group(opcode: Opcode, records) -> None:
            begin = summary.count
            for record in records:
                record.write(summary)
            offsets.append(SummaryOffset(group_opcode=opcode, group_start=start + begin,
                                         group_length=summary.count - begin))

        group(Opcode.SCHEMA, self._schemas.values())
        group(Opcode.CHANNEL, self._channels.values())
        group(Opcode.STATISTICS, [Statistics(
            attachment_count=0, channel_count=len(self._channels), channel_message_counts=self._counts,
            chunk_count=self._chunks, message_count=self._messages, metadata_count=0,
            message_start_time=self._start, message_end_time=self._end, schema_count=len(self._schemas))])
        group(Opcode.CHUNK_INDEX, self._chunk_indexes)
        group(Opcode.ATTACHMENT_INDEX, [])
        group(Opcode.METADATA_INDEX, [])
        offsets_start = start + summary.count
        for offset in offsets:
            offset.write(summary)
        data = summary.end()
        crc = zlib.crc32(struct.pack("<BQQQ", Opcode.FOOTER, 8 + 8 + 4, start if data else 0, offsets_start),
                         zlib.crc32(data))
        self._stream.write(data)
        self._write(Footer(summary_start=start if data else 0, summary_offset_start=offsets_start, summary_crc=crc))
        self._stream.write(MCAP0_MAGIC)

    def _add_to_chunk(self, record) -> None:
        self._chunk += _record(record)
        if len(self._chunk) > self._chunk_size:
            self._close_chunk()  # as mcap's writer does; a chunk without messages stays open

    def _close_chunk(self) -> None:
        if self._chunk_messages == 0:
            return
        self._chunks += 1
        data = self._chunk
        # the chunk record (mcap.records.Chunk's layout, no compression), its records written as they are
        head = _CHUNK_HEAD.pack(Opcode.CHUNK, _CHUNK_FIELDS + len(data), self._chunk_start, self._chunk_end,
                                len(data), zlib.crc32(data), 0, len(data))
        chunk_start = self._stream.tell()
        self._stream.write(head)
        self._stream.write(data)
        chunk_length = len(head) + len(data)
        offsets, indexes = {}, bytearray()
        for channel_id, entries in self._index.items():
            offsets[channel_id] = chunk_start + chunk_length + len(indexes)
            indexes += _INDEX_HEAD.pack(Opcode.MESSAGE_INDEX, 2 + 4 + 8 * len(entries), channel_id, 8 * len(entries))
            indexes += struct.pack(f"<{len(entries)}Q", *entries)
        self._stream.write(indexes)
        self._chunk_indexes.append(ChunkIndex(
            message_start_time=self._chunk_start, message_end_time=self._chunk_end,
            chunk_start_offset=chunk_start, chunk_length=chunk_length, message_index_offsets=offsets,
            message_index_length=len(indexes), compression="", compressed_size=len(data),
            uncompressed_size=len(data)))
        self._chunk = bytearray()
        self._index = {}
        self._chunk_start = self._chunk_end = 0
        self._chunk_messages = 0

    def _write(self, record) -> None:
        self._stream.write(_record(record))


def _record(record) -> bytes:
    builder = RecordBuilder()
    record.write(builder)
    return builder.end()
