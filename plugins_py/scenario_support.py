"""What scenario systems share in both hosts (one of the jobs of the plugins' compat layer, ``gz_compat``,
which re-exports these names): a model's links taken with their velocity checks on (``watched_link``,
``base_link``), systems of one model finding each other (``register_peer``, ``peer``), a run's end
(``request_run_end``) and the metrics a system writes under Gazebo (``MetricsFile``). Logs on the
``gz_compat`` logger. Not a system (no ``get_system()``).
"""

import gz_middleware
from gz_binding import HOST, sim


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
        msgs = gz_middleware.msgs
        request = msgs.WorldControl()
        request.pause = True
        node = gz_middleware.transport.Node()
        node.request(f"/world/{world}/control", request, msgs.WorldControl, msgs.Boolean, 1000)
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
