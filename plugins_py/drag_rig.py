"""gz-sim Python system: the screw drag-test rig's carriages (EELS-DARTS Fig. 6/7).

Holds the rig of urdf/drag_rig.urdf.xacro at rest for ``settle`` s, then drives its x and y carriages
(joints ``drag_x``, ``drag_y``) at ``speed`` m/s along (``dir_x``, ``dir_y``) for ``drag`` s, the
screw's spin (``drag_screw``) held at zero throughout, by joint velocity commands. Over the last half
of the drag it averages the screw contact's normal force and the friction against the motion, read
from the ``screw_contact`` system of the same model (a peer), and then ends the run. ``metrics()``:
eels_gz.scenarios.drag_rig.METRICS. Parameters: ``<params>`` ``speed``, ``settle``, ``drag``,
``dir_x``, ``dir_y``, ``direction`` (0 parallel, 1 perpendicular: the name in metrics.json).
"""

from __future__ import annotations

from gz_compat import MetricsFile, peer, request_run_end, scenario_params, sim

from eels_gz.scenarios.drag_rig import DragAverages, drag_direction, in_window

PLUGIN = "drag_rig"
JOINTS = ("drag_x", "drag_y", "drag_screw")


class DragRig:
    def configure(self, entity, sdf, ecm, event_mgr):
        self.metrics_out = MetricsFile(sdf, PLUGIN, self)  # under Gazebo: <metrics_file>, after post_update
        self.entity = entity
        params = scenario_params(sdf)
        missing = [k for k in ("speed", "settle", "drag") if k not in params]
        if missing:
            raise ValueError(f"{PLUGIN}: <params> has no {', '.join(missing)}")
        self.speed, self.settle, self.drag = params["speed"], params["settle"], params["drag"]
        self.name = ("parallel", "perpendicular")[int(params.get("direction", 0.0)) % 2]
        self.d = drag_direction(params, PLUGIN)
        model = sim.Model(entity)
        self.joints = []
        for name in JOINTS:
            joint = model.joint_by_name(ecm, name)
            if not joint:
                raise ValueError(f"{PLUGIN}: model '{model.name(ecm)}' has no joint '{name}' "
                                 "(urdf/drag_rig.urdf.xacro)")
            self.joints.append(sim.Joint(joint))
        self.averages = DragAverages(self.d)
        self.contact = None
        self.ended = False

    def pre_update(self, info, ecm):
        if info.paused:
            return
        moving = info.sim_time.total_seconds() >= self.settle - 1e-9
        vx, vy = (self.speed * self.d[0], self.speed * self.d[1]) if moving else (0.0, 0.0)
        for joint, v in zip(self.joints, (vx, vy, 0.0)):
            joint.set_velocity(ecm, [v])

    def post_update(self, info, ecm):
        if info.paused or self.ended:
            return
        t = info.sim_time.total_seconds()
        if self.contact is None:
            self.contact = peer(self.entity, "screw_contact", ecm)
            if self.contact is None:
                raise ValueError(f"{PLUGIN}: the model has no screw_contact system")
        last = self.contact.last
        if abs(t - self.settle) < 0.5 * info.dt.total_seconds() and (last is None or not last.normal_force.sum() > 0):
            self.ended = True
            request_run_end("no_contact", f"{PLUGIN}: the screw does not touch the ground after settling: the rig's "
                            "origin is the ground point under its screw (urdf/drag_rig.urdf.xacro); start it on "
                            "the ground (robot.pose [x, y, ground z, 0, 0, 0])", ecm)
            return
        if in_window(t, self.settle, self.drag) and last is not None:
            self.averages.add(last.normal_force, last.force)
        if t >= self.settle + self.drag - 1e-9:
            self.ended = True
            request_run_end("ok", f"{PLUGIN}: {self.name} drag done", ecm)

    def metrics(self) -> dict:
        return self.averages.metrics(self.name)


def get_system():
    return DragRig()
