"""Where the package's shared assets live (urdf/, worlds/, models/, config/,
plugins_py/), and the resource search paths Gazebo also uses.

Resolution order for the share directory:
1. ``EELS_GZ_SHARE`` if set;
2. the source tree this module sits in (editable installs, a checkout);
3. ``<prefix>/share/eels_gz`` (a wheel's data files, or an ament install).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE = "eels_gz"
ASSET_DIRS = ("urdf", "worlds", "models", "config", "plugins_py")


def _looks_like_share(path: Path) -> bool:
    return all((path / d).is_dir() for d in ("urdf", "worlds", "config"))


def share_dir() -> Path:
    """Return the directory holding urdf/, worlds/, models/, config/ and plugins_py/."""
    env = os.environ.get("EELS_GZ_SHARE")
    if env:
        return Path(env)
    source = Path(__file__).resolve().parent.parent
    if _looks_like_share(source):
        return source
    installed = Path(sys.prefix) / "share" / PACKAGE
    if _looks_like_share(installed):
        return installed
    raise FileNotFoundError(
        f"cannot find the eels_gz share directory (looked in {source} and {installed}); "
        "set EELS_GZ_SHARE to the folder that holds urdf/, worlds/ and config/"
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
