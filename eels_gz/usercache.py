"""The user's eels_gz cache folder and safe writes into it.

Caches here only save time: an entry that cannot be read is recomputed, one that cannot be
written is skipped, and entries are written to a temporary file and renamed into place, so that
concurrent runs (a sweep's samples) never read half of one. The folder is ``$EELS_GZ_CACHE_DIR``,
else ``$XDG_CACHE_HOME/eels_gz``, else ``~/.cache/eels_gz``; ``EELS_GZ_CACHE_DIR=off`` turns every
cache off.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)


def cache_dir() -> Path | None:
    """The user's eels_gz cache folder, or None when turned off (``EELS_GZ_CACHE_DIR=off``)."""
    given = os.environ.get("EELS_GZ_CACHE_DIR")
    if given:
        return None if given.lower() in ("off", "0", "none") else Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "eels_gz"


def write_atomic(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` through a temporary file renamed into place; False (logged at debug
    level) when the cache folder cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp_", dir=path.parent)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        log.debug("cache: cannot write %s: %s", path, exc)
        return False
    return True


def module_stamp(name: str) -> list:
    """A cheap stamp of an installed module, without importing it: its file's path, size and
    modification time (a reinstall changes it)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return [name]
    origin = getattr(spec, "origin", None)
    try:
        st = os.stat(origin)
    except (OSError, TypeError):
        return [name, origin]
    return [origin, st.st_size, st.st_mtime_ns]
