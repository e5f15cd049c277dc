"""The part of gz-sim 8's Python API (``gz.sim8``) that plugins use, on DART.

Classes and method names follow gz-sim's bindings: ``Model``, ``Link``,
``Joint``, ``World`` and ``UpdateInfo``. Entities are integers and
``NULL_ENTITY`` (0) means "not found", as ``kNullEntity`` does. The classes
offer a subset of what the real bindings offer, with the same argument forms
(test/conformance checks them against the manifest extracted from gz-sim's
sources).

Gazebo semantics kept here (gz-sim 8, src/Joint.cc, src/Link.cc):
- ``Joint.position``/``velocity`` are None until ``enable_*_check`` is
  called; from then on ``[]`` until the next physics update fills them;
- ``Link.world_linear_velocity``/``world_angular_velocity`` are None until
  ``enable_velocity_checks``; from then on zero vectors until the next
  physics update;
- ``Joint.set_force``/``set_velocity`` are commands for the next step only;
  when both are set, the force wins;
- ``Link.add_world_force``/``add_world_wrench`` act for one step;
- a link's pose and velocities (``world_pose``, ``world_inertial``,
  ``world_linear_velocity`` ...) are those physics last reported for it: only
  a link that moved beyond 1e-6, or whose model's canonical link did, is
  reported after a step (``reported_links.py``, ``ModelState.reported_link``);
  joint states are every step's.

The ``EntityComponentManager`` here is the host's; plugins only pass it
through. Its bookkeeping is done by this module's functions
(``new_entity``, ``request_check``, ``report_checks``, ``unreport_checks``).
It reaches the engine only through the protocols of ``eels_gz.gzapi.engine``:
``ecm.engine`` for links and joints, ``ModelRecord.state`` for a model's
state and commands (``eels_gz.dart.skeleton_state`` implements both).

Host extension, not gz-sim API: the batch helpers at the end of the module
(``link_world_states``, ``add_link_world_wrenches``, ``joint_states``,
``set_joint_forces``), which ``plugins_py/gz_compat.py`` exposes.
"""

from __future__ import annotations

import datetime
import enum
from dataclasses import dataclass
from typing import Any

import numpy as np

from eels_gz.gzapi.engine import Engine, ModelState
from eels_gz.gzapi.gzmath import Inertiald, MassMatrix3d, Pose3d, Vector3d, pose_from_matrix, vector3, vector_array

NULL_ENTITY = 0
# returned by a batch helper that cannot batch the given links or joints (the caller loops)
UNBATCHED = object()

# Set by the embedded host while it loads and runs plugins; plugins_py/gz_compat.py
# reads it to decide whether to bind to this module or to Gazebo's.
HOST_ACTIVE = False


class JointType(enum.Enum):
    """sdformat's ``JointType`` names."""

    INVALID = 0
    BALL = 1
    CONTINUOUS = 2
    FIXED = 3
    GEARBOX = 4
    PRISMATIC = 5
    REVOLUTE = 6
    REVOLUTE2 = 7
    SCREW = 8
    UNIVERSAL = 9


_ZERO = datetime.timedelta(0)


class UpdateInfo:
    """Times of the current iteration, as ``datetime.timedelta`` like gz-sim's
    bindings. Constructed empty as in gz-sim (``paused`` true); the host hands
    every callback a fresh one (``update_info``), as the Python system loader
    hands each call a copy."""

    __slots__ = ("sim_time", "real_time", "dt", "paused", "iterations")

    def __init__(self):
        self.sim_time = self.real_time = self.dt = _ZERO
        self.paused = True
        self.iterations = 0


def update_info(sim_time: datetime.timedelta, real_time: datetime.timedelta, dt: datetime.timedelta,
                paused: bool, iterations: int) -> UpdateInfo:
    """A filled UpdateInfo (host side)."""
    info = UpdateInfo.__new__(UpdateInfo)
    info.sim_time, info.real_time, info.dt, info.paused, info.iterations = sim_time, real_time, dt, paused, iterations
    return info


class EventManager:
    """Opaque in the Python API; present so ``configure`` has its argument."""


# --- host-side records (private to the host) --------------------------------
@dataclass
class JointRecord:
    name: str
    model: int
    state: ModelState
    joint: Any  # the engine's handle (Engine's joint argument)
    dof: int  # index of the first DOF in the skeleton
    ndofs: int
    type: JointType
    parent: str
    child: str
    pose: np.ndarray
    position_check: int = 0  # 0 off, 1 requested, 2 reported
    velocity_check: int = 0


@dataclass
class LinkRecord:
    name: str
    model: int
    body: Any  # the engine's handle (Engine's body argument)
    canonical: bool
    velocity_check: int = 0
    index: int = -1  # body index in its skeleton, filled on first batched use


@dataclass(frozen=True)
class ResolvedSet:
    """A parameter set the run resolved, handed to its systems (``EntityComponentManager.param_sets``):
    ``source`` is what the system's element names (``<contact_params>``, ``<soil_params>``,
    ``<granular_params>``: a set's name or file), ``params`` the set itself."""

    source: str
    params: Any


@dataclass
class ModelRecord:
    name: str
    static: bool
    file: str
    links: list[int]
    joints: list[int]
    state: ModelState | None  # None for a static model


class EntityComponentManager:
    """The host's entity store. Plugins pass it to API calls and never inspect
    it; the host manages it through this module's functions."""

    def __init__(self) -> None:
        self.engine: Engine | None = None  # set by the host that owns it (constructed as gz-sim's, without one)
        self._next = 1
        self.world_entity = NULL_ENTITY
        self.world_name = ""
        self.gravity = np.zeros(3)
        self.models: dict[int, ModelRecord] = {}
        self.links: dict[int, LinkRecord] = {}
        self.joints: dict[int, JointRecord] = {}
        self._pending_checks: list[Any] = []
        self.pose_cmds: dict[int, Pose3d] = {}  # model entity -> pose to set before the next step
        # False withholds the batch helpers, so plugins take the per-entity path Gazebo runs
        self.batch_api = True
        # scenario systems (plugins_py/gz_compat.py): systems of one model that find each other, and
        # the first run end a system asked for ((status, message), or None)
        self.peers: dict[tuple[int, str], Any] = {}
        self.run_end: tuple[str, str] | None = None
        # the batch helpers' resolved lists of links and joints: (kind, id(list)) -> (list, its length,
        # _Batch or False); dropped when a check is switched off or the world resets
        self.batches: dict[tuple[str, int], tuple[Any, int, Any]] = {}
        # the host context: the parameter sets the run resolved, by the element that names them
        # ("contact_params", ...): a system gets its set from here instead of reading the file (resolved_set)
        self.param_sets: dict[str, ResolvedSet] = {}


def register_peer(ecm: EntityComponentManager, model_entity: int, name: str, system: Any) -> None:
    """Host side of ``gz_compat.register_peer``: per simulation (its ECM)."""
    ecm.peers[(int(model_entity), name)] = system


def peer(ecm: EntityComponentManager, model_entity: int, name: str) -> Any:
    """Host side of ``gz_compat.peer``."""
    return ecm.peers.get((int(model_entity), name))


def request_run_end(ecm: EntityComponentManager, status: str, message: str) -> None:
    """Host side of ``gz_compat.request_run_end``: the first request of a step wins."""
    if ecm.run_end is None:
        ecm.run_end = (str(status), str(message))


def resolved_set(ecm: EntityComponentManager, element: str, source: str) -> Any:
    """Host side of the contact systems' parameter sets: the set the run resolved for ``<element>``
    when the system's element names the same ``source``, else None (the system reads the file, as
    under Gazebo)."""
    given = ecm.param_sets.get(element)
    return given.params if given is not None and given.source == source else None


def world_entity(ecm: EntityComponentManager) -> int:
    """The world's entity (gz-sim's ``worldEntity(ecm)``, Python ``world_entity``)."""
    return ecm.world_entity


def new_entity(ecm: EntityComponentManager) -> int:
    e = ecm._next
    ecm._next += 1
    return e


def request_check(ecm: EntityComponentManager, record: Any, attr: str) -> None:
    """An ``enable_*_check``: the component exists (empty) from now, filled by the next physics update."""
    if getattr(record, attr) == 0:
        setattr(record, attr, 1)
        ecm._pending_checks.append((record, attr))


def report_checks(ecm: EntityComponentManager) -> None:
    """After a physics update: checks requested before it report from now on (as in Gazebo)."""
    if ecm._pending_checks:
        for record, attr in ecm._pending_checks:
            if getattr(record, attr) == 1:
                setattr(record, attr, 2)
        ecm._pending_checks.clear()


def unreport_checks(ecm: EntityComponentManager) -> None:
    """A world reset: the ECM returns to its initial state, where enabled checks
    hold empty components until the next physics update."""
    ecm.batches.clear()  # the joint batches cache "every check reports"
    for record in (*ecm.joints.values(), *ecm.links.values()):
        for attr in ("position_check", "velocity_check"):
            if getattr(record, attr, 0) == 2:
                setattr(record, attr, 1)
                ecm._pending_checks.append((record, attr))


# --- the API ------------------------------------------------------------------
class _Entity:
    """What World, Model, Link and Joint share: an entity id, constructed from an int or copied from
    another API object (gz-sim's constructors), and its validity: a record in the ECM's ``_TABLE``."""

    __slots__ = ("_e",)
    _TABLE = ""  # the ECM's records of this kind ("models", "links", "joints")

    def __init__(self, entity):
        self._e = entity.entity() if isinstance(entity, _Entity) else int(entity)

    def entity(self) -> int:
        return self._e

    def valid(self, ecm: EntityComponentManager) -> bool:
        return self._e in getattr(ecm, self._TABLE)


class _ModelPart(_Entity):
    """A link or a joint: a named part of a model (None for an entity the ECM does not hold)."""

    __slots__ = ()

    def name(self, ecm: EntityComponentManager) -> str | None:
        rec = getattr(ecm, self._TABLE).get(self._e)
        return rec.name if rec else None

    def parent_model(self, ecm: EntityComponentManager) -> Model:
        return Model(getattr(ecm, self._TABLE)[self._e].model)


class World(_Entity):
    __slots__ = ()

    def valid(self, ecm: EntityComponentManager) -> bool:
        return self._e == ecm.world_entity and self._e != NULL_ENTITY

    def name(self, ecm: EntityComponentManager) -> str | None:
        return ecm.world_name if self.valid(ecm) else None

    def gravity(self, ecm: EntityComponentManager) -> Vector3d | None:
        return vector3(ecm.gravity) if self.valid(ecm) else None

    def model_by_name(self, ecm: EntityComponentManager, name: str) -> int:
        for e, m in ecm.models.items():
            if m.name == name:
                return e
        return NULL_ENTITY

    def models(self, ecm: EntityComponentManager) -> list[int]:
        return list(ecm.models)

    def model_count(self, ecm: EntityComponentManager) -> int:
        return len(ecm.models)


class Model(_Entity):
    __slots__ = ()
    _TABLE = "models"

    def name(self, ecm: EntityComponentManager) -> str:
        m = ecm.models.get(self._e)
        return m.name if m else ""

    def static(self, ecm: EntityComponentManager) -> bool:
        return ecm.models[self._e].static

    def source_file_path(self, ecm: EntityComponentManager) -> str:
        return ecm.models[self._e].file

    def joint_by_name(self, ecm: EntityComponentManager, name: str) -> int:
        for e in ecm.models[self._e].joints:
            if ecm.joints[e].name == name:
                return e
        return NULL_ENTITY

    def link_by_name(self, ecm: EntityComponentManager, name: str) -> int:
        for e in ecm.models[self._e].links:
            if ecm.links[e].name == name:
                return e
        return NULL_ENTITY

    def joints(self, ecm: EntityComponentManager) -> list[int]:
        return list(ecm.models[self._e].joints)

    def links(self, ecm: EntityComponentManager) -> list[int]:
        return list(ecm.models[self._e].links)

    def joint_count(self, ecm: EntityComponentManager) -> int:
        return len(ecm.models[self._e].joints)

    def link_count(self, ecm: EntityComponentManager) -> int:
        return len(ecm.models[self._e].links)

    def canonical_link(self, ecm: EntityComponentManager) -> int:
        for e in ecm.models[self._e].links:
            if ecm.links[e].canonical:
                return e
        return NULL_ENTITY

    def set_world_pose_cmd(self, ecm: EntityComponentManager, pose: Pose3d) -> None:
        """Teleport the model before the next step (its velocities are kept)."""
        rec = ecm.models[self._e]
        if rec.state is None:
            raise ValueError(f"model '{rec.name}' is static; the embedded host does not move static models")
        ecm.pose_cmds[self._e] = pose


class Link(_ModelPart):
    __slots__ = ()
    _TABLE = "links"

    def reset_entity(self, entity, /) -> None:
        self._e = int(entity)

    def is_canonical(self, ecm: EntityComponentManager) -> bool:
        return ecm.links[self._e].canonical

    def world_pose(self, ecm: EntityComponentManager) -> Pose3d | None:
        rec = ecm.links.get(self._e)
        return None if rec is None else pose_from_matrix(_link_pose(ecm, rec))

    def world_inertial(self, ecm: EntityComponentManager) -> Inertiald | None:
        """The link's mass and inertia about its centre of mass, at the centre of mass's world pose."""
        rec = ecm.links.get(self._e)
        if rec is None:
            return None
        m, moment = ecm.engine.link_inertia(rec.body)
        mass = MassMatrix3d(m, vector3(np.diag(moment)), vector3((moment[0, 1], moment[0, 2], moment[1, 2])))
        return Inertiald(mass, self.world_inertial_pose(ecm))

    def world_inertial_pose(self, ecm: EntityComponentManager) -> Pose3d | None:
        """The centre of mass's world pose: the link's world pose times its inertial pose (gz-sim)."""
        rec = ecm.links.get(self._e)
        if rec is None:
            return None
        T = _link_pose(ecm, rec).copy()
        T[:3, 3] = T[:3, :3] @ np.asarray(ecm.engine.link_local_com(rec.body), dtype=float) + T[:3, 3]
        return pose_from_matrix(T)

    def enable_velocity_checks(self, ecm: EntityComponentManager, enable: bool = True) -> None:
        rec = ecm.links[self._e]
        if enable:
            request_check(ecm, rec, "velocity_check")
        else:
            rec.velocity_check = 0
            ecm.batches.clear()

    def world_linear_velocity(self, ecm: EntityComponentManager, offset: Vector3d | None = None) -> Vector3d | None:
        """Velocity of the link origin, or of a point at ``offset`` in the link frame, in world."""
        rec = ecm.links.get(self._e)
        if rec is None or rec.velocity_check == 0:
            return None
        if rec.velocity_check == 1:
            return Vector3d()  # enabled, not yet filled by physics (gz-sim: zero)
        reported = _reported(ecm, rec)
        if reported is None:
            return vector3(ecm.engine.link_linear_velocity(rec.body, None if offset is None else vector_array(offset)))
        T, v, w = reported
        if offset is not None:  # gz-sim: v + w x (R offset), of the reported pose and velocities
            v = v + np.cross(w, T[:3, :3] @ vector_array(offset))
        return vector3(v)

    def world_angular_velocity(self, ecm: EntityComponentManager) -> Vector3d | None:
        rec = ecm.links.get(self._e)
        if rec is None or rec.velocity_check == 0:
            return None
        if rec.velocity_check == 1:
            return Vector3d()
        reported = _reported(ecm, rec)
        return vector3(ecm.engine.link_angular_velocity(rec.body) if reported is None else reported[2])

    def add_world_force(self, ecm: EntityComponentManager, force: Vector3d, position: Vector3d | None = None) -> None:
        """Force in world coordinates at the centre of mass, or at ``position``
        from the centre of mass in the link frame (gz-sim's convention)."""
        body = ecm.links[self._e].body
        offset = ecm.engine.link_local_com(body)
        if position is not None:
            offset = offset + vector_array(position)
        ecm.engine.add_link_force(body, vector_array(force), offset)

    def add_world_wrench(self, ecm: EntityComponentManager, force: Vector3d, torque: Vector3d) -> None:
        """Force and torque in world coordinates, applied at the link origin, for one step."""
        body = ecm.links[self._e].body
        ecm.engine.add_link_force(body, vector_array(force), np.zeros(3))
        ecm.engine.add_link_torque(body, vector_array(torque))


def _reported(ecm: EntityComponentManager, rec: LinkRecord):
    """The link's (pose, linear, angular velocity) as physics last reported them (ModelState.reported_link),
    or None while its model reports nothing (static) or nothing yet since the start, a reset or a placement:
    then the ECM holds the state set, which the engine's per-link reads give."""
    state = ecm.models[rec.model].state
    if state is None:
        return None
    if rec.index < 0:
        rec.index = ecm.engine.link_index(rec.body)
    return state.reported_link(rec.index)


def _link_pose(ecm: EntityComponentManager, rec: LinkRecord) -> np.ndarray:
    """The link's world pose (4x4) as gz-sim's ECM holds it; the report's own array: do not modify it."""
    reported = _reported(ecm, rec)
    return ecm.engine.link_pose(rec.body) if reported is None else reported[0]


class Joint(_ModelPart):
    __slots__ = ()
    _TABLE = "joints"

    def reset_entity(self, new_entity) -> None:
        self._e = int(new_entity)

    def parent_link_name(self, ecm: EntityComponentManager) -> str | None:
        rec = ecm.joints.get(self._e)
        return rec.parent if rec else None

    def child_link_name(self, ecm: EntityComponentManager) -> str | None:
        rec = ecm.joints.get(self._e)
        return rec.child if rec else None

    def pose(self, ecm: EntityComponentManager) -> Pose3d | None:
        rec = ecm.joints.get(self._e)
        return pose_from_matrix(rec.pose) if rec else None

    def type(self, ecm: EntityComponentManager) -> JointType | None:
        rec = ecm.joints.get(self._e)
        return rec.type if rec else None

    def enable_position_check(self, ecm: EntityComponentManager, enable: bool = True) -> None:
        rec = ecm.joints[self._e]
        if enable:
            request_check(ecm, rec, "position_check")
        else:
            rec.position_check = 0
            ecm.batches.clear()

    def enable_velocity_check(self, ecm: EntityComponentManager, enable: bool = True) -> None:
        rec = ecm.joints[self._e]
        if enable:
            request_check(ecm, rec, "velocity_check")
        else:
            rec.velocity_check = 0
            ecm.batches.clear()

    def position(self, ecm: EntityComponentManager) -> list[float] | None:
        """None before ``enable_position_check``, ``[]`` until the next physics update, then one value per DOF."""
        rec = ecm.joints[self._e]
        check = rec.position_check
        if check != 2:
            return None if check == 0 else []
        if rec.ndofs == 1:
            return [rec.state.q.item(rec.dof)]
        return rec.state.q[rec.dof:rec.dof + rec.ndofs].tolist()

    def velocity(self, ecm: EntityComponentManager) -> list[float] | None:
        """None before ``enable_velocity_check``, ``[]`` until the next physics update, then one value per DOF."""
        rec = ecm.joints[self._e]
        check = rec.velocity_check
        if check != 2:
            return None if check == 0 else []
        if rec.ndofs == 1:
            return [rec.state.dq.item(rec.dof)]
        return rec.state.dq[rec.dof:rec.dof + rec.ndofs].tolist()

    def set_force(self, ecm: EntityComponentManager, forces: list[float]) -> None:
        rec = ecm.joints[self._e]
        state = rec.state
        if len(forces) != rec.ndofs:
            raise ValueError(f"joint '{rec.name}' has {rec.ndofs} DOF, got {len(forces)} forces")
        if rec.ndofs == 1:
            state.tau[rec.dof] = forces[0]
        else:
            state.tau[rec.dof:rec.dof + rec.ndofs] = forces
        state.has_tau = True

    def set_velocity(self, ecm: EntityComponentManager, velocities: list[float]) -> None:
        rec = ecm.joints[self._e]
        if len(velocities) != rec.ndofs:
            raise ValueError(f"joint '{rec.name}' has {rec.ndofs} DOF, got {len(velocities)} velocities")
        for k, v in enumerate(velocities):
            rec.state.vel_cmd[rec.dof + k] = float(v)

    def reset_position(self, ecm: EntityComponentManager, positions: list[float]) -> None:
        rec = ecm.joints[self._e]
        ecm.engine.set_joint_positions(rec.joint, np.asarray(positions, dtype=float))
        rec.state.refresh()

    def reset_velocity(self, ecm: EntityComponentManager, velocities: list[float]) -> None:
        rec = ecm.joints[self._e]
        ecm.engine.set_joint_velocities(rec.joint, np.asarray(velocities, dtype=float))
        rec.state.refresh()


# --- host extension: batched link and joint access ----------------------------------
# Not part of gz-sim's API. plugins_py/gz_compat.py offers ``link_world_states``,
# ``add_link_world_wrenches``, ``joint_states`` and ``set_joint_forces`` in
# every host: under Gazebo they loop over the Link/Joint API; here they read
# and write all links or joints of a model at once (through its ModelState:
# eels_gz/dart/kinematics.py), which is what makes 20 screws and 40
# joints cheap. A plugin passes the same list every step; the batch is cached
# by the list's identity (ecm.batches).


class _Batch:
    """A plugin's list of links or joints of one skeleton, resolved once: its
    records, their indices, output buffers, and whether every check reports."""

    __slots__ = ("items", "n", "state", "idx", "recs", "ready", "out")

    def __init__(self, items, state, idx, recs):
        self.items, self.n, self.state, self.idx, self.recs = items, len(items), state, idx, recs
        self.ready = False
        self.out = None


def _lookup(ecm: EntityComponentManager, kind: str, items):
    """The batch of a plugin's list, found by the list's identity (a plugin passes
    the same list every step; the cache holds it, so its id is not reused)."""
    cache = ecm.batches
    entry = cache.get((kind, id(items)))
    if entry is not None and entry[0] is items and len(items) == entry[1]:
        return cache, entry[2]
    return cache, None


def _batch(ecm: EntityComponentManager, links) -> _Batch | None:
    cache, hit = _lookup(ecm, "links", links)
    if hit is None:
        recs = [ecm.links[link.entity()] for link in links]
        states = {id(ecm.models[r.model].state) for r in recs}
        state = ecm.models[recs[0].model].state if recs else None
        if len(states) != 1 or state is None or not state.batchable():
            hit = False
        else:
            for r in recs:
                if r.index < 0:
                    r.index = ecm.engine.link_index(r.body)
            hit = _Batch(links, state, np.array([r.index for r in recs], dtype=np.int64), recs)
            n = len(recs)
            hit.out = (np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 3)))
        cache[("links", id(links))] = (links, len(links), hit)
    return hit or None


def link_world_states(ecm: EntityComponentManager, links):
    """(pos (S, 3), rot (S, 3, 3), lin (S, 3), ang (S, 3)) of the link origins
    in the world, read in one batch, with the per-link API's semantics: None
    while a link's velocity check is off, zero velocities while it is enabled
    but not yet filled by a physics update. ``UNBATCHED`` when the links are
    not all of one skeleton, or the batch helpers are withheld. The arrays are
    the batch's own, overwritten by the next call: read them, do not keep them."""
    hit = _batch(ecm, links) if ecm.batch_api else None
    if hit is None:
        return UNBATCHED
    fresh = None
    if not hit.ready:
        checks = [r.velocity_check for r in hit.recs]
        if 0 in checks:
            return None
        hit.ready = 1 not in checks  # stays so until a check is switched off or the world resets
        fresh = np.array(checks) == 1
    pos, rot, lin, ang = hit.out
    hit.state.link_states(hit.idx, pos, rot, lin, ang)
    if fresh is not None and fresh.any():
        lin[fresh] = 0.0
        ang[fresh] = 0.0
    return hit.out


def add_link_world_wrenches(ecm: EntityComponentManager, links, forces, torques) -> bool:
    """World forces at the link origins and torques (S, 3), for one step, in
    one batch; False when the links cannot be batched (the caller loops)."""
    hit = _batch(ecm, links) if ecm.batch_api else None
    if hit is None:
        return False
    return hit.state.add_link_wrenches(hit.idx, forces, torques)


def _joint_batch(ecm: EntityComponentManager, joints) -> _Batch | None:
    cache, hit = _lookup(ecm, "joints", joints)
    if hit is None:
        recs = [ecm.joints[j.entity()] for j in joints]
        ok = recs and len({id(r.state) for r in recs}) == 1 and all(r.ndofs == 1 for r in recs)
        hit = _Batch(joints, recs[0].state, np.array([r.dof for r in recs], dtype=np.int64), recs) if ok else False
        cache[("joints", id(joints))] = (joints, len(joints), hit)
    return hit or None


def joint_states(ecm: EntityComponentManager, joints):
    """(positions, velocities) arrays of single-DOF joints of one skeleton in
    one batch, or None while a position or velocity check is off or not yet
    filled by a physics update (``Joint.position``/``velocity`` give None or
    ``[]`` then); ``UNBATCHED`` when the joints cannot be batched or the batch
    helpers are withheld."""
    hit = _joint_batch(ecm, joints) if ecm.batch_api else None
    if hit is None:
        return UNBATCHED
    if not hit.ready:  # once every check reports, it does until one is disabled or the world resets
        if any(r.position_check != 2 or r.velocity_check != 2 for r in hit.recs):
            return None
        hit.ready = True
    state, idx = hit.state, hit.idx
    return state.q[idx], state.dq[idx]


def set_joint_forces(ecm: EntityComponentManager, joints, forces) -> bool:
    """``Joint.set_force`` for single-DOF joints of one skeleton in one batch;
    False when they cannot be batched (the caller loops)."""
    hit = _joint_batch(ecm, joints) if ecm.batch_api else None
    if hit is None:
        return False
    state = hit.state
    state.tau[hit.idx] = forces
    state.has_tau = True
    return True


def batch_api(ecm: EntityComponentManager) -> bool:
    """Whether the host offers the batch helpers to plugins (``sim.batch_api``)."""
    return ecm.batch_api
