"""The run plan (eels_gz.run.plan): resolved once, frozen and typed; the step defaulted in one place and
read from the plan; the step check weighing the robot as the engine does."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from eels_gz import config
from eels_gz.run import plan as plan_module
from eels_gz.run.plan import RunPlan
from eels_gz.run.resolve import resolve_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hold_plan(tmp_path_factory) -> RunPlan:
    cfg = config.resolve(overrides={"scenario": "hold", "contact": {"model": "screw"}, "duration": 0.02,
                                    "sensors": {"enabled": False}, "log": {"mcap": False, "plot": False}})
    return resolve_run(cfg, tmp_path_factory.mktemp("plan"))


def test_the_plan_is_frozen_and_holds_what_the_run_takes(hold_plan):
    plan = hold_plan
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.dt = 0.002
    assert plan.dt == plan.world.spec.dt == 0.001 and plan.duration == 0.02
    assert plan.robot.entry.name == "eels_1_0_front_only" and plan.robot.n_modules == plan.robot.entry.n_modules
    assert plan.contact_model == "screw" and plan.contact.params is not None and plan.contact.file == "ice"
    assert plan.soil.params is None and plan.granular.params is None
    assert plan.scenario.name == "hold" and plan.scenario.loaded["systems"] and Path(plan.scenario.file).is_file()
    assert plan.sensors.enabled is False and plan.log.mcap is False and plan.log.rate == 100.0
    recorded = plan.resolved_config()
    assert recorded["physics"]["dt"] == 0.001 and recorded["duration"] == 0.02
    assert recorded["scenario"] == {"name": "hold", **plan.scenario.loaded["params"]}


def test_every_field_of_the_plan_is_typed():
    """No field of a plan dataclass is typed ``object`` (or left untyped, ``Any``)."""
    for _, cls in vars(plan_module).items():
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == plan_module.__name__:
            assert cls.__dataclass_params__.frozen, f"{cls.__name__} is not frozen"
            loose = [f.name for f in dataclasses.fields(cls) if re.search(r"\b(object|Any)\b", str(f.type))]
            assert not loose, f"{cls.__name__}: fields {loose} are not typed"


def test_the_step_has_its_default_in_one_place():
    """``physics.dt or the world's step`` is written once: WorldSpec.step."""
    found = []
    for path in (ROOT / "eels_gz").rglob("*.py"):
        for line in path.read_text().splitlines():
            if re.search(r"\bdt\b\"?\]?\s+or\s", line.split("#")[0]):
                found.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    assert len(found) == 1 and found[0].startswith("eels_gz/sdf_reader.py"), "\n".join(found)


def test_the_runner_reads_the_step_from_the_plan():
    """eels_gz/run/runner.py never reads the step back from the simulation (``sim.dt``)."""
    tree = ast.parse((ROOT / "eels_gz" / "run" / "runner.py").read_text())
    reads = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "dt"
             and ast.unparse(node.value).split(".")[-1] == "sim"]
    assert not reads, f"runner.py reads sim.dt on lines {reads}: read plan.dt"


def test_run_and_export_weigh_the_robot_alike(hold_plan):
    """The step check takes the description's total mass in run and export alike: what the engine's
    skeleton of it weighs (the optimizer merges bodies and keeps their mass), to the last bit."""
    from eels_gz.run.runner import prepare

    prep = prepare(hold_plan)
    try:
        assert prep.sim.robot_mass() == hold_plan.robot.description.model.total_mass == 100.0
    finally:
        prep.sim.close()


def test_the_launch_spawns_the_plan_run_resolves():
    """launch/sim.launch.py without scenario:= spawns the description of the run plan of its arguments
    (eels_gz.run.export.launch_plan), the one ``eels-gz run`` resolves; it builds none of its own."""
    from eels_gz.run.export import launch_plan

    plan = launch_plan(robot="eels_1_0_front_only", world="ice_plane", contact="rft")
    ran = resolve_run(config.resolve(overrides={"robot": {"name": "eels_1_0_front_only"}, "world": "ice_plane",
                                                "contact": {"model": "rft"}}))
    assert plan.robot.xacro_args == ran.robot.xacro_args and plan.robot.description.urdf == ran.robot.description.urdf
    assert plan.granular.file == "mars_simulant_mms"
    tree = ast.parse((ROOT / "launch" / "sim.launch.py").read_text())
    called = {ast.unparse(n.func).split(".")[-1] for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert not called & {"robot_description", "load_world", "resolve_run"}, called & {"robot_description",
                                                                                      "load_world", "resolve_run"}


def test_the_export_hands_back_its_plan_and_the_urdf_it_wrote(tmp_path):
    """write_export returns the URDF it wrote (the Gazebo host and the launch read no file back)."""
    from eels_gz.run.export import write_export

    result, plan, urdf = write_export(config.resolve(overrides={"scenario": "screw_spin"}), tmp_path / "export")
    assert urdf == Path(result["files"]["robot"]).read_text() and "<gazebo" in urdf
    assert plan.robot.entry.name == result["robot"] and plan.dt == result["dt"]


def test_the_resolution_reads_the_soil_set_once(monkeypatch):
    """The plan's soil set is the one parse of the run's soil file (it was two in the resolution)."""
    import eels_gz.soil.params as soil_params

    load, reads = soil_params.load_soil_params, []
    monkeypatch.setattr(soil_params, "load_soil_params", lambda *a, **k: reads.append(a) or load(*a, **k))
    plan = resolve_run(config.resolve(overrides={"robot": {"name": "archimede"}, "soil": {"params": "dry_sand"}}))
    assert len(reads) == 1 and plan.soil.params is not None and plan.soil.file == "dry_sand"
