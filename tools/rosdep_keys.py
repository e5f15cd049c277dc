#!/usr/bin/env python3
"""Record which of ``package.xml``'s dependency keys exist in ros/rosdistro,
into ``test/ros/rosdep_keys.json``, so the dependency test runs offline.

A key is a system dependency (``rosdep/python.yaml`` or ``rosdep/base.yaml``,
with the platforms it resolves on) or a ROS package released in
``jazzy/distribution.yaml``. ``MODULES`` maps each third-party Python module
the plugins and the Gazebo launch import to its key (the test fails on a
module missing here).

Usage (SRC: a clone of github.com/ros/rosdistro, bare or not)::

    python tools/rosdep_keys.py --src SRC [--out FILE] [--check]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import yaml

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "test" / "ros" / "rosdep_keys.json"
# third-party Python module -> rosdep key (python.yaml's names)
MODULES = {
    "numpy": "python3-numpy",
    "scipy": "python3-scipy",
    "numba": "python3-numba",
    "yaml": "python3-yaml",
    "lxml": "python3-lxml",
    "click": "python3-click",
    "rosbags": "python3-rosbags-pip",
    "PIL": "python3-pil",
    "trimesh": "python3-trimesh-pip",
    "xacro": "xacro",
    "launch": "launch",
    "launch_ros": "launch_ros",
    "rclpy": "rclpy",
    # gz-sim's Python bindings: Jazzy's vendor packages (gz_sim_vendor enables them from 0.0.13)
    "gz": "gz_sim_vendor",
    "sdformat": "sdformat_vendor",
    # the protobuf runtime gz.msgs10's *_pb2 modules import (the plugins' messages under Gazebo)
    "google": "python3-protobuf",
}


def _show(src: Path, rel: str) -> str:
    return subprocess.run(["git", "-C", str(src), "show", f"HEAD:{rel}"], check=True, capture_output=True,
                          text=True).stdout


def package_keys() -> list[str]:
    """Every dependency key of package.xml (build, exec, test)."""
    root = ElementTree.parse(REPO / "package.xml").getroot()
    return sorted({el.text.strip() for el in root if el.tag.endswith("depend")})


def record(src: Path) -> dict:
    commit = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    rules = {name: yaml.safe_load(_show(src, f"rosdep/{name}.yaml")) for name in ("python", "base")}
    released = {pkg for repo in yaml.safe_load(_show(src, "jazzy/distribution.yaml"))["repositories"].values()
                for pkg in (repo.get("release") or {}).get("packages") or []}
    released |= {name for name, repo in yaml.safe_load(_show(src, "jazzy/distribution.yaml"))["repositories"].items()
                 if (repo.get("release") or {}).get("version") and not (repo.get("release") or {}).get("packages")}
    keys = {}
    for key in sorted(set(package_keys()) | set(MODULES.values())):
        for name, table in rules.items():
            if key in table:
                keys[key] = {"source": f"rosdep/{name}.yaml", "platforms": sorted(table[key])}
                break
        else:
            keys[key] = {"source": "jazzy/distribution.yaml"} if key in released else None
    return {"rosdistro": {"repository": "https://github.com/ros/rosdistro", "commit": commit},
            "modules": MODULES, "keys": keys}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    text = json.dumps(record(args.src), indent=1, sort_keys=True) + "\n"
    if args.check:
        same = args.out.is_file() and args.out.read_text() == text
        print("up to date" if same else f"{args.out} differs from {args.src}")
        return 0 if same else 1
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
