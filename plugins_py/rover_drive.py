"""gz-sim Python system: a rover drive of the Archimede test campaign (seed 004 §3.1).

Drives the rover along a test path at a mean wheel rate by publishing body twists on ``/cmd_vel``,
the topic ``icr_steering`` subscribes to, and records the ground truth (the base link's world pose
and velocity), the wheel odometry (``/odom``) and wheel slip at 10 Hz. When the path and the final
stop are done, or the rover comes within ``extent`` of the terrain's edge, it ends the run
(``gz_compat.request_run_end``). ``metrics()`` gives the scenario's metrics.json
(eels_gz.scenarios.rover_drive.METRICS), ``plot(path)`` its figure.

Configured from its ``<plugin>`` element (eels_gz scenario systems): ``<params>`` ``path`` (an index
into eels_gz.scenarios.rover_drive.PATHS), ``rate`` (mean wheel rate, rad/s), ``scale`` (path
lengths and turn angles), ``extent`` (m, stop when |x| or |y| of the base from its start passes it;
0: no limit), and ``<world_file>`` (its terrain gives the slope under the start). The ICR steering
system of the same model is found as the peer ``icr_steering`` (its steering model, motor limits and
re-steering state).
"""

from __future__ import annotations

import math

import numpy as np
from gz_compat import (MetricsFile, link_world_states, msgs, peer, register_peer, request_run_end, scenario_params,
                       sim, transport, watched_link)

from eels_gz.contact.frames import rotation_matrix
from eels_gz.scenarios.rover_drive import (SAMPLE_PERIOD, DrivePlan, DriveRecord, check_path, check_rate, path_name,
                                           path_segments, planar_pose, plot, slip_sample, slope_of)
from eels_gz.terrain.world_terrain import find_terrain_field

PLUGIN = "rover_drive"


class RoverDrive:
    def configure(self, entity, sdf, ecm, event_mgr):
        self.metrics_out = MetricsFile(sdf, PLUGIN, self)  # under Gazebo: <metrics_file>, after post_update
        self.entity = entity
        params = scenario_params(sdf)
        missing = [k for k in ("path", "rate") if k not in params]
        if missing:
            raise ValueError(f"{PLUGIN}: <params> has no {', '.join(missing)}")
        self.path = path_name(params["path"], PLUGIN)
        self.rate = params["rate"]
        self.scale = params.get("scale", 1.0)
        self.extent = params.get("extent", 0.0) or math.inf
        self.segments = path_segments(self.path, self.scale)
        model = sim.Model(entity)
        self.robot = model.name(ecm)
        base, _ = sdf.get_string("base_link", "base_link")
        self.base = watched_link(model, ecm, base, f"the base link '{base}'", PLUGIN)
        self.world_file, _ = sdf.get_string("world_file", "")
        self.node = transport.Node()
        self.pub = self.node.advertise("/cmd_vel", msgs.Twist)
        self.odom = (0.0, 0.0, 0.0, 0.0, 0.0)
        if not self.node.subscribe(msgs.Odometry, "/odom", self.on_odom):
            raise ValueError(f"{PLUGIN}: cannot subscribe to '/odom'")
        self.steering = self.plan = self.T0 = None
        self.slope_deg = None
        self.record = DriveRecord()
        self.next_sample = 0.0
        self.sent = None
        self.end = None  # (status, message) once the drive is over
        self.max_rate = None
        self.last = None  # (t, base pose, odometry) after the latest step
        register_peer(entity, PLUGIN, self, ecm)

    def on_odom(self, m) -> None:
        yaw = 2.0 * math.atan2(m.pose.orientation.z, m.pose.orientation.w)
        self.odom = (m.pose.position.x, m.pose.position.y, yaw, m.twist.linear.x, m.twist.linear.y)

    def _start(self, ecm) -> bool:
        states = link_world_states(ecm, [self.base])
        if states is None:
            return False
        steering = peer(self.entity, "icr_steering", ecm)
        if steering is None:
            raise ValueError(f"{PLUGIN}: model '{self.robot}' has no icr_steering system (a rover's description "
                             "loads it with gazebo:=true)")
        drive_speed = np.asarray(steering.controller.drive_speed, float)
        self.max_rate = float(np.min(drive_speed))
        check_rate(self.rate, self.max_rate)
        check_path(steering.steering, self.robot, self.path, self.segments)
        radius = float(np.mean([w.radius for w in steering.wheels]))
        self.plan = DrivePlan(self.segments, self.rate, radius, steering.steering, drive_speed,
                              steering.controller.acceleration)
        self.steering = steering
        pos, rot = states[0][0], states[1][0]
        self.T0 = np.eye(4)
        self.T0[:3, :3], self.T0[:3, 3] = rot, pos
        if self.world_file:
            terrain = find_terrain_field(self.world_file)
            if terrain is not None:
                self.slope_deg = slope_of(terrain.query(pos[None, :])[1][0])
        return True

    def pre_update(self, info, ecm):
        if info.paused or self.end is not None:
            return
        if self.plan is None and not self._start(ecm):
            return
        cmd = self.plan.command
        if cmd != self.sent:
            m = msgs.Twist()
            m.linear.x, m.linear.y, m.angular.z = cmd
            self.pub.publish(m)
            self.sent = cmd

    def post_update(self, info, ecm):
        if info.paused or self.plan is None or self.end is not None:
            return
        resteering = bool(self.steering.resteering)
        self.plan.advance(info.dt.total_seconds(), resteering)
        t = info.sim_time.total_seconds()
        sample = t >= self.next_sample - 1e-9
        if not (sample or self.plan.done):
            # the run may end after any step: keep its pose (one gz call; metrics() adds it as the last sample)
            self.last = (t, self.base.world_pose(ecm), self.odom[:3])
            return
        states = link_world_states(ecm, [self.base])
        if states is None:
            return
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = states[1][0], states[0][0]
        self.last = (t, T, self.odom[:3])
        if sample or self.plan.done:
            self.next_sample += SAMPLE_PERIOD if sample else 0.0
            truth = planar_pose(self.T0, T)
            slip = None if resteering or self.plan.done else slip_sample(
                self.T0[:3, :3], T[:3, :3], self.odom[3:5], states[2][0], self.plan.speed)
            self.record.add(t, truth, self.odom[:3], slip)
            if self.plan.done:
                self._finish("ok", f"drove {self.path} at {self.rate:g} rad/s", ecm)
            elif max(abs(truth[0]), abs(truth[1])) > self.extent:
                self._finish("left the terrain", f"the rover passed {self.extent:g} m from its start", ecm)

    def _finish(self, status: str, message: str, ecm) -> None:
        self.end = (status, message)
        request_run_end("ok", f"{PLUGIN}: {message}" if status == "ok" else f"{PLUGIN}: {status}: {message}", ecm)

    def metrics(self) -> dict:
        if self.last is not None and (not self.record.t or self.record.t[-1] < self.last[0]):
            t, pose, odom = self.last
            self.record.add(t, planar_pose(self.T0, pose if isinstance(pose, np.ndarray) else _matrix(pose)), odom)
        if self.end is not None:
            status = self.end[0]
        else:
            status = "timed out" if self.plan is not None else "not started"
        return self.record.metrics(status, self.plan, self.max_rate, self.path, self.rate, self.scale,
                                   self.slope_deg)

    def plot(self, path) -> None:
        plot(self.metrics(), path)


def _matrix(pose) -> np.ndarray:
    """A gz.math Pose3d as a 4x4 matrix."""
    p, q = pose.pos(), pose.rot()
    T = np.eye(4)
    T[:3, :3] = rotation_matrix(q.w(), q.x(), q.y(), q.z())
    T[:3, 3] = (p.x(), p.y(), p.z())
    return T


def get_system():
    return RoverDrive()
