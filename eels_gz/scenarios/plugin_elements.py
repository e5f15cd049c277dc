"""A scenario's gz-sim systems as ``<plugin>`` elements: one writer for ``eels-gz run`` (the embedded
host appends them to the robot model's plugins) and ``eels-gz export`` (they go inside the robot's
``<include>`` of the exported world).

A scenario YAML names its systems under ``systems:``, each a module of ``plugins_py/`` given by name,
or as a mapping ``{module: NAME, priority: N}``. Each is loaded through gz-sim's Python system loader
with ``<gz:system_priority>`` (default :data:`SCENARIO_PRIORITY`: before the robot's own systems at 0,
so set points a scenario system gives reach joint control in the same step) and the elements every
scenario system may read:

- ``<scenario>``: the scenario's name; ``<robot>``: the robot's registry name;
- ``<description_file>``: the robot's URDF (every link and frame, before the host's optimizer);
- ``<world_file>``: the SDF world it runs in;
- ``<params>``: the scenario's resolved parameters, one child per name (``gz_compat.scenario_params``);
- ``<metrics_file>``: where the system writes its metrics under Gazebo (given by the export; the
  embedded host collects them from the system itself);
- ``<placement_file>``: the run's ``placement.json`` (eels_gz.run.placing) when the scenario has
  ``placement:``, written before the first step: the placed joints and the placement's report, which
  a system reads on its first step (it cannot read joint positions before the first physics update).

The scenario's ``tethers:`` become ``<tether>`` elements of the ``tethers`` system (plugins_py/tethers.py),
which the scenario names in ``systems:``.
"""

from __future__ import annotations

import math
import re
from xml.sax.saxutils import escape

from eels_gz.errors import ConfigError

SCENARIO_PRIORITY = -10
PYTHON_LOADER = ("gz-sim-python-system-loader-system", "gz::sim::systems::PythonSystemLoader")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def system_entries(scenario: dict, source: str) -> list[tuple[str, int]]:
    """``(module, priority)`` of each system the scenario names (``systems:``), checked."""
    raw = scenario.get("systems") or []
    if not isinstance(raw, list):
        raise ConfigError(f"{source}: 'systems' must be a list of plugins_py module names, got {raw!r}")
    out = []
    for k, item in enumerate(raw):
        if isinstance(item, str):
            module, priority = item, SCENARIO_PRIORITY
        elif isinstance(item, dict) and set(item) <= {"module", "priority"} and "module" in item:
            module, priority = item["module"], item.get("priority", SCENARIO_PRIORITY)
        else:
            raise ConfigError(f"{source}: systems[{k}] must be a module name or {{module: NAME, priority: N}}, "
                              f"got {item!r}")
        if not isinstance(module, str) or not _NAME.fullmatch(module):
            raise ConfigError(f"{source}: systems[{k}]: {module!r} is not a Python module name")
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise ConfigError(f"{source}: systems[{k}]: priority must be a whole number, got {priority!r}")
        out.append((module, priority))
    return out


def _number(value: object, key: str, source: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise ConfigError(f"{source}: scenario parameter '{key}' must be a finite number to reach a system's "
                          f"<params>, got {value!r}")
    return repr(float(value))


def robot_system_modules(gazebo_blocks) -> set[str]:
    """The Python system modules (``<module_name>``) a robot description's model-level ``<gazebo>``
    blocks (lxml elements) load."""
    return {m.text.strip() for block in gazebo_blocks for m in block.iter("module_name") if m.text}


def scenario_plugins(name: str, scenario: dict, *, robot: str, description_file: str, world_file: str,
                     metrics_file: str | None = None, source: str = "scenario",
                     extra_elements: dict[str, str] | None = None, robot_systems=(),
                     placement_file: str | None = None) -> list[str]:
    """The ``<plugin>`` elements (XML text) of the scenario's systems. ``extra_elements``: more XML
    for one module's element (by module name), e.g. its tethers. ``robot_systems``: modules the robot's
    description loads itself (:func:`robot_system_modules`; wheel_rig's): the scenario names them for
    their metrics, and they are not loaded a second time. The scenario's parameters are checked first
    by its systems' pure modules (``check_params``): a ConfigError naming one, before anything loads."""
    from eels_gz.scenarios import check_scenario_params

    check_scenario_params(scenario, source)
    params = scenario.get("params") or {}
    extra_elements = _with_tethers(scenario, source, dict(extra_elements or {}))
    body = "".join(f"<{k}>{_number(v, k, source)}</{k}>" for k, v in params.items())
    out = []
    for module, priority in system_entries(scenario, source):
        if module in robot_systems:
            continue
        parts = [f'<plugin filename="{PYTHON_LOADER[0]}" name="{PYTHON_LOADER[1]}">',
                 f"<module_name>{module}</module_name>",
                 f"<gz:system_priority>{priority}</gz:system_priority>",
                 f"<scenario>{escape(name)}</scenario>", f"<robot>{escape(robot)}</robot>",
                 f"<description_file>{escape(str(description_file))}</description_file>",
                 f"<world_file>{escape(str(world_file))}</world_file>",
                 f"<params>{body}</params>"]
        if metrics_file:
            parts.append(f"<metrics_file>{escape(str(metrics_file))}</metrics_file>")
        if placement_file:
            parts.append(f"<placement_file>{escape(str(placement_file))}</placement_file>")
        if extra_elements and module in extra_elements:
            parts.append(extra_elements[module])
        parts.append("</plugin>")
        out.append("".join(parts))
    return out


TETHER_SYSTEM = "tethers"  # plugins_py/tethers.py: the scenario's ``tethers:`` become its <tether> elements


def _with_tethers(scenario: dict, source: str, extra: dict[str, str]) -> dict[str, str]:
    """``extra`` with the scenario's ``tethers:`` as ``<tether>`` elements of the tethers system, which
    the scenario must then name in ``systems:``."""
    if not scenario.get("tethers"):
        return extra
    from eels_gz.snake.tethers import parse_tethers, tether_elements

    tethers = parse_tethers(scenario["tethers"], source)
    if TETHER_SYSTEM not in [m for m, _ in system_entries(scenario, source)]:
        raise ConfigError(f"{source}: 'tethers:' are applied by the system '{TETHER_SYSTEM}' "
                          f"(plugins_py/{TETHER_SYSTEM}.py): add it to 'systems:'")
    extra[TETHER_SYSTEM] = extra.get(TETHER_SYSTEM, "") + tether_elements(tethers)
    return extra
