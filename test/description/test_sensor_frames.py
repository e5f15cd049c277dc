"""Every sensor of every registry robot names its TF frame, and the embedded host stamps that frame.

gz-sensors 8 stamps ``<gz_frame_id>``, else the scoped sensor name, which no
TF tree holds (``Sensor.cc``); cameras stamp ``<optical_frame_id>``, else that
frame id (``CameraSensor.cc``, ``DepthCameraSensor.cc``). robot_state_publisher
publishes the URDF's links, so each frame must be one of them. The host's
sensors are built from the same description and their ``frame_id`` (what
their headers carry) must be the frame Gazebo would stamp.
"""

from __future__ import annotations

import pytest
from lxml import etree

from eels_gz import config, registry
from eels_gz.description.assemble import robot_description
from eels_gz.gzapi import msgs, transport
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare
from eels_gz.dart.sensors import HostSensors

CAMERA_KINDS = ("camera", "depth_camera", "rgbd_camera")  # gz-sensors stamps their <optical_frame_id>


def _xacro_args(entry) -> dict:
    return {"head": "true"} if entry.family == "eels" else {}


def gazebo_frames(entry) -> dict[str, str]:
    """sensor name -> the frame id Gazebo stamps, checked to be a link of the URDF (a TF frame)."""
    desc = robot_description(entry, xacro_args=_xacro_args(entry), gazebo=True)
    root = etree.fromstring(desc.gazebo_urdf().encode())
    links = {link.get("name") for link in root.iter("link")}
    frames = {}
    for sensor in root.iter("sensor"):
        name, kind = sensor.get("name"), sensor.get("type")
        frame = sensor.findtext("gz_frame_id")
        assert frame, f"{entry.name}: sensor '{name}' has no <gz_frame_id>"
        assert frame in links, f"{entry.name}: sensor '{name}': <gz_frame_id> {frame} is not a link"
        if kind in CAMERA_KINDS:
            frame = sensor.findtext("camera/optical_frame_id")
            assert frame in links, f"{entry.name}: camera '{name}': optical frame {frame} is not a link"
        frames[name] = frame
    return frames


@pytest.mark.parametrize("name", sorted(registry.ROBOTS))
def test_host_stamps_the_frames_gazebo_stamps(name):
    entry = registry.robot(name)
    expected = gazebo_frames(entry)
    sim = prepare(resolve_run(config.resolve(overrides={"robot": {"name": name, "xacro_args": _xacro_args(entry)},
                                            "duration": 0.01}))).sim
    sensors = HostSensors(sim, noise=False, cameras=True)
    stamped = {s.name: s.frame_id for s in sensors.sensors if hasattr(s, "frame_id") and hasattr(s, "pub")
               and not type(s).__name__.startswith("CameraInfo")}
    assert stamped == expected


def test_messages_carry_the_frame():
    """On the bus: the IMU's and a force-torque sensor's headers of EELS 1.5 carry their <gz_frame_id>."""
    entry = registry.robot("eels_1_5")
    expected = gazebo_frames(entry)
    sim = prepare(resolve_run(config.resolve(overrides={"robot": {"name": "eels_1_5", "xacro_args": {"head": "true"}},
                                            "duration": 0.01}))).sim
    sensors = HostSensors(sim, noise=False)
    fts = next(s for s in sensors.sensors if s.kind == "force_torque")
    got = {}
    node = transport.node_on(sim.transport)
    node.subscribe(msgs.IMU, "/imu", lambda m: got.setdefault("imu", m))
    node.subscribe(msgs.Wrench, fts.topic, lambda m: got.setdefault(fts.name, m))
    for _ in range(20):
        sim.step()
        sensors.post_step()
    sim.transport.deliver()
    for name, msg in got.items():
        frame = {d.key: list(d.value) for d in msg.header.data}["frame_id"]
        assert frame == [expected[name]], name
    assert set(got) == {"imu", fts.name}
