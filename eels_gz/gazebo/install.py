"""Where gz-sim 8 (Gazebo Harmonic) is installed, and the environment that runs it.

Looked for, in this order (the first that holds a gz-sim 8 wins):

1. ``EELS_GZ_GAZEBO``: a prefix holding ``bin/gz`` (a ``setup.sh`` or ``setup.bash`` in it is sourced
   for its environment, else ``bin``, ``lib``, ``lib/python`` and ``share/gz`` are put on the paths);
2. ``gz`` on ``PATH`` whose Python bindings (``gz.sim8``) the gz-sim Python system loader can import
   (a binary install: packages.osrfoundation.org, or ROS 2 Jazzy's vendor packages sourced);
3. ``/opt/ros/jazzy`` (its ``setup.bash``: Jazzy's ``gz_sim_vendor``);
4. ``/opt/gz-harmonic`` (a prefix as in 1).

A candidate counts when ``gz sim --versions`` lists an 8.x release. :func:`looked_for` says, in one
line, what was looked for (the test tier's skip message and ``--host gazebo``'s error).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

PREFIX_VAR = "EELS_GZ_GAZEBO"
ROS_JAZZY = Path("/opt/ros/jazzy")
DEFAULT_PREFIX = Path("/opt/gz-harmonic")
MAJOR = 8  # gz-sim 8, Gazebo Harmonic: the release the plugins and the API manifest are written for
SETUP_SCRIPTS = ("setup.sh", "setup.bash")


@dataclass(frozen=True)
class GzSim:
    """An installed gz-sim: the ``gz`` command, its version, the environment that runs it and its
    Python bindings, and how it was found."""

    gz: str
    version: str
    where: str
    env: dict = field(repr=False, hash=False, compare=False)


def looked_for() -> str:
    """One line: where a gz-sim 8 was looked for."""
    return (f"looked for a gz-sim {MAJOR} (Gazebo Harmonic): ${PREFIX_VAR} (a prefix with bin/gz), `gz` on PATH "
            f"with gz.sim{MAJOR} importable, {ROS_JAZZY}, {DEFAULT_PREFIX}")


def sourced(scripts: list[Path], base: dict) -> dict | None:
    """The environment after sourcing ``scripts`` in order in bash, or None when one fails."""
    line = " && ".join(f'source "{s}"' for s in scripts)
    try:
        res = subprocess.run(["bash", "-c", f"{line} >/dev/null 2>&1 && env -0"], capture_output=True,
                             env=base, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if res.returncode != 0:
        return None
    env = {}
    for item in res.stdout.split(b"\0"):
        key, sep, value = item.decode(errors="replace").partition("=")
        if sep:
            env[key] = value
    return env


def _prepend(env: dict, var: str, *paths: Path) -> None:
    parts = [str(p) for p in paths if p.exists()] + [p for p in env.get(var, "").split(os.pathsep) if p]
    if parts:
        env[var] = os.pathsep.join(dict.fromkeys(parts))


def prefix_env(prefix: Path, base: dict | None = None) -> dict:
    """The environment of a gz prefix: its setup script sourced, else its folders on the paths."""
    base = dict(os.environ if base is None else base)
    for name in SETUP_SCRIPTS:
        if (prefix / name).is_file():
            env = sourced([prefix / name], base)
            if env is not None:
                return env
    env = dict(base)
    _prepend(env, "PATH", prefix / "bin")
    _prepend(env, "LD_LIBRARY_PATH", prefix / "lib")
    _prepend(env, "PYTHONPATH", prefix / "lib" / "python")
    _prepend(env, "GZ_CONFIG_PATH", prefix / "share" / "gz")
    return env


def gz_sim_version(gz: str, env: dict) -> str | None:
    """The gz-sim release ``gz sim --versions`` lists (the newest), or None."""
    try:
        res = subprocess.run([gz, "sim", "--versions"], capture_output=True, text=True, env=env, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    versions = re.findall(r"^\s*(\d+\.\d+\.\d+)\s*$", res.stdout, flags=re.M)
    return max(versions, key=lambda v: tuple(int(x) for x in v.split("."))) if versions else None


def _candidate(gz: str | None, env: dict, where: str) -> GzSim | None:
    if not gz:
        return None
    version = gz_sim_version(gz, env)
    if version is None or int(version.split(".")[0]) != MAJOR:
        return None
    return GzSim(gz, version, where, env)


def _bindings_importable(env: dict) -> bool:
    python = shutil.which("python3", path=env.get("PATH"))
    if python is None:
        return False
    try:
        res = subprocess.run([python, "-c", f"import gz.sim{MAJOR}"], capture_output=True, env=env, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 0


def _find() -> GzSim | None:
    prefix = os.environ.get(PREFIX_VAR)
    if prefix:
        env = prefix_env(Path(prefix))
        return _candidate(shutil.which("gz", path=env.get("PATH")) if Path(prefix, "bin", "gz").exists() else None,
                          env, f"${PREFIX_VAR}={prefix}")
    on_path = shutil.which("gz")
    if on_path and _bindings_importable(dict(os.environ)):
        found = _candidate(on_path, dict(os.environ), f"gz on PATH ({on_path})")
        if found is not None:
            return found
    if (ROS_JAZZY / "setup.bash").is_file():
        env = sourced([ROS_JAZZY / "setup.bash"], dict(os.environ))
        if env is not None:
            found = _candidate(shutil.which("gz", path=env.get("PATH")), env, str(ROS_JAZZY))
            if found is not None:
                return found
    if (DEFAULT_PREFIX / "bin" / "gz").exists():
        env = prefix_env(DEFAULT_PREFIX)
        return _candidate(shutil.which("gz", path=env.get("PATH")), env, str(DEFAULT_PREFIX))
    return None


@functools.lru_cache(maxsize=1)
def find_gz_sim() -> GzSim | None:
    """The gz-sim 8 found here (module docstring), or None. Looked up once per process."""
    return _find()
