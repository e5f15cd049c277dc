"""The SDF of a sensor as the host reads it: text and numbers of its elements with the file
and element named on bad input, and the frame id gz-sensors 8 stamps on its messages. Shared by the
host's sensors (:mod:`eels_gz.dart.sensors`) and cameras (:mod:`eels_gz.dart.cameras`)."""

from __future__ import annotations

from eels_gz.errors import DescriptionError


def _text(el, path: str, default=None):
    node = el.find(path)
    if node is None or node.text is None:
        return default
    return node.text.strip()


def _float(el, path: str, default: float | None, where: str) -> float:
    text = _text(el, path)
    if text is None:
        if default is None:
            raise DescriptionError(f"{where}: <{path}> is required")
        return default
    try:
        return float(text)
    except ValueError:
        raise DescriptionError(f"{where}: <{path}> must be a number, got '{text}'") from None


CAMERA_KINDS = ("camera", "depth_camera", "rgbd_camera")


def sensor_frame_id(el, name: str, kind: str) -> str:
    """The frame id a sensor's messages carry, as gz-sensors 8 stamps it (``Sensor.cc``: ``<gz_frame_id>``,
    else the sensor's name; cameras' ``CameraSensor.cc``/``DepthCameraSensor.cc``: ``<optical_frame_id>``,
    else that frame id)."""
    frame = _text(el, "gz_frame_id") or name
    if kind in CAMERA_KINDS:
        return _text(el, "camera/optical_frame_id") or frame
    return frame
