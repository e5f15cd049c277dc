"""A scenario's gz-sim systems (``systems:`` in its YAML) in ``eels-gz run``: a stand-in written to the
specification of issue 32's scenario-systems framework until it lands on main (then
``eels_gz.scenarios.systems.scenario_plugins`` and the runner's own handling replace this module).

- :func:`scenario_plugins`: the ``<plugin>`` element of each named system, as a ``<gazebo>`` block
  appended to the robot's description: ``<module_name>``, ``<scenario>``, ``<robot>``,
  ``<description_file>``, ``<world_file>`` and ``<params>`` (the scenario's resolved params).
- :class:`SystemsOutputs`: ends the run when a system calls ``gz_compat.request_run_end``, and
  collects the systems' ``metrics()`` (a key given by two systems is an error) and ``plot(path)``.
"""

from __future__ import annotations

import sys

from lxml import etree

from eels_gz.errors import ConfigError
from eels_gz.scenarios import RunEnd, ScenarioController

LOADER = ("gz-sim-python-system-loader-system", "gz::sim::systems::PythonSystemLoader")


def scenario_plugins(name: str, scenario: dict, robot: str, description_file: str, world_file: str,
                     source: str) -> list:
    """``<gazebo>`` blocks with one ``<plugin>`` per system of ``scenario['systems']``."""
    from eels_gz.paths import system_plugin_paths

    systems = scenario.get("systems") or []
    if not isinstance(systems, list) or not all(isinstance(s, str) and s for s in systems):
        raise ConfigError(f"{source}: 'systems' must be a list of module names of plugins_py/, got {systems!r}")
    known = {p.stem for d in system_plugin_paths() for p in d.glob("*.py")}
    blocks = []
    for module in systems:
        if module not in known:
            raise ConfigError(f"{source}: system '{module}' is not a module of plugins_py/ "
                              f"(modules: {', '.join(sorted(known))})")
        block = etree.Element("gazebo")
        plugin = etree.SubElement(block, "plugin", filename=LOADER[0], name=LOADER[1])
        for tag, text in (("module_name", module), ("scenario", name), ("robot", robot),
                          ("description_file", description_file), ("world_file", world_file)):
            etree.SubElement(plugin, tag).text = text
        params = etree.SubElement(plugin, "params")
        for key, value in (scenario.get("params") or {}).items():
            etree.SubElement(params, key).text = repr(float(value))
        blocks.append(block)
    return blocks


def scenario_metrics(scenario: dict) -> tuple[str, ...]:
    """The metrics.json keys a scenario's systems declare: ``METRICS`` of each system's pure module
    ``eels_gz.scenarios.<module>`` (none for a system without one)."""
    import importlib

    keys: list[str] = []
    for module in scenario.get("systems") or []:
        try:
            pure = importlib.import_module(f"eels_gz.scenarios.{module}")
        except ModuleNotFoundError:
            continue
        keys += [k for k in getattr(pure, "METRICS", ()) if k not in keys]
    return tuple(keys)


def _run_ends() -> list:
    compat = sys.modules.get("gz_compat")
    return getattr(compat, "_RUN_END", []) if compat is not None else []


class SystemsOutputs(ScenarioController):
    """The runner's side of a scenario's systems: their run end, metrics and plot."""

    def __init__(self, modules: list[str], metrics_keys: tuple[str, ...] = ()):
        self.modules = list(modules)
        self.METRICS = tuple(metrics_keys)
        self.systems: list = []

    def setup(self, sim, params: dict[str, float]) -> None:
        self.systems = [s.system for s in sim.systems if s.module in self.modules]
        _run_ends().clear()

    def post_step(self, sim) -> RunEnd | None:
        ends = _run_ends()
        if ends:
            status, message = ends[0]
            ends.clear()
            return RunEnd(status, message)
        return None

    def metrics(self) -> dict:
        out: dict = {}
        for system in self.systems:
            part = system.metrics() if hasattr(system, "metrics") else {}
            both = set(out) & set(part)
            if both:
                raise ConfigError(f"metrics key(s) {', '.join(sorted(both))} given by two systems")
            out.update(part)
        return out

    def plot(self, path) -> None:
        for system in self.systems:
            if hasattr(system, "plot"):
                system.plot(path)
                return
