"""A run's configuration resolved into its frozen :class:`~eels_gz.run.plan.RunPlan`, without an engine: the
one resolution that ``eels-gz run`` (:func:`eels_gz.run.runner.prepare` builds the embedded host's
simulation from the plan) and ``eels-gz export`` (:mod:`eels_gz.run.export` writes a Gazebo world from it)
share, made once per run.

From a resolved configuration (:func:`eels_gz.config.resolve`, ``--set`` checked there) it takes, in
this order: the scenario (its ``params:`` overridden by ``scenario.*``), the scenario's defaults
(robot, world, pose, contact, soil), the robot, the duration, the world and its step, the contact
model and its parameter set (the one parse of the run's set), the soil set, the xacro arguments and the
robot's description with its Gazebo blocks; the step's default is the world's (``WorldSpec.step``). Each
check raises ConfigError (or the registry's, xacro's, the world reader's error) naming the setting, so a
bad run and a bad export fail alike.

Files a system reads (the resolved scenario, contact and soil sets) are written into ``work_dir``
when they differ from the named ones, or always with :attr:`RunFiles.record` (an export keeps them
beside its world). The xacro reads some of them (a rig's scenario parameters), so they exist before
the description is built. No dartpy, gz or rclpy here.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import yaml

from eels_gz import registry
from eels_gz.control.setpoints import load_scenario
from eels_gz.description.assemble import check_xacro_args, robot_description
from eels_gz.errors import ConfigError
from eels_gz.ranges import CONFIG_RANGES, check_number, check_steps
from eels_gz.run.compatibility import check_combination
from eels_gz.run.plan import LogPlan, ParamSet, RobotPlan, RunFiles, RunPlan, ScenarioPlan, SensorsPlan, WorldPlan

if TYPE_CHECKING:
    from eels_gz.contact.params import ContactParams
    from eels_gz.soil.params import SoilParams

DEFAULT_DURATION = 10.0
CONTACT_MODELS = ("stock", "screw", "rft")
CONTACT_FALLBACK = {"model": "stock", "params": "ice"}
GRANULAR_FALLBACK = "mars_simulant_mms"  # the medium of contact.model rft when neither run nor scenario names one


def _files(work_dir: RunFiles | str | Path | None) -> RunFiles:
    return work_dir if isinstance(work_dir, RunFiles) else RunFiles(Path(work_dir) if work_dir is not None else None)


def resolve_run(cfg: dict, work_dir: RunFiles | str | Path | None = None) -> RunPlan:
    """Resolve ``cfg`` into its :class:`~eels_gz.run.plan.RunPlan` (module docstring); ``work_dir``: a
    folder or a :class:`RunFiles`."""
    from eels_gz.sdf_reader import load_world  # the SDF reader; it imports no engine

    files = _files(work_dir)
    scenario_file, scenario = _scenario_file(cfg["scenario"], files)
    cfg = scenario_defaults(cfg, scenario)
    rcfg = cfg["robot"]
    entry = registry.robot(rcfg["name"])
    duration = run_duration(cfg, scenario)
    if not (duration > 0 and math.isfinite(duration)):
        raise ConfigError(f"duration must be a finite number of seconds > 0, got {duration}")
    check_number("duration", duration, CONFIG_RANGES["duration"], "the run" if scenario is None or cfg["duration"]
                 is not None else f"scenario '{cfg['scenario']['name']}'")
    world = registry.world_path(cfg["world"])
    spec = load_world(world)
    cfg = _world_soil_default(cfg, entry, world)
    phys = cfg["physics"]
    dt = spec.step(phys["dt"])
    if dt > duration:
        raise ConfigError(f"the step physics.dt = {dt:g} s is longer than the duration {duration:g} s: "
                          "the run would take no step; shorten the step or lengthen the duration")
    check_steps(duration, dt)
    contact = cfg["contact"]
    if contact["model"] not in CONTACT_MODELS:
        raise ConfigError(f"contact.model must be one of {', '.join(CONTACT_MODELS)}, got {contact['model']!r}")
    check_combination(entry, cfg["scenario"].get("name"), scenario, contact["model"], world,
                      cfg["soil"].get("params"))
    contact_set, contact_params = _resolve_contact(contact, files)  # the one parse of the run's set
    user_args = dict(rcfg.get("xacro_args") or {})
    check_xacro_args(entry, user_args, "robot.xacro_args")
    xacro_args = dict(user_args)
    state_rate = cfg["ros"]["state_rate"]
    if not state_rate > 0:
        raise ConfigError(f"ros.state_rate must be positive, got {state_rate}")
    xacro_args["state_rate"] = state_rate  # the JointStatePublisher and OdometryPublisher rate
    granular_set, granular_params = _resolve_granular(cfg.get("granular") or {}, contact["model"], files)
    if entry.family == "eels":
        xacro_args.update(contact=contact["model"], contact_params=contact_params)
        if granular_set is not None:
            xacro_args["granular_params"] = granular_params
    elif entry.family == "rig" and "contact_params" in _declared_args(entry):  # the drag rig's own screw contact
        xacro_args["contact_params"] = contact["params"]
    elif contact["model"] != "stock":
        raise ConfigError(f"contact.model '{contact['model']}' applies to EELS robots only, not '{entry.name}'")
    soil = _resolve_soil(cfg["soil"], entry, files)
    xacro_args.update(_world_args(entry, world, spec, soil.file))
    description = robot_description(entry, n_modules=rcfg["n_modules"], xacro_args=xacro_args,
                                    urdf_file=rcfg["urdf"], gazebo=True, scenario=scenario_file)
    n_modules = rcfg["n_modules"] if rcfg["n_modules"] is not None else entry.n_modules
    scfg, lcfg = cfg["sensors"], cfg["log"]
    return RunPlan(
        cfg=cfg, world=WorldPlan(world, spec), robot=RobotPlan(entry, description, xacro_args, n_modules),
        dt=dt, duration=duration, contact_model=contact["model"],
        contact=ParamSet(contact_set, contact_params,
                         _contact_label(contact, contact_params, files) if contact_set is not None else ""),
        soil=soil, granular=ParamSet(granular_set, granular_params),
        scenario=ScenarioPlan(cfg["scenario"].get("name"), scenario, scenario_file),
        sensors=SensorsPlan(bool(scfg["enabled"]), bool(scfg["noise"]), int(scfg["seed"]), bool(scfg["cameras"]),
                            str(scfg.get("camera_renderer", "auto"))),
        log=LogPlan(float(lcfg["rate"]), bool(lcfg["mcap"]), bool(lcfg["plot"])), files=files)


def run_duration(cfg: dict, scenario: dict | None) -> float:
    """The run's duration (s): ``duration``, else the scenario's, else DEFAULT_DURATION."""
    duration = cfg["duration"]
    if scenario is not None and duration is None:
        duration = scenario.get("duration")
    return DEFAULT_DURATION if duration is None else float(duration)


def _contact_label(contact: dict, contact_params: str, files: RunFiles) -> str:
    """The screw contact's set as messages name it: the file the run reads (its own resolved copy when
    keys are set on their own), or, for a recorded export whose folder is not in place until it is
    complete, the named set's file and the keys set."""
    from eels_gz.config import contact_overrides
    from eels_gz.contact.params import contact_config_path

    if not files.record:
        return str(contact_config_path(contact_params))
    overrides = contact_overrides(contact)
    return str(contact_config_path(contact["params"])) + "".join(f", contact.{k} = {v!r}" for k, v in overrides.items())


def check_contact_step(plan: RunPlan) -> None:
    """Refuse a step above the screw contact's stability bound (eels_gz.contact.stability) of the run's
    resolved set, with the screw's static share of the robot's weight (its description's total mass,
    its robot model's ``total_mass``, in ``run`` and ``export`` alike) as its load."""
    contact, n_modules = plan.contact.params, plan.robot.n_modules
    if contact is None or not n_modules:
        return
    from eels_gz.contact.stability import ScrewLoad, step_bounds

    entry = plan.robot.entry
    variant = registry.eels_variants().get(entry.xacro_args.get("variant", entry.name), {})
    n_screws = int(n_modules) * int(variant.get("screws") or 0)
    if not n_screws:
        return
    screw = variant["screw"]
    weight = plan.robot.description.model.total_mass * float(np.linalg.norm(plan.world.spec.gravity))
    load = ScrewLoad(screw["mass"], screw["root_radius"], screw["radius"], screw["lead_angle"], weight / n_screws)
    bounds = step_bounds(contact, load)
    name, bound = min(bounds.items(), key=lambda kv: kv[1])
    if plan.dt > bound:
        raise ConfigError(
            f"the step physics.dt = {plan.dt:g} s is above the stability bound {bound:.3g} s of the screw contact's "
            f"{name} ({plan.contact.label}, on a {screw['mass']:g} kg screw of {entry.name} "
            f"carrying {load.load:.3g} N; see eels_gz/contact/stability.py): the explicit contact forces would "
            f"blow up. Use --dt {0.9 * bound:.2g} or less")


def scenario_system_plugins(plan: RunPlan, description_file: str, metrics_file: str | None = None,
                            placement_file: str | None = None) -> list[str]:
    """The ``<plugin>`` elements (XML text) of the scenario's systems, for ``run`` (appended to the robot
    model's plugins) and ``export`` (inside the robot's <include>): eels_gz.scenarios.plugin_elements'
    writer given the robot, the world and ``description_file`` (the robot's URDF), under Gazebo
    ``metrics_file`` (where the systems write their metrics), and for a scenario with a placement
    ``placement_file`` (its ``placement.json``, which the systems read the placed joints from). A scenario
    with ``tethers:`` but no ``tethers`` system gets the writer's error naming it."""
    scenario = plan.scenario
    if not (scenario.loaded and (scenario.loaded.get("systems") or scenario.loaded.get("tethers"))):
        return []
    from eels_gz.scenarios.plugin_elements import robot_system_modules, scenario_plugins

    return list(scenario_plugins(scenario.name, scenario.loaded, robot=plan.robot.entry.name,
                                 description_file=description_file, world_file=str(plan.world.path.resolve()),
                                 metrics_file=metrics_file, source=scenario.file or str(scenario.name),
                                 robot_systems=robot_system_modules(plan.robot.description.gazebo),
                                 placement_file=placement_file if scenario.loaded.get("placement") else None))


def _scenario_file(scfg: dict, work_dir: RunFiles | str | Path | None) -> tuple[str, dict | None]:
    """The scenario the joint-control plugin reads, with ``scenario.*`` parameters applied.

    A scenario with parameters is written, resolved, to ``work_dir/scenario.yaml``
    (a temporary folder without one), so the run's output records what ran.
    """
    files = _files(work_dir)
    if not scfg.get("name"):
        extra = sorted(k for k in scfg if k != "name")
        if extra:
            raise ConfigError(f"scenario parameters {extra} given without a scenario (set --scenario)")
        return "", None
    source = registry.scenario_path(scfg["name"]).resolve()
    scenario = load_scenario(source, {k: v for k, v in scfg.items() if k != "name"})
    if not scenario["params"] and not files.record:
        return str(source), scenario
    path, named = files.place("scenario.yaml", "eels_gz_scenario_")
    path.write_text(f"# {scfg['name']} from {source}, parameters resolved\n"
                    + yaml.safe_dump(scenario, sort_keys=False))
    return named, scenario


def _resolve_contact(contact: dict, work_dir: RunFiles | str | Path | None) -> tuple[ContactParams | None, str]:
    """The run's screw contact parameters, resolved once (the file ``contact.params`` names with the keys
    set on their own, ``contact.mu``..., replaced), and the parameter set as the plugin reads it
    (``<contact_params>``): ``contact.params`` as named, or, with such keys, the resolved set written to
    ``work_dir/contact.yaml`` (a temporary folder without one) so the run records what it used.
    ``(None, contact.params)`` under the engine's own contact, which reads no set."""
    from eels_gz.config import contact_overrides
    from eels_gz.contact.params import contact_config_path, resolve_contact_params, write_contact_params

    files = _files(work_dir)
    overrides = contact_overrides(contact)
    if overrides and contact["model"] != "screw":
        keys = ", ".join(f"contact.{k}" for k in overrides)
        raise ConfigError(f"{keys} set parameters of the screw contact, but contact.model is '{contact['model']}' "
                          "(the engine's own contact reads no parameter set); set contact.model=screw "
                          "(--contact screw) or leave them out")
    if contact["model"] != "screw":
        return None, contact["params"]
    params = resolve_contact_params(contact["params"], overrides)
    if not overrides and not files.record:
        return params, contact["params"]
    source = contact_config_path(contact["params"])
    header = (f"{contact['params']} ({source})"
              + (" with " + ", ".join(f"{k} = {v!r}" for k, v in overrides.items()) + " set by the run"
                 if overrides else "") + ", resolved")
    path, named = files.place("contact.yaml", "eels_gz_contact_")
    write_contact_params(params, path, header)
    return params, named


def check_granular(granular: dict, model: str):
    """The rft contact's medium (``granular.params``, else GRANULAR_FALLBACK, with the ``granular.<key>`` set on
    their own), checked; None under another contact model, where a medium or its keys are refused (ConfigError
    naming them), as are an unknown medium and a bad key."""
    from eels_gz.config import granular_overrides
    from eels_gz.granular.params import resolve_granular_params

    overrides = granular_overrides(granular)
    if model != "rft":
        named = [f"granular.{k}" for k in overrides] + (["granular.params"] if granular.get("params") else [])
        if named:
            raise ConfigError(f"{', '.join(named)} set the granular medium of contact.model rft, but contact.model "
                              f"is '{model}'; set contact.model=rft (--contact rft) or leave them out")
        return None
    return resolve_granular_params(granular.get("params") or GRANULAR_FALLBACK, overrides)


def _resolve_granular(granular: dict, model: str, work_dir: RunFiles | str | Path | None):
    """The rft contact's medium, resolved once (``granular.params`` with the ``granular.<key>`` set on their
    own replaced), and the medium as the plugin reads it (``<granular_params>``): as named, or, with such
    keys (or a recorded export), written resolved to ``work_dir/granular.yaml``. ``(None, "")`` under
    another contact model, which reads no medium; a medium or its keys set for one is refused."""
    from eels_gz.config import granular_overrides
    from eels_gz.granular.params import granular_config_path, write_granular_params

    files = _files(work_dir)
    overrides = granular_overrides(granular)
    params = check_granular(granular, model)
    if params is None:
        return None, ""
    name = granular.get("params") or GRANULAR_FALLBACK  # scenario_defaults has set it; a caller may not have
    if not overrides and not files.record:
        return params, str(name)
    header = (f"{name} ({granular_config_path(name)})"
              + (" with " + ", ".join(f"{k} = {v!r}" for k, v in overrides.items()) + " set by the run"
                 if overrides else "") + ", resolved")
    path, named_path = files.place("granular.yaml", "eels_gz_granular_")
    write_granular_params(params, path, header)
    return params, named_path


def _declared_args(entry) -> set[str]:
    from eels_gz.description.assemble import xacro_arg_names

    return set(xacro_arg_names(entry.path))


def _world_args(entry, world: Path, spec, soil: str) -> dict[str, str]:
    """The xacro arguments a robot's description takes from the world it runs in, each passed when its
    xacro declares it: ``world_file`` (the SDF file, whose terrain the contact systems query),
    ``gravity`` (the magnitude of its <gravity>, m/s^2) and ``soil`` (the run's soil set)."""
    from eels_gz.description.assemble import xacro_arg_names

    declared = xacro_arg_names(entry.path)
    values = {"world_file": str(world.resolve()), "gravity": repr(float(np.linalg.norm(spec.gravity))),
              "soil": soil}
    return {k: v for k, v in values.items() if k in declared}


def _world_soil_default(cfg: dict, entry, world: Path) -> dict:
    """The world's soil (its terrains' ``terrain.json``, :func:`eels_gz.terrain.world_terrain.world_soil`) as the
    run's ``soil.params`` for a robot that takes a soil, unless the run or its scenario names one."""
    if cfg["soil"].get("params") is not None or "soil" not in _declared_args(entry):
        return cfg
    from eels_gz.terrain.world_terrain import world_soil

    soil = world_soil(world)
    return cfg if soil is None else dict(cfg, soil={**cfg["soil"], "params": soil})


def check_soil(soil: dict, entry):
    """The run's soil set (``soil.params`` with the ``soil.<key>`` set on their own), checked: an unknown
    set, a bad key, keys without a set, or a soil for a robot whose description takes none (no xacro
    argument ``soil``) raise ConfigError naming the setting; None when no soil is set."""
    from eels_gz.config import soil_overrides
    from eels_gz.description.assemble import xacro_arg_names
    from eels_gz.soil.params import resolve_soil_params

    overrides = soil_overrides(soil)
    if not soil.get("params"):
        if overrides:
            raise ConfigError(f"{', '.join('soil.' + k for k in overrides)} set keys of a soil set, but no set "
                              "is named: set soil.params=NAME (config/soil/) too")
        return None
    if "soil" not in xacro_arg_names(entry.path):
        raise ConfigError(f"soil.params sets the soil under a robot's wheels, but '{entry.name}' takes no soil "
                          "(robots that do: archimede, wheel_rig); leave soil.params and the soil keys out")
    return resolve_soil_params(soil["params"], overrides)  # an unknown set or a bad key stops here


def _resolve_soil(soil: dict, entry, work_dir: RunFiles | str | Path | None) -> ParamSet[SoilParams]:
    """The run's soil set, resolved once (:func:`check_soil`; None for none), and the set the soil contact
    reads (``<soil_params>``): ``soil.params`` as named, or, when keys are set on their own
    (``soil.cohesion``...), that set with them replaced, written resolved to ``work_dir/soil.yaml`` (a
    temporary folder without one) so the run records what it used; "" for none."""
    from eels_gz.config import soil_overrides
    from eels_gz.soil.params import soil_config_path, write_soil_params

    files = _files(work_dir)
    params = check_soil(soil, entry)
    overrides = soil_overrides(soil)
    if params is None or (not overrides and not files.record):
        return ParamSet(params, str(soil.get("params") or ""))
    header = (f"{soil['params']} ({soil_config_path(soil['params'])})"
              + (" with " + ", ".join(f"{k} = {v!r}" for k, v in overrides.items()) + " set by the run"
                 if overrides else "") + ", resolved")
    path, named = files.place("soil.yaml", "eels_gz_soil_")
    write_soil_params(params, path, header)
    return ParamSet(params, named)


def scenario_defaults(cfg: dict, scenario: dict | None) -> dict:
    """A scenario's ``robot``, ``world`` and robot ``pose`` apply where the
    configuration keeps the run defaults; its ``contact`` model and params fill the configuration's
    null ones (then stock contact with the ``ice`` parameters), its ``soil`` a null ``soil.params``, and
    under contact.model rft its ``granular`` (else GRANULAR_FALLBACK) a null ``granular.params``."""
    contact = dict(cfg["contact"])
    for key, fallback in CONTACT_FALLBACK.items():
        if contact.get(key) is None:
            contact[key] = ((scenario or {}).get("contact") or {}).get(key) or fallback
    soil = dict(cfg.get("soil") or {"params": None})
    if soil.get("params") is None and (scenario or {}).get("soil"):
        soil["params"] = str(scenario["soil"])
    granular = dict(cfg.get("granular") or {"params": None})
    if granular.get("params") is None and contact["model"] == "rft":  # null stays null under other models
        granular["params"] = str((scenario or {}).get("granular") or GRANULAR_FALLBACK)
    out = dict(cfg, contact=contact, soil=soil, granular=granular)
    if not scenario:
        return out
    from eels_gz.config import defaults

    base = defaults()
    if scenario.get("robot") and cfg["robot"]["name"] == base["robot"]["name"]:
        out["robot"] = {**cfg["robot"], "name": scenario["robot"]}
    if scenario.get("world") and cfg["world"] == base["world"]:
        out["world"] = scenario["world"]
    if scenario.get("pose") is not None and cfg["robot"]["pose"] == base["robot"]["pose"]:
        out["robot"] = {**out["robot"], "pose": list(scenario["pose"])}
    return out


def check_combination_of(cfg: dict) -> None:
    """The combination (:func:`eels_gz.run.compatibility.check_combination`) of a whole configuration
    (as ``eels_gz.config.resolve`` returns it), its scenario's defaults applied, without building
    anything: ``compare`` checks each of its runs so before the first begins."""
    scfg = cfg["scenario"]
    scenario = None
    if scfg.get("name"):
        scenario = load_scenario(registry.scenario_path(scfg["name"]), {k: v for k, v in scfg.items() if k != "name"})
    resolved = scenario_defaults(cfg, scenario)
    entry = registry.robot(resolved["robot"]["name"])
    world = registry.world_path(resolved["world"])
    soil = _world_soil_default(resolved, entry, world)["soil"].get("params")
    check_combination(entry, scfg.get("name"), scenario, resolved["contact"]["model"], world, soil)
