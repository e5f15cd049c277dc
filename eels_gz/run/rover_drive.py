"""The Archimede test campaign (§3.1) in the embedded host: drive a rover
along a named path at a mean wheel rate, with the icr_steering and
wheel_odometry plugins in the loop, and record the nominal path, the ground
truth and the odometry (Fig. 9), the end-point odometry error, and wheel
slip (Fig. 12/13).

A path is a list of segments, each a body-twist shape (vx, vy, wz) held
for a distance (translations, m) or an angle (turns, rad). The commanded
twist is the shape scaled so that the mean wheel ground speed is
``rate x R`` (the paper's "mean speed of the wheels"); the segment clock
runs only while the steering controller is not stopping or re-steering, so
every segment is driven for its full length. Commands go to ``/cmd_vel``,
odometry comes from ``/odom``, through the host's transport, as a ROS
client would see them.

Slip, per 10 Hz sample while driving: s = 1 - v_true / v_wheels, where
v_wheels is the body speed the encoders give (odometry twist) and v_true
the ground-truth velocity of the body along that direction.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from lxml import etree

from eels_gz import registry
from eels_gz.description.assemble import robot_description
from eels_gz.errors import ConfigError, RunInterrupted, SimulationDiverged
from eels_gz.gzapi import msgs, transport
from eels_gz.dart.simulation import AUTO_CLEARANCE, RobotSpec, Simulation
from eels_gz.dart.terrain_start import place_on_terrain, terrain_field
from eels_gz.interrupt import interrupts
from eels_gz.paths import asset
from eels_gz.rover.odometry import se2_step

log = logging.getLogger(__name__)

# the flat test paths of §3.1.1 (the campaign's plan: config/sweeps/rover_campaign.yaml)
PATHS = ("straight", "lateral", "diagonal_20", "quarter_circle", "s_path", "square")
SAMPLE_PERIOD = 0.1  # s, recorded samples (10 Hz)
# Paper sizes (Fig. 9): 2 m lines, arcs of radius 1.5 m, a square of 1 m sides
LINE = 2.0
RADIUS = 1.5
SIDE = 1.0


@dataclass(frozen=True)
class Segment:
    """Hold the body-twist shape for ``amount`` (m along a translation, rad of a turn)."""

    shape: tuple[float, float, float]
    amount: float


def path_segments(name: str, scale: float = 1.0) -> list[Segment]:
    """Segments of a named path; ``scale`` shortens lengths and turn angles (not radii)."""
    quarter = math.pi / 2 * scale
    diag = math.radians(20.0)
    par = math.radians(30.0)  # slope "parallel" drive: all wheels at 30 deg, within Archimede's 33.7
    table = {
        "straight": [Segment((1.0, 0.0, 0.0), LINE * scale)],
        "lateral": [Segment((0.0, 1.0, 0.0), LINE * scale)],
        "diagonal_20": [Segment((math.cos(diag), math.sin(diag), 0.0), LINE * scale)],
        "parallel": [Segment((math.cos(par), math.sin(par), 0.0), LINE * scale)],
        "quarter_circle": [Segment((RADIUS, 0.0, 1.0), quarter)],
        "s_path": [Segment((RADIUS, 0.0, 1.0), quarter), Segment((RADIUS, 0.0, -1.0), quarter)],
        "square": [Segment(s, SIDE * scale) for s in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0),
                                                        (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0))],
    }
    if name not in table:
        raise ConfigError(f"unknown rover path '{name}'; expected one of: {', '.join(sorted(table))}")
    if not (math.isfinite(scale) and scale > 0):
        raise ConfigError(f"path scale must be a positive number, got {scale}")
    return table[name]


def nominal_path(segments: list[Segment], step: float = 0.01) -> np.ndarray:
    """(N, 3) poses (x, y, yaw) of the ideal path from the origin, every ``step`` m or rad."""
    pose = (0.0, 0.0, 0.0)
    out = [pose]
    for seg in segments:
        vx, vy, wz = seg.shape
        n = max(1, int(math.ceil(seg.amount / step)))
        rate = seg.amount / n
        speed = abs(wz) if wz else math.hypot(vx, vy)
        for _ in range(n):
            pose = se2_step(*pose, vx / speed, vy / speed, wz / speed, rate)
            out.append(pose)
    return np.array(out)


def campaign_config() -> dict:
    """The ``campaign`` section of config/rover_control.yaml (the slope worlds' friction)."""
    from eels_gz.yamlio import load

    return load(asset("config", "rover_control.yaml"))["campaign"]


def slope_world(angle_deg: float, cache: Path) -> Path:
    """A slope world rising along +x at ``angle_deg``, generated with eels_gz.terrain
    into ``cache`` (once), with the campaign's soil friction on the slope."""
    from eels_gz.terrain.worldgen import make_primitive
    from eels_gz.terrain.writers import write_terrain

    name = f"rover_slope_{angle_deg:g}".replace(".", "_")
    world = cache / "worlds" / f"{name}.sdf"
    if world.is_file():
        return world
    mu = float(campaign_config()["slope_friction"])
    folder, world = write_terrain(make_primitive("slope", angle=angle_deg), name, cache / "models", cache / "worlds")
    model = folder / "model.sdf"
    tree = etree.parse(str(model))
    for tag in ("mu", "mu2"):
        for node in tree.iter(tag):
            node.text = f"{mu:g}"
    prefix = f"model://{name}/"
    for uri in tree.iter("uri"):  # relative to the model file: no resource path needed
        if uri.text and uri.text.strip().startswith(prefix):
            uri.text = uri.text.strip()[len(prefix):]
    tree.write(str(model), xml_declaration=True, encoding="utf-8")
    wtree = etree.parse(str(world))
    for uri in wtree.iter("uri"):
        uri.text = str(folder.resolve())  # the host resolves absolute paths; no resource path needed
    wtree.write(str(world), xml_declaration=True, encoding="utf-8")
    return world


@dataclass
class DriveResult:
    summary: dict
    path: Path | None


class RoverDrive:
    """One rover in one world, driven through /cmd_vel; state read from /odom and the body."""

    def __init__(self, robot: str, world: str | Path, *, slope_deg: float = 0.0, mode: str = "general_ackermann"):
        entry = registry.robot(robot)
        if entry.family != "rover":
            raise ConfigError(f"robot '{robot}' is not a rover; expected one of: "
                              f"{', '.join(n for n, e in registry.ROBOTS.items() if e.family == 'rover')}")
        desc = robot_description(entry, xacro_args={"drive_mode": mode}, gazebo=True)
        bare = robot_description(entry, gazebo=False)
        flat = Simulation(registry.world_path("ice_plane"), RobotSpec(robot, bare))
        z0 = flat.robot_skeleton.getBodyNode("base_link").getWorldTransform().translation()[2]
        a = math.radians(slope_deg)
        # on a plane rising along +x the rest pose is the flat one tilted by the slope about y
        pose = [-math.sin(a) * z0, 0.0, math.cos(a) * z0, 0.0, -a, 0.0] if slope_deg else "auto"
        self.sim = Simulation(registry.world_path(str(world)), RobotSpec(robot, desc, pose))
        if pose == "auto":  # on rough terrain: every wheel on the ground (ROAMS placement)
            place_on_terrain(self.sim, desc, terrain_field(self.sim), AUTO_CLEARANCE)
        self.steering = next(s.system for s in self.sim.systems if s.module == "icr_steering")
        self.odometry = next(s.system for s in self.sim.systems if s.module == "wheel_odometry")
        self.node = transport.node_on(self.sim.transport)
        self.pub = self.node.advertise("/cmd_vel", msgs.Twist)
        self.odom = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        self.node.subscribe(msgs.Odometry, "/odom", self._on_odom)
        self.base = self.sim.robot_skeleton.getBodyNode("base_link")
        T = self.base.getWorldTransform().matrix()
        self.origin = T.copy()
        self.radius = float(np.mean([w.radius for w in self.steering.wheels]))
        self.max_rate = float(np.min(self.steering.controller.drive_speed))  # rad/s, the drive motors' limit

    def check_rate(self, rate: float) -> None:
        """Refuse a mean wheel rate the drive motors cannot reach."""
        if rate > self.max_rate:
            raise ConfigError(f"--speed {rate:g} rad/s is beyond the drive motors' limit of {self.max_rate:.3g} rad/s "
                              "(the wheel joints' <limit velocity> in the xacro, from config/rover_control.yaml "
                              "motors); give a mean wheel rate up to that")

    def check_path(self, robot: str, path: str, segments: list[Segment]) -> None:
        """Refuse a path whose segments the rover's steering cannot drive as given (it would project
        them onto other motions and drive another path): the reason comes from the steering joints'
        limits in the description (:meth:`eels_gz.rover.steering.IcrSteering.why_not`)."""
        steering = self.steering.steering
        for i, seg in enumerate(segments, start=1):
            reason = steering.why_not(*seg.shape)
            if reason is not None:
                where = f" (segment {i} of {len(segments)})" if len(segments) > 1 else ""
                raise ConfigError(f"robot '{robot}' cannot drive path '{path}'{where}: {reason}")

    def segment_command(self, seg: Segment, speed: float) -> tuple[tuple[float, float, float], float]:
        """The body twist that drives ``seg`` at mean wheel ground speed ``speed`` (m/s), and the
        saturation factor (< 1 when the fastest wheel would pass the motor limit: the twist is
        scaled down so that it does not, keeping the ICR)."""
        steering = self.steering.steering
        k = speed / steering.mean_wheel_speed(*seg.shape)
        cmd = tuple(k * c for c in seg.shape)
        rates = np.abs(np.asarray(steering.command(*cmd).wheel_rates, dtype=float))
        peak = float(np.max(rates / self.steering.controller.drive_speed)) if rates.size else 0.0
        if peak > 1.0:
            return tuple(c / peak for c in cmd), 1.0 / peak
        return cmd, 1.0

    def _on_odom(self, m) -> None:
        yaw = 2.0 * math.atan2(m.pose.orientation.z, m.pose.orientation.w)
        self.odom = (m.pose.position.x, m.pose.position.y, yaw, m.twist.linear.x, m.twist.linear.y,
                     m.twist.angular.z)

    def truth(self) -> tuple[float, float, float]:
        """Ground-truth (x, y, yaw) of base_link in the start frame, on the terrain plane."""
        rel = np.linalg.inv(self.origin) @ self.base.getWorldTransform().matrix()
        return float(rel[0, 3]), float(rel[1, 3]), math.atan2(rel[1, 0], rel[0, 0])

    def command(self, vx: float, vy: float, wz: float) -> None:
        m = msgs.Twist()
        m.linear.x, m.linear.y, m.angular.z = vx, vy, wz
        self.pub.publish(m)

    def drive(self, segments: list[Segment], rate: float, settle: float = 1.0, max_time: float = 600.0,
              extent: float = math.inf) -> dict:
        """Drive the segments at mean wheel rate ``rate`` (rad/s); returns the recorded run.

        SIGINT or SIGTERM (eels_gz.interrupt) ends the drive after the step in
        progress with status ``interrupted`` and the signal in ``signal``."""
        self.check_rate(rate)
        speed = rate * self.radius
        dt = self.sim.dt
        t_log, gt, od, slip = [], [], [], []
        next_sample = 0.0
        status, signum = "ok", None
        acc = self.steering.controller.acceleration
        queue = list(segments) + [None]
        rot = self.origin[:3, :3]
        saturated = []
        with interrupts() as stop:
            try:
                for i, seg in enumerate(queue):
                    if seg is None:
                        cmd, duration = (0.0, 0.0, 0.0), rate / acc + settle
                    else:
                        cmd, factor = self.segment_command(seg, speed)
                        if factor < 1.0:
                            log.warning("segment %d: the fastest wheel would pass the motor limit of %.3g rad/s; "
                                        "its command is scaled by %.3f", i + 1, self.max_rate, factor)
                            saturated.append({"segment": i + 1, "factor": factor})
                        duration = seg.amount / (abs(cmd[2]) if cmd[2] else math.hypot(cmd[0], cmd[1]))
                    self.command(*cmd)
                    clock = 0.0
                    while clock < duration:
                        self.sim.step()
                        if seg is None or not self.steering.resteering:
                            clock += dt
                        t = self.sim.time
                        if t >= next_sample:
                            next_sample += SAMPLE_PERIOD
                            x, y, yaw = self.truth()
                            t_log.append(t)
                            gt.append((x, y, yaw))
                            od.append(self.odom[:3])
                            slip.append(self._slip(rot, speed))
                        if stop.requested:
                            status, signum = "interrupted", stop.signum
                            raise TimeoutError
                        if t > max_time:
                            raise TimeoutError
                        if gt and max(abs(gt[-1][0]), abs(gt[-1][1])) > extent:
                            status = "left the terrain"
                            raise TimeoutError
            except TimeoutError:
                status = status if status != "ok" else "timed out"
            except SimulationDiverged as exc:
                status = f"diverged: {exc}"
        x, y, yaw = self.truth()
        gt.append((x, y, yaw))
        od.append(self.odom[:3])
        t_log.append(self.sim.time)
        gt_a, od_a = np.array(gt), np.array(od)
        distance = float(np.sum(np.hypot(*np.diff(gt_a[:, :2], axis=0).T)))
        err = float(np.hypot(*(od_a[-1, :2] - gt_a[-1, :2])))
        s = np.array([v for v in slip if v is not None])
        record = {
            "status": status, "sim_time": self.sim.time, "speed": speed, "distance": distance,
            "end_error": err, "end_error_relative": err / distance if distance > 0 else None,
            "saturated": saturated, "max_wheel_rate": self.max_rate,
            "slip": slip_stats(s), "slip_samples": s.tolist(), "t": t_log, "ground_truth": gt_a.tolist(),
            "odometry": od_a.tolist(),
        }
        if signum is not None:
            record["signal"] = signum
        return record

    def _slip(self, rot: np.ndarray, nominal_speed: float) -> float | None:
        if self.steering.resteering:
            return None
        vx, vy = self.odom[3], self.odom[4]
        v_wheels = math.hypot(vx, vy)
        if v_wheels < 0.5 * nominal_speed:
            return None
        R = rot.T @ self.base.getWorldTransform().rotation()
        v_body = R[:2, :2] @ np.array([vx, vy]) / v_wheels  # encoder direction in the start frame
        v_true = (rot.T @ self.base.getLinearVelocity())[:2]
        return 1.0 - float(v_true @ v_body) / v_wheels


def slip_stats(s: np.ndarray) -> dict:
    """Count, median and quartiles of slip samples (None without samples)."""
    if s.size == 0:
        return {"samples": 0, "median": None, "q1": None, "q3": None}
    q1, med, q3 = np.percentile(s, [25, 50, 75])
    return {"samples": int(s.size), "median": float(med), "q1": float(q1), "q3": float(q3)}


def run_drive(robot: str, path: str, rate: float, world: str | Path, out: Path | None, *,
              slope_deg: float = 0.0, scale: float = 1.0, mode: str = "general_ackermann",
              extent: float = math.inf, overwrite: bool = True, final: Path | None = None) -> dict:
    """One run; writes ``out/<robot>_<path>_<rate>_<world>.json`` when ``out`` is given.

    ``final``: where ``out`` will be once renamed into place (a sweep sample's ``DIR.partial`` is
    renamed to ``DIR``); the record's paths inside ``out`` (its file, a generated world) then name
    their place there, so that they still exist when the run is done.

    The file is checked writable (and, without ``overwrite``, absent) before the
    model is built, locked against a concurrent run and replaced as a whole. An
    interrupted drive (SIGINT, SIGTERM) writes its record too, with status
    ``interrupted`` and the signal number in ``signal``."""
    from eels_gz.outputs import OutputFile

    if not (math.isfinite(rate) and rate > 0):
        raise ConfigError(f"--speed must be a positive wheel rate in rad/s, got {rate}")
    segments = path_segments(path, scale)
    with contextlib.ExitStack() as stack:
        target = None
        if out is not None:
            name = f"{robot}_{path}_{rate:g}_{Path(str(world)).stem}.json".replace("/", "_")
            target = stack.enter_context(OutputFile(out / name, overwrite=overwrite, lock=True,
                                                    what="rover run file"))
        with interrupts() as stop, stop.immediately():
            drive = RoverDrive(robot, world, slope_deg=slope_deg, mode=mode)
        drive.check_path(robot, path, segments)
        record = drive.drive(segments, rate, extent=extent)
        record.update({"robot": robot, "path": path, "rate": rate, "world": str(_moved(world, out, final)),
                       "slope_deg": slope_deg, "scale": scale, "mode": mode,
                       "nominal": nominal_path(segments).tolist()})
        if target is not None:
            record["file"] = str(_moved(target.path, out, final))
            target.write_text(json.dumps(record))
    log.info("%s %s at %g rad/s on %s: %.3f m, end error %.2f %%, slip median %s", robot, path, rate, world,
             record["distance"], 100 * (record["end_error_relative"] or 0), record["slip"]["median"])
    return record


def _moved(path: str | Path, out: Path | None, final: Path | None) -> str | Path:
    """``path`` as it will be once ``out`` is renamed to ``final`` (unchanged outside ``out``)."""
    if out is None or final is None:
        return path
    try:
        rel = Path(path).absolute().relative_to(Path(out).absolute())
    except ValueError:
        return path
    return Path(final) / rel


def slope_angle(world: str) -> float:
    """The angle (deg) of a ``slope:DEG`` world name."""
    try:
        angle = float(world.split(":", 1)[1])
    except ValueError:
        raise ConfigError(f"world 'slope:DEG' needs a number of degrees, got '{world}'") from None
    if not (math.isfinite(angle) and 0.0 <= angle < 90.0):
        raise ConfigError(f"world '{world}': the slope must be from 0 to 90 deg")
    return angle


def drive_sample(settings: dict, out: Path, final: Path | None = None) -> dict:
    """One drive of the campaign or of a sweep (``eels-gz sweep`` with ``command: rover drive``):
    ``settings`` robot, path, speed, world, mode, scale; a ``slope:DEG`` world is generated into
    ``out/terrain`` (with the campaign's soil friction) and the drive stops 1 m before the rover would
    leave the slope. Writes the run file into ``out`` (:func:`run_drive`, with ``final`` where ``out``
    will be renamed to) and returns its record."""
    world, angle, extent = settings["world"], 0.0, math.inf
    if str(world).startswith("slope:"):
        angle = slope_angle(world)
        with interrupts() as stop, stop.immediately():
            world = slope_world(angle, out / "terrain")
        extent = 0.5 * _slope_length() - 1.0  # stop a run before the rover leaves the slope
    return run_drive(settings["robot"], settings["path"], float(settings["speed"]), world, out, slope_deg=angle,
                     scale=float(settings["scale"]), mode=settings["mode"], extent=extent, final=final)


def interrupted(record: dict) -> RunInterrupted | None:
    """The RunInterrupted to raise for an interrupted drive record, else None."""
    if record["status"] != "interrupted":
        return None
    return RunInterrupted(record["signal"], f"interrupted at t = {record['sim_time']:.3f} s of the {record['path']} "
                                            "drive")


def _slope_length() -> float:
    from eels_gz.terrain.worldgen import primitive_parameters

    return float(primitive_parameters("slope")["length"])
