"""``eels-gz calibrate simulate``: the drag tests of EELS-DARTS Fig. 6/7 in
the embedded host, so that ``calibrate friction`` can be checked end to end.
Each drag is a run of the scenario ``drag_rig`` (config/scenarios/drag_rig.yaml,
its system plugins_py/drag_rig.py) through :func:`eels_gz.run.runner.run`.

One screw (urdf/drag_rig.urdf.xacro) rests on ``ice_plane`` under a load
mass on a free vertical slide, its spin held at zero. After it settles, the
x-y carriages drag it at constant speed along the thread tangent at the
contact line ("parallel") or across it ("perpendicular"); see
eels_gz/contact/calibration.py for the directions. Each drag gives one CSV row:
the screw's total normal force (the plugin's, averaged over the window) and
the friction force against the motion.

The regulator scales friction by v / sqrt(v^2 + v_eps^2); the default speed
of 20 v_eps makes that 0.99875, and it is not corrected (it is what a drag at
that speed measures).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from eels_gz import registry
from eels_gz.contact.calibration import DragSamples
from eels_gz.contact.params import load_contact_params
from eels_gz.errors import CalibrationError, RunInterrupted
from eels_gz.interrupt import interrupts

log = logging.getLogger(__name__)
SETTLE = 0.3  # s at rest before dragging
DRAG = 0.4  # s of dragging; the last half is averaged


def drag_directions(lead_angle: float, handedness: int) -> dict[str, np.ndarray]:
    """World-frame unit drag directions for a screw along +x lying on flat
    ground: the thread tangent and the across-thread direction at its contact line."""
    h, a = float(handedness), float(lead_angle)
    return {"parallel": np.array([h * np.sin(a), np.cos(a), 0.0]),
            "perpendicular": np.array([np.cos(a), -h * np.sin(a), 0.0])}


def drag_config(variant: str, params: str, load_mass: float, direction: str, speed: float) -> dict:
    """The ``eels-gz run`` configuration of one drag: scenario drag_rig on the rig of ``variant`` under
    ``load_mass`` kg, dragged at ``speed`` m/s along the ``direction`` of its thread, its screw resting
    on the ice (the rig's origin on the ground: urdf/drag_rig.urdf.xacro); no log or plots."""
    from eels_gz import config

    record = registry.eels_variants()[variant]
    if not record.get("screws") or not record.get("screw"):
        raise CalibrationError(f"variant '{variant}' has no screws to drag")
    screw = record["screw"]
    d = drag_directions(screw["lead_angle"], screw["handedness"])[direction]
    cfg = config.resolve()
    items = {"robot.name": "drag_rig", "robot.pose": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
             "robot.optimize": False,
             "robot.xacro_args": {"eels_variant": variant, "load_mass": repr(float(load_mass))}, "contact.params": params,
             "scenario.name": "drag_rig", "scenario.speed": float(speed), "scenario.settle": SETTLE,
             "scenario.drag": DRAG, "scenario.dir_x": float(d[0]), "scenario.dir_y": float(d[1]),
             "scenario.direction": float(("parallel", "perpendicular").index(direction)),
             "log.mcap": False, "log.plot": False}
    for key, value in items.items():
        config.set_key(cfg, key, value, "calibrate simulate")
    return cfg


def _drag_once(variant: str, params: str, load_mass: float, direction: str, speed: float,
               stop=None) -> tuple[float, float]:
    """One drag, a run of the scenario drag_rig (in a temporary folder): (mean normal force, mean drag
    force), N. ``stop``: unused (the run stops on a signal itself and raises RunInterrupted)."""
    import json
    import tempfile
    from pathlib import Path

    from eels_gz.run.runner import run

    cfg = drag_config(variant, params, load_mass, direction, speed)
    with tempfile.TemporaryDirectory(prefix="eels_gz_drag_") as tmp:
        run(cfg, Path(tmp))
        metrics = json.loads((Path(tmp) / "metrics.json").read_text())
    normal, drag, low = metrics["normal_force_N"], metrics["drag_force_N"], metrics["min_normal_force_N"]
    if normal is None or low is None or low <= 0.0:
        raise CalibrationError(f"drag rig ({variant}, load {load_mass} kg, {direction}): the screw lost contact")
    return float(normal), float(drag)


def simulate_drags(variant: str = "eels_1_0_front_only", params: str = "ice",
                   load_masses: Sequence[float] = (2.0, 5.0, 10.0, 15.0, 20.0),
                   speed_factor: float = 20.0) -> DragSamples:
    """One parallel and one perpendicular drag per load mass (kg) on the
    variant's screw, at ``speed_factor`` times the contact's v_eps.

    SIGINT or SIGTERM stops it after the step in progress: the RunInterrupted
    raised carries the drags completed so far in ``partial`` (DragSamples, or
    None if there are none)."""
    if variant not in registry.eels_variants():
        raise CalibrationError(f"unknown EELS variant '{variant}'; expected one of: "
                               f"{', '.join(sorted(registry.eels_variants()))}")
    masses = np.asarray(load_masses, dtype=float)
    if masses.ndim != 1 or masses.size < 2 or np.any(~np.isfinite(masses)) or np.any(masses < 0):
        raise CalibrationError(f"calibrate simulate: give at least two load masses >= 0 kg, got {list(load_masses)}")
    if not speed_factor > 0:
        raise CalibrationError(f"calibrate simulate: speed factor must be > 0, got {speed_factor}")
    speed = speed_factor * load_contact_params(params).v_eps
    rows = []
    where = f"<calibrate simulate {variant}, {params}>"
    with interrupts() as stop:
        for m in masses:
            for direction in ("parallel", "perpendicular"):
                try:
                    fn, fd = _drag_once(variant, params, float(m), direction, speed, stop)
                except RunInterrupted as exc:
                    exc.partial = _samples(rows, where) if rows else None
                    # the drag under way had not begun its run, or had: either way, the drags done are what counts
                    exc.args = (f"interrupted by {exc.signal_name} ({len(rows)} of {2 * len(masses)} drags done)",)
                    raise
                log.info("load %.2f kg %s: normal %.3f N, drag %.4f N", m, direction, fn, fd)
                rows.append((direction, fn, fd))
    return _samples(rows, where)


def _samples(rows: list[tuple[str, float, float]], where: str) -> DragSamples:
    direction, normal, drag = zip(*rows)
    return DragSamples(np.array(direction, dtype=object), np.array(normal), np.array(drag), where)
