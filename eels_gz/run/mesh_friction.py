"""The friction gz-sim 8 does not apply to a mesh, and how the export keeps the world's pair coefficient anyway.

gz-sim 8 attaches a ``<mesh>`` collision itself (``Physics.cc`` ``CreateCollisionEntities``:
``AttachMeshShape``), and gz-physics 7's dartsim ``AttachMeshShape`` (``dartsim/src/ShapeFeatures.cc``)
never reads the collision's ``<surface>``: the mesh keeps DART's default friction coefficient, 1. Only
the shapes gz-physics builds from the SDF (boxes, cylinders, spheres, planes...) get their ``<mu>``
(``SDFFeatures.cc`` ``ConstructSdfCollision``). The embedded host applies every collision's ``<mu>``.

DART gives a contact the smaller of its two shapes' coefficients (``ContactConstraint``: ``std::min`` of
the primary and of the secondary coefficients), and a robot's links default to 1, so in the host a link
on the ice meets the ice's ``<mu>``. :func:`carry_mesh_friction` gives gz-sim the same pairs: it writes
the meshes' coefficient ``m`` on the robot's links (``<gazebo reference><mu1>``/``<mu2>``, which
sdformat puts in every collision of the link and gz-physics applies to primitives), so a link on a
mesh gets ``min(m, 1) = m`` in gz-sim as ``min(1, m)`` in the host. That is exact when nothing else
changes, which :func:`carry_mesh_friction` checks first:

- every mesh whose ``<mu>`` is lost has the same ``m``;
- every other collision of the world has ``mu <= m`` (it then wins against the robot's ``m`` as
  against its 1, and against the mesh's 1 as against its ``m``; a mesh of ``<mu>`` 1 is not lost);
- the robot has no mesh collision of its own (gz-sim would not apply ``m`` there either), and
  self-collision is off (the host refuses it);
- a link that already sets ``<mu1>``/``<mu2>`` keeps the smaller of its own and ``m``.

Otherwise the export carries nothing, warns, and ``export.json`` says why.
"""

from __future__ import annotations

from lxml import etree

GZ_SIM_MESH_MU = 1.0  # DART's default friction coefficient, which gz-sim 8 leaves on a mesh


def mesh_friction_ignored(spec) -> list[dict]:
    """The world's ``<mesh>`` collisions whose ``<surface><friction>`` gz-sim 8 does not apply (module
    docstring). Each entry: ``model``, ``link``, ``collision``, ``mu`` (the world's), ``gz_sim_mu`` (1.0)."""
    return [{"model": m.name, "link": link.name, "collision": c.name, "mu": c.surface.mu, "gz_sim_mu": GZ_SIM_MESH_MU}
            for m in spec.models for link in m.links for c in link.collisions
            if c.geometry.kind == "mesh" and c.surface.mu != GZ_SIM_MESH_MU]


def _why_not(spec, robot, ignored: list[dict]) -> tuple[float | None, str]:
    """The coefficient to carry, or None and the reason it cannot be carried exactly."""
    mus = sorted({e["mu"] for e in ignored})
    if len(mus) != 1:
        return None, f"the meshes' <mu> differ ({', '.join(f'{mu:g}' for mu in mus)}): one robot coefficient " \
                     "cannot meet each"
    m = mus[0]
    lost = {(e["model"], e["link"], e["collision"]) for e in ignored}
    for model in spec.models:
        for link in model.links:
            for c in link.collisions:
                if (model.name, link.name, c.name) not in lost and c.surface.mu > m:
                    return None, (f"{model.name}/{c.name} has mu {c.surface.mu:g} > {m:g}: the robot's links at "
                                  f"{m:g} would lower it")
    for link in robot.iter("link"):
        if link.find("collision/geometry/mesh") is not None:
            return None, f"the robot's link '{link.get('name')}' collides as a mesh, whose <mu> gz-sim 8 ignores too"
    return m, ""


def carry_mesh_friction(robot, spec, ignored: list[dict] | None = None) -> dict:
    """Write the lost meshes' coefficient on every colliding link of ``robot`` (a description's ``<robot>``
    element with its Gazebo blocks, changed in place) when that is exact (module docstring).

    Returns export.json's ``robot_friction``: ``carried`` (bool), ``mu`` (the coefficient written, or
    None), ``links`` (the links given it) and ``reason`` (why it could not be carried; "" when carried or
    when no mesh loses its ``<mu>``). ``ignored``: :func:`mesh_friction_ignored` of ``spec`` when the caller
    has it."""
    ignored = mesh_friction_ignored(spec) if ignored is None else ignored
    if not ignored:
        return {"carried": False, "mu": None, "links": [], "reason": ""}
    m, reason = _why_not(spec, robot, ignored)
    if m is None:
        return {"carried": False, "mu": None, "links": [], "reason": reason}
    links = [link.get("name") for link in robot.iter("link") if link.find("collision") is not None]
    own: dict[str, dict[str, float]] = {}
    for block in robot.findall("gazebo"):
        for tag in ("mu1", "mu2"):
            for el in block.findall(tag):
                own.setdefault(block.get("reference", ""), {})[tag] = float(el.text)
                block.remove(el)
        if len(block) == 0:  # a block that held only the coefficients: they are written again below
            robot.remove(block)
    for name in links:
        given = own.get(name, {})
        mu1 = min(given.get("mu1", GZ_SIM_MESH_MU), m)
        mu2 = min(given.get("mu2", given.get("mu1", GZ_SIM_MESH_MU)), m)
        block = etree.SubElement(robot, "gazebo", reference=name)
        etree.SubElement(block, "mu1").text = repr(mu1)
        etree.SubElement(block, "mu2").text = repr(mu2)
    return {"carried": True, "mu": m, "links": links, "reason": ""}
