"""Files eels-gz recognises as its own, by their content, so that ``--overwrite`` replaces only a
file a command wrote itself and never a user's file that happens to have the same name.

Each kind of single-file output carries a mark a user's file does not:

- ``config`` (``run --save-config``): a first comment line naming eels-gz and the SHA-256 of the
  text below it, so a file a user has edited since (a comment added, a value changed) is theirs;
- ``replay`` (``view``, ``compare``'s ``replay.html``): the page's ``<meta name="generator"
  content="eels_gz ...">``;
- ``recovered log`` (``recover -o``): an MCAP file whose header's library names ``eels_gz recover``
  (a run folder's own ``log.recovered.mcap``: any MCAP log eels_gz wrote, ``run log``);
- ``drag csv`` (``calibrate simulate``): a CSV whose header ends in the column ``source`` and whose
  rows say ``eels-gz calibrate simulate`` there;
- ``png`` (``calibrate friction --plot``, ``view --screenshot``): a PNG with a ``tEXt`` chunk of
  keyword ``eels-gz``;
- ``rover run file`` (``rover drive``): a JSON object with ``"written_by": "eels-gz rover drive"``.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

CONFIG_MARK = "# eels-gz resolved configuration"
HTML_MARK = b'<meta name="generator" content="eels_gz '
RECOVER_LIBRARY = "eels_gz recover"
CSV_SOURCE = ("source", "eels-gz calibrate simulate")
PNG_KEYWORD = b"eels-gz"
DRIVE_MARK = ("written_by", "eels-gz rover drive")
_HEAD_BYTES = 4096  # where a mark must be: the start of the file
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _head(path: Path, size: int = _HEAD_BYTES) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError:
        return b""


def stamp_config(text: str, command: str) -> str:
    """``text`` (a resolved configuration in YAML) with the first line that marks it as ours."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    return (f"{CONFIG_MARK} (sha256 {digest} of what follows; edit it and it is yours: --overwrite will not "
            f"replace it)\n# written by: {command}\n{text}")


def _is_config(path: Path) -> bool:
    try:
        text = path.read_bytes().decode()
    except (OSError, UnicodeDecodeError):
        return False
    first, _, rest = text.partition("\n")
    if not first.startswith(CONFIG_MARK + " (sha256 "):
        return False
    digest = first[len(CONFIG_MARK) + len(" (sha256 "):].split(" ", 1)[0]
    second, _, body = rest.partition("\n")  # the command line, not in the digest
    return second.startswith("# written by: ") and hashlib.sha256(body.encode()).hexdigest() == digest


def _is_replay(path: Path) -> bool:
    return HTML_MARK in _head(path)


def _mcap_library(path: Path) -> str | None:
    """The library an MCAP file's header names (None for a file that is not MCAP)."""
    head = _head(path)
    # MCAP: magic (8 bytes), then the Header record: opcode 0x01, u64 length, profile and library strings
    if len(head) < 17 or not head.startswith(b"\x89MCAP0\r\n") or head[8] != 0x01:
        return None
    try:
        at = 17
        n = struct.unpack_from("<I", head, at)[0]
        at += 4 + n
        n = struct.unpack_from("<I", head, at)[0]
        library = head[at + 4:at + 4 + n].decode()
    except (struct.error, UnicodeDecodeError):
        return None
    return library


def _is_recovered_log(path: Path) -> bool:
    return (_mcap_library(path) or "").startswith(RECOVER_LIBRARY)


def _is_run_log(path: Path) -> bool:
    """An MCAP log eels_gz wrote: a run's, or one recover made of it (before recover named itself, it
    copied the run's library, eels_gz)."""
    return (_mcap_library(path) or "").startswith("eels_gz")


def _is_drag_csv(path: Path) -> bool:
    import csv

    try:
        lines = path.read_bytes().decode().splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    rows = [r for r in csv.reader(lines) if any(c.strip() for c in r)]
    if not rows or not rows[0] or rows[0][-1].strip() != CSV_SOURCE[0]:
        return False
    return all(len(r) == len(rows[0]) and r[-1].strip() == CSV_SOURCE[1] for r in rows[1:])


def png_text_chunk(keyword: bytes, text: str) -> bytes:
    """A PNG ``tEXt`` chunk (length, type, data, CRC)."""
    data = keyword + b"\0" + text.encode("latin-1", "replace")
    return struct.pack(">I", len(data)) + b"tEXt" + data + struct.pack(">I", zlib.crc32(b"tEXt" + data))


def stamp_png(png: bytes, text: str) -> bytes:
    """``png`` with a ``tEXt`` chunk of keyword ``eels-gz`` after its header chunk (IHDR)."""
    if not png.startswith(_PNG_SIGNATURE):
        return png
    end_of_ihdr = 8 + 8 + struct.unpack(">I", png[8:12])[0] + 4
    return png[:end_of_ihdr] + png_text_chunk(PNG_KEYWORD, text) + png[end_of_ihdr:]


def _is_png(path: Path) -> bool:
    head = _head(path, 64 * 1024)
    if not head.startswith(_PNG_SIGNATURE):
        return False
    at = 8
    while at + 8 <= len(head):
        length, kind = struct.unpack_from(">I4s", head, at)
        if kind == b"tEXt" and head[at + 8:at + 8 + length].split(b"\0", 1)[0] == PNG_KEYWORD:
            return True
        if kind == b"IDAT":
            return False
        at += 12 + length
    return False


def _is_drive_record(path: Path) -> bool:
    try:
        record = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and record.get(DRIVE_MARK[0]) == DRIVE_MARK[1]


# kind -> (its recogniser, what it is, for messages)
KINDS: dict[str, tuple[Callable[[Path], bool], str]] = {
    "config": (_is_config, "a configuration --save-config wrote (and nobody edited since)"),
    "replay": (_is_replay, "a replay page eels-gz view wrote"),
    "recovered log": (_is_recovered_log, "a log eels-gz recover wrote"),
    "run log": (_is_run_log, "an MCAP log eels-gz wrote"),
    "drag csv": (_is_drag_csv, "a drag CSV eels-gz calibrate simulate wrote"),
    "png": (_is_png, "an image eels-gz wrote"),
    "rover run file": (_is_drive_record, "a run file eels-gz rover drive wrote"),
}
# files a command may add to another command's output folder later (view, recover): the folder's own
LATER_FILES = {"replay.html": "replay", "log.recovered.mcap": "run log"}


def is_ours(path: str | Path, kind: str) -> bool:
    """Whether the regular file at ``path`` is one eels-gz wrote, of ``kind`` (a key of KINDS)."""
    path = Path(path)
    if path.is_symlink() or not path.is_file():
        return False
    return KINDS[kind][0](path)


def describe(kind: str) -> str:
    """What a file of ``kind`` is, for a message ("a replay page eels-gz view wrote")."""
    return KINDS[kind][1]
