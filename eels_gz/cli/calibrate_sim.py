"""``eels-gz calibrate simulate``: the drag tests of EELS-DARTS Fig. 6/7 in
the embedded host, so that ``calibrate friction`` can be checked end to end.

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
from eels_gz.description.xacro_loader import load_description
from eels_gz.errors import CalibrationError, RunInterrupted
from eels_gz.interrupt import interrupts
from eels_gz.paths import asset

log = logging.getLogger(__name__)
SETTLE = 0.3  # s at rest before dragging
DRAG = 0.4  # s of dragging; the last half is averaged


def drag_directions(lead_angle: float, handedness: int) -> dict[str, np.ndarray]:
    """World-frame unit drag directions for a screw along +x lying on flat
    ground: the thread tangent and the across-thread direction at its contact line."""
    h, a = float(handedness), float(lead_angle)
    return {"parallel": np.array([h * np.sin(a), np.cos(a), 0.0]),
            "perpendicular": np.array([np.cos(a), -h * np.sin(a), 0.0])}


def _drag_once(variant: str, params: str, load_mass: float, direction: str, speed: float,
               stop=None) -> tuple[float, float]:
    from eels_gz.gzapi import gzsim
    from eels_gz.dart.simulation import RobotSpec, Simulation

    world = registry.world_path("ice_plane")
    desc = load_description(asset("urdf", "drag_rig.urdf.xacro"), {
        "variant": variant, "load_mass": repr(float(load_mass)), "contact_params": params, "world_file": str(world)})
    screw = registry.eels_variants()[variant]["screw"]
    sim = Simulation(world, RobotSpec("drag_rig", desc, [0.0, 0.0, screw["radius"], 0.0, 0.0, 0.0], optimize=False))
    model = gzsim.Model(sim.robot_entity)
    joints = {n: gzsim.Joint(model.joint_by_name(sim.ecm, n)) for n in ("drag_x", "drag_y", "drag_screw")}
    contact = next(s.system for s in sim.systems if s.module == "screw_contact")
    d = drag_directions(screw["lead_angle"], screw["handedness"])[direction]
    normal, drag = [], []
    n_settle, n_drag = int(round(SETTLE / sim.dt)), int(round(DRAG / sim.dt))
    for k in range(n_settle + n_drag):
        moving = k >= n_settle
        joints["drag_x"].set_velocity(sim.ecm, [speed * d[0] if moving else 0.0])
        joints["drag_y"].set_velocity(sim.ecm, [speed * d[1] if moving else 0.0])
        joints["drag_screw"].set_velocity(sim.ecm, [0.0])
        sim.step()
        if stop is not None:
            stop.check(f"interrupted during the {direction} drag under {load_mass:g} kg")
        if k >= n_settle + n_drag // 2 and contact.last is not None:
            normal.append(float(contact.last.normal_force.sum()))
            drag.append(float(-contact.last.force[0] @ d))
    if not normal or min(normal) <= 0.0:
        raise CalibrationError(f"drag rig ({variant}, load {load_mass} kg, {direction}): the screw lost contact")
    return float(np.mean(normal)), float(np.mean(drag))


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
                    exc.args = (f"{exc} ({len(rows)} of {2 * len(masses)} drags done)",)
                    raise
                log.info("load %.2f kg %s: normal %.3f N, drag %.4f N", m, direction, fn, fd)
                rows.append((direction, fn, fd))
    return _samples(rows, where)


def _samples(rows: list[tuple[str, float, float]], where: str) -> DragSamples:
    direction, normal, drag = zip(*rows)
    return DragSamples(np.array(direction, dtype=object), np.array(normal), np.array(drag), where)
