"""Start ``ros2 launch eels_gz sim.launch.py ...`` for the ROS 2 tier, talk to it through ros_probe.py, and
stop it (the launch's whole process group: gz-sim, the bridge, robot_state_publisher)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

PROBE = Path(__file__).with_name("ros_probe.py")
_COUNT = [0]


class Launch:
    def __init__(self, env: dict, log: Path, *args: str, tmpdir: Path | None = None):
        ros2 = shutil.which("ros2", path=env.get("PATH"))
        assert ros2, "ros2 is not on the ROS 2 environment's PATH"
        self.env = dict(env)
        # a launch of its own: module-scoped launches overlap, and two gz-sim worlds on one partition, or
        # two bridges on one ROS domain, mix their clocks and topics
        _COUNT[0] += 1
        self.env["GZ_PARTITION"] = f"{env.get('GZ_PARTITION', 'eels_gz')}_{_COUNT[0]}"
        self.env["ROS_DOMAIN_ID"] = str((int(env.get("ROS_DOMAIN_ID", "100")) + _COUNT[0]) % 233)
        if tmpdir is not None:  # where scenario:= exports its world (tempfile.mkdtemp)
            self.env["TMPDIR"] = str(tmpdir)
        self.log_path = log
        self.log = open(log, "w")
        self.proc = subprocess.Popen([ros2, "launch", "eels_gz", "sim.launch.py", *args], env=self.env,
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def probe(self, *args: str, timeout: float = 120.0) -> dict:
        python = shutil.which("python3", path=self.env.get("PATH"))
        res = subprocess.run([python, str(PROBE), *args], env=self.env, capture_output=True, text=True,
                             timeout=timeout, check=False)
        assert res.returncode == 0, f"probe {args}: {res.stderr[-2000:]}\nlaunch log:\n{self.tail()}"
        return json.loads(res.stdout.strip().splitlines()[-1])

    def start_probe(self, *args: str) -> subprocess.Popen:
        """ros_probe.py ``args`` in the background (a publisher while another probe listens)."""
        python = shutil.which("python3", path=self.env.get("PATH"))
        return subprocess.Popen([python, str(PROBE), *args], env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def wait_for_clock(self, timeout: float = 120.0) -> None:
        """Until /clock is published (gz-sim running, the bridge up)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            assert self.proc.poll() is None, f"the launch ended ({self.proc.returncode}):\n{self.tail()}"
            if self.probe("listen", "2")["clock"]:
                return
        raise AssertionError(f"no /clock after {timeout:g} s:\n{self.tail()}")

    def tail(self, n: int = 60) -> str:
        self.log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # anything the launch left behind
        except ProcessLookupError:
            pass
        self.log.close()
