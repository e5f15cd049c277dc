"""Issue 31 §7: ``run --ros`` says what it bridges (transport, domain, topic count) and summary.json
records the ROS settings; before, it said nothing and the summary had no trace of them."""

from __future__ import annotations

import re

from faults_cli import SMALL, cli, summary

from eels_gz.ros.bridge import load_bridge


def test_run_with_ros_says_what_it_bridges(tmp_path):
    out = tmp_path / "run"
    res = cli("run", *SMALL, "--duration", "0.1", "--ros", "--ros-domain", "61", "--set", "log.mcap=false",
              "--out", out)
    assert res.exit_code == 0, res.output
    said = re.search(r"ros: (\d+) topics bridged \((\d+) to ROS 2, (\d+) from ROS 2\) over (rclpy|dds) on "
                     r"ROS_DOMAIN_ID 61", res.output)
    assert said, res.output
    ros = summary(out)["ros"]
    assert ros["enabled"] is True and ros["domain"] == 61 and ros["transport"] == "auto"
    bridged = ros["bridged"]
    assert bridged["transport"] == said.group(4) and bridged["domain"] == 61
    assert bridged["topics"] == int(said.group(1)) == bridged["to_ros"] + bridged["from_ros"] - \
        sum(e.direction == "BIDIRECTIONAL" for e in load_bridge(None, robot="x", fts_sensors=[], world="w"))
    assert bridged["from_ros"] >= 1 and bridged["to_ros"] >= 1  # /cmd_vel-like commands in, /clock out


def test_run_without_ros_records_that_it_is_off(tmp_path):
    out = tmp_path / "run"
    res = cli("run", *SMALL, "--duration", "0.1", "--set", "log.mcap=false", "--out", out)
    assert res.exit_code == 0, res.output
    assert "topics bridged" not in res.output
    ros = summary(out)["ros"]
    assert ros["enabled"] is False and "bridged" not in ros
