"""Pick the gz-sim and gz-math Python modules for the host running this plugin.

- Under the embedded host (eels_gz.gzapi), bind to its API, even on a machine
  where Gazebo's bindings are installed too.
- Under Gazebo: gz-sim 10 is ``gz.sim``/``gz.math``, 9 is ``gz.sim9``/
  ``gz.math8``, 8 is ``gz.sim8``/``gz.math7``. gz-sim's PythonSystemLoader
  imports its own ``gz.sim<major>`` before the plugin's module
  (``PythonSystemLoader.cc``), so the module already in ``sys.modules`` is
  the loader's and wins: ``configure`` receives that module's objects even on
  a machine with several releases' bindings. Only when none is imported yet
  (a plain ``import gz_compat``) the newest installed wins.

Exports ``sim`` (Model, Link, Joint, World, ...) and ``gzmath`` (Vector3d,
Pose3d, Quaterniond), ``HOST`` ("embedded" or the gz module name) and
``iter_elements`` for repeated parameter elements.

Also ``transport`` (``Node`` with ``advertise``/``subscribe`` as in
gz.transport13's Python API) and ``msgs`` (``msgs.Twist``, ``msgs.Odometry``,
``msgs.Pose_V``, ...): in the embedded host its in-process bus
(eels_gz.gzapi.transport, delivery before the next step's pre_update) and
plain-Python gz.msgs classes (eels_gz.gzapi.msgs); under Gazebo the
gz-transport module and the gz-msgs ``*_pb2`` classes of the same release
(gz-sim 8: transport13/msgs10, 9: transport14/msgs11, 10: transport/msgs).

Helpers every plugin uses, in both hosts:

- ``param(el, getter, key, plugin)``: a required ``<plugin>`` parameter, read
  with sdformat's two-argument getter (the one-argument form gives 0 or ""
  for a missing key); a missing one is a ValueError naming it and the plugin;
- batched state access (``link_world_states``, ``add_link_world_wrenches``,
  ``joint_states``, ``set_joint_forces``): under Gazebo one gz-sim call per
  link or joint (the ``*_each`` functions); in the embedded host one call per
  skeleton, unless the host withholds its batch helpers (``sim.batch_api:
  false``), which runs the per-entity path here too. Both give ``None`` until
  the state they need is reported, so no plugin indexes an empty state.
"""

import importlib
import sys

_CANDIDATES = (("gz.sim", "gz.math"), ("gz.sim9", "gz.math8"), ("gz.sim8", "gz.math7"))
# gz-sim module -> (gz-transport module, gz-msgs package) of the same Gazebo release
_MIDDLEWARE = {"gz.sim": ("gz.transport", "gz.msgs"), "gz.sim9": ("gz.transport14", "gz.msgs11"),
               "gz.sim8": ("gz.transport13", "gz.msgs10")}
# gz-msgs message name -> its *_pb2 module where the name is not simply lower-cased
_PB2_MODULES = {"PointCloudPacked": "pointcloud_packed_pb2"}


def _embedded_host_running() -> bool:
    host = sys.modules.get("eels_gz.gzapi.gzsim")
    return bool(host is not None and getattr(host, "HOST_ACTIVE", False))


def _select():
    if _embedded_host_running():
        from eels_gz.gzapi import gzmath as math_module
        from eels_gz.gzapi import gzsim as sim_module

        return sim_module, math_module, "embedded"
    loaded = [(sim_name, math_name) for sim_name, math_name in _CANDIDATES if sim_name in sys.modules]
    if loaded:  # the loader's module (the newest, should several be imported)
        sim_name, math_name = loaded[0]
        return sys.modules[sim_name], importlib.import_module(math_name), sim_name
    errors = []
    for sim_name, math_name in _CANDIDATES:
        try:
            return importlib.import_module(sim_name), importlib.import_module(math_name), sim_name
        except ImportError as exc:
            errors.append(f"{sim_name}: {exc}")
    raise ImportError(
        "no gz-sim Python bindings found (tried " + "; ".join(errors) + ") and the eels_gz embedded host "
        "is not running this plugin"
    )


sim, gzmath, HOST = _select()


class _GzMsgs:
    """``msgs.Twist`` etc. from a gz-msgs package's ``*_pb2`` modules, imported on first use."""

    def __init__(self, package: str):
        self._package = package

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        module = _PB2_MODULES.get(name, name.lower() + "_pb2")
        try:
            cls = getattr(importlib.import_module(f"{self._package}.{module}"), name)
        except (ImportError, AttributeError) as exc:
            raise AttributeError(f"gz-msgs has no message {name} in {self._package}.{module}: {exc}") from exc
        setattr(self, name, cls)
        return cls


if HOST == "embedded":
    from eels_gz.gzapi import msgs as msgs  # noqa: E402
    from eels_gz.gzapi import transport as transport  # noqa: E402
else:
    def __getattr__(name):
        # resolved on first use (PEP 562), so plugins that need no transport do not import it
        if name == "transport":
            value = importlib.import_module(_MIDDLEWARE[HOST][0])
        elif name == "msgs":
            value = _GzMsgs(_MIDDLEWARE[HOST][1])
        else:
            raise AttributeError(f"module 'gz_compat' has no attribute '{name}'")
        globals()[name] = value
        return value


def iter_elements(sdf, name):
    """Every child element ``name`` of an sdformat Element, in order."""
    el = sdf.find_element(name) if sdf.has_element(name) else None
    while el is not None:
        yield el
        el = el.get_next_element(name)


# the two-argument getters need a default of the getter's type
_DEFAULTS = {"get_double": 0.0, "get_float": 0.0, "get_int": 0, "get_unsigned_int": 0, "get_bool": False,
             "get_string": ""}


def param(el, getter: str, key: str, plugin: str):
    """A required parameter ``key`` (attribute or child element) of ``el``, read
    with ``el.<getter>(key, default)``; ValueError naming it and ``plugin`` when missing."""
    value, found = getattr(el, getter)(key, _DEFAULTS[getter])
    if not found:
        raise ValueError(f"{plugin}: <{el.get_name()}> has no '{key}' (a required {getter[4:]} parameter)")
    return value


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


# --- scenario systems: parameters, peers on one model, a run's end (both hosts) ---------------------------

def scenario_params(sdf) -> dict:
    """The scenario's resolved parameters: every child of the ``<params>`` element as a float
    (eels_gz.scenarios.systems writes them; SI units and radians). {} without ``<params>``; a child
    that is not a number is a ValueError naming it."""
    if not sdf.has_element("params"):
        return {}
    out = {}
    el = sdf.find_element("params").get_first_element()
    while el is not None:
        value, found = el.get_double("", 0.0)  # the element's own value (sdformat: an empty key)
        if not found:
            text, _ = el.get_string("", "")
            raise ValueError(f"scenario <params>: <{el.get_name()}> must be a number, got {text!r}")
        out[el.get_name()] = value
        el = el.get_next_element("")
    return out


def watched_link(model, ecm, name: str, what: str, where: str):
    """Link ``name`` of ``model`` with its velocity checks on (``link_world_states`` reads its pose and
    twist together; its pose is reported from ``configure`` on); a ValueError
    "``where``: ``what`` is not a link of model '...'" when the model has none of that name."""
    entity = model.link_by_name(ecm, name)
    if not entity:
        raise ValueError(f"{where}: {what} is not a link of model '{model.name(ecm)}'")
    link = sim.Link(entity)
    link.enable_velocity_checks(ecm, True)
    return link


def base_link(model, ecm, urdf: str, source: str, where: str):
    """The robot's base, the root link of its description ``urdf`` (read from ``source``), as
    :func:`watched_link` gives it."""
    from eels_gz.description.urdf_tree import root_link

    name = root_link(urdf, source)
    return watched_link(model, ecm, name, f"the base link '{name}'", where)


_PEERS: dict = {}  # (model entity, name) -> system; gz-sim runs every Python system in one interpreter


def register_peer(model_entity, name: str, system, ecm) -> None:
    """Make ``system`` findable by the other systems of model ``model_entity`` as ``name`` (in the
    embedded host, per simulation: its ECM ``ecm``)."""
    if HOST == "embedded":
        sim.register_peer(ecm, model_entity, name, system)
    else:
        _PEERS[(int(model_entity), name)] = system


def peer(model_entity, name: str, ecm):
    """The system registered as ``name`` on model ``model_entity`` (of the simulation of ``ecm``), or
    None (look it up on the first ``pre_update``: systems are configured in load order)."""
    if HOST == "embedded":
        return sim.peer(ecm, model_entity, name)
    return _PEERS.get((int(model_entity), name))


def resolved_set(ecm, element: str, source: str):
    """The parameter set the embedded host's run resolved for a system's ``<element>`` naming ``source``
    (the host context, ``ecm.param_sets``), or None: then, and always under Gazebo, the system reads
    the file ``source`` names."""
    return sim.resolved_set(ecm, element, source) if HOST == "embedded" else None


def request_run_end(status: str, message: str, ecm) -> None:
    """End the run of ``ecm``'s simulation after this step with ``status`` ("ok", "mobility_failure",
    "slip_failure", ...). The embedded host's runner stops there and records the status; under Gazebo
    the request is logged and the world is paused through its ``/world/<name>/control`` service."""
    import logging

    if HOST == "embedded":
        sim.request_run_end(ecm, status, message)
        return
    logging.getLogger("gz_compat").warning("scenario run end: %s: %s", status, message)
    try:
        world = sim.World(sim.world_entity(ecm)).name(ecm)
        request = msgs.WorldControl()
        request.pause = True
        transport.Node().request(f"/world/{world}/control", request, msgs.WorldControl, msgs.Boolean, 1000)
    except Exception as exc:  # pausing is a courtesy: never disable the plugin for it
        logging.getLogger("gz_compat").warning("could not pause the world: %s", exc)


METRICS_EVERY_S = 1.0  # s simulated between two writes of a scenario system's metrics under Gazebo
# gz-sim 8 runs the systems' post_update in parallel threads (each Python one takes the GIL, which a file
# write can release): the scenario's systems merge into one metrics file under this lock
_METRICS_LOCK = __import__("threading").Lock()


class MetricsFile:
    """A scenario system's ``metrics()`` written to ``<metrics_file>`` (the export gives it:
    ``DIR/metrics.json``) while the world runs under Gazebo, whose Python system loader (gz-sim 8)
    calls no system when the run ends: after the system's own ``post_update`` of every step that ends
    a whole simulated second (METRICS_EVERY_S), and once each time the world is paused (a scenario's
    ``request_run_end`` pauses it), so the write at second N holds exactly the steps up to N, as the
    embedded host's metrics.json after an N-second run does. Given the ``system`` (in its
    ``configure``), it wraps the system's ``post_update`` for that (gz-sim's loader looks the
    callbacks up after ``configure``). Each write merges this system's keys into the file (the
    scenario's other systems write theirs; a key this system gave before and gives no longer is
    dropped, as the embedded host's metrics.json would not have it), with ``scenario`` and
    ``sim_time_s`` (the simulated time of the write), and replaces the file whole (a reader never
    sees half of it). ``eels-gz run`` gives no ``<metrics_file>``: its runner collects the metrics
    itself, and nothing is wrapped or written. A failure is logged once and the run goes on (an
    exception would disable the system)."""

    def __init__(self, sdf, where: str, system=None):
        path, found = sdf.get_string("metrics_file", "")
        self.path = path if found and path else None
        scenario, found = sdf.get_string("scenario", "")
        self.scenario = scenario if found else None
        self.where, self.next, self.paused_written, self.failed = where, METRICS_EVERY_S, False, False
        self.keys: set = set()  # the keys this system wrote last: a later write without one drops it
        if system is not None and self.path is not None and not getattr(system, "_metrics_wrapped", False):
            inner = system.post_update

            def post_update(info, ecm):
                inner(info, ecm)
                system.metrics_out.after(info, system.metrics)

            system.post_update = post_update
            system._metrics_wrapped = True

    def after(self, info, metrics) -> None:
        """After the system's ``post_update`` of a step: write ``metrics()`` when the step ended a whole
        second, or when the world is paused (once per pause)."""
        if self.path is None:
            return
        now = info.sim_time.total_seconds()
        if info.paused:
            if self.paused_written:
                return
            self.paused_written = True
        else:
            self.paused_written = False
            if now + 1e-9 < self.next:
                return
            self.next = now + METRICS_EVERY_S
        self.write(metrics, now)

    def write(self, metrics, now: float) -> None:
        import logging

        try:
            with _METRICS_LOCK:
                self._merge(metrics, now)
        except Exception as exc:  # noqa: BLE001 - the metrics are a report: never disable the system for them
            if not self.failed:
                logging.getLogger("gz_compat").warning("%s: could not write its metrics to '%s': %s", self.where,
                                                       self.path, exc)
            self.failed = True

    def _merge(self, metrics, now: float) -> None:
        """The file read, this system's keys merged in, the file replaced whole (under _METRICS_LOCK)."""
        import json
        import os
        import threading

        merged = {}
        if os.path.exists(self.path):
            with open(self.path) as f:
                merged = json.load(f)
        mine = dict(metrics() or {})
        for key in self.keys - set(mine):  # this system's, no longer given (not the other systems')
            merged.pop(key, None)
        self.keys = set(mine)
        merged.update({"scenario": self.scenario, **mine, "sim_time_s": now})
        tmp = f"{self.path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "w") as f:
            json.dump(merged, f, indent=2)
        os.replace(tmp, self.path)
