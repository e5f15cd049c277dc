"""The host's gz-transport (eels_gz.gzapi.transport) and gz.msgs classes
(eels_gz.gzapi.msgs), as plugins see them through plugins_py/gz_compat:
gz-transport's Python API, protobuf-like messages, and deterministic
delivery (published during step k -> delivered before step k+1's pre_update)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from eels_gz.gzapi import msgs, transport
from eels_gz.dart.simulation import Simulation

LOADER = 'filename="gz-sim-python-system-loader-system" name="gz::sim::systems::PythonSystemLoader"'


# --- messages ------------------------------------------------------------------------
def test_messages_are_nested_with_proto3_defaults():
    odom = msgs.Odometry()
    assert odom.pose.position.x == 0.0 and odom.header.stamp.sec == 0 and odom.pose.name == ""
    odom.twist.linear.x = 1.5
    odom.header.stamp.sec = 7
    assert (odom.twist.linear.x, odom.header.stamp.sec) == (1.5, 7)
    assert msgs.Twist.DESCRIPTOR.full_name == "gz.msgs.Twist"
    assert msgs.Pose_V.DESCRIPTOR.full_name == "gz.msgs.Pose_V"


def test_message_constructor_and_repeated_fields():
    t = msgs.Twist(linear={"x": 1.0, "y": 2.0}, angular=msgs.Vector3d(z=0.5))
    assert (t.linear.x, t.linear.y, t.angular.z) == (1.0, 2.0, 0.5)
    poses = msgs.Pose_V()
    p = poses.pose.add(name="base_link")
    p.position.z = 3.0
    poses.pose.add().name = "odom"
    assert [q.name for q in poses.pose] == ["base_link", "odom"] and poses.pose[0].position.z == 3.0
    model = msgs.Model(joint=[{"name": "j1", "axis1": {"position": 0.25}}])
    assert model.joint[0].name == "j1" and model.joint[0].axis1.position == 0.25


def test_message_field_errors_match_protobuf():
    t = msgs.Twist()
    with pytest.raises(AttributeError, match="assignment not allowed"):
        t.linear = msgs.Vector3d(x=1.0)
    with pytest.raises(AttributeError, match="no field 'speed'"):
        t.speed = 1.0
    with pytest.raises(ValueError, match='no "speed" field'):
        msgs.Twist(speed=1.0)
    with pytest.raises(TypeError, match="expected Twist"):
        t.CopyFrom(msgs.Pose())


def test_copy_is_deep():
    a = msgs.Pose_V()
    a.pose.add(name="x").position.x = 1.0
    b = a.copy()
    a.pose[0].position.x = 2.0
    a.pose.add(name="y")
    assert len(b.pose) == 1 and b.pose[0].position.x == 1.0 and b == b.copy() and a != b


def test_header_frame_id():
    h = msgs.Header()
    assert msgs.frame_id_of(h) == ""
    msgs.set_frame_id(h, "imu_link")
    msgs.stamp_of(h, 1.25)
    assert msgs.frame_id_of(h) == "imu_link" and (h.stamp.sec, h.stamp.nsec) == (1, 250_000_000)


# --- transport on a bus ----------------------------------------------------------------
def test_publish_is_delivered_on_deliver_in_order_as_a_copy():
    bus = transport.Bus()
    node = transport.node_on(bus)
    got = []
    assert node.subscribe(msgs.Double, "/x", lambda m: got.append(m.data))
    pub = node.advertise("/x", msgs.Double)
    assert pub.valid() and pub.has_connections()
    msg = msgs.Double()
    for v in (1.0, 2.0, 3.0):
        msg.data = v  # reusing the object: the bus keeps a copy per publish
        assert pub.publish(msg)
    assert got == [] and bus.pending() == 3
    assert bus.deliver() == 3
    assert got == [1.0, 2.0, 3.0] and bus.pending() == 0


def test_topic_names_are_normalized_like_gz_transport():
    bus = transport.Bus()
    node = transport.node_on(bus)
    got = []
    node.subscribe(msgs.Boolean, "flag", lambda m: got.append(m.data))
    node.advertise("/flag", msgs.Boolean).publish(msgs.Boolean(data=True))
    bus.deliver()
    assert got == [True]
    for bad in ("", "/", "a b", "a//b", "x@y"):
        assert not node.advertise(bad, msgs.Boolean).valid()
        assert not node.subscribe(msgs.Boolean, bad, got.append)


def test_type_mismatch_is_not_delivered():
    bus = transport.Bus()
    node = transport.node_on(bus)
    got = []
    node.subscribe(msgs.Twist, "/cmd", got.append)
    pub = node.advertise("/cmd", msgs.Double)
    assert pub.publish(msgs.Double(data=1.0))
    assert not pub.publish(msgs.Twist())  # wrong type for this publisher
    assert not node.advertise("/cmd", msgs.Twist).valid()  # already advertised as Double
    bus.deliver()
    assert got == []


def test_unsubscribe_and_callback_failure():
    bus = transport.Bus()
    node, other = transport.node_on(bus), transport.node_on(bus)
    got = []

    def broken(_msg):
        raise RuntimeError("boom")

    node.subscribe(msgs.Double, "/x", broken)
    other.subscribe(msgs.Double, "/x", lambda m: got.append(m.data))
    pub = node.advertise("/x", msgs.Double)
    pub.publish(msgs.Double(data=1.0))
    bus.deliver()  # the failing callback is logged, the other still runs
    assert got == [1.0]
    assert node.unsubscribe("/x") and not node.unsubscribe("/x")
    assert node.subscribed_topics() == [] and "/x" in node.topic_list()


def test_publish_from_another_thread():
    bus = transport.Bus()
    node = transport.node_on(bus)
    got = []
    node.subscribe(msgs.Double, "/x", lambda m: got.append(m.data))
    pub = node.advertise("/x", msgs.Double)
    n = 200
    threads = [threading.Thread(target=lambda k=k: [pub.publish(msgs.Double(data=k * n + i)) for i in range(n)])
               for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bus.deliver()
    assert sorted(got) == list(range(4 * n))


# --- in the host, through gz_compat ------------------------------------------------------
TALKER = """
    from gz_compat import msgs, transport


    class Talker:
        def configure(self, entity, sdf, ecm, event_mgr):
            self.node = transport.Node()
            self.pub = self.node.advertise("/count", msgs.Clock)
            self.seen = []  # (iteration in pre_update, iteration carried by the message)
            self.node.subscribe(msgs.Clock, "/count", self.on_count)
            self.iteration = 0

        def on_count(self, msg):
            self.seen.append((self.iteration, msg.sim.sec))

        def pre_update(self, info, ecm):
            self.iteration = info.iterations

        def post_update(self, info, ecm):
            m = msgs.Clock()
            m.sim.sec = info.iterations
            self.pub.publish(m)


    def get_system():
        return Talker()
"""


def test_host_delivers_after_the_publishing_callback(tmp_path: Path, plugin_dir):
    """gz-transport hands a message to its own process's subscribers from the publish thread
    (Node.cc), which runs while the publishing Python system's callback has returned the GIL: the
    host delivers after each system callback, so a message published in post_update k arrives in
    post_update k, and nothing waits for the next step."""
    plugin_dir("talker", TALKER)
    world = tmp_path / "w.sdf"
    world.write_text(f"""<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics name="1ms" type="dart"><max_step_size>0.001</max_step_size></physics>
  <plugin {LOADER}><module_name>talker</module_name></plugin>
</world></sdf>""")
    sim = Simulation(world)
    import gz_compat

    assert gz_compat.transport is transport and gz_compat.msgs is msgs and gz_compat.HOST == "embedded"
    for _ in range(4):
        sim.step()
    (talker,) = [s.system for s in sim.systems if s.module == "talker"]
    assert talker.seen == [(1, 1), (2, 2), (3, 3), (4, 4)]  # (iteration of the callback, of the message)
    assert sim.transport.pending() == 0
    # a second simulation has its own bus: nothing leaks between them
    sim2 = Simulation(world)
    assert sim2.transport is not sim.transport and sim2.transport.pending() == 0


COMMANDER = """
    from gz_compat import msgs, transport


    class Commander:
        def configure(self, entity, sdf, ecm, event_mgr):
            self.node = transport.Node()
            self.pub = self.node.advertise("/cmd", msgs.Clock)

        def pre_update(self, info, ecm):
            m = msgs.Clock()
            m.sim.sec = info.iterations
            self.pub.publish(m)


    def get_system():
        return Commander()
"""

FOLLOWER = """
    from gz_compat import msgs, transport


    class Follower:
        def configure(self, entity, sdf, ecm, event_mgr):
            self.node = transport.Node()
            self.node.subscribe(msgs.Clock, "/cmd", self.on_cmd)
            self.last = None
            self.acted = []  # (iteration of pre_update, iteration of the command it acts on)

        def on_cmd(self, msg):
            self.last = msg.sim.sec

        def pre_update(self, info, ecm):
            self.acted.append((info.iterations, self.last))


    def get_system():
        return Follower()
"""


def test_a_command_reaches_the_next_system_in_the_same_iteration(tmp_path: Path, plugin_dir):
    """A command a system publishes in pre_update is acted on by a system after it in the same
    pre_update, as rover_drive's /cmd_vel reaches icr_steering in gz-sim (measured with both in
    gz-sim 8.14: docs/gazebo.md)."""
    plugin_dir("commander", COMMANDER)
    plugin_dir("follower", FOLLOWER)
    world = tmp_path / "w.sdf"
    world.write_text(f"""<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics name="1ms" type="dart"><max_step_size>0.001</max_step_size></physics>
  <plugin {LOADER}><module_name>commander</module_name></plugin>
  <plugin {LOADER}><module_name>follower</module_name></plugin>
</world></sdf>""")
    sim = Simulation(world)
    for _ in range(3):
        sim.step()
    (follower,) = [s.system for s in sim.systems if s.module == "follower"]
    assert follower.acted == [(1, 1), (2, 2), (3, 3)]


def test_gz_compat_under_gazebo_binds_gz_transport_and_pb2_classes(tmp_path):
    """With (fake) gz-sim 8 bindings and no host running: transport13 and msgs10's *_pb2 classes."""
    import os
    import subprocess
    import sys

    root = tmp_path / "fake_gz"
    files = {
        "gz/__init__.py": "",
        "gz/sim8/__init__.py": "",
        "gz/math7/__init__.py": "",
        "gz/transport13/__init__.py": "FAKE = 'transport13'\n",
        "gz/msgs10/__init__.py": "",
        "gz/msgs10/twist_pb2.py": "class Twist:\n    pass\n",
        "gz/msgs10/pointcloud_packed_pb2.py": "class PointCloudPacked:\n    pass\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, (root, repo / "plugins_py", repo))))
    code = ("import gz_compat\n"
            "from gz_compat import msgs, transport\n"
            "print(transport.FAKE, msgs.Twist.__module__, msgs.PointCloudPacked.__module__)\n"
            "try:\n    msgs.Nope\nexcept AttributeError as e:\n    print('missing', 'msgs10.nope_pb2' in str(e))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["transport13", "gz.msgs10.twist_pb2", "gz.msgs10.pointcloud_packed_pb2",
                                     "missing", "True"]
