"""The one registry of robots, worlds and scenarios.

The CLI, the tests (parametrized over these entries) and the README tables
all read from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from eels_gz.errors import RegistryError
from eels_gz.paths import asset


@dataclass(frozen=True)
class RobotEntry:
    """A robot: its xacro file, the xacro arguments that select it, and its defaults.

    ``n_modules`` is the default module count of a modular (EELS) robot and
    ``None`` for a robot without modules.
    """

    name: str
    xacro: str
    description: str
    xacro_args: dict[str, str] = field(default_factory=dict)
    floating_base: bool = True
    n_modules: int | None = None
    family: str = "rover"

    @property
    def path(self) -> Path:
        return asset("urdf", self.xacro)

    def args(self, n_modules=None, **extra: str) -> dict[str, str]:
        """xacro arguments for this robot, with a checked module count."""
        out = dict(self.xacro_args)
        if n_modules is not None:
            out["n_modules"] = str(check_n_modules(self, n_modules))
        out.update({k: str(v) for k, v in extra.items()})
        return out


# The xacro lays the modules by a recursive macro, and xacro's expansion time grows with the
# square of the module count (about 10 s for 100 modules, minutes beyond 200, and Python's
# recursion limit near 170): a count above this is refused rather than left to hang or crash.
MAX_MODULES = 100


def check_n_modules(entry: RobotEntry, n) -> int:
    """A module count as an int in 1..MAX_MODULES, or a RegistryError that says what was wrong."""
    if entry.n_modules is None:
        raise RegistryError(f"robot '{entry.name}' has no modules; n_modules does not apply to it")
    text = str(n).strip()
    if isinstance(n, bool) or not text.lstrip("+-").isdigit() or (isinstance(n, float) and not n.is_integer()):
        raise RegistryError(f"n_modules must be a whole number >= 1, got '{n}'")
    value = int(text.lstrip("+")) if not isinstance(n, float) else int(n)
    if value < 1:
        raise RegistryError(f"n_modules must be a whole number >= 1, got {value}")
    if value > MAX_MODULES:
        raise RegistryError(f"n_modules = {value} is above the limit of {MAX_MODULES} modules (xacro's expansion "
                            "of the module chain grows with the square of the count: ~10 s at 100)")
    return value


def eels_variants() -> dict:
    """The EELS variant records of urdf/eels_variants.yaml (geometry, mass, defaults)."""
    from eels_gz.yamlio import load

    return load(asset("urdf", "eels_variants.yaml"))["variants"]


def screw_handedness(record: dict, link: str) -> int:
    """Hand (+1 right, -1 left) of screw link ``module_<i>_screw_link`` or ``module_<i>_screw_rear_link``
    of EELS variant ``record``, as urdf/eels.gazebo.xacro writes it: ``screw.handedness`` times
    ``screw_hands`` cycled from module 1, the rear screw of a pair of the opposite hand."""
    m = re.fullmatch(r"module_(\d+)_screw(_rear)?_link", link)
    if m is None or not record.get("screw"):
        raise RegistryError(f"'{link}' is not a screw link of an EELS variant with screws "
                            "(expected module_<i>_screw_link or module_<i>_screw_rear_link)")
    hands = record.get("screw_hands") or [1]
    hand = int(record["screw"]["handedness"]) * int(hands[(int(m[1]) - 1) % len(hands)])
    return -hand if m[2] else hand


def _eels_entries() -> list[RobotEntry]:
    return [
        RobotEntry(name=name, xacro="eels.urdf.xacro", description=v["description"],
                   xacro_args={"variant": name}, n_modules=int(v["n_modules"]), family="eels")
        for name, v in eels_variants().items()
    ]


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
        *_eels_entries(),
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
        RobotEntry(
            name="msl_like",
            xacro="rocky7.urdf.xacro",
            xacro_args={"layout": "msl"},
            description="MSL-like wheel layout on the Rocky 7 chassis: front and rear wheels steered, "
                        "middle wheels fixed: 19 DOF",
        ),
    )
}

# Test rigs: descriptions a scenario runs (its ``robot:``) that are not robots; the tests over every
# robot (description, settling on ice) do not apply to them: each rig has its own tests.
RIGS: dict[str, RobotEntry] = {
    r.name: r
    for r in (
        RobotEntry(
            name="wheel_rig",
            xacro="wheel_rig.urdf.xacro",
            description="single-wheel soil rig: one Archimede wheel on x and z carriages over the soil, "
                        "driven at a commanded slip (scenario wheel_rig)",
            floating_base=False,
            family="rig",
        ),
        RobotEntry(
            name="drag_rig",
            xacro="drag_rig.urdf.xacro",
            description="screw drag-test rig: one screw of an EELS variant under a load on x, y and z carriages "
                        "(scenario drag_rig, eels-gz calibrate simulate)",
            floating_base=False,
            family="rig",
        ),
    )
}

WORLDS: dict[str, WorldEntry] = {
    w.name: w
    for w in (
        WorldEntry("ice_plane", "ice_plane.sdf", "flat hard ice, friction in the world file"),
        WorldEntry("slope_10", "slope_10.sdf", "ice slope of 10 deg rising along +x, 12 x 6 m",
                   ("primitive", "slope", "--angle", "10")),
        WorldEntry("soil_bin", "soil_bin.sdf", "flat soil bin 6 x 1 m for the single-wheel rig (scenario wheel_rig); "
                   "the soil set is the run's soil.params", ("primitive", "soil_bin")),
        WorldEntry("sandbox_10", "sandbox_10.sdf", "soil sandbox 5 x 3 m tilted 10 deg, rising along +x; any tilt: "
                   "eels-gz world primitive sandbox --angle A; the soil set is the run's soil.params",
                   ("primitive", "sandbox", "--angle", "10")),
        *(WorldEntry(f"sandbox_{a}", f"sandbox_{a}.sdf", f"soil sandbox 5 x 3 m tilted {a} deg (the Archimede slope "
                     "campaign, config/sweeps/archimede_slopes.yaml); the soil set is the run's soil.params",
                     ("primitive", "sandbox", "--angle", str(a))) for a in (0, 5, 15, 20)),
        WorldEntry("tube", "tube.sdf", "horizontal ice tube along x, bore radius 0.6 m with 2 cm rms roughness",
                   ("primitive", "tube")),
        WorldEntry("parallel_walls", "parallel_walls.sdf", "two parallel vertical ice walls on an ice floor, a stemming gap for EELS 1.5",
                   ("primitive", "parallel_walls")),
        WorldEntry("u_channel", "u_channel.sdf", "ice U-channel along x, half-round bottom of radius 0.5 m",
                   ("primitive", "u_channel")),
        WorldEntry("rock_field", "rock_field.sdf", "ROAMS field of hemispherical rocks on flat ice, seed 0",
                   ("primitive", "rock_field")),
        WorldEntry("moulin", "moulin.sdf", "rough vertical ice shaft 10 m deep, synthetic stand-in for a scan; "
                   "lower down it narrows into a slot a snake can stem across",
                   ("primitive", "moulin", "--param", "slot_top=4.5", "--param", "slot_width=0.35")),
        WorldEntry("mars_dem", "mars_dem.sdf", "synthetic Mars-like DEM (fractal relief and craters) as a heightmap",
                   ("primitive", "mars_dem")),
    )
}


def _unknown(kind: str, name: str, known) -> RegistryError:
    return RegistryError(f"unknown {kind} '{name}'; expected one of: {', '.join(sorted(known))}")


def robot(name: str) -> RobotEntry:
    """Look up a robot (or a test rig, RIGS) by registry name."""
    entry = ROBOTS.get(name) or RIGS.get(name)
    if entry is None:
        raise _unknown("robot", name, {**ROBOTS, **RIGS})
    return entry


def world_path(name_or_path: str) -> Path:
    """A world's SDF file, from a registry name or the path of an SDF file."""
    if name_or_path in WORLDS:
        return WORLDS[name_or_path].path
    path = Path(name_or_path)
    if path.suffix in (".sdf", ".world") or path.exists():
        if path.is_dir():
            worlds = sorted(p.name for p in path.glob("*.sdf"))[:5]
            raise RegistryError(f"world '{path}' is a folder, not an SDF world file"
                                + (f"; it holds {', '.join(worlds)}" if worlds else ""))
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
    """Markdown tables for the README and docs/ pages, keyed by their marker name."""
    from eels_gz.control.setpoints import load_scenario
    from eels_gz.yamlio import load

    robots = ["| robot | description | modules (default) | xacro |", "|---|---|---|---|"]
    robots += [f"| `{r.name}` | {r.description} | {r.n_modules if r.n_modules else '-'} | `urdf/{r.xacro}` |"
               for r in ROBOTS.values()]
    worlds = ["| world | description | file |", "|---|---|---|"]
    worlds += [f"| `{w.name}` | {w.description} | `worlds/{w.file}` |" for w in WORLDS.values()]
    scen = ["| scenario | duration | parameters (`--set scenario.NAME=`) | what it does |", "|---|---|---|---|"]
    for name, path in scenarios().items():
        data = load_scenario(path)
        text = " ".join(str(data.get("description", "")).split())
        raw = (load(path, "scenario") or {}).get("params") or {}  # a switch shows as true/false
        params = ", ".join(f"`{k}` = {str(raw[k]).lower() if isinstance(raw.get(k), bool) else format(v, 'g')}"
                           for k, v in data["params"].items()) or "-"
        scen.append(f"| `{name}` | {data.get('duration', '')} s | {params} | {text} |")
    return {"robots": "\n".join(robots), "worlds": "\n".join(worlds), "scenarios": "\n".join(scen)}
