"""gz-sim Python system of the ``leader_follower`` scenario (eels_gz.scenarios.leader_follower: the
path, the placement, the loop, the metrics and the plot).

Every ``control_period`` s, in ``pre_update``, it reads the robot (plugins_py/snake_io.py) and runs
one control update: path tracker, shape set points, screw rates (NEO Eq. 5), all through the
joint_control peer. After each such step it samples the module points' distances to the path, and
ends the run (``request_run_end``, status ``ok``) once the tail has travelled ``travel`` m.

The first update is in the first step. In a world started running (``gz sim -r``) that comes before
gz-sim reports joint positions (they are ``[]`` until the first physics update; a world started
paused, as eels-gz starts it, reports them in its paused updates): the robot is then at rest where
the placement laid it, so the update takes the placement's angles (the same
:func:`~eels_gz.scenarios.leader_follower.start_shape`, laid at the height of the base as placed) and the base pose as reported. Parameters: the scenario elements
of eels_gz.scenarios.plugin_elements (``<params>``: ``speed``, ``travel``, ``control_period``,
``path_amplitude``, ``path_wavelength``).
"""

from __future__ import annotations

from gz_compat import MetricsFile, request_run_end, scenario_params
from snake_io import SnakeIO

from eels_gz.scenarios import leader_follower as lf
from eels_gz.steps import step_start

PLUGIN = "leader_follower"


class LeaderFollower:
    def configure(self, entity, sdf, ecm, event_mgr):
        self.metrics_out = MetricsFile(sdf, PLUGIN, self)  # under Gazebo: <metrics_file>, after post_update
        self.cfg = lf.check_params(scenario_params(sdf), PLUGIN)
        self.snake = SnakeIO(entity, sdf, ecm, PLUGIN)
        lf.check_chain(self.snake.chain, self.snake.robot, PLUGIN)
        self.loop = None  # built in the first step, from the base as placed
        self.t0 = None
        self.next_time = 0.0
        self.sampled = False
        self.ended = False

    def pre_update(self, info, ecm):
        if info.paused or self.ended:
            return
        now = step_start(info)  # the time this step starts from
        if self.loop is None:
            if not self.snake.read_base(ecm):
                return
            base = self.snake.base_pose()
            path = lf.planned_path(self.snake.chain, self.cfg, float(base[2, 3]))
            self.loop = lf.LeaderFollowerLoop(self.snake, self.cfg, path)
            self.t0 = self.next_time = now
        if now + 1e-12 < self.next_time:
            return
        if self.snake.read(ecm):
            angles = self.snake.angles()
        else:  # the first step: at rest where the placement laid it (module docstring)
            angles = {n: 0.0 for n in self.snake.joint_names}
            angles.update(lf.start_shape(self.snake.chain, self.loop.path, self.cfg, PLUGIN).angles)
        self.next_time = now + self.cfg.period
        self.loop.control(now, angles, self.snake.base_pose())
        self.sampled = True

    def post_update(self, info, ecm):
        if not self.sampled or info.paused:  # sampled once per control period
            return
        if not self.snake.read(ecm):
            return
        self.sampled = False
        done = self.loop.sample(info.sim_time.total_seconds() - self.t0, self.snake.module_points())
        if done is not None and not self.ended:
            self.ended = True
            request_run_end("ok", done, ecm)

    def metrics(self):
        return self.loop.metrics() if self.loop is not None else {"travelled_m": 0.0}

    def plot(self, path):
        if self.loop is not None:
            self.loop.plot(path)


def get_system():
    return LeaderFollower()
