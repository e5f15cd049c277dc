"""The one registry of robots, worlds and scenarios.

The CLI, the tests (parametrized over these entries) and the README tables
all read from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from eels_gz.errors import RegistryError
from eels_gz.paths import asset


@dataclass(frozen=True)
class RobotEntry:
    """A robot: its xacro file, the xacro arguments that select it, and how it is attached."""

    name: str
    xacro: str
    description: str
    xacro_args: dict[str, str] = field(default_factory=dict)
    floating_base: bool = True

    @property
    def path(self) -> Path:
        return asset("urdf", self.xacro)


@dataclass(frozen=True)
class WorldEntry:
    """A world file in worlds/; ``recipe`` is the ``eels-gz world`` command line that
    generates it (with ``--name NAME --shipped``; ``make worlds`` runs them all)."""

    name: str
    file: str
    description: str
    recipe: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return asset("worlds", self.file)


ROBOTS: dict[str, RobotEntry] = {
    r.name: r
    for r in (
        RobotEntry(
            name="eels_1_0_front_only",
            xacro="eels.urdf.xacro",
            description="EELS 1.0, one screw per module, 10 modules (bend, twist, screw): 36 DOF",
            xacro_args={"variant": "eels_1_0_front_only", "n_modules": "10"},
        ),
        RobotEntry(
            name="archimede",
            xacro="archimede.urdf.xacro",
            description="Archimede rover: two legs on a differential, 4 steered and driven wheels: 15 DOF",
        ),
        RobotEntry(
            name="rocky7",
            xacro="rocky7.urdf.xacro",
            description="Rocky 7: rocker-bogie with a differential, 6 driven wheels, 2 steered: 17 DOF",
        ),
    )
}

WORLDS: dict[str, WorldEntry] = {
    w.name: w
    for w in (
        WorldEntry("ice_plane", "ice_plane.sdf", "flat hard ice, friction in the world file"),
        WorldEntry("slope_10", "slope_10.sdf", "ice slope of 10 deg rising along +x, 12 x 6 m",
                   ("primitive", "slope", "--angle", "10")),
        WorldEntry("tube", "tube.sdf", "horizontal ice tube along x, bore radius 0.6 m with 2 cm rms roughness",
                   ("primitive", "tube")),
        WorldEntry("parallel_walls", "parallel_walls.sdf", "two vertical ice walls 0.8 m apart on an ice floor",
                   ("primitive", "parallel_walls")),
        WorldEntry("u_channel", "u_channel.sdf", "ice U-channel along x, half-round bottom of radius 0.5 m",
                   ("primitive", "u_channel")),
        WorldEntry("rock_field", "rock_field.sdf", "ROAMS field of hemispherical rocks on flat ice, seed 0",
                   ("primitive", "rock_field")),
        WorldEntry("moulin", "moulin.sdf", "rough vertical ice shaft 10 m deep, synthetic stand-in for a scan",
                   ("primitive", "moulin")),
        WorldEntry("mars_dem", "mars_dem.sdf", "synthetic Mars-like DEM (fractal relief and craters) as a heightmap",
                   ("primitive", "mars_dem")),
    )
}


def _unknown(kind: str, name: str, known) -> RegistryError:
    return RegistryError(f"unknown {kind} '{name}'; expected one of: {', '.join(sorted(known))}")


def robot(name: str) -> RobotEntry:
    """Look up a robot by registry name."""
    try:
        return ROBOTS[name]
    except KeyError:
        raise _unknown("robot", name, ROBOTS) from None


def world_path(name_or_path: str) -> Path:
    """A world's SDF file, from a registry name or the path of an SDF file."""
    if name_or_path in WORLDS:
        return WORLDS[name_or_path].path
    path = Path(name_or_path)
    if path.suffix in (".sdf", ".world") or path.exists():
        if not path.is_file():
            raise RegistryError(f"world file '{path}' does not exist")
        return path
    raise _unknown("world", name_or_path, WORLDS)


def scenarios() -> dict[str, Path]:
    """Scenario name -> YAML file, one per file in config/scenarios/."""
    return {p.stem: p for p in sorted(asset("config", "scenarios").glob("*.yaml"))}


def scenario_path(name: str) -> Path:
    known = scenarios()
    if name in known:
        return known[name]
    raise _unknown("scenario", name, known)


def readme_tables() -> dict[str, str]:
    """Markdown tables for the README, keyed by their marker name."""
    from eels_gz.control.setpoints import load_scenario

    robots = ["| robot | description | xacro |", "|---|---|---|"]
    robots += [f"| `{r.name}` | {r.description} | `urdf/{r.xacro}` |" for r in ROBOTS.values()]
    worlds = ["| world | description | file |", "|---|---|---|"]
    worlds += [f"| `{w.name}` | {w.description} | `worlds/{w.file}` |" for w in WORLDS.values()]
    scen = ["| scenario | duration | what it does |", "|---|---|---|"]
    for name, path in scenarios().items():
        data = load_scenario(path)
        text = " ".join(str(data.get("description", "")).split())
        scen.append(f"| `{name}` | {data.get('duration', '')} s | {text} |")
    return {"robots": "\n".join(robots), "worlds": "\n".join(worlds), "scenarios": "\n".join(scen)}
