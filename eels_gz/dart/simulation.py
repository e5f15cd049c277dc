"""The embedded host: an SDF world and a robot in DART, stepped with gz-sim's
system contract (pre_update -> physics step -> update -> post_update), with
gz-sim's world reset (``reset``) and system shutdown (``close``)."""

from __future__ import annotations

import contextlib
import datetime
import logging
import time as _time
from dataclasses import dataclass
from pathlib import Path

import dartpy as dart
import numpy as np
from lxml import etree

from eels_gz.description.optimizer import optimize_description
from eels_gz.description.xacro_loader import Description
from eels_gz.errors import DescriptionError, PluginCallbackError, SdfError, SimulationDiverged
from eels_gz.gzapi import gzsim, transport
from eels_gz.dart.couplings import MIMIC, CouplingSolver, mimic_couplings
from eels_gz.dart.dart_build import build_model, isometry, load_urdf, lowest_collision_z, make_detector
from eels_gz.gzapi.element import Element
from eels_gz.gzapi.gzmath import Pose3d, pose_matrix
from eels_gz.dart.skeleton_state import DartEngine, SkeletonState
from eels_gz.sdf_reader import ModelSpec, PluginSpec, WorldSpec, load_world
from eels_gz.dart.step_kernels import compose_forces, first_bad, same_values
from eels_gz.gzapi.system_loader import GZ_NAMESPACE, PLUGIN_ERRORS, LoadedSystem, load_system, shutdown
from eels_gz.paths import share_dir
from eels_gz.spawn import AUTO_CLEARANCE

log = logging.getLogger(__name__)

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
    # <plugin> elements added to the robot model's own (a scenario's systems, eels_gz.scenarios.plugin_elements),
    # as XML text; a gz: prefix needs no declaration, as in gz-sim's own worlds
    plugins: tuple[str, ...] = ()
    yaw: float = 0.0  # rad about z: the heading pose "auto" lays the robot at


PHASES = ("pre_update", "update", "post_update")
FINITE_MAX = float(np.finfo(float).max)  # first_bad's bound that only NaN and infinity pass


def _new_pgs_solver():
    """A fresh PGS boxed-LCP solver, as gz-physics' dartsim ``SetWorldSolver("pgs")`` makes one.

    dartpy 6.20 binds ``PgsBoxedLcpSolver`` without a constructor; a new world's constraint
    solver holds one as its secondary (fallback) solver, which outlives that world. The
    primary becomes this new instance and the world's own secondary PGS stays, as in Gazebo.
    """
    return dart.simulation.World().getConstraintSolver().getSecondaryBoxedLcpSolver()


def _coefficient(ref: str, node, where: str) -> float:
    """A ``<mu1>``/``<mu2>`` of a ``<gazebo reference>`` block: a number >= 0."""
    text = (node.text or "").strip()
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0.0:
        raise SdfError(f"<gazebo reference='{ref}'>: <{node.tag}> '{text}' is not a friction coefficient "
                       "(expected a number >= 0)", where)
    return value


class Simulation:
    """One world, optionally one robot, and the systems their SDF names.

    ``plugin_errors``: ``"stop"`` (default) turns an exception in a system's
    callback into a PluginCallbackError naming it and the step; ``"disable"``
    logs it and disables the system, as gz-sim does. ``batch_api=False``
    withholds the host's batch helpers from plugins, so they run the
    per-entity gz API path Gazebo runs.
    ``mimic``: ``"none"`` (default) leaves URDF ``<mimic>`` pairs unconstrained, as gz-physics 7's
    DART plugin (Gazebo's default engine) does; the descriptions' own systems hold them
    (joint_control's ``<pair>``, joint_coupling). ``"exact"`` enforces them with the host's exact
    coupling (:mod:`eels_gz.dart.couplings`), as an engine with a mimic constraint would.
    ``param_sets``: the parameter sets the run resolved (``gzsim.ResolvedSet``
    by the element that names them, e.g. ``"soil_params"``), the host context
    the contact systems take their sets from in ``configure`` (``ecm.param_sets``).
    """

    def __init__(self, world: str | Path | WorldSpec, robot: RobotSpec | None = None, *,
                 dt: float | None = None, collision_detector: str | None = None,
                 max_velocity: float = 200.0, plugin_errors: str = "stop", batch_api: bool = True,
                 solver: str | None = None, param_sets: dict[str, gzsim.ResolvedSet] | None = None,
                 mimic: str = "none"):
        if plugin_errors not in PLUGIN_ERRORS:
            raise ValueError(f"plugin_errors must be one of {', '.join(PLUGIN_ERRORS)}, got {plugin_errors!r}")
        if mimic not in MIMIC:
            raise ValueError(f"mimic must be one of {', '.join(MIMIC)}, got {mimic!r}")
        self.plugin_errors = plugin_errors
        self.mimic = mimic
        self.spec = world if isinstance(world, WorldSpec) else load_world(world)
        self.dt = self.spec.step(dt)
        self.detector_name = collision_detector or self.spec.collision_detector or "ode"
        self.max_velocity = float(max_velocity)
        self.world = dart.simulation.World(self.spec.name)
        self.world.setTimeStep(self.dt)
        self._world_step = self.world.step  # the physics step (a benchmark may wrap it to time it)
        self.world.setGravity(np.array(self.spec.gravity, dtype=float))
        self.world.getConstraintSolver().setCollisionDetector(make_detector(self.detector_name))
        # the LCP solver, as gz-physics' DART plugin sets it from <solver_type> (default: DART's Dantzig)
        self.solver_name = solver or self.spec.solver or "dantzig"
        if self.solver_name not in ("dantzig", "pgs"):
            raise ValueError(f"solver must be dantzig or pgs, got {self.solver_name!r}")
        if self.solver_name == "pgs":
            self.world.getConstraintSolver().setBoxedLcpSolver(_new_pgs_solver())
        self.ecm = gzsim.EntityComponentManager()
        self.ecm.engine = DartEngine()
        self.ecm.batch_api = bool(batch_api)
        self.ecm.param_sets = dict(param_sets or {})  # the run's resolved sets, for its systems' configure
        self.ecm.world_entity = gzsim.new_entity(self.ecm)
        self.ecm.world_name = self.spec.name
        self.ecm.gravity = np.array(self.spec.gravity, dtype=float)
        self.event_mgr = gzsim.EventManager()
        self.states: list[SkeletonState] = []
        self.systems: list[LoadedSystem] = []
        self.iterations = 0
        self.total_iterations = 0  # including those before a world reset
        self.physics_seconds = 0.0  # wall time spent in DART's own step (the host's cost is the rest)
        self.resets = 0
        self.robot_removed = False  # a world reset removed the robot (reset)
        self.time_before_resets = 0.0  # s simulated before the world resets (the clock restarts at each)
        self.robot_entity = gzsim.NULL_ENTITY
        self.robot_skeleton = None
        self._robot_state: SkeletonState | None = None  # the robot's state cache (frame_world_pose)
        self._frame_index: dict = {}  # frame name -> (body, its index, pose in the body or None)
        self.couplings: list[CouplingSolver] = []
        self._coupling: dict[int, CouplingSolver] = {}  # id(SkeletonState) -> its couplings
        self.robot_description: Description | None = None  # as loaded (optimized unless switched off)
        self.robot_source_urdf = ""  # the URDF as given, before the optimizer: every link and frame
        self.robot_source_model = None  # its robot model (eels_gz.description.model)
        self._root_origins: dict[str, np.ndarray] = {}  # fixed-base robot roots: the URDF joint origin under the pose
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
        # Gazebo's own systems the world and models name (file name -> [(entity, spec)]), which the host provides
        self.gz_systems: dict[str, list[tuple[int, PluginSpec]]] = {}
        try:
            for spec, entity in pending:
                loaded = load_system(spec, entity, self.ecm, self.event_mgr, plugin_errors)
                if loaded is None:
                    self.gz_systems.setdefault(spec.filename, []).append((entity, spec))
                else:
                    self.systems.append(loaded)
        except BaseException:
            shutdown(self.systems)
            raise
        finally:
            transport.activate(previous)
        self._phases: dict[str, list] = {phase: [] for phase in PHASES}
        self._owner: dict[int, LoadedSystem] = {}  # id(bound callback) -> its system
        # gz-sim 8: pre_update and update in <gz:system_priority> order (stable: load order within one)
        for loaded in sorted(self.systems, key=lambda s: s.priority):
            if loaded.disabled:
                continue
            for phase in PHASES:
                callback = getattr(loaded, phase)
                if callback is not None:
                    self._phases[phase].append(callback)
                    self._owner[id(callback)] = loaded
                    loaded.callbacks.append(callback)
        self._pre, self._upd, self._post = (self._phases[phase] for phase in PHASES)
        self._dt_delta = datetime.timedelta(seconds=self.dt)
        self._times_of = -1  # the iteration _sim_delta and _real_delta are of
        self._wall0: float | None = None
        self._closed = False
        # the state a world reset returns to (gz-sim keeps the ECM as it was after loading)
        self._initial = [(st.skel.getPositions().copy(), st.skel.getVelocities().copy()) for st in self.states]
        self._initial_gravity = np.array(self.world.getGravity(), dtype=float)

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
            state = SkeletonState(skel, skel.getPositions(), skel.getVelocities(), np.full(n, np.nan))
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
            e = gzsim.new_entity(self.ecm)
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
                e = gzsim.new_entity(self.ecm)
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
        entity = gzsim.new_entity(self.ecm)
        self._register_skeleton(build_model(model), entity, model.name, model.static, model.file)
        return entity

    def _add_robot(self, robot: RobotSpec) -> int:
        desc = robot.description
        self.robot_source_urdf = desc.urdf
        self.robot_source_model = desc.model
        if robot.optimize:
            desc, self.robot_model = optimize_description(desc)
            self.robot_frames = self.robot_model.frames
        else:
            massless = [n for n in desc.model.massless_links() if n != "world"]
            if massless:
                log.warning("%s: without the optimizer DART gives the massless links %s a mass of 1 kg each",
                            desc.source, ", ".join(massless))
        self.robot_description = desc
        skel = load_urdf(desc.urdf, robot.name, desc.source, {"eels_gz": share_dir()})
        couplings = mimic_couplings(desc.model, skel)  # checked, and every follower a force-driven joint
        if self.mimic == "none":
            couplings = []  # gz-physics 7's DART plugin creates no mimic constraint (Physics.cc logs it)
        if couplings:
            solver = CouplingSolver(skel, couplings, self.dt)
            solver.project_positions()
            self.couplings.append(solver)
        root = skel.getRootJoint()
        if root.getNumDofs() != 6:
            # a URDF rooted at a link named "world": DART drops that link and keeps the first joint's
            # origin as the root joint's transform; gz-sim puts the model pose under it (the joint's child at
            # pose x origin), so the origin is kept here for every later pose of the robot
            self._root_origins[skel.getName()] = root.getTransformFromParentBodyNode().matrix().copy()
        if robot.pose == "auto":
            if root.getNumDofs() == 6:
                lowest = lowest_collision_z(skel)
                if not np.isfinite(lowest):
                    raise DescriptionError(
                        f"{robot.description.source}: robot '{robot.name}' has no collision shapes, so pose "
                        "'auto' cannot rest it on the ground; give robot.pose [x, y, z, roll, pitch, yaw]")
                z = -lowest + AUTO_CLEARANCE  # the lowest collision does not change with a turn about z
                skel.setPositions(np.r_[0.0, 0.0, robot.yaw, 0.0, 0.0, z, np.zeros(skel.getNumDofs() - 6)])
        else:
            self._set_root_pose(skel, pose_matrix(Pose3d(*robot.pose)))
        entity = gzsim.new_entity(self.ecm)
        rec = self._register_skeleton(skel, entity, robot.name, False, robot.description.source)
        if couplings:
            self._coupling[id(rec.state)] = self.couplings[-1]
        self.robot_entity = entity
        self.robot_skeleton = skel
        self._robot_state = rec.state
        self._frame_index = {}
        return entity

    def _set_root_pose(self, skel, T: np.ndarray) -> None:
        """Put the model frame of ``skel`` at ``T`` (4x4, world): a free root's pose, or a fixed-base
        root joint's transform (after a world-rooted URDF's own origin of that joint)."""
        root = skel.getRootJoint()
        if root.getNumDofs() != 6:
            origin = self._root_origins.get(skel.getName())
            root.setTransformFromParentBodyNode(isometry(T if origin is None else T @ origin))
            return
        root.setPositions(dart.dynamics.FreeJoint.convertToPositions(isometry(T)))

    def _robot_references(self, robot: RobotSpec) -> None:
        """Check ``<gazebo reference>`` blocks: Gazebo sensors, fixed-joint preservation, a link's
        collisions switched off and its friction coefficients."""
        where = self.robot_description.source
        friction: dict[str, dict[str, float]] = {}
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
                if node.tag in ("mu1", "mu2"):
                    friction.setdefault(ref, {})[node.tag] = _coefficient(ref, node, where)
                    continue
                if node.tag != "sensor":
                    raise SdfError(f"<gazebo reference='{ref}'> element <{node.tag}> is not supported by the "
                                   "embedded host (expected <sensor>, <collision>, <mu1>, <mu2> or "
                                   "<preserveFixedJoint>)", where)
                kind = node.get("type", "")
                if kind not in SENSOR_TYPES:
                    raise SdfError(f"<gazebo reference='{ref}'>: sensor type '{kind}' is not one of "
                                   f"{', '.join(sorted(SENSOR_TYPES))}", where)
                self.sensor_specs.append((ref, node.get("name", ""), kind, node))
        for ref, mu in friction.items():
            self._link_friction(ref, mu, where)
        if self.sensor_specs:
            log.info("robot '%s' declares Gazebo sensors %s; the embedded host does not simulate "
                     "these yet (see the README, 'What is exercised here')",
                     robot.name, ", ".join(f"{n} ({k})" for _, n, k, _ in self.sensor_specs))

    def _link_friction(self, ref: str, mu: dict[str, float], where: str) -> None:
        """``<mu1>``/``<mu2>`` on a link, as gz-sim applies them: sdformat writes them in every collision
        of the link, and gz-physics sets DART's coefficient to mu1 (primary and secondary) and the
        secondary to mu2 when it is given. dartpy binds only the first setter, so the host takes mu2
        equal to mu1 (or absent)."""
        mu1 = mu.get("mu1", 1.0)  # sdformat's default <mu>
        if "mu2" in mu and mu["mu2"] != mu1:
            raise SdfError(f"<gazebo reference='{ref}'>: mu2 {mu['mu2']:g} differs from mu1 {mu1:g}; the embedded host "
                           "applies one friction coefficient per link (dartpy binds setFrictionCoeff only)", where)
        body = self.robot_skeleton.getBodyNode(ref)
        if body is None:
            raise SdfError(f"<gazebo reference='{ref}'>: mu1/mu2 on a link that is not a body", where)
        for k in range(body.getNumShapeNodes()):
            node = body.getShapeNode(k)
            if node.hasDynamicsAspect():
                node.getDynamicsAspect().setFrictionCoeff(mu1)

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
        if mask == 0:
            # Out of DART's broadphase as well: gz-physics keeps such shapes in its collision group and
            # rejects each of their pairs in a filter (BitmaskContactFilter); the contacts are the same (none),
            # and the 20 screws of an EELS 1.0 no longer cost the step a fifth of its time. The shapes keep their
            # DynamicsAspect, which marks them as collision geometry (dart_build.collision_box_corners).
            for k in range(body.getNumShapeNodes()):
                node = body.getShapeNode(k)
                if node.hasCollisionAspect():
                    node.removeCollisionAspect()

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
        for text in robot.plugins:
            wrapped = etree.fromstring(f'<plugins xmlns:gz="{GZ_NAMESPACE}">{text}</plugins>'.encode())
            for node in wrapped:
                element = Element(node, f"{robot.description.source} (scenario systems)")
                module, _ = element.get_string("module_name", "")
                specs.append(PluginSpec(node.get("filename", ""), node.get("name", ""), module, element))
        return specs

    def place_robot(self, base_pose: np.ndarray, joints: dict[str, float], root: str) -> None:
        """Teleport the robot before (or between) steps: link ``root`` of its original description at
        ``base_pose`` (4x4, world), 1-DOF joints at ``joints`` (rad or m), every velocity zero; mimic
        couplings projected, the state caches refreshed. An unknown joint is a ConfigError naming it."""
        from eels_gz.errors import ConfigError

        skel = self.robot_skeleton
        q = skel.getPositions()
        for name, value in joints.items():
            joint = skel.getJoint(name)
            if joint is None or joint.getNumDofs() != 1:
                raise ConfigError(f"placement: joint '{name}' is not a 1-DOF joint of robot '{skel.getName()}'")
            q[joint.getIndexInSkeleton(0)] = value
        skel.setPositions(q)
        frame = self.robot_frames.get(root)
        T = np.asarray(base_pose, float) @ (np.linalg.inv(frame.pose) if frame else np.eye(4))
        self._set_root_pose(skel, T)
        skel.setVelocities(np.zeros(skel.getNumDofs()))
        for c in self.couplings:
            c.project_positions()
        for st in self.states:
            st.refresh()
            st.forget_reports()  # the exported world starts here: gz-sim reports every link anew

    def frame_world_pose(self, name: str) -> np.ndarray:
        """World pose (4x4) of any link or frame of the original description, at the skeleton's
        state now: from the step's batched kinematics while they are current (``current_kinematics``;
        a scenario reads a few poses each step, and DART's ``getWorldTransform`` costs 4 µs a call
        through dartpy), else from DART."""
        where = self._frame_index.get(name)
        if where is None:
            frame = self.robot_frames.get(name)
            body = self.robot_skeleton.getBodyNode(frame.body if frame else name)
            if body is None:
                raise KeyError(f"robot has no link or frame '{name}'")
            where = self._frame_index[name] = (body, body.getIndexInSkeleton(), frame.pose if frame else None)
        body, index, pose = where
        kin = self.current_kinematics()
        T = kin.T[index].copy() if kin is not None else body.getWorldTransform().matrix()
        return T if pose is None else T @ pose

    def current_kinematics(self):
        """The robot's batched kinematics (``SkeletonKinematics``: every body's world pose and twist,
        indexed like ``getBodyNode(i)``) if the host's state cache holds the skeleton's positions and
        velocities now, else None (set on DART directly since, or a skeleton the batch does not cover)."""
        state = self._robot_state
        if state is None:
            return None
        skel = state.skel
        if not (same_values(state.q, skel.getPositions()) and same_values(state.dq, skel.getVelocities())):
            return None
        return state.kinematics()

    # --- named reads of the world and the robot (for run/, ros/ and gzapi/: no DART calls outside dart/) ----
    @property
    def gravity(self) -> np.ndarray:
        """The world's gravity now (3,), m/s^2."""
        return np.array(self.world.getGravity(), dtype=float)

    @property
    def robot_name(self) -> str:
        """The robot model's name, "" without a robot."""
        return self.robot_skeleton.getName() if self.robot_skeleton is not None else ""

    @property
    def robot_state(self) -> SkeletonState | None:
        """The robot's state cache (positions, velocities, applied joint forces of the last step)."""
        return self._robot_state

    def robot_mass(self) -> float:
        """The built robot's total mass (kg)."""
        return self.robot_skeleton.getMass()

    def robot_sizes(self) -> tuple[int, int]:
        """The built robot's number of bodies and of DOFs (a free base's 6 included)."""
        return self.robot_skeleton.getNumBodyNodes(), self.robot_skeleton.getNumDofs()

    def robot_joints(self) -> tuple[list[str], np.ndarray]:
        """Names and DOF indices of the robot's 1-DOF joints (the joint-state publisher's joints)."""
        skel = self.robot_skeleton
        names, dofs = [], []
        for j in range(skel.getNumJoints()):
            joint = skel.getJoint(j)
            if joint.getType() != "FreeJoint" and joint.getNumDofs() == 1:
                names.append(joint.getName())
                dofs.append(joint.getIndexInSkeleton(0))
        return names, np.array(dofs, dtype=int)

    def robot_base_name(self) -> str:
        """The name of the robot's base body (the model frame's link)."""
        return self.robot_skeleton.getBodyNode(0).getName()

    def robot_base_pose(self) -> np.ndarray:
        """The robot's base body's world transform (4, 4), read from DART."""
        return self.robot_skeleton.getBodyNode(0).getWorldTransform().matrix()

    def robot_base_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The base body's world transform (4, 4), linear and angular velocity of its origin (3,) as gz-sim
        reports them, which its OdometryPublisher publishes as the ground truth: the state of the last step
        that moved the base beyond 1e-6 (eels_gz/gzapi/reported_links.py). Before the first step (after a
        reset or a placement): from the step's batched kinematics (which the scene log and the sensors
        share) when the skeleton has them, else from DART. The arrays may be the report's or the
        kinematics' own: read them, do not keep them."""
        reported = self._robot_state.reported_link(0)
        if reported is not None:
            return reported
        kin = self._robot_state.kinematics()
        if kin is not None:
            return kin.T[0], kin.v[0], kin.w[0]
        base = self.robot_skeleton.getBodyNode(0)
        return (base.getWorldTransform().matrix(), np.asarray(base.getLinearVelocity()),
                np.asarray(base.getAngularVelocity()))

    @contextlib.contextmanager
    def systems_held(self, held: list[LoadedSystem]):
        """Step without the callbacks of the systems ``held`` inside the block (a placement before the
        run steps the robot and its own systems; the scenario's systems start with the run)."""
        saved = {phase: list(callbacks) for phase, callbacks in self._phases.items()}
        out = {id(cb) for s in held for cb in s.callbacks}
        for callbacks in self._phases.values():
            callbacks[:] = [cb for cb in callbacks if id(cb) not in out]
        try:
            yield
        finally:
            for phase, callbacks in self._phases.items():  # in place: _pre, _upd, _post are these lists
                added = [cb for cb in callbacks if cb not in saved[phase]]  # host callbacks added meanwhile
                callbacks[:] = [cb for cb in saved[phase] if cb in callbacks or id(cb) in out] + added

    def set_gravity(self, g) -> None:
        """The world's gravity (3,) m/s^2 from now on, for the engine and the gz API; a NaN or
        infinite component is a divergence of the world (SimulationDiverged), never simulated."""
        if not np.all(np.isfinite(np.asarray(g, float))):
            raise SimulationDiverged(self.iterations, self.time, "world",
                                     f"gravity set to {np.asarray(g, float).tolist()} is not finite")
        self.world.setGravity(np.asarray(g, float))
        self.ecm.gravity = np.asarray(g, float).copy()

    def add_pre_update(self, callback) -> None:
        """Run ``callback(info, ecm)`` after the systems' pre_update each step (host features: the setup's progress ticks, tests' aids)."""
        self._pre.append(callback)

    # --- stepping -------------------------------------------------------------
    @property
    def time(self) -> float:
        return self.world.getTime()

    def _apply_commands(self) -> None:
        """Joint force commands, batched link wrenches and coupling torques of this step, set
        on each skeleton in one call; then velocity commands (SERVO actuators)."""
        if self.ecm.pose_cmds:
            for entity, pose in self.ecm.pose_cmds.items():
                state = self.ecm.models[entity].state
                self._set_root_pose(state.skel, pose_matrix(pose))
                state.refresh()
            self.ecm.pose_cmds.clear()
        for st in self.states:
            # a force command wins over a velocity command (gz-sim): note which DOFs have one
            forced = {dof for dof in st.vel_cmd if not np.isnan(st.tau[dof])} if st.vel_cmd else None
            coupling = self._coupling.get(id(st))
            extra = coupling is not None and coupling.active
            if st.has_tau or st.ext_used or extra:
                if st.total is None:
                    n = st.tau.shape[0]
                    st.total, st.applied_buf, st.zero = np.zeros(n), np.zeros(n), np.zeros(n)
                    if st.ext_tau is None:
                        st.ext_tau = np.zeros(n)
                # joint commands replace the skeleton's forces; without them, forces set on DART directly stay
                base = st.zero if st.has_tau else st.skel.getForces()
                compose_forces(st.tau, st.force_lo, st.force_hi, st.ext_tau, st.ext_used,
                               coupling.constraint_torque if extra else st.total, extra, base, st.applied_buf, st.total)
                st.skel.setForces(st.total)
                st.applied = st.applied_buf if st.has_tau else None
                st.has_tau = st.ext_used = False
            else:
                st.applied = None
            if st.vel_cmd or st.servo:
                self._velocity_commands(st, forced or set())

    @staticmethod
    def _velocity_commands(st: SkeletonState, forced: set[int]) -> None:
        servo = st.servo
        commanded = set()
        for dof, v in st.vel_cmd.items():
            if dof in forced:
                continue
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

    def _after_physics(self) -> None:
        """Read each skeleton's state once, apply its couplings to it (written back to DART), check it."""
        bound = self.max_velocity
        for st in self.states:
            skel = st.skel
            q, dq = skel.getPositions(), skel.getVelocities()
            coupling = self._coupling.get(id(st))
            if coupling is not None:
                coupling.correct(q, dq)
                skel.setVelocities(dq)
                skel.setPositions(q)
            st.q, st.dq, st.kin_fresh, st.acc_fresh = q, dq, False, False
            if dq.size and first_bad(dq, bound) >= 0:
                self._diverged(st, int(first_bad(dq, bound)))
            if q.size and first_bad(q, FINITE_MAX) >= 0:  # NaN or infinite in the state: a divergence too
                self._diverged(st, int(first_bad(q, FINITE_MAX)), "position")
            if st.wrenches is not None:
                st.wrenches.step_taken()
            st.report()  # what gz-sim's ECM gets of the step: the links that moved beyond 1e-6

    def _diverged(self, st: SkeletonState, bad: int, what: str = "velocity") -> None:
        joint, k = st.dof_owner[bad]
        body = joint.getChildBodyNode().getName()
        value = (st.dq if what == "velocity" else st.q)[bad]
        if what != "velocity":
            raise SimulationDiverged(self.iterations, self.time, body,
                                     f"{what} of DOF '{joint.getDofName(k)}' is not finite ({value})")
        detail = (f"velocity of DOF '{joint.getDofName(k)}' is {value:.6g}" if np.isfinite(value) else
                  f"velocity of DOF '{joint.getDofName(k)}' is not finite")
        raise SimulationDiverged(self.iterations, self.time, body,
                                 f"{detail} (bound {self.max_velocity:g}, set physics.max_velocity)")

    def _info(self) -> gzsim.UpdateInfo:
        """A fresh UpdateInfo of this iteration (its times are computed once per iteration)."""
        if self._times_of != self.iterations:
            self._times_of = self.iterations
            self._sim_delta = datetime.timedelta(0, self.iterations * self.dt)  # (days, seconds): seconds= is slower
            self._real_delta = datetime.timedelta(0, _time.perf_counter() - self._wall0)
        return gzsim.update_info(self._sim_delta, self._real_delta, self._dt_delta, False, self.iterations)

    def _run_phase(self, callbacks: list, phase: str) -> None:
        """Call each ``callback(info, ecm)``, a fresh UpdateInfo per call (gz-sim's loader passes a copy)."""
        ecm, make = self.ecm, self._info
        f = None
        deliver = self.transport.deliver
        try:
            for f in callbacks:
                f(make(), ecm)
                # gz-transport hands a message to the publishing process's own subscribers from its
                # publish thread (Node.cc), which runs while a Python system waits for the GIL: in
                # gz-sim a command published in one system's callback reaches the next system in the
                # same iteration
                deliver()
        except Exception as exc:
            rest = callbacks[callbacks.index(f) + 1:]
            self._callback_failed(f, phase, exc)
            self._run_phase(rest, phase)

    def _callback_failed(self, callback, phase: str, exc: Exception) -> None:
        loaded = self._owner.get(id(callback))
        if loaded is None:
            raise exc  # a host callback: not a plugin
        error = PluginCallbackError(loaded.module, phase, self.iterations, self.iterations * self.dt, exc)
        if self.plugin_errors != "disable":
            raise error from exc
        log.error("%s; the system is disabled for the rest of the run (sim.plugin_errors: disable, as in Gazebo)",
                  error, exc_info=exc)
        loaded.disabled = str(error)
        for cb in loaded.callbacks:
            for phase_list in self._phases.values():
                if cb in phase_list:
                    phase_list.remove(cb)

    def step(self) -> None:
        """One iteration: pre_update, physics, update, post_update (gz-sim's order)."""
        if self._wall0 is None:
            self._wall0 = _time.perf_counter()
        self.iterations += 1
        self.total_iterations += 1
        ecm = self.ecm
        self.transport.deliver()  # messages of the last step reach subscribers before pre_update
        if self.total_iterations == 1:
            # the server starts paused (as eels-gz's Gazebo host and a launch without -r start it):
            # gz-sim's Physics runs UpdateSim in its paused updates (only Step is skipped,
            # Physics.cc), so every check a system enabled in configure is filled before the first
            # step's pre_update
            gzsim.report_checks(ecm)
        if self._pre:
            self._run_phase(self._pre, "pre_update")
        self._apply_commands()
        t0 = _time.perf_counter()
        self._world_step()
        self.physics_seconds += _time.perf_counter() - t0
        self._after_physics()
        gzsim.report_checks(ecm)
        if self._upd:
            self._run_phase(self._upd, "update")
        if self._post:
            self._run_phase(self._post, "post_update")

    def reset_systems(self) -> None:
        """Every running system's ``reset(info, ecm)`` at the current time, the world left as it is: the
        systems start over from the current state, as the exported world's systems, loaded fresh, do in
        gz-sim after a placement that stepped the robot with its own systems here (a contact model's stick
        history, a controller's integrators and held shape)."""
        self._reset_each(gzsim.update_info(datetime.timedelta(seconds=self.time), datetime.timedelta(0),
                                           datetime.timedelta(seconds=self.dt), False, self.iterations))

    def _reset_each(self, info) -> None:
        """Each running system's ``reset(info, ecm)``; one that raises is handled as a failed callback."""
        for loaded in self.systems:
            if loaded.reset is None or loaded.disabled:
                continue
            try:
                loaded.reset(info, self.ecm)
            except Exception as exc:
                self._owner.setdefault(id(loaded.reset), loaded)
                self._callback_failed(loaded.reset, "reset", exc)

    def reset(self) -> None:
        """A world reset, as gz-sim 8's world control ``reset`` does it: the ECM goes back to its
        state when the world file was loaded (``SimulationRunner.cc``, ``EntityComponentManager::
        ResetTo``): every model of the world file back to its state after loading, the clock to
        zero, pending commands dropped, checks empty until the next physics update; then each
        system's ``reset(info, ecm)`` (``SystemManager::Reset``; info: sim time 0, dt back to it,
        iteration 0).

        The robot is not part of that state: it is added after the world loads, as
        ``ros_gz_sim create`` spawns it in Gazebo (launch/sim.launch.py). ResetTo marks it removed,
        its systems' ``reset()`` still run in that step, and then gz-sim unloads them and removes
        it (``SystemManager::ProcessRemovedEntities``): so here, after the systems' reset, the
        robot leaves the world and its model's systems are shut down (:meth:`_remove_robot`)."""
        elapsed = self.time
        self.time_before_resets += elapsed
        for st, (q, dq) in zip(self.states, self._initial):
            st.skel.setPositions(q)
            st.skel.setVelocities(dq)
            st.skel.clearExternalForces()
            st.tau.fill(np.nan)
            st.has_tau = False
            st.vel_cmd.clear()
            if st.ext_tau is not None:
                st.ext_tau.fill(0.0)
            if st.wrenches is not None:
                st.wrenches.clear()
            st.ext_used = False
            st.applied = None
            st.refresh()
            st.forget_reports()
        for c in self.couplings:
            c.reset()
        self.world.setTime(0.0)
        self.world.setGravity(self._initial_gravity)
        self.ecm.gravity = self._initial_gravity.copy()
        self.ecm.pose_cmds.clear()
        gzsim.unreport_checks(self.ecm)
        self.iterations = 0
        self._times_of = -1
        self.resets += 1
        if self._wall0 is None:
            self._wall0 = _time.perf_counter()
        self._reset_each(gzsim.update_info(datetime.timedelta(0), datetime.timedelta(0),
                                           datetime.timedelta(seconds=-elapsed), False, 0))
        if self.robot_skeleton is not None:
            self._remove_robot()

    def _remove_robot(self) -> None:
        """Take the robot out of the world, as gz-sim removes an entity: its skeleton, state,
        couplings and entity records go, and its model's systems leave the step loop and are
        shut down (gz-sim's loader calls ``shutdown`` when it is destroyed)."""
        entity, skel = self.robot_entity, self.robot_skeleton
        gone = [s for s in self.systems if s.entity == entity]
        for loaded in gone:
            for phase in self._phases.values():
                phase[:] = [cb for cb in phase if not any(cb is own for own in loaded.callbacks)]
            loaded.callbacks.clear()
        self.systems = [s for s in self.systems if s.entity != entity]
        shutdown(gone)
        keep = [k for k, st in enumerate(self.states) if st.skel is not skel]
        for st in self.states:
            if st.skel is skel:
                solver = self._coupling.pop(id(st), None)
                if solver is not None:
                    self.couplings.remove(solver)
        self.states = [self.states[k] for k in keep]
        self._initial = [self._initial[k] for k in keep]
        self.world.removeSkeleton(skel)
        self.ecm.models.pop(entity, None)
        for table in (self.ecm.links, self.ecm.joints):
            for e in [e for e, rec in table.items() if rec.model == entity]:
                del table[e]
        self.ecm.pose_cmds.pop(entity, None)
        self.gz_systems = {name: [(e, spec) for e, spec in entries if e != entity]
                           for name, entries in self.gz_systems.items()}
        self.robot_entity = gzsim.NULL_ENTITY
        self.robot_skeleton = None
        self._robot_state = None
        self._frame_index = {}
        self.robot_removed = True

    def close(self) -> None:
        """Destroy the systems: each one's ``shutdown()`` is called once, as gz-sim's loader does."""
        if not self._closed:
            self._closed = True
            shutdown(self.systems)

    def __enter__(self) -> Simulation:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
