"""The Gazebo sensors of the robot's description, simulated in the host.

Reads the ``<sensor>`` elements of the ``<gazebo reference>`` blocks (the
optimizer has re-pointed them to bodies and composed their ``<pose>``) and
publishes on the host's gz topics at each sensor's ``<update_rate>``:

- ``force_torque`` on a preserved weld joint: the joint's wrench from DART
  (``BodyNode.getBodyForce`` of the child: the spatial force the parent
  transmits to the child through the joint, in the child frame, about its
  origin, constraint impulses included). ``<frame>`` child|sensor|parent and
  ``<measure_direction>`` parent_to_child|child_to_parent as SDF defines
  them; gz.msgs.Wrench on ``<topic>``, else on gz-sim 8's default
  ``/world/<world>/model/<robot>/joint/<joint>/sensor/<sensor>/forcetorque``
  (src/systems/force_torque/ForceTorque.cc: the scoped sensor name +
  ``/forcetorque``); noise-free unless ``<force><x><noise>`` ... is given;
- ``imu``: angular velocity and specific force of the sensor point in the
  sensor frame, orientation in the world, per-axis Gaussian noise/bias from
  ``<imu><angular_velocity|linear_acceleration><x|y|z><noise>``;
  gz.msgs.IMU on ``<topic>`` (default ``/imu``);
- ``gpu_lidar`` (and ``lidar``): ``<scan>`` grid or a beam pattern file
  (``<eels_pattern_file>``), cast against the world's terrain field and the
  robot's own box/sphere/cylinder shapes (not those of the body carrying the
  sensor); gz.msgs.PointCloudPacked (x y z intensity, float32) on
  ``<topic>/points``.

- ``camera`` and ``depth_camera``: eels_gz.dart.cameras (images rendered by
  OpenGL, else by ray casting, ``camera_renderer``; gz.msgs.Image and
  CameraInfo, a depth camera's PointCloudPacked on ``<topic>/points``) when
  ``cameras=True`` (``sensors.cameras``).

Other sensor types are not simulated (logged once).

As in Gazebo, a sensor publishes only if its gz-sim system is loaded by the
world or the robot (``SENSOR_SYSTEMS``: Imu, ForceTorque, and Sensors for the
rendering sensors); one that is not is skipped with a warning naming the
system to add.
"""

from __future__ import annotations

import logging
import math
from time import perf_counter

import numpy as np

from eels_gz.dart.robot_shapes import ShapeTable, _bodies, robot_shapes  # noqa: F401  (robot_shapes: public here too)
from eels_gz.dart.sensor_sdf import CAMERA_KINDS, _float, _text, sensor_frame_id  # noqa: F401
from eels_gz.errors import ConfigError, DescriptionError
from eels_gz.dart.skeleton_state import BatchedWrenches
from eels_gz.gzapi import msgs, transport
from eels_gz.gzapi.gzmath import Pose3d, pose_matrix
from eels_gz.sensors.force_torque import wrench_in_frame
from eels_gz.sensors.imu import imu_values, imu_values_from_origin
from eels_gz.sensors.lidar import (ShapeArrays, cast, grid_pattern, load_pattern, pack_xyzi)
from eels_gz.sensors.noise import GaussianNoise, NoiseModel
from eels_gz.steps import period

log = logging.getLogger(__name__)
AXES = ("x", "y", "z")


def _noise(el, path: str, where: str) -> GaussianNoise:
    node = el.find(path)
    if node is None:
        return GaussianNoise()
    kind = node.get("type", "gaussian")
    if kind not in ("gaussian", "none"):
        raise DescriptionError(f"{where}: <{path} type='{kind}'>: the host supports gaussian noise")
    if kind == "none":
        return GaussianNoise()
    vals = [_float(node, k, 0.0, where) for k in ("mean", "stddev", "bias_mean", "bias_stddev")]
    return GaussianNoise(*vals)


def _pose(el, where: str) -> np.ndarray:
    text = _text(el, "pose")
    if not text:
        return np.eye(4)
    try:
        v = [float(x) for x in text.split()]
    except ValueError:
        raise DescriptionError(f"{where}: <pose> '{text}' is not 6 numbers") from None
    if len(v) != 6:
        raise DescriptionError(f"{where}: <pose> '{text}' is not 6 numbers")
    return pose_matrix(Pose3d(*v))


def _header(msg, t_ns: int, frame: str) -> None:
    msg.header.stamp.sec, msg.header.stamp.nsec = divmod(t_ns, 1_000_000_000)
    msgs.set_frame_id(msg.header, frame)


# the gz-sim system without which Gazebo does not publish a sensor of this type
SENSOR_SYSTEMS = {"imu": "gz-sim-imu-system", "force_torque": "gz-sim-forcetorque-system",
                  "gpu_lidar": "gz-sim-sensors-system", "lidar": "gz-sim-sensors-system",
                  "camera": "gz-sim-sensors-system", "depth_camera": "gz-sim-sensors-system",
                  "rgbd_camera": "gz-sim-sensors-system"}


def force_torque_topic(world: str, robot: str, joint: str, sensor: str) -> str:
    """gz-sim 8's default topic of a force_torque sensor on a joint (scoped name + /forcetorque)."""
    return f"/world/{world}/model/{robot}/joint/{joint}/sensor/{sensor}/forcetorque"


class _Sensor:
    wall_time = 0.0  # seconds spent in sample() (HostSensors.post_step)

    def __init__(self, sim, name: str, el, where: str):
        self.sim, self.name, self.where = sim, name, where
        rate = _float(el, "update_rate", 0.0, where)
        if rate < 0:
            raise DescriptionError(f"{where}: <update_rate> must be >= 0, got {rate}")
        self.period = period(rate, sim.dt)

    def due(self) -> bool:
        return self.sim.iterations % self.period == 0

    def sample(self, t_ns: int) -> None:
        """Measure and publish (the sensor is due)."""
        self.publish(t_ns)


class _FixedSensor(_Sensor):
    """A sensor whose message is a fixed set of numbers (``values()``, ``message(t_ns, values)``): it
    builds its gz message only when the topic has a subscriber, and writes the run log straight from
    the numbers (``log``, set by :func:`log_sensors`: the CDR bytes the bus path would give)."""

    log = None  # log(t_ns, values)
    log_channel = None  # the log's topic (the bridged ROS topic)
    n_values = 0  # len(values())

    def publish(self, t_ns: int) -> None:
        transport.publish_owned(self.pub, self.message(t_ns, self.values()))

    def sample(self, t_ns: int) -> None:
        values = self.values()
        if self.pub.has_connections():
            transport.publish_owned(self.pub, self.message(t_ns, values))
        if self.log is not None:
            self.log(t_ns, values)


def _subtree(skel, root) -> list[int]:
    """Indices of ``root`` and every body below it in ``skel``."""
    out = []
    for k in range(skel.getNumBodyNodes()):
        b = skel.getBodyNode(k)
        while b is not None and b.getIndexInSkeleton() != root.getIndexInSkeleton():
            b = b.getParentBodyNode()
        if b is not None:
            out.append(k)
    return out


class ForceTorque(_FixedSensor):
    kind = "force_torque"

    def __init__(self, sim, name, el, where, joint_name: str, robot: str, node, rng, noise: bool):
        super().__init__(sim, name, el, where)
        joint = sim.robot_skeleton.getJoint(joint_name)
        if joint is None:
            raise DescriptionError(f"{where}: force_torque sensor '{name}' is on '{joint_name}', which is not a "
                                   "joint of the simulated robot (the optimizer keeps sensor joints; was it "
                                   "switched off for a description without <preserveFixedJoint>?)")
        self.joint = joint
        self.child = joint.getChildBodyNode()
        # batched link wrenches below the joint, which DART's transmitted force leaves out (BatchedWrenches)
        self.state = next(st for st in sim.states if st.skel is sim.robot_skeleton)
        if self.state.wrenches is None:
            self.state.wrenches = BatchedWrenches(sim.robot_skeleton.getNumBodyNodes())
        self.child_index = self.child.getIndexInSkeleton()
        self.subtree = np.array(_subtree(sim.robot_skeleton, self.child), dtype=np.int64)
        self.frame = _text(el, "force_torque/frame", "child")
        if self.frame not in ("child", "sensor", "parent"):
            raise DescriptionError(f"{where}: <force_torque><frame> must be child, sensor or parent, got '{self.frame}'")
        direction = _text(el, "force_torque/measure_direction", "child_to_parent")
        if direction not in ("child_to_parent", "parent_to_child"):
            raise DescriptionError(f"{where}: <force_torque><measure_direction> must be child_to_parent or "
                                   f"parent_to_child, got '{direction}'")
        self.sign = 1.0 if direction == "parent_to_child" else -1.0
        self.T_child_sensor = _pose(el, where)
        topic = _text(el, "topic") or force_torque_topic(sim.spec.name, robot, joint_name, name)
        self.topic = "/" + topic.lstrip("/")
        self.frame_id = sensor_frame_id(el, name, self.kind)
        self.pub = node.advertise(self.topic, msgs.Wrench)
        self.noise_f = NoiseModel(tuple(_noise(el, f"force_torque/force/{a}/noise", where) for a in AXES), rng)
        self.noise_t = NoiseModel(tuple(_noise(el, f"force_torque/torque/{a}/noise", where) for a in AXES), rng)
        if not noise:
            self.noise_f.enabled = self.noise_t.enabled = False

    def measure(self) -> tuple[np.ndarray, np.ndarray]:
        """(force N, torque N m) in the sensor's reporting frame, per measure_direction."""
        F = np.asarray(self.child.getBodyForce(), dtype=float)  # [torque, force], child frame, parent -> child
        batched = self.state.wrenches.subtree_wrench(self.subtree, self.child_index)
        if batched is not None:  # DART's transmitted force holds its own external forces, not these
            F[:3] -= batched[0]
            F[3:] -= batched[1]
        torque, force = self.sign * F[:3], self.sign * F[3:]
        if self.frame == "sensor":
            force, torque = wrench_in_frame(force, torque, self.T_child_sensor)
        elif self.frame == "parent":
            T_parent_child = self.joint.getTransformFromParentBodyNode().matrix() @ \
                self.joint.getTransformFromChildBodyNode().inverse().matrix()
            force, torque = wrench_in_frame(force, torque, np.linalg.inv(T_parent_child))
        return self.noise_f.apply(force), self.noise_t.apply(torque)

    n_values = 6

    def values(self) -> np.ndarray:
        """force (3), torque (3)."""
        return np.concatenate(self.measure())

    def message(self, t_ns: int, v: np.ndarray):
        msg = msgs.Wrench()
        _header(msg, t_ns, self.frame_id)
        msg.force.x, msg.force.y, msg.force.z, msg.torque.x, msg.torque.y, msg.torque.z = v.tolist()
        return msg


class Imu(_FixedSensor):
    kind = "imu"

    def __init__(self, sim, name, el, where, body, T_body_sensor, node, rng, noise: bool):
        super().__init__(sim, name, el, where)
        self.body, self.T = body, T_body_sensor
        self.topic = "/" + (_text(el, "topic") or "imu").lstrip("/")
        self.pub = node.advertise(self.topic, msgs.IMU)
        self.gyro = NoiseModel(tuple(_noise(el, f"imu/angular_velocity/{a}/noise", where) for a in AXES), rng)
        self.acc = NoiseModel(tuple(_noise(el, f"imu/linear_acceleration/{a}/noise", where) for a in AXES), rng)
        if not noise:
            self.gyro.enabled = self.acc.enabled = False
        self.frame_id = sensor_frame_id(el, name, self.kind)
        self.offset = np.ascontiguousarray(self.T[:3, 3])
        self.state = next((st for st in sim.states if st.skel is body.getSkeleton()), None)
        self.index = body.getIndexInSkeleton()
        self.out = np.empty(10)

    n_values = 10

    def values(self) -> np.ndarray:
        """angular velocity rad/s (3), specific force m/s^2 (3) in the sensor frame, orientation wxyz (4)."""
        kin = self.state.accelerations() if self.state is not None else None
        out, g = self.out, np.asarray(self.sim.world.getGravity(), dtype=float)
        if kin is not None:  # the step's batched kinematics and accelerations, without a dartpy call per body
            b = self.index
            imu_values_from_origin(kin.T[b], self.T, kin.w[b], kin.alpha[b], kin.a[b], g, out)
        else:
            T_wb, w = self.body.getWorldTransform().matrix(), np.asarray(self.body.getAngularVelocity(), dtype=float)
            imu_values(T_wb, self.T, w, np.asarray(self.body.getLinearAcceleration(self.offset), dtype=float), g, out)
        out[0:3] = self.gyro.apply(out[0:3])
        out[3:6] = self.acc.apply(out[3:6])
        return out

    def measure(self):
        """(angular velocity rad/s, specific force m/s^2, quaternion wxyz) of the sensor."""
        v = self.values().copy()
        return v[0:3], v[3:6], v[6:10]

    def message(self, t_ns: int, v: np.ndarray):
        msg = msgs.IMU(entity_name=self.name)
        _header(msg, t_ns, self.frame_id)
        (msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z,
         msg.linear_acceleration.x, msg.linear_acceleration.y, msg.linear_acceleration.z,
         msg.orientation.w, msg.orientation.x, msg.orientation.y, msg.orientation.z) = v.tolist()
        return msg


class Lidar(_Sensor):
    kind = "gpu_lidar"

    def __init__(self, sim, name, el, where, body, T_body_sensor, node, field):
        super().__init__(sim, name, el, where)
        self.body, self.T, self.field = body, T_body_sensor, field
        rmin, rmax = _float(el, "lidar/range/min", 0.0, where), _float(el, "lidar/range/max", None, where)
        pattern_file = _text(el, "eels_pattern_file")
        if pattern_file:
            self.pattern = load_pattern(pattern_file, rmin, rmax)
        else:
            h = [_float(el, f"lidar/scan/horizontal/{k}", d, where) for k, d in
                 (("samples", 1.0), ("min_angle", 0.0), ("max_angle", 0.0))]
            v = [_float(el, f"lidar/scan/vertical/{k}", d, where) for k, d in
                 (("samples", 1.0), ("min_angle", 0.0), ("max_angle", 0.0))]
            self.pattern = grid_pattern(int(v[0]), int(h[0]), h[1], h[2], v[1], v[2], rmin, rmax)
        base = (_text(el, "topic") or "lidar").strip("/")
        self.topic = f"/{base}/points"
        self.pub = node.advertise(self.topic, msgs.PointCloudPacked)
        self.shapes_of = [b for b in _bodies(sim.robot_skeleton) if b is not body]
        self.shape_table = ShapeTable(self.shapes_of)
        self.state = next((st for st in sim.states if st.skel is sim.robot_skeleton), None)
        self.frame_id = sensor_frame_id(el, name, self.kind)

    def shapes(self) -> ShapeArrays:
        kin = self.state.kinematics() if self.state is not None else None
        return self.shape_table.arrays(kin.T if kin is not None else None)

    def scan(self):
        T_ws = self.body.getWorldTransform().matrix() @ self.T
        return cast(self.pattern, T_ws, self.field, self.shapes())

    log = None  # log(t_ns, cloud, dense), set by log_sensors: the CDR bytes the bus path would give
    log_channel = None  # the log's topic (the bridged ROS topic)

    def cloud(self) -> tuple[np.ndarray, bool]:
        """A scan as the PointCloudPacked rows (N, 4) float32 x, y, z, intensity, and whether all are finite."""
        scan = self.scan()
        data = np.empty((len(scan.ranges), 4), dtype="<f4")
        return data, bool(pack_xyzi(scan.points, scan.intensity, data))

    def message(self, t_ns: int, data: np.ndarray, dense: bool):
        msg = msgs.PointCloudPacked()
        _header(msg, t_ns, self.frame_id)
        for k, n in enumerate(("x", "y", "z", "intensity")):
            msg.field.add(name=n, offset=4 * k, datatype=msgs.FLOAT32, count=1)
        rows = self.pattern.rows
        msg.height, msg.width = rows, self.pattern.size // rows
        msg.point_step, msg.row_step = 16, 16 * msg.width
        msg.is_dense = dense
        msg.data = data.tobytes()
        return msg

    def publish(self, t_ns: int) -> None:
        transport.publish_owned(self.pub, self.message(t_ns, *self.cloud()))

    def sample(self, t_ns: int) -> None:
        """The gz message only when the topic has a subscriber; the log from the rows (as _FixedSensor)."""
        data, dense = self.cloud()
        if self.pub.has_connections():
            transport.publish_owned(self.pub, self.message(t_ns, data, dense))
        if self.log is not None:
            self.log(t_ns, data, dense)


class HostSensors:
    """All simulated sensors of the robot; ``post_step()`` after each step publishes those that are due."""

    def __init__(self, sim, *, noise: bool = True, seed: int = 0, terrain_field=None, cameras: bool = False,
                 camera_renderer: str = "auto"):
        self.sim = sim
        self.camera_renderer: dict | None = None  # {"name", "detail"} once a camera is made
        self.node = transport.node_on(sim.transport)
        rng = np.random.default_rng(seed)
        skel = sim.robot_skeleton
        robot = skel.getName() if skel is not None else ""
        where = sim.robot_description.source if sim.robot_description is not None else "<robot>"
        self.sensors: list = []
        skipped = []
        for ref, name, kind, el in sim.sensor_specs:
            here = f"{where}: <gazebo reference='{ref}'><sensor name='{name}'>"
            system = SENSOR_SYSTEMS.get(kind)
            if system is not None and system not in sim.gz_systems:
                log.warning("%s: sensor '%s' (%s) is skipped, as Gazebo would not publish it: the world loads no "
                            "%s system (add <plugin filename=\"%s\" ...> to the world, as worlds/ice_plane.sdf does)",
                            where, name, kind, system, system)
                continue
            if kind == "force_torque":
                self.sensors.append(ForceTorque(sim, name, el, here, ref, robot, self.node, rng, noise))
                continue
            if kind not in ("imu", "gpu_lidar", "camera", "depth_camera") or \
                    (kind in ("camera", "depth_camera") and not cameras):
                skipped.append(f"{name} ({kind})")
                continue
            body = skel.getBodyNode(ref)
            if body is None:
                raise DescriptionError(f"{here}: '{ref}' is not a body of the simulated robot")
            T = _pose(el, here)
            if kind == "imu":
                self.sensors.append(Imu(sim, name, el, here, body, T, self.node, rng, noise))
                continue
            if terrain_field is None:
                from eels_gz.terrain.world_terrain import find_terrain_field

                terrain_field = find_terrain_field(sim.spec)
            if kind == "gpu_lidar":
                self.sensors.append(Lidar(sim, name, el, here, body, T, self.node, terrain_field))
            else:
                from eels_gz.dart.cameras import Camera
                from eels_gz.dart.scene_log import sun_direction, terrain_rgb

                renderer = self._renderer(camera_renderer)
                others = [b for b in _bodies(skel) if b is not body]
                scope = f"/world/{sim.spec.name}/model/{robot}/link/{ref}/sensor/{name}"
                cam = Camera(_Sensor(sim, name, el, here), el, kind, body, T, self.node, rng, noise, terrain_field,
                             others, terrain_rgb(sim.spec), sun_direction(sim.spec.file), scope, renderer)
                # the camera_info (and depth points) publishers, listed for topics and the log
                self.sensors += [cam, cam.info] + ([cam.points] if cam.points is not None else [])
        if skipped:
            log.info("the host does not simulate the sensors %s (cameras render with sensors.cameras: true)",
                     ", ".join(skipped))
        # every sensor is due on multiples of its period: none is between multiples of their gcd
        periods = [p for p in (getattr(s, "period", None) for s in self.sensors) if p]
        self.every = math.gcd(*periods) if periods else 1

    def _renderer(self, choice: str):
        """The cameras' renderer (eels_gz.dart.gl_render) for ``sensors.camera_renderer``: ``auto`` (GL, else
        the tracer, saying why), ``gl`` (GL or an error) or ``tracer``; recorded in ``camera_renderer``."""
        if self.camera_renderer is not None:
            return self._gl
        from eels_gz.dart.cameras import RENDERERS

        if choice not in RENDERERS:
            raise ConfigError(f"sensors.camera_renderer: '{choice}' is not one of {', '.join(RENDERERS)}")
        self._gl = None
        if choice == "tracer":
            self.camera_renderer = {"name": "tracer", "detail": "sensors.camera_renderer: tracer"}
            return None
        from eels_gz.dart.gl_render import gl_renderer

        self._gl, detail = gl_renderer()
        if self._gl is None:
            if choice == "gl":
                raise ConfigError(f"sensors.camera_renderer: gl: OpenGL through EGL cannot start ({detail})")
            log.warning("cameras: OpenGL through EGL cannot start (%s); the cameras render with the tracer "
                        "(numba ray casting, much slower)", detail)
            self.camera_renderer = {"name": "tracer", "detail": f"OpenGL could not start: {detail}"}
        else:
            log.info("cameras render with %s", detail)
            self.camera_renderer = {"name": "gl", "detail": detail}
        return self._gl

    @property
    def topics(self) -> dict[str, str]:
        """gz topic -> gz message type name of every simulated sensor."""
        return {s.topic: transport.topic_of(s.pub)[1] for s in self.sensors}

    def post_step(self) -> None:
        if self.sim.iterations % self.every:
            return
        t_ns = None
        for s in self.sensors:
            if s.due():
                if t_ns is None:
                    t_ns = int(round(self.sim.time * 1e9))
                t0 = perf_counter()
                s.sample(t_ns)
                s.wall_time += perf_counter() - t0

    def wall_times(self) -> dict[str, dict]:
        """Wall seconds each sensor spent measuring, publishing and logging, by sensor name, with its type."""
        return {s.name: {"type": s.kind, "seconds": s.wall_time} for s in self.sensors}


def log_sensors(sensors: HostSensors, mcap) -> None:
    """Write every sensor message to an McapLog (eels_gz.ros.mcap_log) as its ROS 2 type, stamped in sim
    time, on the ROS topic config/bridge.yaml maps its gz topic to (the gz topic where there is none)."""
    from eels_gz.ros import convert
    from eels_gz.ros.bridge import load_bridge

    sim = sensors.sim
    robot = sim.robot_skeleton.getName() if sim.robot_skeleton is not None else ""
    fts = [(joint, name) for joint, name, kind, _ in sim.sensor_specs if kind == "force_torque"]
    ros_topic = {e.gz_topic: e.ros_topic for e in load_bridge(robot=robot, fts_sensors=fts, world=sim.spec.name)}
    node = transport.node_on(sim.transport)
    fixed = {s.topic: s for s in sensors.sensors if isinstance(s, _FixedSensor)}
    lidars = {s.topic: s for s in sensors.sensors if isinstance(s, Lidar)}
    for topic, type_name in sensors.topics.items():
        ros_type, conv = next((r, f) for (r, g), f in convert.GZ_TO_ROS.items() if g == type_name)
        channel = ros_topic.get(topic, topic)
        mcap.channel(channel, ros_type)
        sensor = fixed.get(topic)
        if sensor is not None:  # written from the numbers, as the bus path would write them
            sensor.log, sensor.log_channel = _log_writer(sensor, mcap, channel, ros_type, conv), channel
            continue
        sensor = lidars.get(topic)
        if sensor is not None:  # written from the cloud's rows, as the bus path would write them
            sensor.log, sensor.log_channel = _cloud_writer(sensor, mcap, channel, ros_type, conv), channel
            continue

        def write(msg, channel=channel, conv=conv):
            stamp = msg.header.stamp
            mcap.write(channel, int(stamp.sec) * 1_000_000_000 + int(stamp.nsec), conv(msg))

        node.subscribe(msgs.MESSAGES[type_name.rsplit(".", 1)[-1]], topic, write)


def _log_writer(sensor: _FixedSensor, mcap, channel: str, ros_type: str, conv):
    """log(t_ns, values) writing the CDR bytes of ``conv(sensor.message(t_ns, values))`` (a CdrTemplate of it)."""
    from eels_gz.ros.messages import CdrTemplate

    template = CdrTemplate(ros_type, lambda st, v: conv(sensor.message(st[0][0] * 1_000_000_000 + st[0][1], v)),
                           sensor.n_values)

    def write(t_ns: int, values: np.ndarray) -> None:
        mcap.write_cdr(channel, t_ns, template.encode(t_ns, values))

    return write


def _cloud_writer(lidar: Lidar, mcap, channel: str, ros_type: str, conv):
    """log(t_ns, cloud, dense) writing the CDR bytes of ``conv(lidar.message(t_ns, cloud, dense))`` (a
    BlobTemplate of it: the pattern's size never changes)."""
    from eels_gz.ros.messages import BlobTemplate

    template = BlobTemplate(ros_type, lambda st, data, dense: conv(lidar.message(
        st[0] * 1_000_000_000 + st[1], data, dense)), 16 * lidar.pattern.size)

    def write(t_ns: int, data: np.ndarray, dense: bool) -> None:
        mcap.write_cdr(channel, t_ns, template.encode(t_ns, data, dense))

    return write
