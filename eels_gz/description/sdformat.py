"""URDF -> SDF through real libsdformat (``ign sdf -p``), as Gazebo does it.

libsdformat lumps fixed joints into their parent link and silently drops
massless links; sensors on lumped links move to the parent with composed
poses. Force-torque joints are kept with ``<preserveFixedJoint>`` (written by
urdf/*.gazebo.xacro); :func:`urdf_to_sdf` checks afterwards that every
declared sensor and every preserved joint made it through.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from lxml import etree

from eels_gz.errors import DescriptionError

SYSTEM_PACKAGES = "ignition-tools libsdformat12-12 libsdformat-dev sdformat-sdf ruby"


def ign_executable() -> str:
    exe = shutil.which("ign")
    if exe is None:
        raise DescriptionError(f"libsdformat's `ign` tool is not installed; install the Debian packages {SYSTEM_PACKAGES}")
    return exe


def urdf_to_sdf(urdf: str, source: str) -> str:
    """Convert a full URDF (with its ``<gazebo>`` blocks) to SDF text."""
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "robot.urdf"
        f.write_text(urdf)
        res = subprocess.run([ign_executable(), "sdf", "-p", str(f)], capture_output=True, text=True, timeout=120)
    if res.returncode != 0 or "<sdf" not in res.stdout:
        detail = "\n".join(line for line in (res.stdout + res.stderr).splitlines() if "Library error" not in line)
        raise DescriptionError(f"{source}: libsdformat could not convert the URDF to SDF:\n{detail.strip()}")
    sdf = res.stdout[res.stdout.index("<sdf"):]
    _check_survivors(urdf, sdf, source)
    return sdf


def _check_survivors(urdf: str, sdf: str, source: str) -> None:
    robot = etree.fromstring(urdf.encode())
    out = etree.fromstring(sdf.encode())
    sensors = {s.get("name") for s in robot.iter("sensor")}
    kept = {s.get("name") for s in out.iter("sensor")}
    joints = {g.get("reference") for g in robot.iter("gazebo")
              if (g.findtext("preserveFixedJoint") or "").strip() == "true"}
    sdf_joints = {j.get("name") for j in out.iter("joint")}
    lost = sorted(sensors - kept) + sorted(f"joint {j}" for j in joints - sdf_joints)
    if lost:
        raise DescriptionError(f"{source}: the URDF->SDF conversion dropped {', '.join(lost)} "
                               "(a sensor on a massless link, or a preserved joint to a massless link)")
