"""Load gz-sim Python systems the way Gazebo's PythonSystemLoader does:
import ``<module_name>`` from the system plugin path, call its
``get_system()``, then ``configure(entity, sdf, ecm, event_mgr)``."""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from typing import Any

from eels_gz.errors import PluginError
from eels_gz.host import gzsim
from eels_gz.host.sdf_world import PluginSpec
from eels_gz.paths import system_plugin_paths

PYTHON_LOADER_NAMES = {"gz::sim::systems::PythonSystemLoader"}
# Gazebo's own systems whose job the embedded host does itself, or that only
# serve Gazebo's GUI and transport; accepting them lets one world file serve both hosts.
BUILTIN_SYSTEMS = {
    "gz-sim-physics-system": "physics (the host's DART world)",
    "gz-sim-scene-broadcaster-system": "GUI scene updates (no GUI here)",
    "gz-sim-user-commands-system": "GUI and service commands (no GUI here)",
    "gz-sim-joint-state-publisher-system": "joint states (eels_gz/host/topics.py publishes /joint_states)",
}


@dataclass
class LoadedSystem:
    module: str
    system: Any
    entity: int
    spec: PluginSpec
    pre_update: Any
    update: Any
    post_update: Any


def _import(module: str, where: str):
    for path in reversed([str(p) for p in system_plugin_paths()]):
        if path not in sys.path:
            sys.path.insert(0, path)
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            paths = ", ".join(str(p) for p in system_plugin_paths())
            raise PluginError(f"{where}: Python system module '{module}' not found in {paths}") from None
        raise PluginError(f"{where}: importing '{module}' failed: {exc}") from exc
    except Exception as exc:
        raise PluginError(f"{where}: importing '{module}' failed: {type(exc).__name__}: {exc}") from exc


def load_system(spec: PluginSpec, entity: int, ecm, event_mgr) -> LoadedSystem | None:
    """Load and configure one ``<plugin>``; built-in Gazebo systems return None."""
    if spec.filename in BUILTIN_SYSTEMS:
        return None
    if not spec.module_name or spec.name not in PYTHON_LOADER_NAMES:
        raise PluginError(
            f"{spec.where}: <plugin filename='{spec.filename}' name='{spec.name}'> is not supported by the "
            "embedded host; it runs gz-sim Python systems (filename 'gz-sim-python-system-loader-system', "
            f"name 'gz::sim::systems::PythonSystemLoader') and provides {', '.join(BUILTIN_SYSTEMS)} itself"
        )
    gzsim.HOST_ACTIVE = True
    module = _import(spec.module_name, spec.where)
    if not hasattr(module, "get_system"):
        raise PluginError(f"{spec.where}: module '{spec.module_name}' has no get_system()")
    system = module.get_system()
    try:
        if hasattr(system, "configure"):
            system.configure(entity, spec.element, ecm, event_mgr)
    except PluginError:
        raise
    except Exception as exc:
        raise PluginError(f"{spec.where}: configure() of '{spec.module_name}' failed: {type(exc).__name__}: {exc}") from exc
    return LoadedSystem(
        module=spec.module_name, system=system, entity=entity, spec=spec,
        pre_update=getattr(system, "pre_update", None),
        update=getattr(system, "update", None),
        post_update=getattr(system, "post_update", None),
    )
