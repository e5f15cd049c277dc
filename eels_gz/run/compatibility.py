"""Whether a run's robot, scenario, contact model and world make sense together: the one check that
``run``, ``export``, ``compare`` and ``sweep`` apply before anything is built.

- A scenario made for some robots says so (``robots:`` in its YAML: robot families, ``eels`` or
  ``rover``, or registry names such as ``wheel_rig``); another robot is refused (a snake's scenario on a
  rover moves no joint, and its metrics measure nothing). A scenario that drives screws says
  ``needs: [screws]``.
- Screw contact and RFT contact act on screws: a robot without screws is refused.
- A robot whose wheels take a soil (its description declares the xacro argument ``soil``) on a soil
  world (a terrain of kind ``soil_bin`` or ``sandbox``, or one that records a soil) needs a soil set:
  ``soil.params`` (or the world's, or the scenario's); ``soil.params`` given as an empty string asks for
  the engine's rigid contact on purpose (``compare``'s reference run).
"""

from __future__ import annotations

from pathlib import Path

from eels_gz import registry
from eels_gz.errors import ConfigError

SCREW_CONTACTS = ("screw", "rft")
SOIL_TERRAINS = ("soil_bin", "sandbox")  # terrain kinds whose ground is soil (eels_gz.terrain.worldgen)
NEEDS = ("screws",)  # what a scenario may need of its robot


def has_screws(entry) -> bool:
    """Whether registry robot ``entry`` has screws: an EELS variant with screws, or the drag rig."""
    if entry.family == "eels":
        return int(registry.eels_variants().get(entry.xacro_args.get("variant", entry.name), {}).get("screws", 0)) > 0
    return entry.name == "drag_rig"


def takes_soil(entry) -> bool:
    """Whether registry robot ``entry``'s description takes a soil set (the xacro argument ``soil``)."""
    from eels_gz.description.assemble import xacro_arg_names

    return "soil" in xacro_arg_names(entry.path)


def soil_world(world: str | Path) -> bool:
    """Whether the SDF world file ``world`` has soil ground: a terrain model of a soil kind, or one
    that records a soil (its terrain.json, written by ``eels-gz world``)."""
    import json

    from eels_gz.terrain.world_terrain import terrain_records

    for _name, meta in terrain_records(Path(world)):
        try:
            record = json.loads(meta.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and (record.get("kind") in SOIL_TERRAINS or record.get("soil")):
            return True
    return False


def _for(robots: list[str]) -> str:
    names = [r for r in robots if r not in ("eels", "rover")]
    kinds = [f"{r.upper() if r == 'eels' else r} robots" for r in robots if r in ("eels", "rover")]
    return " and ".join(kinds + [f"the robot '{n}'" for n in names])


def check_combination(entry, scenario_name: str | None, scenario: dict | None, contact_model: str,
                      world: str | Path, soil_params) -> None:
    """ConfigError, naming the settings and what would fit, unless robot ``entry`` (a registry entry),
    scenario ``scenario_name`` (its loaded YAML ``scenario``), ``contact_model`` and ``world`` (an SDF
    file) with ``soil_params`` (the resolved ``soil.params``: None when unset, "" for none on purpose)
    make sense together (module docstring)."""
    robot = entry.name
    if scenario:
        robots = scenario.get("robots") or []
        if robots and entry.family not in robots and robot not in robots:
            fits = [r.name for r in (*registry.ROBOTS.values(), *registry.RIGS.values())
                    if r.family in robots or r.name in robots]
            raise ConfigError(f"scenario '{scenario_name}' is made for {_for(robots)}, not '{robot}' (a "
                              f"{entry.family}): nothing of it would move; choose a robot such as "
                              f"{', '.join(fits[:4])}, or another scenario")
        if "screws" in (scenario.get("needs") or []) and not has_screws(entry):
            raise ConfigError(f"scenario '{scenario_name}' drives screws, and '{robot}' has none; choose an EELS "
                              "robot with screws (e.g. eels_1_0_front_only) or a scenario without them (hold, "
                              "sidewind)")
    if contact_model in SCREW_CONTACTS and not has_screws(entry):
        what = "screws in granular ground" if contact_model == "rft" else "the screw-ice contact of screws"
        raise ConfigError(f"contact.model '{contact_model}' ({what}) applies to EELS robots only, those with "
                          f"screws, and '{robot}' has none; use contact.model stock (--contact stock), or an EELS "
                          "robot with screws")
    if soil_params is None and takes_soil(entry) and soil_world(world):
        from eels_gz.soil.params import soil_names

        raise ConfigError(f"the world '{world}' is soil, and '{robot}''s wheels on it need a soil set: set "
                          f"soil.params=NAME (--set soil.params=NAME; config/soil/: {', '.join(soil_names())}), "
                          "or --set \"soil.params=''\" (an empty name) for the engine's rigid contact on purpose")

