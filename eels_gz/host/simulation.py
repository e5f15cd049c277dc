"""The embedded host: an SDF world and a robot in DART, stepped with gz-sim's
system contract (pre_update -> physics step -> update -> post_update)."""

from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass
from pathlib import Path

import dartpy as dart
import numpy as np
from lxml import etree

from eels_gz.description.optimizer import optimize_description
from eels_gz.description.xacro_loader import Description
from eels_gz.errors import DescriptionError, SdfError, SimulationDiverged
from eels_gz.host import gzsim, transport
from eels_gz.host.couplings import CouplingSolver, mimic_couplings
from eels_gz.host.dart_build import build_model, isometry, load_urdf, lowest_collision_z, make_detector
from eels_gz.host.element import Element
from eels_gz.host.gzmath import Pose3d
from eels_gz.host.sdf_world import ModelSpec, PluginSpec, WorldSpec, load_world
from eels_gz.host.systems import LoadedSystem, load_system
from eels_gz.paths import share_dir

log = logging.getLogger(__name__)

AUTO_CLEARANCE = 0.001  # m above z = 0 for pose "auto"
SENSOR_TYPES = {"imu", "gpu_lidar", "camera", "depth_camera", "rgbd_camera", "force_torque"}

_JOINT_TYPES = {
    "RevoluteJoint": gzsim.JointType.REVOLUTE,
    "PrismaticJoint": gzsim.JointType.PRISMATIC,
    "WeldJoint": gzsim.JointType.FIXED,
    "BallJoint": gzsim.JointType.BALL,
    "UniversalJoint": gzsim.JointType.UNIVERSAL,
    "ScrewJoint": gzsim.JointType.SCREW,
}


@dataclass
class RobotSpec:
    """A robot to add to the world: its processed description and base pose."""

    name: str
    description: Description
    pose: list[float] | str = "auto"  # [x, y, z, roll, pitch, yaw] or "auto"
    optimize: bool = True  # merge locked bodies and prune massless links first (EELS-DARTS §2.1.4)


class Simulation:
    """One world, optionally one robot, and the systems their SDF names."""

    def __init__(self, world: str | Path | WorldSpec, robot: RobotSpec | None = None, *,
                 dt: float | None = None, collision_detector: str | None = None,
                 max_velocity: float = 200.0):
        self.spec = world if isinstance(world, WorldSpec) else load_world(world)
        self.dt = float(dt or self.spec.dt)
        self.detector_name = collision_detector or self.spec.collision_detector or "ode"
        self.max_velocity = float(max_velocity)
        self.world = dart.simulation.World(self.spec.name)
        self.world.setTimeStep(self.dt)
        self.world.setGravity(np.array(self.spec.gravity, dtype=float))
        self.world.getConstraintSolver().setCollisionDetector(make_detector(self.detector_name))
        self.ecm = gzsim.EntityComponentManager()
        self.ecm.world_entity = self.ecm.new_entity()
        self.ecm.world_name = self.spec.name
        self.ecm.gravity = np.array(self.spec.gravity, dtype=float)
        self.event_mgr = gzsim.EventManager()
        self.states: list[gzsim.SkeletonState] = []
        self.systems: list[LoadedSystem] = []
        self.iterations = 0
        self.robot_entity = gzsim.NULL_ENTITY
        self.robot_skeleton = None
        self.couplings: list[CouplingSolver] = []
        self.robot_description: Description | None = None  # as loaded (optimized unless switched off)
        self.robot_source_urdf = ""  # the URDF as given, before the optimizer: every link and frame
        self.robot_model = None  # the optimizer's OptimizedModel
        self.robot_frames: dict = {}  # original link -> Frame(body, pose in body), from the optimizer
        self.sensor_specs: list[tuple] = []  # (reference, name, type, element) from <gazebo reference>

        pending: list[tuple[PluginSpec, int]] = [(p, self.ecm.world_entity) for p in self.spec.plugins]
        for model in self.spec.models:
            entity = self._add_sdf_model(model)
            pending += [(p, entity) for p in model.plugins]
        if robot is not None:
            entity = self._add_robot(robot)
            self._robot_references(robot)
            pending += [(p, entity) for p in self._robot_plugins(robot)]
        self._configure_dart()
        # gz-transport topics of this simulation: systems' Node() objects bind to it while configured
        self.transport = transport.Bus()
        previous = transport.activate(self.transport)
        try:
            for spec, entity in pending:
                loaded = load_system(spec, entity, self.ecm, self.event_mgr)
                if loaded is not None:
                    self.systems.append(loaded)
        finally:
            transport.activate(previous)
        self._pre = [s.pre_update for s in self.systems if s.pre_update]
        self._upd = [s.update for s in self.systems if s.update]
        self._post = [s.post_update for s in self.systems if s.post_update]
        self.info = gzsim.UpdateInfo(dt=datetime.timedelta(seconds=self.dt))

    # --- construction ----------------------------------------------------------
    def _configure_dart(self) -> None:
        # Sleeping (deactivation) would freeze resting bodies: Gazebo's DART never sleeps them.
        opts = self.world.getDeactivationOptions()
        opts.mEnabled = False
        self.world.setDeactivationOptions(opts)

    def _register_skeleton(self, skel, model_entity: int, name: str, static: bool, file: str) -> gzsim.ModelRecord:
        self.world.addSkeleton(skel)
        n = skel.getNumDofs()
        state = None
        if not static:
            state = gzsim.SkeletonState(skel, skel.getPositions(), skel.getVelocities(), np.full(n, np.nan))
            state.dof_owner = [None] * n
            for j in range(skel.getNumJoints()):
                joint = skel.getJoint(j)
                for k in range(joint.getNumDofs()):
                    state.dof_owner[joint.getIndexInSkeleton(k)] = (joint, k)
            self.states.append(state)
        rec = gzsim.ModelRecord(name=name, static=static, file=file, links=[], joints=[], state=state)
        self.ecm.models[model_entity] = rec
        for b in range(skel.getNumBodyNodes()):
            body = skel.getBodyNode(b)
            e = self.ecm.new_entity()
            self.ecm.links[e] = gzsim.LinkRecord(body.getName(), model_entity, body, canonical=(b == 0))
            rec.links.append(e)
        if state is not None:
            for j in range(skel.getNumJoints()):
                joint = skel.getJoint(j)
                parent = joint.getParentBodyNode()
                if parent is None and joint.getType() == "FreeJoint":
                    continue  # a floating root is the model's pose, not a model joint
                kind = _JOINT_TYPES.get(joint.getType(), gzsim.JointType.INVALID)
                if kind == gzsim.JointType.REVOLUTE and not joint.hasPositionLimit(0):
                    kind = gzsim.JointType.CONTINUOUS
                e = self.ecm.new_entity()
                dof = joint.getIndexInSkeleton(0) if joint.getNumDofs() else 0
                self.ecm.joints[e] = gzsim.JointRecord(
                    name=joint.getName(), model=model_entity, state=state, joint=joint, dof=dof,
                    ndofs=joint.getNumDofs(), type=kind, parent=parent.getName() if parent else "world",
                    child=joint.getChildBodyNode().getName(),
                    pose=joint.getTransformFromParentBodyNode().matrix(),
                )
                rec.joints.append(e)
        return rec

    def _add_sdf_model(self, model: ModelSpec) -> int:
        entity = self.ecm.new_entity()
        self._register_skeleton(build_model(model), entity, model.name, model.static, model.file)
        return entity

    def _add_robot(self, robot: RobotSpec) -> int:
        desc = robot.description
        self.robot_source_urdf = desc.urdf
        if robot.optimize:
            desc, self.robot_model = optimize_description(desc)
            self.robot_frames = self.robot_model.frames
        else:
            massless = [n.get("name") for n in etree.fromstring(desc.urdf.encode()).iter("link")
                        if n.find("inertial") is None and n.get("name") != "world"]
            if massless:
                log.warning("%s: without the optimizer DART gives the massless links %s a mass of 1 kg each",
                            desc.source, ", ".join(massless))
        self.robot_description = desc
        skel = load_urdf(desc.urdf, robot.name, desc.source, {"eels_gz": share_dir()})
        couplings = mimic_couplings(desc.urdf, skel, desc.source)
        if couplings:
            solver = CouplingSolver(skel, couplings, self.dt)
            solver.project_positions()
            self.couplings.append(solver)
        root = skel.getRootJoint()
        if robot.pose == "auto":
            if root.getNumDofs() == 6:
                lowest = lowest_collision_z(skel)
                if not np.isfinite(lowest):
                    raise DescriptionError(
                        f"{robot.description.source}: robot '{robot.name}' has no collision shapes, so pose "
                        "'auto' cannot rest it on the ground; give robot.pose [x, y, z, roll, pitch, yaw]")
                z = -lowest + AUTO_CLEARANCE
                skel.setPositions(np.r_[np.zeros(5), z, np.zeros(skel.getNumDofs() - 6)])
        else:
            self._set_root_pose(skel, Pose3d(*robot.pose).to_matrix())
        entity = self.ecm.new_entity()
        self._register_skeleton(skel, entity, robot.name, False, robot.description.source)
        self.robot_entity = entity
        self.robot_skeleton = skel
        return entity

    @staticmethod
    def _set_root_pose(skel, T: np.ndarray) -> None:
        root = skel.getRootJoint()
        if root.getNumDofs() != 6:
            root.setTransformFromParentBodyNode(isometry(T))
            return
        root.setPositions(dart.dynamics.FreeJoint.convertToPositions(isometry(T)))

    def _robot_references(self, robot: RobotSpec) -> None:
        """Check ``<gazebo reference>`` blocks: Gazebo sensors and fixed-joint preservation."""
        where = self.robot_description.source
        for block in self.robot_description.references:
            ref = block.get("reference")
            for node in block:
                if not isinstance(node.tag, str):
                    continue
                if node.tag == "preserveFixedJoint":
                    continue  # the host keeps fixed joints unless the optimizer merges them
                if node.tag == "collision":
                    self._collide_bitmask(ref, node, where)
                    continue
                if node.tag != "sensor":
                    raise SdfError(f"<gazebo reference='{ref}'> element <{node.tag}> is not supported "
                                   "by the embedded host (expected <sensor> or <preserveFixedJoint>)", where)
                kind = node.get("type", "")
                if kind not in SENSOR_TYPES:
                    raise SdfError(f"<gazebo reference='{ref}'>: sensor type '{kind}' is not one of "
                                   f"{', '.join(sorted(SENSOR_TYPES))}", where)
                self.sensor_specs.append((ref, node.get("name", ""), kind, node))
        if self.sensor_specs:
            log.info("robot '%s' declares Gazebo sensors %s; the embedded host does not simulate "
                     "these yet (see the README, 'What is exercised here')",
                     robot.name, ", ".join(f"{n} ({k})" for _, n, k, _ in self.sensor_specs))

    def _collide_bitmask(self, ref: str, node, where: str) -> None:
        """``<collision><surface><contact><collide_bitmask>`` on a link: 0 switches its collisions off."""
        paths = [el for el in node.iter() if isinstance(el.tag, str)]
        if [el.tag for el in paths] != ["collision", "surface", "contact", "collide_bitmask"]:
            raise SdfError(f"<gazebo reference='{ref}'><collision> supports only "
                           "<surface><contact><collide_bitmask>", where)
        text = (paths[-1].text or "").strip()
        try:
            mask = int(text, 0)
        except ValueError:
            raise SdfError(f"<gazebo reference='{ref}'>: collide_bitmask '{text}' is not an integer", where) from None
        if mask not in (0, 0xFF, 0xFFFF):
            raise SdfError(f"<gazebo reference='{ref}'>: the embedded host supports collide_bitmask 0 (no "
                           f"collisions) or the default, got {text}", where)
        body = self.robot_skeleton.getBodyNode(ref)
        if body is None:
            raise SdfError(f"<gazebo reference='{ref}'>: collide_bitmask on a link that is not a body", where)
        body.setCollidable(mask != 0)

    def _robot_plugins(self, robot: RobotSpec) -> list[PluginSpec]:
        specs = []
        for block in self.robot_description.gazebo:
            for node in block:
                if not isinstance(node.tag, str):
                    continue
                where = robot.description.source
                if node.tag != "plugin":
                    raise SdfError(f"<gazebo> element <{node.tag}> is not supported by the embedded host", where)
                element = Element(node, where)
                module, _ = element.get_string("module_name", "")
                specs.append(PluginSpec(node.get("filename", ""), node.get("name", ""), module, element))
        return specs

    def frame_world_pose(self, name: str) -> np.ndarray:
        """World pose (4x4) of any link or frame of the original description."""
        frame = self.robot_frames.get(name)
        body = self.robot_skeleton.getBodyNode(frame.body if frame else name)
        if body is None:
            raise KeyError(f"robot has no link or frame '{name}'")
        T = body.getWorldTransform().matrix()
        return T @ frame.pose if frame else T

    def add_pre_update(self, callback) -> None:
        """Run ``callback(info, ecm)`` after the systems' pre_update each step (host features such as tethers)."""
        self._pre.append(callback)

    # --- stepping -------------------------------------------------------------
    @property
    def time(self) -> float:
        return self.world.getTime()

    def _apply_commands(self) -> None:
        if self.ecm.pose_cmds:
            for entity, pose in self.ecm.pose_cmds.items():
                state = self.ecm.models[entity].state
                self._set_root_pose(state.skel, pose.to_matrix())
                state.refresh()
            self.ecm.pose_cmds.clear()
        for st in self.states:
            skel = st.skel
            if st.has_tau:
                tau = st.tau
                set_mask = ~np.isnan(tau)
                st.applied = np.where(set_mask, tau, 0.0)
                skel.setForces(st.applied)
                tau.fill(np.nan)
                st.has_tau = False
            else:
                set_mask = None
                st.applied = None
            if st.ext_tau is not None:  # batched link wrenches (gzsim.add_link_world_wrenches)
                skel.setForces(skel.getForces() + st.ext_tau)
                st.ext_tau = None
            servo = st.servo
            commanded = set()
            for dof, v in st.vel_cmd.items():
                if set_mask is not None and set_mask[dof]:
                    continue  # a force command wins over a velocity command (gz-sim)
                joint, k = st.dof_owner[dof]
                # dartpy 6.20 only honours per-DOF overrides to MIMIC: set the whole
                # joint (Joint.set_velocity always commands every DOF of the joint)
                joint.setActuatorType(dart.dynamics.ActuatorType.SERVO)
                joint.setCommand(k, v)
                commanded.add(dof)
            st.vel_cmd.clear()
            for dof in servo - commanded:
                joint, _ = st.dof_owner[dof]
                joint.setActuatorType(dart.dynamics.ActuatorType.FORCE)
            servo.clear()
            servo.update(commanded)

    def _check(self) -> None:
        bound = self.max_velocity
        for st in self.states:
            dq = st.dq
            if dq.size == 0:
                continue
            peak = np.abs(dq).max()
            if not peak <= bound:  # also true for NaN
                bad = np.where(~np.isfinite(dq) | (np.abs(dq) > bound))[0][0]
                joint, k = st.dof_owner[int(bad)]
                body = joint.getChildBodyNode().getName()
                dof_name = joint.getDofName(k)
                value = dq[bad]
                detail = (f"velocity of DOF '{dof_name}' is {value:.6g}" if np.isfinite(value) else
                          f"velocity of DOF '{dof_name}' is not finite")
                raise SimulationDiverged(self.iterations, self.time, body,
                                         f"{detail} (bound {bound:g}, set physics.max_velocity)")

    def step(self) -> None:
        """One iteration: pre_update, physics, update, post_update (gz-sim's order)."""
        info = self.info
        self.iterations += 1
        info.iterations = self.iterations
        info.sim_time = datetime.timedelta(seconds=self.iterations * self.dt)
        ecm = self.ecm
        self.transport.deliver()  # messages of the last step reach subscribers before pre_update
        for f in self._pre:
            f(info, ecm)
        self._apply_commands()
        for c in self.couplings:
            c.before_step()
        self.world.step()
        for c in self.couplings:
            c.after_step()
        for st in self.states:
            st.refresh()
        ecm.after_step()
        self._check()
        for f in self._upd:
            f(info, ecm)
        for f in self._post:
            f(info, ecm)
