"""Link and joint state read and commanded as arrays (one of the jobs of the plugins' compat layer,
``gz_compat``, which re-exports these names): ``link_world_states``, ``link_world_inertials``,
``add_link_world_wrenches``, ``joint_states`` and ``set_joint_forces``. Under Gazebo one gz-sim call per
link or joint (the ``*_each`` functions); in the embedded host one call per skeleton, unless the host
withholds its batch helpers (``sim.batch_api: false``), which runs the per-entity path here too. Both
give ``None`` until the state they need is reported, so no plugin indexes an empty state. Not a system
(no ``get_system()``).
"""

from gz_binding import HOST, gzmath, sim


def _batched(ecm) -> bool:
    return HOST == "embedded" and sim.batch_api(ecm)


def link_world_states_each(ecm, links):
    """``link_world_states`` through the gz-sim Link API, one link at a time."""
    import numpy as np

    from eels_gz.contact.frames import rotation_matrix

    n = len(links)
    pos, rot, lin, ang = np.zeros((n, 3)), np.zeros((n, 3, 3)), np.zeros((n, 3)), np.zeros((n, 3))
    for k, link in enumerate(links):
        pose = link.world_pose(ecm)
        v, w = link.world_linear_velocity(ecm), link.world_angular_velocity(ecm)
        if pose is None or v is None or w is None:
            return None  # velocity checks not enabled
        p = pose.pos()
        pos[k] = (p.x(), p.y(), p.z())
        q = pose.rot()
        rot[k] = rotation_matrix(q.w(), q.x(), q.y(), q.z())
        lin[k] = (v.x(), v.y(), v.z())
        ang[k] = (w.x(), w.y(), w.z())
    return pos, rot, lin, ang


def link_world_states(ecm, links):
    """World pose and twist of the links' origins as arrays: ``(pos (S, 3),
    rot (S, 3, 3), lin (S, 3), ang (S, 3))``, or None while a link's velocity
    checks are off. Until the first physics update after the checks are
    enabled the velocities are zero (gz-sim's semantics)."""
    if _batched(ecm):
        out = sim.link_world_states(ecm, links)
        if out is not sim.UNBATCHED:
            return out
    return link_world_states_each(ecm, links)


def link_world_inertials(ecm, links):
    """The links' inertials through ``Link.world_inertial``: ``(mass (S,) kg, centre of mass (S, 3) m,
    moment of inertia about it (S, 3, 3) kg m^2)``, all in the world frame; ValueError naming a link
    that has none."""
    import numpy as np

    from eels_gz.contact.frames import rotation_matrix

    n = len(links)
    mass, com, moi = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3))
    for k, link in enumerate(links):
        inertial = link.world_inertial(ecm)
        if inertial is None or inertial.mass_matrix().mass() <= 0.0:
            raise ValueError(f"link '{link.name(ecm)}' has no inertial with a positive mass")
        mm = inertial.mass_matrix()
        mass[k] = mm.mass()
        p, q = inertial.pose().pos(), inertial.pose().rot()
        com[k] = (p.x(), p.y(), p.z())
        d, o = mm.diagonal_moments(), mm.off_diagonal_moments()  # (xx, yy, zz), (xy, xz, yz), inertial frame
        local = np.array([[d.x(), o.x(), o.y()], [o.x(), d.y(), o.z()], [o.y(), o.z(), d.z()]])
        rot = rotation_matrix(q.w(), q.x(), q.y(), q.z())
        moi[k] = rot @ local @ rot.T
    return mass, com, moi


def add_link_world_wrenches_each(ecm, links, forces, torques):
    """``add_link_world_wrenches`` through ``Link.add_world_wrench``."""
    for link, f, t in zip(links, forces.tolist(), torques.tolist()):
        link.add_world_wrench(ecm, gzmath.Vector3d(*f), gzmath.Vector3d(*t))


def add_link_world_wrenches(ecm, links, forces, torques):
    """World forces (at the link origins) and torques, (S, 3) arrays, for one
    step: batched in the embedded host, ``Link.add_world_wrench`` in Gazebo."""
    if _batched(ecm) and sim.add_link_world_wrenches(ecm, links, forces, torques):
        return
    add_link_world_wrenches_each(ecm, links, forces, torques)


def joint_states_each(ecm, joints):
    """``joint_states`` through ``Joint.position``/``velocity``, one joint at a time."""
    import numpy as np

    pos = [j.position(ecm) for j in joints]
    vel = [j.velocity(ecm) for j in joints]
    # None: the check is off; []: enabled, not yet filled by a physics update
    if not all(pos) or not all(vel):
        return None
    return np.array([p[0] for p in pos], float), np.array([v[0] for v in vel], float)


def joint_states(ecm, joints):
    """Positions and velocities of single-DOF joints as two arrays, or None
    until every joint's checks report: batched in the embedded host, one call
    per joint in Gazebo."""
    if _batched(ecm):
        out = sim.joint_states(ecm, joints)
        if out is not sim.UNBATCHED:
            return out
    return joint_states_each(ecm, joints)


def set_joint_forces_each(ecm, joints, forces):
    """``set_joint_forces`` through ``Joint.set_force``."""
    for joint, f in zip(joints, forces.tolist()):
        joint.set_force(ecm, [f])


def set_joint_forces(ecm, joints, forces):
    """``Joint.set_force`` on single-DOF joints from one array (batched in the embedded host)."""
    if _batched(ecm) and sim.set_joint_forces(ecm, joints, forces):
        return
    set_joint_forces_each(ecm, joints, forces)
