"""The run plan: a configuration resolved once (:func:`eels_gz.run.resolve.resolve_run`) into what both
hosts run, frozen and typed. ``eels-gz run`` (:func:`eels_gz.run.runner.prepare`), ``eels-gz export``
(:mod:`eels_gz.run.export`), the launch file's ``scenario:=`` and each sweep sample (through ``run``)
take it; nothing below them re-reads the configuration's step, duration or parameter sets.

No engine here: the world is its SDF as read (:class:`eels_gz.sdf_reader.WorldSpec`), the robot its
registry entry and processed description.
"""

from __future__ import annotations

import copy
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from eels_gz.contact.params import ContactParams
    from eels_gz.sdf_reader import WorldSpec
    from eels_gz.description.xacro_loader import Description
    from eels_gz.granular.params import GranularParams
    from eels_gz.registry import RobotEntry
    from eels_gz.soil.params import SoilParams

P = TypeVar("P")


@dataclass(frozen=True)
class RunFiles:
    """Where the resolution writes the files the systems read (``work_dir``; a temporary folder when
    None), and whether to write them even when they equal the named sets (``record``)."""

    work_dir: Path | None = None
    record: bool = False

    def place(self, name: str, prefix: str) -> tuple[Path, str]:
        """(the path to write ``name`` to, the absolute path the description gives for it)."""
        folder = Path(self.work_dir) if self.work_dir is not None else Path(tempfile.mkdtemp(prefix=prefix))
        folder.mkdir(parents=True, exist_ok=True)
        return folder / name, str((folder / name).resolve())



@dataclass(frozen=True)
class WorldPlan:
    """The world a run steps: its SDF file and that file as read."""

    path: Path
    spec: WorldSpec


@dataclass(frozen=True)
class RobotPlan:
    """The robot: its registry entry, its description (URDF and Gazebo blocks) and the xacro arguments it
    was built with, and its module count (None: a robot without modules)."""

    entry: RobotEntry
    description: Description
    xacro_args: dict[str, str | float]  # state_rate (Hz) a number, the others text
    n_modules: int | None


@dataclass(frozen=True)
class ParamSet(Generic[P]):
    """A parameter set a contact system runs with: the set resolved once (``--set`` keys applied; None
    where none applies) and the set as its plugin reads it from its SDF element (a set's name or a
    resolved file; "" for none), and how messages name it."""

    params: P | None
    file: str = ""
    label: str = ""


@dataclass(frozen=True)
class ScenarioPlan:
    """The scenario: its name (None: none), as loaded with its parameters resolved, and the file the
    joint-control plugin reads (``<scenario>``; "" for none)."""

    name: str | None = None
    loaded: dict | None = None
    file: str = ""


@dataclass(frozen=True)
class SensorsPlan:
    """The robot's simulated sensors: on or off, noise and its seed, cameras and their renderer."""

    enabled: bool
    noise: bool
    seed: int
    cameras: bool
    camera_renderer: str


@dataclass(frozen=True)
class LogPlan:
    """What a run records: its log rate (Hz), log.mcap, and the plots."""

    rate: float
    mcap: bool
    plot: bool


@dataclass(frozen=True)
class RunPlan:
    """A run resolved (module docstring). ``cfg``: the configuration with the scenario's defaults applied
    (what the plan was resolved from, for the settings not planned here: pose, ROS, host);
    ``files``: where the resolution wrote the sets the systems read."""

    cfg: dict
    world: WorldPlan
    robot: RobotPlan
    dt: float  # s, physics.dt or the world's <max_step_size> (WorldSpec.step)
    duration: float  # s
    contact_model: str  # stock, screw or rft
    contact: ParamSet[ContactParams]  # the screw contact's (<contact_params>), params None under another model
    soil: ParamSet[SoilParams]  # the soil contact's (<soil_params>)
    granular: ParamSet[GranularParams]  # the rft contact's medium (<granular_params>)
    scenario: ScenarioPlan
    sensors: SensorsPlan
    log: LogPlan
    files: RunFiles

    def resolved_config(self) -> dict:
        """The resolved configuration as a run's summary and export.json record it: duration, module count
        and step resolved, the scenario as its name and resolved parameters."""
        out = copy.deepcopy(self.cfg)
        out["duration"], out["robot"]["n_modules"] = self.duration, self.robot.n_modules
        out["physics"]["dt"] = self.dt
        if self.scenario.loaded is not None:
            out["scenario"] = {"name": self.scenario.name, **self.scenario.loaded["params"]}
        return out
