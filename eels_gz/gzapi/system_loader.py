"""Load gz-sim Python systems the way Gazebo's PythonSystemLoader does
(gz-sim 8, src/systems/python_system_loader/PythonSystemLoader.cc):

- the system plugin paths (``GZ_SIM_SYSTEM_PLUGIN_PATH``, then the package's
  ``plugins_py/``) are *appended* to ``sys.path``, so a module of the same
  name earlier on the path wins, as in Gazebo;
- ``<module_name>`` is imported, ``get_system()`` called, then
  ``configure(entity, sdf, ecm, event_mgr)``;
- ``pre_update``/``update``/``post_update(info, ecm)`` run every iteration,
  ``reset(info, ecm)`` on a world reset, ``shutdown()`` when the system is
  destroyed.

One deliberate difference: gz-sim logs an exception raised by ``configure``
or a callback and disables the system for the rest of the run, so a robot
can go limp with nothing but a console line to say why. The host stops the
load (a PluginError naming the plugin) or the run (a PluginCallbackError
naming the plugin, the callback and the step), unless ``plugin_errors`` is
``"disable"``, which does what Gazebo does.

Gazebo's own (C++) systems that a world or robot may name are accepted
where the host does their job: see ``BUILTIN_SYSTEMS``.
"""

from __future__ import annotations

import importlib
import logging
import sys
from dataclasses import dataclass, field
from typing import Any

from eels_gz.errors import PluginError
from eels_gz.gzapi import gzsim
from eels_gz.gzapi.element import Element
from eels_gz.paths import system_plugin_paths


@dataclass
class PluginSpec:
    """A ``<plugin>`` element of a world or model: file, name, ``<module_name>`` and the element itself."""

    filename: str
    name: str
    module_name: str
    element: Element

    @property
    def where(self) -> str:
        return f"{self.element.file_path()}:{self.element.line_number()}"


log = logging.getLogger(__name__)

PYTHON_LOADER = ("gz-sim-python-system-loader-system", "gz::sim::systems::PythonSystemLoader")
# Gazebo's own systems (file name -> plugin name) whose job the embedded host does
# itself, or that only serve Gazebo's GUI and transport; accepting them lets one
# world file serve both hosts. test/conformance checks the names against gz-sim 8.
BUILTIN_SYSTEMS = {
    "gz-sim-physics-system": ("gz::sim::systems::Physics", "physics (the host's DART world)"),
    "gz-sim-scene-broadcaster-system": ("gz::sim::systems::SceneBroadcaster", "GUI scene updates (no GUI here)"),
    "gz-sim-user-commands-system": ("gz::sim::systems::UserCommands", "GUI and service commands (no GUI here)"),
    "gz-sim-sensors-system": ("gz::sim::systems::Sensors",
                              "rendering sensors: gpu_lidar (ray casting) and cameras (OpenGL, eels_gz/dart/sensors.py)"),
    "gz-sim-imu-system": ("gz::sim::systems::Imu", "IMU sensors (eels_gz/dart/sensors.py)"),
    "gz-sim-forcetorque-system": ("gz::sim::systems::ForceTorque",
                                  "force-torque sensors (eels_gz/dart/sensors.py, DART joint wrench)"),
    "gz-sim-joint-state-publisher-system": ("gz::sim::systems::JointStatePublisher",
                                            "joint states (eels_gz/gzapi/publishers.py)"),
    "gz-sim-odometry-publisher-system": ("gz::sim::systems::OdometryPublisher",
                                         "model odometry, the ground truth (eels_gz/gzapi/publishers.py)"),
}
PLUGIN_ERRORS = ("stop", "disable")


@dataclass
class LoadedSystem:
    module: str
    system: Any
    entity: int
    spec: PluginSpec
    pre_update: Any
    update: Any
    post_update: Any
    reset: Any = None
    shutdown: Any = None
    disabled: str = ""  # why the system was disabled ("" while it runs)
    callbacks: list = field(default_factory=list)  # bound callbacks registered with the step loop
    priority: int = 0  # <gz:system_priority>: smaller runs earlier in pre_update and update (gz-sim 8)


def _extend_sys_path() -> None:
    """gz-sim appends every system plugin path to sys.path (once per path here)."""
    for path in (str(p) for p in system_plugin_paths()):
        if path not in sys.path:
            sys.path.append(path)


def _import(module: str, where: str):
    _extend_sys_path()
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            paths = ", ".join(str(p) for p in system_plugin_paths())
            raise PluginError(f"{where}: Python system module '{module}' not found in {paths}") from None
        raise PluginError(f"{where}: importing '{module}' failed: {exc}") from exc
    except Exception as exc:
        raise PluginError(f"{where}: importing '{module}' failed: {type(exc).__name__}: {exc}") from exc


GZ_NAMESPACE = "http://gazebosim.org/schema"  # the namespace gz-sim's custom elements are written in


def system_priority(spec: PluginSpec) -> int:
    """The plugin's ``<gz:system_priority>`` (gz-sim 8, ``System::kPriorityElementName``; SystemManager.cc
    reads it from the plugin's element), 0 without one. Smaller values run earlier in ``pre_update`` and
    ``update``; systems of equal priority run in load order."""
    for child in spec.element._node:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in ("gz:system_priority", f"{{{GZ_NAMESPACE}}}system_priority"):
            text = (child.text or "").strip()
            try:
                return int(text)
            except ValueError:
                raise PluginError(f"{spec.where}: <gz:system_priority> must be a whole number, got '{text}'") from None
    return 0


def builtin(spec: PluginSpec) -> bool:
    """True for a Gazebo system the host provides itself (checked against its plugin name)."""
    entry = BUILTIN_SYSTEMS.get(spec.filename)
    if entry is None:
        return False
    if spec.name and spec.name != entry[0]:
        raise PluginError(f"{spec.where}: <plugin filename='{spec.filename}'> must be named '{entry[0]}', "
                          f"got '{spec.name}'")
    return True


def load_system(spec: PluginSpec, entity: int, ecm, event_mgr, plugin_errors: str = "stop") -> LoadedSystem | None:
    """Load and configure one ``<plugin>``; Gazebo's built-in systems return None.

    With ``plugin_errors="disable"`` a system whose ``configure`` raises is
    logged and returned disabled, as gz-sim does; otherwise the error stops the load.
    """
    if builtin(spec):
        return None
    if not spec.module_name or (spec.filename, spec.name) != PYTHON_LOADER:
        raise PluginError(
            f"{spec.where}: <plugin filename='{spec.filename}' name='{spec.name}'> is not supported by the "
            f"embedded host; it runs gz-sim Python systems (filename '{PYTHON_LOADER[0]}', name "
            f"'{PYTHON_LOADER[1]}') and provides {', '.join(BUILTIN_SYSTEMS)} itself"
        )
    gzsim.HOST_ACTIVE = True
    module = _import(spec.module_name, spec.where)
    if not hasattr(module, "get_system"):
        origin = getattr(module, "__file__", None) or "a built-in or namespace module"
        raise PluginError(f"{spec.where}: module '{spec.module_name}' (imported from {origin}) has no get_system(); "
                          "if that is not the plugin, a module of the same name earlier on sys.path shadows it "
                          "(gz-sim, like the host, appends the system plugin paths to sys.path): rename one of them")
    system = module.get_system()
    loaded = LoadedSystem(
        module=spec.module_name, system=system, entity=entity, spec=spec,
        pre_update=getattr(system, "pre_update", None),
        update=getattr(system, "update", None),
        post_update=getattr(system, "post_update", None),
        reset=getattr(system, "reset", None),
        shutdown=getattr(system, "shutdown", None),
        priority=system_priority(spec),
    )
    try:
        if hasattr(system, "configure"):
            system.configure(entity, spec.element, ecm, event_mgr)
    except PluginError:
        raise
    except Exception as exc:
        message = f"{spec.where}: configure() of '{spec.module_name}' failed: {type(exc).__name__}: {exc}"
        if plugin_errors != "disable":
            raise PluginError(message) from exc
        log.error("%s; the system is disabled (sim.plugin_errors: disable, as in Gazebo)", message)
        loaded.disabled = message
        return loaded
    # gz-sim 8's loader looks the callbacks up after configure (PythonSystemLoader.cc: hasattr once
    # configure has run), so a system may set or replace them there
    for name in ("pre_update", "update", "post_update", "reset"):
        setattr(loaded, name, getattr(system, name, None))
    return loaded


def shutdown(systems: list[LoadedSystem]) -> None:
    """Call every system's ``shutdown()``, as gz-sim's loader does when it is destroyed; errors are logged."""
    for s in systems:
        if s.shutdown is None:
            continue
        try:
            s.shutdown()
        except Exception:
            log.exception("shutdown() of '%s' failed", s.module)
