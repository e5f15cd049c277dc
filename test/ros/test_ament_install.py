"""The share folder resolves in every install: a checkout, a pip wheel, and an
ament install (``colcon build`` without ``--symlink-install``).

The ament install is laid out as CMakeLists.txt's rules and ament_cmake_python's
``ament_python_install_package`` (jazzy) do it: the package's folder copied to
``<prefix>/<purelib>/eels_gz`` without ``*.pyc``/``__pycache__``, where purelib
is what ament_cmake_python-extras.cmake computes (``sysconfig`` with ``base``
= the prefix, scheme ``posix_prefix``); each ``install(DIRECTORY ...)`` folder
to ``<prefix>/share/eels_gz``; ``ament_package()``'s index marker
``share/ament_index/resource_index/packages/eels_gz``. It is then run by an
interpreter started with ``-S`` (no site: not the venv's editable finder
that points at a checkout) whose ``sys.path`` holds only the prefix's
site-packages and the venv's third-party packages; the subprocess checks that
nothing of a checkout is reachable before it runs the CLI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import tomllib
from pathlib import Path

import pytest

from eels_gz import paths

REPO = Path(__file__).resolve().parents[2]


def _install_dirs() -> list[str]:
    """The folders CMakeLists.txt installs to share/eels_gz."""
    text = (REPO / "CMakeLists.txt").read_text()
    (rule,) = re.findall(r"install\(\s*DIRECTORY ([\w ]+?)\s+DESTINATION share/\$\{PROJECT_NAME\}\s*\)", text)
    return rule.split()


def _copy(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.pyc", "__pycache__"))


def _ament_prefix(root: Path) -> tuple[Path, Path]:
    """An ament install of the package under ``root``: (prefix, its site-packages)."""
    prefix = root / "install" / "eels_gz"
    purelib = Path(sysconfig.get_path("purelib", "posix_prefix", vars={"base": str(prefix)}))
    _copy(REPO / "eels_gz", purelib / "eels_gz")
    for folder in _install_dirs():
        _copy(REPO / folder, prefix / "share" / "eels_gz" / folder)
    marker = prefix.joinpath(*paths.AMENT_MARKER)
    marker.parent.mkdir(parents=True)
    marker.write_text("")
    return prefix, purelib


def _third_party_site() -> list[str]:
    """The venv's site-packages (third-party packages only: the editable finder's .pth is not read under -S)."""
    return [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]


PROBE = """
    import json, os, sys
    import eels_gz, eels_gz.paths
    here = os.path.realpath(eels_gz.__file__)
    assert here.startswith({prefix!r}), here
    assert not any(os.path.isdir(os.path.join(p, "eels_gz")) and not os.path.realpath(p).startswith({prefix!r})
                   for p in sys.path if p), sys.path
    assert not os.path.isdir(os.path.join(sys.prefix, "share", "eels_gz")), sys.prefix
    print(json.dumps({{"share": str(eels_gz.paths.share_dir())}}))
    from eels_gz.cli import main
    sys.argv = ["eels-gz"] + {argv!r}
    main()
"""


def _run(prefix: Path, purelib: Path, argv: list[str], env_extra: dict, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EELS_GZ_SHARE", "AMENT_PREFIX_PATH")}
    env.update(env_extra)
    env["PYTHONPATH"] = os.pathsep.join([str(purelib)] + _third_party_site())
    code = textwrap.dedent(PROBE.format(prefix=str(prefix.resolve()), argv=argv))
    return subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=900)


@pytest.mark.parametrize("ament_prefix_path", [False, True], ids=["relative_to_package", "AMENT_PREFIX_PATH"])
def test_ament_install_describes_and_runs(tmp_path, ament_prefix_path):
    prefix, purelib = _ament_prefix(tmp_path)
    env = {"AMENT_PREFIX_PATH": str(prefix)} if ament_prefix_path else {}
    out = _run(prefix, purelib, ["describe", "--robot", "archimede"], env, tmp_path)
    assert out.returncode == 0, out.stderr
    first, urdf = out.stdout.split("\n", 1)
    assert json.loads(first)["share"] == str(prefix / "share" / "eels_gz")
    assert "<robot" in urdf and 'name="archimede"' in urdf
    if ament_prefix_path:
        return  # one short run is enough: both find the same folder
    run = tmp_path / "run"
    out = _run(prefix, purelib, ["run", "--robot", "eels_1_0_front_only", "--world", "ice_plane", "--contact",
                                 "stock", "--duration", "0.02", "--out", str(run)], env, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "ok", summary
    assert summary["sim_time"] == pytest.approx(0.02)
    # eels-gz export from the install: the world, the robot's systems and the files they read come
    # from the prefix's share folder, none from the checkout
    export = tmp_path / "export"
    out = _run(prefix, purelib, ["export", "--scenario", "screw_spin", "--out", str(export)], env, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads((export / "export.json").read_text())
    share = str(prefix.resolve() / "share" / "eels_gz")
    assert result["world"].startswith(share), result["world"]
    assert "screw_spin" in result["python_systems"]
    assert str(REPO) not in (export / "world.sdf").read_text() + (export / "eels_1_0_front_only.urdf").read_text()


def test_ament_prefix_path_finds_the_share_of_a_package_installed_elsewhere(tmp_path):
    """A package folder with no share above it (e.g. a relocated site-packages): AMENT_PREFIX_PATH's
    prefix that lists the package in its ament index wins over sys.prefix; one without the marker is skipped."""
    prefix, _ = _ament_prefix(tmp_path / "ws")
    other = tmp_path / "other"
    (other / "share" / "eels_gz").mkdir(parents=True)  # no index marker: not this package's prefix
    package_dir = tmp_path / "elsewhere" / "site-packages" / "eels_gz"
    found = paths.share_candidates(package_dir, {"AMENT_PREFIX_PATH": f"{other}{os.pathsep}{prefix}"},
                                   prefix=str(tmp_path / "sys_prefix"))
    hits = [c for c in found if paths._looks_like_share(c)]
    assert hits[0] == prefix / "share" / "eels_gz"
    assert other / "share" / "eels_gz" not in found


def test_wheel_data_files_cover_the_cmake_install(tmp_path):
    """Every file CMakeLists.txt installs to share/eels_gz is a data file of the wheel, at the same path."""
    spec = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    shipped = {f"{dest}/{Path(f).name}" for dest, globs in spec.items() for pattern in globs
               for f in map(str, REPO.glob(pattern))}
    tracked = subprocess.run(["git", "-C", str(REPO), "ls-files", *_install_dirs()], capture_output=True,
                             text=True, check=True).stdout.split()
    assert tracked
    assert sorted(f for f in tracked if f"share/eels_gz/{f}" not in shipped) == []
