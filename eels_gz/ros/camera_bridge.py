"""Bridge entries for the description's cameras: one image and one camera_info topic per ``camera`` or
``depth_camera`` sensor, and a depth camera's point cloud (``<topic>/points``, gz-sensors 8's
DepthCameraSensor), named as gz-sensors names them, the same on the gz and the ROS side (as
ros_gz_image's image_bridge and parameter_bridge give them). config/bridge.yaml has no per-camera template,
so eels_gz.ros.interface and launch/sim.launch.py add these to their entries."""

from __future__ import annotations

from eels_gz.ros.bridge import BridgeEntry

CAMERA_TYPES = ("camera", "depth_camera")


DEFAULT_SUFFIX = {"camera": "image", "depth_camera": "depth_image"}


def camera_topics(name: str, topic: str | None, info_topic: str | None = None, scope: str = "",
                  kind: str = "camera") -> tuple[str, str]:
    """(image, camera_info) topics of a camera sensor as gz-sensors names them: ``<topic>``, else gz-sim's
    default ``<scope>/image`` (``/depth_image`` for a depth camera; ``scope`` is the sensor's scoped name
    ``/world/W/model/M/link/L/sensor/S``, or ``/<name>`` when not known); and ``<camera_info_topic>``, else the
    image topic's parent + ``/camera_info``."""
    default = f"{scope or '/' + name}/{DEFAULT_SUFFIX.get(kind, 'image')}"
    image = "/" + (topic or default).strip().strip("/")
    if info_topic and info_topic.strip() not in ("", "__default__"):
        return image, "/" + info_topic.strip().strip("/")
    parent = image.rsplit("/", 1)[0]
    return image, f"{parent}/camera_info"


def points_topic(image_topic: str) -> str:
    """A depth camera's point cloud topic: its ``<topic>`` + ``/points`` (gz-sensors DepthCameraSensor)."""
    return f"{image_topic.rstrip('/')}/points"


def camera_entries(cameras: list[tuple[str, ...]]) -> list[BridgeEntry]:
    """Bridge entries of cameras given as (image topic, camera_info topic[, point cloud topic])."""
    out = []
    for image, info, *points in cameras:
        out.append(BridgeEntry(image, image, "sensor_msgs/msg/Image", "gz.msgs.Image", "GZ_TO_ROS"))
        out.append(BridgeEntry(info, info, "sensor_msgs/msg/CameraInfo", "gz.msgs.CameraInfo", "GZ_TO_ROS"))
        for cloud in points:
            out.append(BridgeEntry(cloud, cloud, "sensor_msgs/msg/PointCloud2", "gz.msgs.PointCloudPacked",
                                   "GZ_TO_ROS"))
    return out


def description_cameras(sensor_specs, world: str = "", model: str = "") -> list[tuple[str, ...]]:
    """(image, camera_info) topics of every camera, (image, camera_info, points) of every depth camera, in
    (reference, name, type, element) specs of model ``model`` in world ``world``."""
    out = []
    for ref, name, kind, el in sensor_specs:
        if kind in CAMERA_TYPES:
            scope = f"/world/{world}/model/{model}/link/{ref}/sensor/{name}" if world and model else ""
            topics = camera_topics(name, _text(el, "topic"), _text(el, "camera/camera_info_topic"), scope, kind)
            out.append(topics + (points_topic(topics[0]),) if kind == "depth_camera" else topics)
    return out


def _text(el, path: str) -> str | None:
    node = el.find(path)
    return node.text.strip() if node is not None and node.text else None
