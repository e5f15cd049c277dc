"""The run's small type store (eels_gz.ros.small_store) answers as rosbags' full ROS 2 Jazzy store:
the same field definitions, message definitions (the log's schemas) and CDR bytes for every type
eels_gz names, whether its definitions come from the user cache or from rosbags, and any other
type on demand."""

from __future__ import annotations

import numpy as np
import pytest
from rosbags.typesys import Stores, get_typestore

from eels_gz.ros import messages, small_store


@pytest.fixture(scope="module")
def full():
    return get_typestore(Stores.ROS2_JAZZY)


@pytest.fixture(params=["cold cache", "warm cache"])
def store(request, tmp_path_factory, monkeypatch):
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("EELS_GZ_CACHE_DIR", str(folder))
    if request.param == "warm cache":
        small_store.SmallStore()  # fills the cache
        assert list((folder / "rosbags").glob("*.json")), "the definitions were not cached"
    return small_store.SmallStore()


def test_known_types_have_the_full_stores_definitions(store, full):
    for name in small_store.KNOWN:
        assert dict.__contains__(store.fielddefs, name), f"{name} not registered up front"
        assert store.fielddefs[name] == full.fielddefs[name], name
        assert store.generate_msgdef(name, ros_version=2) == full.generate_msgdef(name, ros_version=2), name


def _samples(T):
    stamp = T["builtin_interfaces/msg/Time"](sec=7, nanosec=123_456_789)
    header = T["std_msgs/msg/Header"](stamp=stamp, frame_id="odom")
    vec = T["geometry_msgs/msg/Vector3"]
    quat = T["geometry_msgs/msg/Quaternion"](x=0.1, y=-0.2, z=0.3, w=0.9)
    return {
        "sensor_msgs/msg/JointState": T["sensor_msgs/msg/JointState"](
            header=header, name=["a", "bb"], position=np.array([1.5, -2.0]), velocity=np.array([0.25, 3.0]),
            effort=np.array([-1.0, 4.5])),
        "sensor_msgs/msg/Imu": T["sensor_msgs/msg/Imu"](
            header=header, orientation=quat, orientation_covariance=np.arange(9, dtype=np.float64),
            angular_velocity=vec(x=0.01, y=0.0, z=-0.02), angular_velocity_covariance=np.ones(9),
            linear_acceleration=vec(x=0.0, y=0.0, z=9.80665), linear_acceleration_covariance=np.zeros(9)),
        "geometry_msgs/msg/WrenchStamped": T["geometry_msgs/msg/WrenchStamped"](
            header=header, wrench=T["geometry_msgs/msg/Wrench"](force=vec(x=1.0, y=-2.0, z=3.5),
                                                                torque=vec(x=0.25, y=0.5, z=-0.75))),
        "rosgraph_msgs/msg/Clock": T["rosgraph_msgs/msg/Clock"](clock=stamp),
    }


def test_cdr_bytes_match_the_full_store(store, full):
    mine, theirs = _samples(store.types), _samples(full.types)
    for name in mine:
        assert bytes(store.serialize_cdr(mine[name], name)) == bytes(full.serialize_cdr(theirs[name], name)), name
        back = store.deserialize_cdr(bytes(full.serialize_cdr(theirs[name], name)), name)
        assert bytes(store.serialize_cdr(back, name)) == bytes(full.serialize_cdr(theirs[name], name)), name


def test_other_types_are_loaded_on_demand(store, full):
    name = "sensor_msgs/msg/Joy"
    assert name not in small_store.KNOWN
    assert name in store.fielddefs
    assert store.fielddefs[name] == full.fielddefs[name]
    assert store.generate_msgdef(name, ros_version=2) == full.generate_msgdef(name, ros_version=2)
    assert set(store.types) == set(full.types)


def test_a_corrupt_cache_entry_is_recomputed(tmp_path, monkeypatch, full):
    monkeypatch.setenv("EELS_GZ_CACHE_DIR", str(tmp_path))
    small_store.SmallStore()
    (entry,) = (tmp_path / "rosbags").glob("*.json")
    entry.write_text("{not json")
    store = small_store.SmallStore()
    assert store.fielddefs["nav_msgs/msg/Odometry"] == full.fielddefs["nav_msgs/msg/Odometry"]


def test_the_run_uses_it():
    messages.typestore.cache_clear()
    assert isinstance(messages.typestore(), small_store.SmallStore)
