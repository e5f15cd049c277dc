"""Rough edges a new user hits (issue 17 §4): xacro arguments, bad DEMs and heightmaps,
--save-config, a scenario's own pose, progress off a terminal, --version, run --help, the plot
title, and the README's module-count example."""

from __future__ import annotations

import json
import math
import re
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
import yaml
from faults_cli import SMALL, cli, summary
from PIL import Image

import eels_gz
from eels_gz import config, registry

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("args, message", [
    (["--set", "robot.xacro_args.n_modules=4"], "'n_modules' is set by eels_gz from robot.n_modules (--n-modules)"),
    (["--set", "robot.xacro_args.contact=screw"], "'contact' is set by eels_gz from contact.model (--contact)"),
    (["--set", "robot.xacro_args.hed=true"], "has no xacro argument 'hed'; the arguments a user may set for "
                                             "'eels_1_0_front_only' are: fts, head"),
])
def test_xacro_arguments_are_checked(tmp_path, args, message):
    res = cli("run", *SMALL, *args, "--duration", "0.01", "--out", tmp_path / "r")
    assert res.exit_code == 2 and message in res.output and "TypeError" not in res.output


def test_describe_checks_its_xacro_arguments_too():
    res = cli("describe", "--robot", "eels_1_5", "--set-arg", "n_modules=3")
    assert res.exit_code == 2 and "'n_modules' is set by eels_gz from --n-modules" in res.output
    res = cli("describe", "--robot", "eels_1_0_alternating", "--n-modules", "2", "--set-arg", "head=false")
    assert res.exit_code == 0 and "head_link" not in res.output and "module_2_shell" in res.output


def test_bad_dems_get_a_message(tmp_path):
    one = tmp_path / "one.png"
    Image.fromarray(np.zeros((1, 1), np.uint8)).save(one)
    res = cli("world", "dem", one, "--size", "10", "10", "--height-range", "1", "--out", tmp_path / "w")
    assert res.exit_code == 2 and "at least 2 x 2 posts, got shape (1, 1)" in res.output
    import tifffile

    bad = tmp_path / "bad.tif"  # a TIFF whose ModelTiepoint has 2 values instead of 6
    tifffile.imwrite(bad, np.zeros((8, 8), np.float32),
                     extratags=[(34735, "H", 8, (1, 1, 0, 1, 1024, 0, 1, 1), True),
                                (33550, "d", 3, (1.0, 1.0, 0.0), True), (33922, "d", 2, (0.0, 0.0), True)])
    res = cli("world", "dem", bad, "--out", tmp_path / "w")
    assert res.exit_code == 2 and "bad.tif: malformed geotransform tag" in res.output
    assert "IndexError" not in res.output and "Traceback" not in res.output


def test_a_heightmap_image_that_is_not_its_mesh_is_refused(tmp_path):
    res = cli("world", "dem", REPO / "examples" / "crater.png", "--size", "64", "64", "--height-range", "8",
              "--out", tmp_path)
    assert res.exit_code == 0, res.output
    image = tmp_path / "models" / "crater" / "heightmap.png"
    pixels = np.asarray(Image.open(image))
    Image.fromarray(np.ascontiguousarray(pixels[::2, ::2])).save(image)  # another resolution: half the posts
    import os

    os.environ["GZ_SIM_RESOURCE_PATH"] = str(tmp_path / "models")
    try:
        res = cli("run", *SMALL, "--world", tmp_path / "worlds" / "crater.sdf", "--duration", "0.01",
                  "--out", tmp_path / "r")
    finally:
        del os.environ["GZ_SIM_RESOURCE_PATH"]
    assert res.exit_code == 2, res.output
    assert "the heightmap image 'heightmap.png' and its mesh 'heightmap.stl' differ" in res.output
    assert "(33 x 33 posts)" in res.output


def test_save_config_writes_the_resolved_values_and_reruns_the_same(tmp_path):
    saved = tmp_path / "resolved.yaml"
    res = cli("run", *SMALL, "--scenario", "screw_spin", "--duration", "0.05", "--save-config", saved,
              "--out", tmp_path / "a")
    assert res.exit_code == 0, res.output
    cfg = yaml.safe_load(saved.read_text())
    assert cfg["contact"] == {"model": "stock", "params": "ice"}
    assert cfg["physics"]["dt"] == 0.001 and cfg["physics"]["collision_detector"] == "ode"
    assert cfg["robot"]["n_modules"] == 2 and cfg["duration"] == 0.05
    assert cfg["scenario"] == {"name": "screw_spin", "screw_rate": 3.0}
    nulls = sorted(k for k in config._flat_keys(cfg) if _get(cfg, k) is None)
    # "no medium" (stock contact), "no user URDF", "as fast as possible", "no world reset", "no soil": values,
    # not defaults
    assert nulls == ["granular.params", "robot.urdf", "ros.rate", "sim.reset_at", "soil.params"]
    assert summary(tmp_path / "a")["settings"]["config"] == cfg
    res = cli("run", "--config", saved, "--out", tmp_path / "b")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "a" / "log.mcap").read_bytes() == (tmp_path / "b" / "log.mcap").read_bytes()


def _get(cfg: dict, key: str):
    for part in key.split("."):
        cfg = cfg[part]
    return cfg


def test_hang_hangs_by_itself():
    from eels_gz.run.resolve import resolve_run
    from eels_gz.run.runner import prepare

    prep = prepare(resolve_run(config.resolve(overrides={"scenario": "hang"})))
    T = prep.sim.robot_skeleton.getBodyNode(0).getWorldTransform().matrix()
    assert T[2, 3] == pytest.approx(2.0) and T[:3, 0] == pytest.approx([0.0, 0.0, 1.0], abs=1e-9)  # tail up
    assert prep.settings["config"]["robot"]["pose"] == pytest.approx([0, 0, 2.0, 0, -math.pi / 2, 0])


def test_progress_lines_when_stderr_is_not_a_terminal(tmp_path, monkeypatch):
    res = cli("run", *SMALL, "--duration", "0.5", "--out", tmp_path / "r")
    assert res.exit_code == 0, res.output
    percents = [int(p) for p in re.findall(r"^simulating:\s+(\d+) %", res.stderr, re.M)]
    assert len(percents) >= 9 and percents[-1] == 100 and percents == sorted(percents)
    from eels_gz.cli import common as cli_common

    monkeypatch.setattr(cli_common, "PROGRESS_PERIOD", 0.0)
    lines = []
    progress = cli_common.Progress("simulating", file=type("F", (), {"write": lambda s, t: lines.append(t),
                                                                      "flush": lambda s: None})())
    progress.setup(1.25)
    assert "setting up the scenario (placement): 1.25 s simulated" in "".join(lines)


def test_version_and_help():
    res = cli("--version")
    assert res.exit_code == 0 and res.output.strip() == f"eels-gz, version {version('eels_gz')}"
    assert version("eels_gz") == eels_gz.__version__
    res = cli("run", "--help")
    assert res.exit_code == 0 and "see README" not in res.output
    names = set(re.findall(r"[a-z0-9_]+", res.output))
    assert set(registry.ROBOTS) | set(registry.WORLDS) | set(registry.scenarios()) <= names
    assert re.search(r"--n-modules INTEGER", res.output)


def test_the_plot_title_is_the_dashed_curve(tmp_path, monkeypatch):
    """wall_climb / moulin_descent: the title's drift is the largest 3-D displacement over the hold,
    which is the dashed curve in the panel under it (not the height change, the solid one)."""
    from eels_gz import plots
    from eels_gz.scenarios.wall_climb import WallClimb

    wc = object.__new__(WallClimb)
    wc.t = [0.0, 1.0, 2.0, 3.0]
    wc.p0 = np.zeros(3)
    wc.p = [np.zeros(3), np.array([0.003, 0.004, 0.0]), np.array([0.0, 0.0, -0.001]), np.array([0, 0, 0.02])]
    wc.hold_time, wc.loads = 2.0, [0.0, 1.0, 2.0, 3.0]
    figures = []
    monkeypatch.setattr(plots.plt, "close", figures.append)
    wc.plot(tmp_path / "p.png")
    (fig,) = figures
    drift_mm = float(re.search(r"3-D drift ([0-9.]+) mm", fig._suptitle.get_text()).group(1))
    dashed = next(line for line in fig.axes[0].lines if line.get_linestyle() == "--")
    over_hold = np.asarray(dashed.get_xdata()) <= wc.hold_time
    assert drift_mm == pytest.approx(max(np.asarray(dashed.get_ydata())[over_hold]), abs=0.005) == 5.0


def test_the_docs_module_count_example_runs(tmp_path):
    text = (REPO / "docs" / "robots.md").read_text()
    assert "--set robot.xacro_args.n_modules" not in text and "any module count >= 1" not in text
    res = cli("run", "--set", "robot.n_modules=4", "--duration", "0.01", "--out", tmp_path / "r")
    assert res.exit_code == 0, res.output
    assert summary(tmp_path / "r")["settings"]["resolved"]["dofs"] == 6 + 3 * 4
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["status"] == "ok"


def test_the_cli_loads_without_the_simulation_and_terrain_stacks():
    """`eels-gz --help` (and every command before it dispatches) imports neither dartpy, numba,
    trimesh nor the terrain generators: the world group's kinds list is read when its help is shown."""
    import subprocess
    import sys

    code = ("import sys; import eels_gz.cli; "
            "print(sorted(m for m in ('dartpy', 'numba', 'trimesh', 'eels_gz.terrain.worldgen') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    result = cli("world", "primitive", "--help")
    assert result.exit_code == 0
    assert "moulin: radius=0.8" in result.output  # the kinds' parameters, from worldgen
