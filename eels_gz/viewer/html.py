"""One self-contained HTML file that replays runs in 3D: three.js (vendored
from npm into ``vendor/three.min.js``), the replay script ``app.js`` and the
runs' data (base64 float32 arrays in a JSON block) are all inline, so the
file opens from disk with no server and no network.
"""

from __future__ import annotations

import base64
import html
import json
import re
from importlib import resources
from pathlib import Path

import numpy as np

from eels_gz.viewer.replay import Run

PALETTE = ("#ff7f0e", "#b05fd6", "#2ca02c", "#e0c000")  # run colours; the terrain is pale blue
LAYOUTS = ("overlay", "side")

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="eels_gz {version}, three.js r{three_rev}">
<title>{title}</title>
<style>
html, body {{ margin: 0; height: 100%; background: #20242a; color: #e8e8e8; font: 14px sans-serif; overflow: hidden; }}
#view {{ position: absolute; inset: 0; }}
#view canvas {{ display: block; width: 100%; height: 100%; }}
#hud {{ position: absolute; left: 0; right: 0; bottom: 0; padding: 8px 12px; display: flex; gap: 12px;
        align-items: center; background: rgba(20, 22, 26, 0.8); }}
#slider {{ flex: 1; }}
#title {{ position: absolute; left: 8px; top: 8px; padding: 6px 10px; background: rgba(20, 22, 26, 0.8); }}
button {{ min-width: 5em; }}
</style>
</head>
<body>
<div id="view"></div>
<div id="title">{title}<br><span id="legend"></span></div>
<div id="hud">
  <button id="play">play</button>
  <input id="slider" type="range" min="0" max="1000" value="0" aria-label="time">
  <span id="time"></span>
  <label><input id="forces" type="checkbox"> screw contact forces</label>
</div>
<script>{three_js}</script>
<script type="application/json" id="replay-data">{data}</script>
<script>{app}</script>
</body>
</html>
"""


def _b64(array) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype="<f4").tobytes()).decode()


def _b64_int(array) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype="<i4").tobytes()).decode()


def scene_origin(runs: list[Run]) -> np.ndarray:
    """The world point (m) the page's coordinates are relative to: the first run's start rounded as a
    terrain model's local origin is (eels_gz.terrain.writers.local_origin), zero near the world origin.
    WebGL holds float32, in 0.25-0.5 m steps at a UTM northing of 4.1e6 m; relative to this origin a
    georeferenced run keeps the precision of one at the origin."""
    from eels_gz.terrain.writers import ORIGIN_GRID

    start = np.asarray(runs[0].trail[0], dtype=float) if len(runs[0].trail) else np.zeros(3)
    return np.round(start / ORIGIN_GRID) * ORIGIN_GRID


def _run_data(run: Run, color: str, origin: np.ndarray | None = None) -> dict:
    o = np.zeros(3) if origin is None else np.asarray(origin, dtype=float)
    index = {name: i for i, name in enumerate(run.links)}
    visuals = []
    for v in run.visuals:
        entry = {"link": index[v.link], "kind": v.kind, "size": list(v.size),
                 "matrix": np.asarray(v.T_link, dtype=float).T.reshape(-1).tolist(),  # column-major
                 "rgba": list(v.rgba) if v.rgba else None, "screw": "screw" in v.link}
        if v.triangles is not None:
            entry["triangles"] = _b64(v.triangles.reshape(-1))
        visuals.append(entry)
    out = {
        "label": run.label, "color": color, "links": run.links, "visuals": visuals,
        "times": _b64(run.times), "pos": _b64((np.asarray(run.positions, dtype=float) - o).reshape(-1)),
        "quat": _b64(run.quaternions.reshape(-1)), "trail": _b64((np.asarray(run.trail, dtype=float) - o).reshape(-1)),
        "terrain": [{"triangles": _b64((np.asarray(tri, dtype=float) - o).reshape(-1)), "rgba": list(rgba),
                     "zmin": float(tri[..., 2].min() - o[2])} for tri, rgba in run.terrain],
    }
    if run.forces:
        counts = np.array([len(f) for f in run.forces])
        out["force_index"] = _b64_int(np.r_[0, np.cumsum(counts)])
        flat = (np.concatenate([(np.asarray(f, dtype=float) - o).reshape(-1) for f in run.forces])
                if counts.sum() else np.zeros(0))
        out["forces"] = _b64(flat)
    return out


def _enclosed(runs: list[Run]) -> bool:
    """True when the terrain surrounds the robot (a tube, a moulin): then it is drawn see-through."""
    if not runs[0].terrain:
        return False
    tris = np.concatenate([t.reshape(-1, 3) for t, _ in runs[0].terrain])
    lo, hi = tris.min(axis=0), tris.max(axis=0)
    start = runs[0].trail[0]
    # terrain above the robot's start as well as below it, around it in x and y
    return bool(np.all(start > lo) and np.all(start < hi) and hi[2] - start[2] > 0.05)


def _asset(name: str) -> str:
    return resources.files("eels_gz.viewer").joinpath(name).read_text(encoding="utf-8")


def replay_html(runs: list[Run], title: str = "", layout: str = "overlay") -> str:
    """The HTML page replaying ``runs`` (overlaid in one scene, or side by side with one camera)."""
    from eels_gz import __version__
    from eels_gz.errors import ConfigError

    if layout not in LAYOUTS:
        raise ConfigError(f"replay layout must be one of {', '.join(LAYOUTS)}, got '{layout}'")
    if not runs:
        raise ConfigError("a replay needs at least one run")
    origin = scene_origin(runs)
    data = {"layout": layout, "enclosed": _enclosed(runs), "origin": origin.tolist(),  # the scene's (0, 0, 0), m
            "runs": [_run_data(r, PALETTE[i % len(PALETTE)], origin) for i, r in enumerate(runs)]}
    # JSON inside <script>: "</" must not appear literally
    text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    three = _asset("vendor/three.min.js")
    title = title or " vs ".join(r.label for r in runs)
    return _PAGE.format(version=__version__, three_rev=_three_revision(three), three_js=three,
                        title=html.escape(title), data=text, app=_asset("app.js"))


def _three_revision(bundle: str) -> str:
    """The three.js revision the vendored bundle declares (its licence header is followed by ``REVISION``)."""
    m = re.search(r'SPDX-License-Identifier: MIT\s*\*/var \w+="(\d+)"', bundle)
    return m.group(1) if m else "?"


def write_replay(runs: list[Run], out: str | Path, title: str = "", layout: str = "overlay",
                 overwrite: bool = False) -> Path:
    """Write the replay page of ``runs`` to ``out``; an existing file is replaced only with ``overwrite``
    and only if it is a replay page eels-gz wrote (:class:`eels_gz.outputs.OutputFile`)."""
    from eels_gz.outputs import OutputFile

    with OutputFile(out, overwrite=overwrite, own="replay", what="replay page") as target:
        return target.write_text(replay_html(runs, title, layout))
