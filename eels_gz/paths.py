"""Where the package's shared assets live (urdf/, worlds/, models/, config/,
plugins_py/), and the resource search paths Gazebo also uses.

Resolution order for the share directory (the first folder holding urdf/,
worlds/ and config/ wins):

1. ``EELS_GZ_SHARE`` if set (it must hold them, or it is an error naming it);
2. the source tree this module sits in (a checkout, an editable install);
3. ``<prefix>/share/eels_gz`` for each folder above the installed package:
   an ament install (``colcon build`` without ``--symlink-install``:
   ament_python_install_package puts the package in
   ``<prefix>/lib/python3.X/site-packages/eels_gz``, CMakeLists.txt's rules
   the assets in ``<prefix>/share/eels_gz``), a pip wheel's data files in a
   venv or ``--user`` (``<prefix>/lib/python3.X/site-packages`` again);
4. each prefix of ``AMENT_PREFIX_PATH`` whose ament index lists the package
   (``share/ament_index/resource_index/packages/eels_gz``, what
   ament_index_python's ``get_package_share_directory`` reads);
5. ``sys.prefix/share/eels_gz`` (a wheel installed into the interpreter's
   own prefix with a package folder elsewhere).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE = "eels_gz"
ASSET_DIRS = ("urdf", "worlds", "models", "config", "plugins_py")
# the ament index's marker of an installed package, relative to its prefix
AMENT_MARKER = ("share", "ament_index", "resource_index", "packages", PACKAGE)


def _looks_like_share(path: Path) -> bool:
    return all((path / d).is_dir() for d in ("urdf", "worlds", "config"))


def _ament_shares(ament_prefix_path: str) -> list[Path]:
    """``<prefix>/share/eels_gz`` of every prefix of ``AMENT_PREFIX_PATH`` that has the package's index marker."""
    return [Path(p, "share", PACKAGE) for p in ament_prefix_path.split(os.pathsep)
            if p and Path(p, *AMENT_MARKER).is_file()]


def share_candidates(package_dir: Path, environ: dict | None = None, prefix: str | None = None) -> list[Path]:
    """The folders tried, in order, for the package installed at ``package_dir`` (after ``EELS_GZ_SHARE``)."""
    environ = os.environ if environ is None else environ
    candidates = [package_dir.parent]
    candidates += [ancestor / "share" / PACKAGE for ancestor in package_dir.parents]
    candidates += _ament_shares(environ.get("AMENT_PREFIX_PATH", ""))
    candidates.append(Path(sys.prefix if prefix is None else prefix) / "share" / PACKAGE)
    return list(dict.fromkeys(candidates))


def share_dir() -> Path:
    """Return the directory holding urdf/, worlds/, models/, config/ and plugins_py/."""
    env = os.environ.get("EELS_GZ_SHARE")
    if env:
        if not _looks_like_share(Path(env)):
            raise FileNotFoundError(f"EELS_GZ_SHARE={env} does not hold urdf/, worlds/ and config/")
        return Path(env)
    package_dir = Path(__file__).resolve().parent
    candidates = share_candidates(package_dir)
    for candidate in candidates:
        if _looks_like_share(candidate):
            return candidate
    raise FileNotFoundError(
        f"cannot find the eels_gz share directory for the package at {package_dir} (looked in the source tree, "
        f"<prefix>/share/{PACKAGE} above the package, AMENT_PREFIX_PATH's prefixes with the ament index entry "
        f"and {candidates[-1]}); set EELS_GZ_SHARE to the folder that holds urdf/, worlds/ and config/"
    )


def asset(*parts: str) -> Path:
    """Path of a shared asset, e.g. ``asset("worlds", "ice_plane.sdf")``."""
    return share_dir().joinpath(*parts)


def _env_paths(var: str) -> list[Path]:
    return [Path(p) for p in os.environ.get(var, "").split(os.pathsep) if p]


def resource_paths() -> list[Path]:
    """Model search path: ``GZ_SIM_RESOURCE_PATH`` first, then the package's models/."""
    return _env_paths("GZ_SIM_RESOURCE_PATH") + [asset("models")]


def system_plugin_paths() -> list[Path]:
    """Python system search path: ``GZ_SIM_SYSTEM_PLUGIN_PATH`` first, then plugins_py/."""
    return _env_paths("GZ_SIM_SYSTEM_PLUGIN_PATH") + [asset("plugins_py")]


def read_text(path: str | Path, what: str, kind: str, error: type[Exception]) -> str:
    """The text of a user's file ``path`` (UTF-8), or ``error`` naming it: unreadable (``cannot read
    WHAT 'PATH': reason``) or not text (``PATH: not a KIND text file (byte N is not UTF-8 text)``), never
    a UnicodeDecodeError. ``what`` names the file's role ('config file'), ``kind`` its format ('YAML')."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise error(f"cannot read {what} '{path}': {exc.strerror}") from None
    return as_text(raw, path, kind, error)


def as_text(raw: bytes, path: str | Path, kind: str, error: type[Exception]) -> str:
    """``raw``, the bytes of ``path``, as UTF-8 text, or ``error`` as :func:`read_text` names it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not a {kind} text file (byte {exc.start} is not UTF-8 text); is it the file "
                    "you meant?") from None
    if "\0" in text:
        raise error(f"{path}: not a {kind} text file (it holds NUL bytes); is it the file you meant?")
    return text
