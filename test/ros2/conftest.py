"""The ROS 2 tier: ROS 2 Jazzy for real (colcon, `ros2 launch` on the real gz-sim server, ros_gz_bridge,
robot_state_publisher, rclpy). It runs where a ROS 2 Jazzy and a gz-sim 8 are found:

- ROS 2: ``$EELS_GZ_ROS2`` (a prefix with ``setup.bash``), ``/opt/ros/jazzy``, ``/opt/ros2-jazzy``;
- gz-sim: as the real-Gazebo tier finds it (eels_gz.gazebo.install).

Elsewhere it skips with one line saying what it looked for; ``EELS_GZ_REQUIRE_ROS2=1`` (.ci/run sets it
where ROS 2 is installed) makes that a failure. Every process gets a private ``ROS_DOMAIN_ID`` and
``GZ_PARTITION``, discovery on the local host only.

Session fixtures: ``ros_env`` (the environment with ROS 2 and gz-sim sourced), ``workspace`` (a clean
clone of this repository's HEAD built by ``colcon build`` in a temporary folder), ``plain_python`` (a
virtualenv of the ROS Python with package.xml's Python dependencies and provably without dartpy) and
``launch_env`` (what ``ros2 launch eels_gz ...`` runs with: the workspace sourced, that virtualenv's
packages, no dartpy anywhere).
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

REQUIRE_VAR = "EELS_GZ_REQUIRE_ROS2"
PREFIX_VAR = "EELS_GZ_ROS2"
ROOT = Path(__file__).resolve().parents[2]
CANDIDATES = ("/opt/ros/jazzy", "/opt/ros2-jazzy")
# package.xml's Python exec_depends, pinned as pyproject.toml pins them (dartpy is not one)
PLAIN_PACKAGES = ("numpy", "scipy", "numba", "PyYAML", "lxml", "click", "pillow", "rosbags", "trimesh", "mcap",
                  "protobuf")


HERE = Path(__file__).parent
_NOT_RUN: list[str] = []


def pytest_collection_modifyitems(config, items):
    """Without ROS 2 or gz-sim (and not required): the tier's tests are left out, said once at the end."""
    from eels_gz.gazebo.install import find_gz_sim
    from eels_gz.gazebo.install import looked_for as gz_looked_for

    mine = [i for i in items if HERE in Path(str(i.path)).parents]
    if not mine or os.environ.get(REQUIRE_VAR) == "1":
        return
    missing = [] if find_ros2() is not None else [looked_for()]
    if find_gz_sim() is None:
        missing.append(gz_looked_for())
    if not missing:
        return
    items[:] = [i for i in items if i not in mine]
    config.hook.pytest_deselected(items=mine)
    _NOT_RUN.append(f"test/ros2: {len(mine)} tests not run: {'; '.join(missing)}; none found; "
                    f"{REQUIRE_VAR}=1 makes that a failure")


def pytest_terminal_summary(terminalreporter):
    for line in _NOT_RUN:
        terminalreporter.write_line(line)


def looked_for() -> str:
    return f"looked for ROS 2 Jazzy: ${PREFIX_VAR} (a prefix with setup.bash), {', '.join(CANDIDATES)}"


def find_ros2() -> Path | None:
    given = os.environ.get(PREFIX_VAR)
    for prefix in ([given] if given else CANDIDATES):
        if prefix and (Path(prefix) / "setup.bash").is_file():
            return Path(prefix)
    return None


def sourced(scripts: list[Path], base: dict) -> dict:
    """The environment after sourcing ``scripts`` in order (bash); an error when one fails."""
    from eels_gz.gazebo.install import sourced as source

    env = source(scripts, base)
    if env is None:
        raise RuntimeError(f"sourcing {', '.join(map(str, scripts))} failed")
    return env


@pytest.fixture(scope="session")
def ros2_prefix() -> Path:
    prefix = find_ros2()
    if prefix is None:
        if os.environ.get(REQUIRE_VAR) == "1":
            pytest.fail(f"{REQUIRE_VAR}=1 and no ROS 2 found: {looked_for()}")
        pytest.skip(f"ROS 2 tier: {looked_for()}; none found")
    return prefix


@pytest.fixture(scope="session")
def ros_env(ros2_prefix) -> dict:
    from eels_gz.gazebo.install import find_gz_sim
    from eels_gz.gazebo.install import looked_for as gz_looked_for

    gz = find_gz_sim()
    if gz is None:
        if os.environ.get(REQUIRE_VAR) == "1":
            pytest.fail(f"{REQUIRE_VAR}=1, ROS 2 at {ros2_prefix} but no gz-sim: {gz_looked_for()}")
        pytest.skip(f"ROS 2 tier: ROS 2 at {ros2_prefix}, but no gz-sim: {gz_looked_for()}")
    base = {k: v for k, v in gz.env.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONHOME"))}
    base["PATH"] = os.pathsep.join(p for p in base.get("PATH", "").split(os.pathsep) if ".venv" not in p)
    base.pop("PYTHONPATH", None) if not base.get("PYTHONPATH") else None
    env = sourced([ros2_prefix / "setup.bash"], base)
    domain = random.Random(os.getpid()).randint(100, 200)
    env.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               RMW_IMPLEMENTATION=env.get("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp"),
               GZ_PARTITION=f"eels_gz_ros2_{os.getpid()}", GZ_IP="127.0.0.1", PYTHONUNBUFFERED="1")
    return env


@pytest.fixture(scope="session")
def workspace(ros_env, tmp_path_factory) -> Path:
    """A clean clone of this repository's HEAD, built by colcon (no --symlink-install): its install/."""
    colcon = shutil.which("colcon", path=ros_env.get("PATH"))
    assert colcon, f"colcon is not on the ROS 2 environment's PATH ({ros_env.get('PATH')})"
    ws = tmp_path_factory.mktemp("colcon_ws")
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(ws / "src" / "eels_gz")],
                   check=True, timeout=300)
    res = subprocess.run([colcon, "build", "--packages-select", "eels_gz"], cwd=ws, env=ros_env,
                         capture_output=True, text=True, timeout=900, check=False)
    assert res.returncode == 0, f"colcon build failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    assert (ws / "install" / "eels_gz" / "share" / "eels_gz" / "launch" / "sim.launch.py").is_file()
    return ws / "install"


def _pins() -> list[str]:
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    by_name = {d.split("==")[0].lower(): d for d in deps}
    return [by_name[p.lower()] for p in PLAIN_PACKAGES]


@pytest.fixture(scope="session")
def plain_python(ros_env) -> Path:
    """A virtualenv of the ROS 2 Python with package.xml's Python dependencies and no dartpy (kept in the
    user's cache between sessions, keyed by the pins)."""
    python = shutil.which("python3", path=ros_env.get("PATH"))
    pins = _pins()
    key = hashlib.sha256(("\n".join([python, *pins])).encode()).hexdigest()[:12]
    venv = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "eels_gz" / f"ros2-plain-{key}"
    ready = venv / ".ready"
    if not ready.exists():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)
        res = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", *pins], capture_output=True,
                             text=True, timeout=1800, check=False)
        assert res.returncode == 0, res.stderr[-3000:]
        ready.write_text("\n".join(pins))
    lacks = subprocess.run([str(venv / "bin" / "python"), "-c", "import dartpy"], capture_output=True, check=False)
    assert lacks.returncode != 0, f"{venv} imports dartpy"
    return venv


def site_packages(venv: Path) -> Path:
    (found,) = venv.glob("lib/python3*/site-packages")
    return found


@pytest.fixture(scope="session")
def launch_env(ros_env, workspace, plain_python) -> dict:
    """``ros2 launch`` with the workspace sourced, package.xml's Python packages from ``plain_python``
    and no dartpy importable (checked)."""
    env = sourced([workspace / "setup.bash"], ros_env)
    paths = [*env.get("PYTHONPATH", "").split(os.pathsep), str(site_packages(plain_python))]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    python = shutil.which("python3", path=env.get("PATH"))
    probe = subprocess.run([python, "-c", "import eels_gz, numpy, lxml, rclpy, launch; import dartpy"],
                           capture_output=True, text=True, env=env, check=False)
    assert probe.returncode != 0 and "dartpy" in probe.stderr, probe.stderr
    return env
