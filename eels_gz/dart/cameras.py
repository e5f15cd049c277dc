"""The description's ``camera`` and ``depth_camera`` sensors in the host:
rendered at each sensor's ``<update_rate>`` by OpenGL through EGL
(eels_gz.dart.gl_render), or, where that cannot start or with
``sensors.camera_renderer: tracer``, by ray casting the terrain's distance
field and the robot's shapes (eels_gz.sensors.camera.render); published like
gz-sensors publishes them:

- ``camera``: gz.msgs.Image ``RGB_INT8`` (``<image><format>R8G8B8``) on
  ``<topic>``;
- ``depth_camera``: gz.msgs.Image ``R_FLOAT32`` depth in metres along the
  optical axis on ``<topic>``, and gz.msgs.PointCloudPacked on
  ``<topic>/points`` (gz-sensors 8 DepthCameraSensor: fields x y z rgb
  float32 at offsets 0 4 8 16, point_step 24, one point per pixel, row by
  row; the points in the REP-103 optical frame the header names, +inf where
  the pixel sees nothing, rgb white);
- both: gz.msgs.CameraInfo on ``<camera><camera_info_topic>``, else the
  topic's parent + ``/camera_info`` (gz-sensors' default).

Camera models (eels_gz.sensors.camera_models), from the SDF:

- ``<lens><type>gnomonical`` (the default): pinhole with ``<distortion>``
  (Brown-Conrady);
- ``<lens><type>equidistant``: fish-eye, ``<lens><cutoff_angle>``,
  ``<distortion>`` k1 k2 k3 as OpenCV's fish-eye k1 k2 k3 (k4 = 0);
- ``<camera><eels:cahvore>`` (any namespace URI bound to the ``eels``
  prefix; libsdformat copies such custom elements): ``<c> <a> <h> <v>`` and
  optionally ``<o> <r>`` (CAHVOR) and ``<e> <linearity>`` (CAHVORE), vectors
  in the sensor frame;
- ``<camera><eels:vignetting>`` and ``<eels:gamma>``: lens effects of any
  model.

The header's frame is ``<camera><optical_frame_id>`` (the REP-103 optical
frame: z forward, x right, y down), else ``<gz_frame_id>``, else the
sensor's name, as in gz-sensors (``sensors.sensor_frame_id``). The image
is rendered in the optical frame of the sensor's pose (``T_SENSOR_OPTICAL``
after the sensor's ``<pose>`` on its link), whatever the frame id says;
urdf/eels.gazebo.xacro names the ``*_optical_frame`` link that sits exactly
there, and test/unit/test_camera.py checks that it does.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from eels_gz.errors import ConfigError, DescriptionError
from eels_gz.gzapi import msgs
from eels_gz.dart.sensor_sdf import _float, _text, sensor_frame_id
from eels_gz.ros.camera_bridge import camera_topics, points_topic
from eels_gz.sensors.camera import (T_SENSOR_OPTICAL, Distortion, Lighting, PinholeCamera, depth_image, render,
                                    shade, to_rgb8)
from eels_gz.sensors.camera_models import CahvoreCamera, FisheyeCamera, LensEffects

log = logging.getLogger(__name__)
RENDERERS = ("auto", "gl", "tracer")
ROBOT_RGB = (0.9, 0.45, 0.1)  # the robot's albedo in camera images (its URDF has no materials)
FORMATS = {"camera": ("R8G8B8",), "depth_camera": ("R_FLOAT32", "")}


def _eels(node, name: str):
    """The child ``eels:<name>`` of ``node`` (the ``eels`` prefix, whatever URI it is bound to), or None."""
    if node is None:
        return None
    for child in node:
        if isinstance(child.tag, str) and child.prefix == "eels" and child.tag.endswith("}" + name):
            return child
    return None


def _vector3(node, name: str, where: str, default=None):
    text = _text(node, name)
    if text is None:
        if default is None:
            raise DescriptionError(f"{where}: <eels:cahvore> needs <{name}> (3 numbers)")
        return default
    try:
        v = tuple(float(x) for x in text.split())
    except ValueError:
        v = ()
    if len(v) != 3 or not all(math.isfinite(x) for x in v):
        raise DescriptionError(f"{where}: <eels:cahvore><{name}> must be 3 numbers, got '{text}'")
    return v


def lens_effects(el, where: str) -> LensEffects:
    """``<camera><eels:vignetting>`` and ``<eels:gamma>`` (defaults 0 and 1: none)."""
    cam = el.find("camera")
    values = {}
    for name, default in (("vignetting", 0.0), ("gamma", 1.0)):
        node = _eels(cam, name)
        try:
            values[name] = default if node is None or not (node.text or "").strip() else float(node.text)
        except ValueError:
            raise DescriptionError(f"{where}: <camera><eels:{name}> must be a number, got '{node.text}'") from None
    try:
        return LensEffects(**values)
    except ConfigError as exc:
        raise DescriptionError(f"{where}: <camera><eels:...>: {exc}") from None


def camera_model(el, where: str):
    """The camera model of a ``<sensor type="camera|depth_camera">`` element (SDF 1.11 ``<camera>``): pinhole,
    fish-eye or CAHV family (see the module docstring)."""
    if el.find("camera") is None:
        raise DescriptionError(f"{where}: a camera sensor needs a <camera> element")
    width = int(_float(el, "camera/image/width", 320.0, where))
    height = int(_float(el, "camera/image/height", 240.0, where))
    near, far = _float(el, "camera/clip/near", 0.1, where), _float(el, "camera/clip/far", 100.0, where)
    effects = lens_effects(el, where)
    cahv = _eels(el.find("camera"), "cahvore")
    lens = _text(el, "camera/lens/type", "gnomonical") if el.find("camera/lens") is not None else "gnomonical"
    try:
        if cahv is not None:
            if lens != "gnomonical":
                raise DescriptionError(f"{where}: <eels:cahvore> is its own lens model; drop <lens><type> '{lens}'")
            kw = {k: _vector3(cahv, k, where) for k in ("c", "a", "h", "v")}
            has = {k: cahv.find(k) is not None for k in ("o", "r", "e", "linearity")}
            kind = "cahvore" if has["e"] or has["linearity"] else "cahvor" if has["o"] or has["r"] else "cahv"
            if has["o"]:
                kw["o"] = _vector3(cahv, "o", where)
            kw["r"] = _vector3(cahv, "r", where, (0.0, 0.0, 0.0))
            kw["e"] = _vector3(cahv, "e", where, (0.0, 0.0, 0.0))
            linearity = _float(cahv, "linearity", 1.0, where)
            return CahvoreCamera(width, height, near=near, far=far, kind=kind, linearity=linearity,
                                 effects=effects, **kw)
        if el.find("camera/lens/intrinsics") is not None:
            raise DescriptionError(f"{where}: <camera><lens><intrinsics> is not supported by the host; give "
                                   "<horizontal_fov> (square pixels, principal point at the image centre)")
        distortion = _distortion(el.find("camera/distortion"), where)
        hfov = _float(el, "camera/horizontal_fov", 1.047, where)
        if lens == "equidistant":
            if _text(el, "camera/lens/scale_to_hfov", "true") not in ("true", "1"):
                raise DescriptionError(f"{where}: <lens><scale_to_hfov> false: the host's fish-eye takes its "
                                       "focal length from <horizontal_fov>")
            if distortion.p1 or distortion.p2 or distortion.center != (0.5, 0.5):
                raise DescriptionError(f"{where}: a fish-eye lens takes <distortion> k1 k2 k3 only (OpenCV's "
                                       "fish-eye model), not p1, p2 or <center>")
            return FisheyeCamera(width, height, hfov, near, far, (distortion.k1, distortion.k2, distortion.k3, 0.0),
                                 _float(el, "camera/lens/cutoff_angle", math.pi, where), effects)
        if lens != "gnomonical":
            raise DescriptionError(f"{where}: <camera><lens><type> '{lens}': the host renders gnomonical "
                                   "(pinhole) and equidistant (fish-eye) lenses, and <eels:cahvore>")
        return PinholeCamera(width, height, hfov, near, far, distortion, effects)
    except ConfigError as exc:
        raise DescriptionError(f"{where}: {exc}") from None


def _distortion(d, where: str) -> Distortion:
    if d is None:
        return Distortion()
    center = (_text(d, "center") or "0.5 0.5").split()
    try:
        c = (float(center[0]), float(center[1]))
    except (ValueError, IndexError):
        raise DescriptionError(f"{where}: <distortion><center> must be two numbers, got "
                               f"'{_text(d, 'center')}'") from None
    return Distortion(*(_float(d, k, 0.0, where) for k in ("k1", "k2", "k3", "p1", "p2")), center=c)


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
                 field, shapes_of, albedo_terrain, sun_direction, scope: str = "", renderer=None):
        self.sensor, self.kind, self.body = sensor, kind, body
        where = sensor.where
        fmt = _text(el, "camera/image/format", FORMATS[kind][0])
        if fmt not in FORMATS[kind]:
            raise DescriptionError(f"{where}: <image><format> '{fmt}': the host renders {kind} as "
                                   f"{FORMATS[kind][0]}")
        self.model = camera_model(el, where)
        self.rays = self.model.pixel_rays()
        self.vignetting = self.model.effects.factor(self.rays) if self.model.effects.vignetting else None
        self.renderer, self.views = renderer, None
        if renderer is not None:
            from eels_gz.dart.gl_render import CameraViews

            try:
                renderer.prepare(field)
            except TypeError as exc:  # a terrain the rasteriser cannot draw: this camera traces
                log.warning("%s: %s; this camera renders with the tracer", where, exc)
                self.renderer = None
            else:
                self.views = CameraViews(self.model, self.rays)
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
        self.points = None
        if kind == "depth_camera":
            self.points = PointsTopic(self, node.advertise(points_topic(self.topic), msgs.PointCloudPacked))

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

    def frame(self, t_ns: int | None = None):
        from eels_gz.dart.robot_shapes import robot_shapes

        if self.renderer is not None:
            mean, std = self.noise
            plain = not (mean or std) and self.model.effects.is_identity
            want = "depth" if self.kind == "depth_camera" else "rgb8" if plain else "both"
            # the robot's shapes seen from this link at this instant: the same for every camera on the link
            key = None if t_ns is None else (t_ns, self.body.getName())
            return self.renderer.render(self.views, self.pose(), self.field, lambda: robot_shapes(self.shapes_of),
                                        self.albedo, self.lighting, want, key)
        return render(self.model, self.rays, self.pose(), self.field, robot_shapes(self.shapes_of))

    def image(self, t_ns: int | None = None) -> np.ndarray:
        """The next image: (H, W, 3) uint8 RGB, or (H, W) float32 depth in metres."""
        fr = self.frame(t_ns)
        mean, std = self.noise
        if self.kind == "depth_camera":
            depth = depth_image(fr, self.model)
            if std or mean:
                finite = np.isfinite(depth)
                depth[finite] += (mean + std * self.rng.standard_normal(int(finite.sum()))).astype(np.float32)
            return depth
        rgb = fr.rgb
        if rgb is not None and rgb.dtype == np.uint8:  # quantized by GL: no noise, no lens effects
            return rgb
        if rgb is None:
            rgb = shade(fr, self.rays @ self.pose()[:3, :3].T, self.albedo, self.lighting)
        rgb = self.model.effects.apply(rgb, self.vignetting)
        return to_rgb8(rgb, std, mean, self.rng)

    def publish(self, t_ns: int) -> None:
        data = self.image(t_ns)
        m = self.model
        img = msgs.Image(width=m.width, height=m.height)
        _header(img, t_ns, self.frame_id)
        img.pixel_format_type = msgs.R_FLOAT32 if data.dtype == np.float32 else msgs.RGB_INT8
        img.step = int(data.strides[0])
        img.data = data.astype("<f4" if data.dtype == np.float32 else np.uint8, copy=False).tobytes()
        info = msgs.CameraInfo(width=m.width, height=m.height)
        _header(info, t_ns, self.frame_id)
        info.distortion.model = msgs.EQUIDISTANT if m.distortion_model == "equidistant" else msgs.PLUMB_BOB
        info.distortion.k.extend(m.D.tolist())
        info.intrinsics.k.extend(m.K.reshape(-1).tolist())
        info.projection.p.extend(m.P.reshape(-1).tolist())
        info.rectification_matrix.extend(np.eye(3).reshape(-1).tolist())
        self.pub.publish(img)
        self.info.pub.publish(info)
        if self.points is not None:
            self.points.publish(t_ns, data)

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


class PointsTopic:
    """A depth camera's ``<topic>/points`` (see the module docstring), published with each depth image."""

    wall_time = 0.0
    kind = "depth_points"
    period = None

    def __init__(self, camera: Camera, pub):
        self.camera, self.pub = camera, pub
        self.name, self.topic = f"{camera.name} points", transport_topic(pub)
        rays = camera.rays.reshape(-1, 3)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.per_depth = (rays / rays[:, 2:3]).astype(np.float32)  # a point is depth x (x/z, y/z, 1)
        self.white = np.array([0xFFFFFFFF], dtype="<u4").view("<f4")[0]

    def due(self) -> bool:
        return False

    def cloud(self, depth: np.ndarray) -> np.ndarray:
        """Rows (H*W, 6) float32 x y z, padding, rgb, padding of a depth image (m); +inf where no surface."""
        d = depth.reshape(-1, 1)
        rows = np.zeros((d.shape[0], 6), dtype="<f4")
        with np.errstate(invalid="ignore"):
            xyz = self.per_depth * d
        xyz[~np.isfinite(d[:, 0])] = np.inf
        rows[:, :3] = xyz
        rows[:, 4] = self.white
        return rows

    def publish(self, t_ns: int, depth: np.ndarray) -> None:
        m = self.camera.model
        msg = msgs.PointCloudPacked()
        _header(msg, t_ns, self.camera.frame_id)
        for name, offset in (("x", 0), ("y", 4), ("z", 8), ("rgb", 16)):
            msg.field.add(name=name, offset=offset, datatype=msgs.FLOAT32, count=1)
        msg.height, msg.width = m.height, m.width
        msg.point_step, msg.row_step = 24, 24 * m.width
        rows = self.cloud(depth)
        msg.is_dense = bool(np.isfinite(rows[:, :3]).all())
        msg.data = rows.tobytes()
        self.pub.publish(msg)


def transport_topic(pub) -> str:
    from eels_gz.gzapi import transport

    return transport.topic_of(pub)[0]


def _header(msg, t_ns: int, frame: str) -> None:
    msg.header.stamp.sec, msg.header.stamp.nsec = divmod(t_ns, 1_000_000_000)
    msgs.set_frame_id(msg.header, frame)
