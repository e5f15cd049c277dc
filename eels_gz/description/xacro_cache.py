"""xacro's output cached by the hash of everything it read (a run's start-up: 0.3 s of xacro, a
few milliseconds from the cache).

An entry is found by a key over the xacro file as given (its name appears in the output's
banner), its absolute path, the arguments, xacro's version and this cache's format. It holds the
URDF and every file xacro read to make it (the file itself, its ``xacro:include`` files and the
YAML files of ``xacro.load_yaml``), each with the SHA-256 of its bytes: an entry whose files no
longer hash the same is stale, recomputed and replaced. A description that reads something the
key cannot cover (``$(env)``, ``$(optenv)``, ``$(find)``, ``$(cwd)``, or an include by a glob
pattern) is never cached, nor is an output whose files were modified while xacro read them.

Every file xacro reads is read once while it is unchanged (:func:`source_bytes`): xacro's own
parse (:func:`shared_reads`), this cache's hashes, the check of its text and
:func:`eels_gz.description.assemble.xacro_arg_names` share that one read.

The cache lives in the user's cache folder (:mod:`eels_gz.usercache`), under ``xacro/``.
Entries are written to a temporary file and renamed into place, so concurrent runs (a sweep's
samples) never read half an entry; a cache that cannot be read or written is skipped (the
description is then made by xacro, as without a cache).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import time
from pathlib import Path
from typing import Callable

from eels_gz.usercache import cache_dir, module_stamp, write_atomic

FORMAT = 1  # bump when an entry's layout or meaning changes
SETTLED_S = 2.0  # a file modified less than this before xacro began may have changed under it: not cached
UNCACHEABLE = re.compile(r"\$\((env|optenv|find|find-pkg-share|cwd)\b|<xacro:include[^>]*filename=\"[^\"]*[*?\[]")


_SOURCES: dict[str, tuple[tuple[int, ...], bytes]] = {}  # absolute path -> (stat stamp, bytes)


def source_bytes(path: str | Path) -> bytes:
    """The bytes of a file xacro reads (a xacro file, an include), read once while its inode, size,
    modification and change times stay the same (a write or ``touch`` changes the change time);
    OSError when it cannot be read."""
    name = os.path.abspath(path)
    st = os.stat(name)
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    known = _SOURCES.get(name)
    if known is not None and known[0] == stamp:
        return known[1]
    with open(name, "rb") as f:
        data = f.read()
    _SOURCES[name] = (stamp, data)
    return data


def source_text(path: str | Path) -> str:
    """:func:`source_bytes` as text (undecodable bytes replaced)."""
    return source_bytes(path).decode(errors="replace")


@contextlib.contextmanager
def shared_reads():
    """While active, xacro reads the files it opens through :func:`source_bytes` (its ``parse``,
    which opens the file and every include, is wrapped); a file it cannot read is left to xacro,
    which reports it."""
    import xacro

    parse = xacro.parse

    def parse_shared(inp, filename=None):
        if inp is None:
            with contextlib.suppress(OSError):
                # xacro 2.1 opens filename under its root_dir; ROS 2 Jazzy's xacro 2.0 has none and opens it as given
                inp = io.BytesIO(source_bytes(os.path.join(getattr(xacro, "root_dir", os.curdir), filename)))
        return parse(inp, filename)

    xacro.parse = parse_shared
    try:
        yield
    finally:
        xacro.parse = parse


def _sha(path: str) -> str | None:
    try:
        return hashlib.sha256(source_bytes(path)).hexdigest()
    except OSError:
        return None


def _key(path: Path, mappings: dict[str, str]) -> str:
    text = json.dumps([FORMAT, module_stamp("xacro"), str(path), os.path.abspath(path), sorted(mappings.items())])
    return hashlib.sha256(text.encode()).hexdigest()


def _read(entry: Path) -> str | None:
    """The URDF of an entry whose every file still hashes as recorded, else None."""
    try:
        data = json.loads(entry.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("files"), dict):
        return None
    for name, digest in data["files"].items():
        if _sha(name) != digest:
            return None
    urdf = data.get("urdf")
    return urdf if isinstance(urdf, str) else None


def _write(entry: Path, urdf: str, files: list[str], began: float) -> None:
    digests = {}
    for name in files:
        try:
            if os.stat(name).st_mtime >= began - SETTLED_S:
                return  # edited while (or just before) xacro read it: what it read is unknown
        except OSError:
            return
        digest = _sha(name)
        if digest is None:
            return  # a file xacro read is gone already: nothing safe to record
        try:
            if UNCACHEABLE.search(source_text(name)):
                return
        except OSError:
            return
        digests[name] = digest
    write_atomic(entry, json.dumps({"format": FORMAT, "files": digests, "urdf": urdf}))


def text_only(text: str, name: str) -> bool:
    """Whether xacro source ``text`` uses argument ``name`` only as text put into the output (no
    ``${...}`` expression, ``load_yaml`` or condition on the line that names it)."""
    ref = f"$(arg {name})"
    return all(not any(w in line for w in ("${", "load_yaml", "xacro:if", "xacro:unless"))
               for line in text.splitlines() if ref in line)


def cached_xacro(path: Path, mappings: dict[str, str], process: Callable[[], str],
                 stand_ins: dict[str, tuple[str, str]] | None = None) -> str | None:
    """xacro's output for ``path`` with ``mappings``: from the cache when an entry matches (module
    docstring), else ``process()``, whose output is then stored with the files xacro read.

    ``stand_ins`` (argument -> (stand-in, real value)): ``mappings`` and ``process`` hold the
    stand-in of each such argument (e.g. a run's own scenario file, a different path in every
    sample of a sweep, under one token), so that runs that differ only there share an entry; the
    real value is put in place of the token in the output. Only when every file xacro read uses
    the argument as text (:func:`text_only`) and the token is in the output: else None is
    returned, nothing stored, and the caller runs xacro with the real values."""
    stand_ins = stand_ins or {}

    def real(urdf: str) -> str:
        for token, value in stand_ins.values():
            urdf = urdf.replace(token, value)
        return urdf

    folder = cache_dir()
    if folder is None:
        return None if stand_ins else process()
    entry = folder / "xacro" / f"{_key(path, mappings)}.json"
    urdf = _read(entry)
    if urdf is not None:
        return real(urdf)
    import xacro

    xacro.all_includes = []  # xacro's own record of the files it read (includes and load_yaml)
    began = time.time()
    urdf = process()
    files = list(dict.fromkeys([os.path.abspath(path)] + [os.path.abspath(f) for f in xacro.all_includes]))
    if stand_ins:
        try:
            texts = [source_text(f) for f in files]
        except OSError:
            return None
        if not all(token in urdf for token, _ in stand_ins.values()) or not all(
                text_only(t, name) for t in texts for name in stand_ins):
            return None
    _write(entry, urdf, files, began)
    return real(urdf)
