"""An EELS robot seen through the gz-sim API, for the snake scenarios' systems (not a system itself).

:class:`SnakeIO` is what a scenario system of ``plugins_py/`` uses to read the robot and command its
joints, in both hosts: the robot's :class:`~eels_gz.snake.chain.SnakeChain` from the scenario's
``<description_file>`` (the robot's URDF: link and joint names are those of the xacro), its joints'
positions and rates (``gz_compat.joint_states``, one batch over the chain's 1-DOF joints), the world
pose and twist of its base (the chain's root link, ``gz_compat.link_world_states``), the screw contact
(the ``screw_contact`` peer: which screws touch the terrain, their loads) and the joint set points
(the ``joint_control`` peer's ``set_targets``).

Use: build it in ``configure`` (it enables the position, velocity and link checks there); in each
``pre_update``/``post_update`` call :meth:`SnakeIO.read` once, which returns False until gz-sim reports
the state (``Joint.position()`` is ``[]`` before the first physics update); then :meth:`angles`,
:meth:`base_pose` etc. give that state. :meth:`SnakeIO.read_base` reads only the base, whose pose
is reported from the start. ``screws`` is the screw geometry (the robot's EELS variant record, as
the screw contact's), ``world_name`` and ``gravity`` the ``<world_file>``'s. Angles in rad, poses 4x4
in the world, SI units.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from gz_compat import joint_states, link_world_states, param, peer, sim, watched_link

from eels_gz.description.model import RobotModel
from eels_gz.snake.chain import SnakeChain

ONE_DOF = ("revolute", "continuous", "prismatic")


def world_facts(world_file: str) -> tuple[str, np.ndarray]:
    """The ``<world name=...>`` and ``<gravity>`` (m/s^2, (3,)) of an SDF world file, as gz-sim loads it
    (the scenario's ``<world_file>``; read from the file rather than through ``World(world_entity(ecm))``,
    whose module function ``world_entity`` test/conformance's API manifest does not cover)."""
    from lxml import etree

    try:
        world = etree.parse(world_file).getroot().find("world")
    except (OSError, etree.XMLSyntaxError) as exc:
        raise ValueError(f"cannot read <world_file> '{world_file}': {exc}") from None
    if world is None:
        raise ValueError(f"<world_file> '{world_file}' has no <world> element")
    text = (world.findtext("gravity") or "").split()
    if not text:
        from eels_gz.soil.contact import SDF_DEFAULT_GRAVITY

        return world.get("name", ""), np.array([0.0, 0.0, -SDF_DEFAULT_GRAVITY])
    try:
        g = np.array([float(v) for v in text], float)
    except ValueError:
        g = np.zeros(0)
    if g.shape != (3,):
        raise ValueError(f"<world_file> '{world_file}': <gravity> '{' '.join(text)}' is not three numbers")
    return world.get("name", ""), g


class SnakeIO:
    """Joint angles, base pose, set points and screw contact of the robot model ``entity``.

    ``sdf``: the scenario system's ``<plugin>`` element (its ``<description_file>`` is read);
    ``where``: the system's name, for messages.
    """

    def __init__(self, entity, sdf, ecm, where: str):
        self.where = where
        self.entity = entity
        self._ecm = ecm  # whose simulation the peers are looked up in (gz_compat.peer)
        self.model = sim.Model(entity)
        path = param(sdf, "get_string", "description_file", where)
        try:
            with open(path) as f:
                text = f.read()
        except OSError as exc:
            raise ValueError(f"{where}: cannot read <description_file> '{path}': {exc.strerror}") from None
        self.description_file = path
        self.robot_model = RobotModel.from_urdf(text, path)  # eels_gz.description.model, pure
        self.chain = SnakeChain.from_model(self.robot_model)
        robot_name, _ = sdf.get_string("robot", "")
        self.robot = robot_name
        names = [n for n, j in self.chain.joints.items() if j.type in ONE_DOF]
        self.joint_names: list[str] = []
        self.joints = []  # sim.Joint, the same list object every call (the batch is cached by it)
        for name in names:
            e = self.model.joint_by_name(ecm, name)
            if not e:
                raise ValueError(f"{where}: joint '{name}' of '{path}' is not a joint of model "
                                 f"'{self.model.name(ecm)}'")
            joint = sim.Joint(e)
            joint.enable_position_check(ecm)
            joint.enable_velocity_check(ecm)
            self.joints.append(joint)
            self.joint_names.append(name)
        self.base_link = watched_link(self.model, ecm, self.chain.root, f"the base link '{self.chain.root}' of "
                                      f"'{path}'", where)
        self.base_links = [self.base_link]
        self.world_name, self.gravity = world_facts(param(sdf, "get_string", "world_file", where))
        self.shape_joints = self.chain.bend_joints() + self.chain.twist_joints()
        self.screw_actuators = sorted({self.chain.actuated(self.chain.joint(j).name)[0]
                                       for j in self.chain.screw_joints()})
        self._joint_control = self._screw_contact = self._screws = None
        self._q = self._dq = None
        self._T = np.eye(4)
        self._v = self._w = np.zeros(3)

    # --- peers ----------------------------------------------------------------------------
    @property
    def joint_control(self):
        """The robot's joint_control system (its ``set_targets``); ValueError naming it when absent."""
        if self._joint_control is None:
            self._joint_control = peer(self.entity, "joint_control", self._ecm)
            if self._joint_control is None:
                raise ValueError(f"{self.where}: the robot has no joint_control system to command its joints")
        return self._joint_control

    @property
    def screw_contact(self):
        """The robot's screw_contact system, or None (stock contact)."""
        if self._screw_contact is None:
            self._screw_contact = peer(self.entity, "screw_contact", self._ecm)
        return self._screw_contact

    # --- state ----------------------------------------------------------------------------
    def read(self, ecm) -> bool:
        """Read the joints and the base now (one batch each); False (the joints unchanged) until
        gz-sim reports them, i.e. before the first physics update after ``configure``."""
        if not self.read_base(ecm):
            return False
        states = joint_states(ecm, self.joints)
        if states is None:
            return False
        q, dq = states
        self._q, self._dq = np.array(q, float), np.array(dq, float)  # copies: the batch's arrays are reused
        return True

    def read_base(self, ecm) -> bool:
        """Read only the base's pose and twist now; its pose is reported from ``configure`` on (its
        twist is zero until the first physics update), False only if its checks were switched off."""
        base = link_world_states(ecm, self.base_links)
        if base is None:
            return False
        pos, rot, lin, ang = base
        T = np.eye(4)
        T[:3, :3] = rot[0]
        T[:3, 3] = pos[0]
        self._T, self._v, self._w = T, np.array(lin[0], float), np.array(ang[0], float)
        return True

    @property
    def ready(self) -> bool:
        """Whether :meth:`read` has read a state yet."""
        return self._q is not None

    def angles(self) -> dict[str, float]:
        """Position (rad, or m) of every 1-DOF chain joint, as last read."""
        return dict(zip(self.joint_names, self._q.tolist()))

    def rates(self) -> dict[str, float]:
        """Rate (rad/s, or m/s) of every 1-DOF chain joint, as last read."""
        return dict(zip(self.joint_names, self._dq.tolist()))

    def base_pose(self) -> np.ndarray:
        """World pose (4x4) of the base (the chain's root link), as last read."""
        return self._T.copy()

    def base_twist_world(self) -> tuple[np.ndarray, np.ndarray]:
        """(v, w) of the base origin in the world (m/s, rad/s), as last read."""
        return self._v.copy(), self._w.copy()

    def module_points(self) -> np.ndarray:
        """(n + 2, 3) module points of the robot (world), as last read."""
        return self.chain.module_points(self.angles(), self._T)

    def down_in_base(self) -> np.ndarray:
        """Unit gravity direction in the base frame (straight down the base's -z without gravity)."""
        n = float(np.linalg.norm(self.gravity))
        g = self.gravity / n if n > 0 else np.array([0.0, 0.0, -1.0])
        return self._T[:3, :3].T @ g

    # --- screw contact (the screw_contact peer's last step; nothing under stock contact) -------
    def screw_loads(self) -> dict[str, float]:
        """Normal load (N) of each screw link in the screw contact's last step ({} without it)."""
        plugin = self.screw_contact
        if plugin is None or plugin.last is None:
            return {}
        return dict(zip(plugin.points.names, plugin.last.normal_force.sum(axis=1).tolist()))

    def screws_in_contact(self) -> list[str]:
        """Screw links whose normal load is positive in the screw contact's last step ([] without it)."""
        plugin = self.screw_contact
        if plugin is None or plugin.last is None:
            return []
        load = plugin.last.normal_force.sum(axis=1)
        return [n for n, f in zip(plugin.points.names, load) if f > 0.0]

    def total_screw_load(self) -> float:
        """Sum of the screws' normal loads (N) in the screw contact's last step (0 without it)."""
        plugin = self.screw_contact
        if plugin is None or plugin.last is None:
            return 0.0
        return float(plugin.last.normal_force.sum())

    @property
    def screws(self) -> dict:
        """:meth:`screw_geometry`, read once."""
        if self._screws is None:
            self._screws = self.screw_geometry()
        return self._screws

    def screw_geometry(self) -> dict:
        """ScrewGeometry per screw link of the robot's EELS variant (``<robot>``, urdf/eels_variants.yaml:
        the record urdf/eels.gazebo.xacro writes the screw contact's geometry from)."""
        from eels_gz.contact.screw_points import ScrewGeometry
        from eels_gz.registry import eels_variants, screw_handedness

        variants = eels_variants()
        rec = variants.get(self.robot)
        if rec is None or not rec.get("screw"):
            raise ValueError(f"{self.where}: robot '{self.robot}' (<robot>) is not an EELS variant with screws "
                             "(urdf/eels_variants.yaml)")
        v = rec["screw"]
        return {a.link: ScrewGeometry(v["radius"], v["length"], v["lead_angle"], screw_handedness(rec, a.link),
                                      name=a.link)
                for a in self.chain.screw_axes().values()}

    # --- commands -------------------------------------------------------------------------
    def command(self, positions: Mapping[str, float] | None = None,
                velocities: Mapping[str, float] | None = None) -> None:
        """Joint set points by name (position rad, velocity rad/s) through the joint_control peer."""
        positions, velocities = positions or {}, velocities or {}
        names = sorted(positions.keys() | velocities.keys())
        if names:
            self.joint_control.set_targets(names, [float(positions.get(n, np.nan)) for n in names],
                                           [float(velocities.get(n, np.nan)) for n in names])
