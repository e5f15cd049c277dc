"""The replay file without a browser: what load_run reads from a log, what the HTML embeds, the vendored
three.js, and the errors of `eels-gz view` on bad input."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from eels_gz.cli import main
from eels_gz.errors import ConfigError
import eels_gz.viewer
from eels_gz.viewer import load_run, write_replay
from eels_gz.viewer.html import replay_html

VENDOR = Path(eels_gz.viewer.__file__).parent / "vendor"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    res = CliRunner().invoke(main, ["run", "--robot", "eels_1_0_front_only", "--n-modules", "2", "--duration", "0.3",
                                    "--contact", "screw", "--out", str(out), "--set", "log.plot=false"])
    assert res.exit_code == 0, res.output
    return out


def _floats(b64: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(b64), dtype="<f4")


def _data(html: str) -> dict:
    return json.loads(html.split('id="replay-data">', 1)[1].split("</script>", 1)[0])


def test_vendored_three_is_the_pinned_npm_release():
    pinned = json.loads((VENDOR / "package.json").read_text())["dependencies"]["three"]
    lock = json.loads((VENDOR / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/three"]["version"] == pinned
    bundle = (VENDOR / "three.min.js").read_text()
    # three.js declares REVISION "187" for 0.187.0, right after its licence header
    revision = re.search(r'SPDX-License-Identifier: MIT\s*\*/var \w+="(\d+)"', bundle).group(1)
    assert pinned == f"0.{revision}.0"
    assert bundle.startswith("var THREE=") and "OrbitControls" in bundle
    assert "The MIT License" in (VENDOR / "LICENSE.three").read_text()


def test_load_run_reads_links_trail_forces_and_terrain_from_the_log(run_dir):
    run = load_run(run_dir, max_fps=0)  # every logged sample
    summary = json.loads((run_dir / "summary.json").read_text())
    assert len(run.times) == 31 and run.times[-1] == pytest.approx(0.3)
    # the trail is the root link's origin: its last point is the run's final base position
    assert np.allclose(run.trail[-1], summary["final_base_pose"]["position"], atol=1e-6)
    assert run.links[0] == "base_link" and np.allclose(run.positions[-1, 0], run.trail[-1])
    assert {v.kind for v in run.visuals} == {"cylinder"} and len(run.visuals) == len(run.links)
    assert len(run.forces) == len(run.times) and max(len(f) for f in run.forces) == 2  # two screws on the ice
    (tri, rgba), = run.terrain
    assert tri.shape == (2, 3, 3) and rgba == pytest.approx((0.8, 0.9, 1.0, 1.0))
    assert np.allclose(load_run(run_dir, max_fps=30).times, [*np.arange(0, 0.29, 0.04), 0.3])  # 25 fps, and the end


def test_html_is_self_contained_and_embeds_the_poses(run_dir, tmp_path):
    run = load_run(run_dir)
    out = write_replay([run, load_run(run_dir, "again")], tmp_path / "r.html", layout="side")
    html = out.read_text()
    assert '<meta name="generator" content="eels_gz 0.1.0, three.js r187">' in html
    for ref in ("src=", "href=", "http://", "https://"):
        assert ref not in html.split("<script>", 1)[0], ref  # nothing fetched by the page itself
    data = _data(html)
    assert data["layout"] == "side" and [r["label"] for r in data["runs"]] == [run_dir.name, "again"]
    first = data["runs"][0]
    pos = _floats(first["pos"]).reshape(len(run.times), len(run.links), 3)
    assert np.array_equal(pos, run.positions.astype(np.float32))  # near the origin: the scene origin is 0
    assert np.array_equal(_floats(first["times"]), run.times.astype(np.float32))
    assert len(np.frombuffer(base64.b64decode(first["force_index"]), "<i4")) == len(run.times) + 1


def test_view_errors_name_the_problem(run_dir, tmp_path):
    res = CliRunner().invoke(main, ["view", str(tmp_path)])
    assert res.exit_code == 2 and "no log.mcap" in res.output
    (tmp_path / "log.mcap").write_bytes(b"not an mcap file")
    res = CliRunner().invoke(main, ["view", str(tmp_path)])
    assert res.exit_code == 2 and "cannot read the log" in res.output and str(tmp_path) in res.output
    res = CliRunner().invoke(main, ["view", str(run_dir), "--label", "a", "--label", "b"])
    assert res.exit_code == 2 and "--label given 2 times for 1 runs" in res.output
    with pytest.raises(ConfigError, match="layout must be one of overlay, side"):
        replay_html([load_run(run_dir)], layout="stacked")
