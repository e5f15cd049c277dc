"""The description's ``camera`` and ``depth_camera`` sensors in the host:
rendered by eels_gz.sensors.camera (ray casting the terrain's distance field
and the robot's shapes) at each sensor's ``<update_rate>``, published like
gz-sensors publishes them:

- ``camera``: gz.msgs.Image ``RGB_INT8`` (``<image><format>R8G8B8``) on
  ``<topic>``;
- ``depth_camera``: gz.msgs.Image ``R_FLOAT32`` depth in metres along the
  optical axis on ``<topic>`` (Gazebo also sends ``<topic>/points``; the
  host does not);
- both: gz.msgs.CameraInfo on ``<camera><camera_info_topic>``, else the
  topic's parent + ``/camera_info`` (gz-sensors' default).

The header's frame is ``<camera><optical_frame_id>`` (the REP-103 optical
frame: z forward, x right, y down), else ``<gz_frame_id>``, else the
sensor's name, as in gz-sensors (``sensors.sensor_frame_id``). The image
is rendered in the optical frame of the sensor's pose (``T_SENSOR_OPTICAL``
after the sensor's ``<pose>`` on its link), whatever the frame id says;
urdf/eels.gazebo.xacro names the ``*_optical_frame`` link that sits exactly
there, and test/unit/test_camera.py checks that it does.
"""

from __future__ import annotations

import numpy as np

from eels_gz.errors import ConfigError, DescriptionError
from eels_gz.host import msgs
from eels_gz.host.sensors import _float, _text, sensor_frame_id
from eels_gz.ros.camera_bridge import camera_topics
from eels_gz.sensors.camera import (T_SENSOR_OPTICAL, Distortion, Lighting, PinholeCamera, depth_image, render,
                                    shade, to_rgb8)

ROBOT_RGB = (0.9, 0.45, 0.1)  # the robot's albedo in camera images (its URDF has no materials)
FORMATS = {"camera": ("R8G8B8",), "depth_camera": ("R_FLOAT32", "")}


def camera_model(el, where: str) -> PinholeCamera:
    """The PinholeCamera of a ``<sensor type="camera|depth_camera">`` element (SDF 1.11 ``<camera>``)."""
    if el.find("camera") is None:
        raise DescriptionError(f"{where}: a camera sensor needs a <camera> element")
    if el.find("camera/lens") is not None and _text(el, "camera/lens/type", "gnomonical") != "gnomonical":
        raise DescriptionError(f"{where}: <camera><lens><type> '{_text(el, 'camera/lens/type')}': the host renders "
                               "pinhole (gnomonical) cameras only")
    if el.find("camera/lens/intrinsics") is not None:
        raise DescriptionError(f"{where}: <camera><lens><intrinsics> is not supported by the host; give "
                               "<horizontal_fov> (square pixels, principal point at the image centre)")
    d = el.find("camera/distortion")
    distortion = Distortion()
    if d is not None:
        center = (_text(d, "center") or "0.5 0.5").split()
        try:
            c = (float(center[0]), float(center[1]))
        except (ValueError, IndexError):
            raise DescriptionError(f"{where}: <distortion><center> must be two numbers, got "
                                   f"'{_text(d, 'center')}'") from None
        distortion = Distortion(*(_float(d, k, 0.0, where) for k in ("k1", "k2", "k3", "p1", "p2")), center=c)
    try:
        return PinholeCamera(int(_float(el, "camera/image/width", 320.0, where)),
                             int(_float(el, "camera/image/height", 240.0, where)),
                             _float(el, "camera/horizontal_fov", 1.047, where),
                             _float(el, "camera/clip/near", 0.1, where), _float(el, "camera/clip/far", 100.0, where),
                             distortion)
    except ConfigError as exc:
        raise DescriptionError(f"{where}: {exc}") from None


def camera_noise(el, where: str) -> tuple[float, float]:
    """(mean, stddev) of ``<camera><noise>`` (gaussian; child ``<type>`` as SDF's camera.sdf, or the attribute)."""
    node = el.find("camera/noise")
    if node is None:
        return 0.0, 0.0
    kind = _text(node, "type") or node.get("type", "gaussian")
    if kind not in ("gaussian", "none"):
        raise DescriptionError(f"{where}: <camera><noise> type '{kind}': the host supports gaussian noise")
    if kind == "none":
        return 0.0, 0.0
    mean, std = _float(node, "mean", 0.0, where), _float(node, "stddev", 0.0, where)
    if std < 0:
        raise DescriptionError(f"{where}: <camera><noise><stddev> must be >= 0, got {std}")
    return mean, std


class Camera:
    """One camera or depth camera of the robot (see the module docstring); ``publish(t_ns)`` renders a frame."""

    wall_time = 0.0  # seconds spent rendering and publishing (HostSensors.post_step)

    def __init__(self, sensor, el, kind: str, body, T_body_sensor: np.ndarray, node, rng, noise: bool,
                 field, shapes_of, albedo_terrain, sun_direction, scope: str = ""):
        self.sensor, self.kind, self.body = sensor, kind, body
        where = sensor.where
        fmt = _text(el, "camera/image/format", FORMATS[kind][0])
        if fmt not in FORMATS[kind]:
            raise DescriptionError(f"{where}: <image><format> '{fmt}': the host renders {kind} as "
                                   f"{FORMATS[kind][0]}")
        self.model = camera_model(el, where)
        self.rays = self.model.pixel_rays()
        self.T_body_optical = T_body_sensor @ T_SENSOR_OPTICAL
        self.field, self.shapes_of = field, shapes_of
        mean, std = camera_noise(el, where)
        self.noise = (mean, std) if noise else (0.0, 0.0)
        self.rng = rng
        self.albedo = np.array([albedo_terrain, ROBOT_RGB], dtype=float)
        self.lighting = Lighting(sun_direction=tuple(sun_direction))
        self.topic, self.info_topic = camera_topics(sensor.name, _text(el, "topic"),
                                                    _text(el, "camera/camera_info_topic"), scope, kind)
        self.frame_id = sensor_frame_id(el, sensor.name, kind)
        self.pub = node.advertise(self.topic, msgs.Image)
        self.info = CameraInfoTopic(self, node.advertise(self.info_topic, msgs.CameraInfo))

    @property
    def name(self) -> str:
        return self.sensor.name

    @property
    def period(self) -> int:
        return self.sensor.period

    def due(self) -> bool:
        return self.sensor.due()

    def pose(self) -> np.ndarray:
        """World pose (4x4) of the optical frame."""
        return self.body.getWorldTransform().matrix() @ self.T_body_optical

    def frame(self):
        from eels_gz.host.sensors import robot_shapes

        return render(self.model, self.rays, self.pose(), self.field, robot_shapes(self.shapes_of))

    def image(self) -> np.ndarray:
        """The next image: (H, W, 3) uint8 RGB, or (H, W) float32 depth in metres."""
        fr = self.frame()
        mean, std = self.noise
        if self.kind == "depth_camera":
            depth = depth_image(fr, self.model)
            if std or mean:
                finite = np.isfinite(depth)
                depth[finite] += (mean + std * self.rng.standard_normal(int(finite.sum()))).astype(np.float32)
            return depth
        rays_world = self.rays @ self.pose()[:3, :3].T
        return to_rgb8(shade(fr, rays_world, self.albedo, self.lighting), std, mean, self.rng)

    def publish(self, t_ns: int) -> None:
        data = self.image()
        m = self.model
        img = msgs.Image(width=m.width, height=m.height)
        _header(img, t_ns, self.frame_id)
        img.pixel_format_type = msgs.R_FLOAT32 if data.dtype == np.float32 else msgs.RGB_INT8
        img.step = int(data.strides[0])
        img.data = data.astype("<f4" if data.dtype == np.float32 else np.uint8, copy=False).tobytes()
        info = msgs.CameraInfo(width=m.width, height=m.height)
        _header(info, t_ns, self.frame_id)
        info.distortion.model = msgs.PLUMB_BOB
        info.distortion.k.extend(m.D.tolist())
        info.intrinsics.k.extend(m.K.reshape(-1).tolist())
        info.projection.p.extend(m.P.reshape(-1).tolist())
        info.rectification_matrix.extend(np.eye(3).reshape(-1).tolist())
        self.pub.publish(img)
        self.info.pub.publish(info)

    sample = publish  # the host's sensor loop calls sample(t_ns) on a due sensor


class CameraInfoTopic:
    """A camera's camera_info publisher, listed beside the camera among the host's sensors (so the sensors'
    topics, and the log, include it); the camera publishes it with each image, it is never due itself."""

    wall_time = 0.0
    kind = "camera_info"
    period = None  # published with its camera's images, never on its own

    def __init__(self, camera: Camera, pub):
        self.camera, self.pub = camera, pub
        self.name, self.topic = f"{camera.name} camera_info", camera.info_topic

    def due(self) -> bool:
        return False


def _header(msg, t_ns: int, frame: str) -> None:
    msg.header.stamp.sec, msg.header.stamp.nsec = divmod(t_ns, 1_000_000_000)
    msgs.set_frame_id(msg.header, frame)
