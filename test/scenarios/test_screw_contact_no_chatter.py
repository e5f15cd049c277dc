"""The screw contact's implicit across-thread force bound does not make a screw chatter (issue 43's
leader_follower finding, docs/contact.md).

Eq. 6's set is ``|u| <= 1``. The implicit step's across force was bounded by the start-of-step along
part, ``mu |e_v| F_n sqrt(1 - u_a^2)``, which for a sliding point is exactly the explicit law's force:
once a point's slip turned towards its blade the force sat on that bound and every push past it was
the explicit law again, 20-100 times stiffer than the step's own slope. In ``leader_follower`` the
tail module's screw then chattered at period 2 from about 0.6 s (on a 1.23 rad/s command), amplifying
round-off (the run parted from gz-sim's by 32 um,
a screw's velocity difference growing tenfold every three steps). The set is now applied at the end
of the step: the across force may use the whole capacity ``mu |e_v| F_n`` and the along part of
``u`` gives way where the pair would leave the unit circle.

Measured here: the period-2 part of every screw's joint velocity over 0.6-1.0 s, the RMS of its second
difference over 4 (a pure period-2 oscillation of amplitude A gives A; a smooth motion gives about
dt^2 times its third derivative, microradians per second). Bound: 0.05 rad/s, 4 % of the command,
against 0.131 rad/s (module_1_screw) before the fix and 0.0016 after it.
"""

from __future__ import annotations

import numpy as np
from mcap.reader import make_reader
from rosbags.typesys import Stores, get_typestore

from eels_gz import config
from eels_gz.run.runner import run

BOUND = 0.05  # rad/s (module docstring)


def test_leader_follower_screws_do_not_chatter(tmp_path):
    cfg = config.resolve(overrides={"scenario": {"name": "leader_follower"}, "duration": 1.0,
                                    "sensors": {"enabled": False},
                                    "log": {"mcap": True, "plot": False, "rate": 1000.0}})
    summary = run(cfg, tmp_path)
    assert summary["status"] == "ok", summary.get("message")
    typestore = get_typestore(Stores.ROS2_JAZZY)
    names, rows = None, []
    with open(tmp_path / "log.mcap", "rb") as f:
        for _, _, m in make_reader(f).iter_messages(topics=["/joint_states"]):
            js = typestore.deserialize_cdr(m.data, "sensor_msgs/msg/JointState")
            t = js.header.stamp.sec + 1e-9 * js.header.stamp.nanosec - summary["setup_sim_time"]
            if 0.6 <= t <= 1.0:
                names = list(js.name)
                rows.append(list(js.velocity))
    dq = np.array(rows)
    screws = [k for k, n in enumerate(names) if n.endswith("_screw")]
    assert len(dq) > 350 and screws
    second = dq[2:, screws] - 2 * dq[1:-1, screws] + dq[:-2, screws]
    period2 = np.sqrt(np.mean(second ** 2, axis=0)) / 4
    worst = int(np.argmax(period2))
    assert period2[worst] <= BOUND, f"{names[screws[worst]]}: period-2 part {period2[worst]:.3f} rad/s"
