"""The replay HTML in a real browser: Debian's headless Chromium loads the
file from disk (no server, no network) and its screenshot shows the robot
where the run's ground truth puts it, at two times, in both layouts, with
nothing written to the console as an error.

The run: a 2-module EELS dropped from 1 m onto the ice plane (it lands
after sqrt(2 x 0.91 m / g) = 0.43 s), seen from the side by a fixed camera,
so between t = 0.05 s and t = 0.6 s the robot moves 0.9 m down the screen.
"""

from __future__ import annotations

import io
import json
import os

import numpy as np
import pytest
from click.testing import CliRunner
from mcap.reader import make_reader
from PIL import Image
from scipy.spatial.transform import Rotation

from eels_gz.cli import main
from eels_gz.ros.messages import typestore
from eels_gz.viewer.browser import chromium_path, screenshot

WIDTH, HEIGHT = 800, 500
EYE, TARGET, FOV = np.array([0.45, -3.0, 0.6]), np.array([0.45, 0.0, 0.5]), 40.0  # m, m, deg (vertical)
TIMES = (0.05, 0.6)
TAIL_CENTRE = np.array([0.1, 0.0, 0.0])  # base_link's visual: a cylinder from x = 0 to 0.2 m in its frame
WINDOW = 3  # px either side of the projected point; the tail's radius 0.07 m is about 19 px here


def _chromium() -> str:
    path = chromium_path()
    if path is None:
        if os.geteuid() == 0:
            pytest.fail("Chromium is missing although this machine can install it: run `make sysdeps` "
                        "(the Makefile's SYSDEPS installs Debian's chromium)")
        pytest.skip("Chromium is not installed and cannot be installed here: installing Debian's chromium needs "
                    "root (make sysdeps); set CHROMIUM to a binary to run these tests")
    return path


@pytest.fixture(scope="module")
def dropped(tmp_path_factory):
    _chromium()
    out = tmp_path_factory.mktemp("drop")
    res = CliRunner().invoke(main, ["run", "--robot", "eels_1_0_front_only", "--n-modules", "2", "--world",
                                    "ice_plane", "--duration", "0.6", "--out", str(out), "--set",
                                    "robot.pose=[0, 0, 1.0, 0, 0, 0]", "--set", "log.plot=false"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["view", str(out)])
    assert res.exit_code == 0, res.output
    return out


def _ground_truth(run_dir, t: float) -> np.ndarray:
    """World position of the tail cylinder's centre at the logged sample nearest t, from /ground_truth/odom."""
    best = None
    with open(run_dir / "log.mcap", "rb") as f:
        for schema, _, message in make_reader(f).iter_messages(topics=["/ground_truth/odom"]):
            if best is None or abs(message.log_time * 1e-9 - t) < abs(best[0] - t):
                best = (message.log_time * 1e-9, typestore().deserialize_cdr(message.data, schema.name))
    p, q = best[1].pose.pose.position, best[1].pose.pose.orientation
    return np.array([p.x, p.y, p.z]) + Rotation.from_quat([q.x, q.y, q.z, q.w]).apply(TAIL_CENTRE)


def _project(point: np.ndarray, width: int, height: int) -> tuple[int, int]:
    """Pixel of a world point for a perspective camera at EYE looking at TARGET, z up (three.js's lookAt)."""
    f = (TARGET - EYE) / np.linalg.norm(TARGET - EYE)
    r = np.cross(f, [0.0, 0.0, 1.0])
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    d = point - EYE
    x, y, z = d @ r, d @ u, d @ f
    t = np.tan(np.radians(FOV) / 2)
    ndc = np.array([x / (z * t * width / height), y / (z * t)])
    return int(round((ndc[0] + 1) / 2 * width)), int(round((1 - ndc[1]) / 2 * height))


def _orange(px: np.ndarray) -> np.ndarray:
    r, g, b = (px[..., k].astype(int) for k in range(3))
    return (r > 60) & (r > 1.4 * g) & (r > 2.5 * b + 10)


def _purple(px: np.ndarray) -> np.ndarray:
    r, g, b = (px[..., k].astype(int) for k in range(3))
    return (b > 60) & (b > g + 40) & (r > g + 25)


def _share(img: np.ndarray, u: int, v: int, test) -> float:
    return float(test(img[v - WINDOW:v + WINDOW + 1, u - WINDOW:u + WINDOW + 1]).mean())


def _shot(html, t: float, width: int = WIDTH):
    cam = ",".join(f"{v:g}" for v in (*EYE, *TARGET))
    res = screenshot(html, f"t={t}&cam={cam}&fov={FOV:g}&hud=0", width=width, height=HEIGHT)
    assert res.errors == [], res.errors
    assert res.state["time"] == pytest.approx(t)
    return np.asarray(Image.open(io.BytesIO(res.png)).convert("RGB"))


def test_the_robot_is_where_ground_truth_puts_it_at_two_times(dropped):
    html = dropped / "replay.html"
    images = {t: _shot(html, t) for t in TIMES}
    points = {t: _project(_ground_truth(dropped, t), WIDTH, HEIGHT) for t in TIMES}
    assert abs(points[TIMES[0]][1] - points[TIMES[1]][1]) > 100  # the drop moves it far down the screen
    for t in TIMES:
        for s in TIMES:
            share = _share(images[t], *points[s], _orange)
            if s == t:
                assert share > 0.8, f"t={t}: the robot's colour is not at its ground-truth pixel {points[s]}"
            else:
                assert share < 0.1, f"t={t}: the robot is still drawn where it was at t={s}"


def test_side_by_side_shows_each_run_in_its_half(dropped, tmp_path):
    out = tmp_path / "side.html"
    res = CliRunner().invoke(main, ["view", str(dropped), str(dropped), "--layout", "side", "--label", "a",
                                    "--label", "b", "--out", str(out)])
    assert res.exit_code == 0, res.output
    t = TIMES[1]
    img = _shot(out, t, width=2 * WIDTH)
    u, v = _project(_ground_truth(dropped, t), WIDTH, HEIGHT)  # each half is WIDTH x HEIGHT with the same camera
    assert _share(img, u, v, _orange) > 0.8 and _share(img, u, v, _purple) < 0.1
    assert _share(img, u + WIDTH, v, _purple) > 0.8 and _share(img, u + WIDTH, v, _orange) < 0.1


def test_it_plays_from_the_start_and_the_page_needs_no_network(dropped):
    html = (dropped / "replay.html").read_text()
    # self-contained: no script, style or model is fetched from anywhere
    assert "src=" not in html and "href=" not in html and "import(" not in html.split('id="replay-data"')[1]
    res = screenshot(dropped / "replay.html", "hud=1", width=WIDTH, height=HEIGHT, settle_frames=10)
    assert res.errors == []
    assert 0.0 < res.state["time"] <= 0.6 + 1e-6  # playing: the clock has moved on from t0 = 0 s (float32 end)
    data = json.loads(html.split('id="replay-data">', 1)[1].split("</script>", 1)[0])
    assert [r["label"] for r in data["runs"]] == [dropped.name]
