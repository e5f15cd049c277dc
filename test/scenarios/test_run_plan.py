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
    from eels_gz.run.export import resolve_export, write_export

    result, plan, urdf = write_export(resolve_export(config.resolve(overrides={"scenario": "screw_spin"}),
                                                     tmp_path / "export"), tmp_path / "export")
    assert urdf == Path(result["files"]["robot"]).read_text() and "<gazebo" in urdf
    assert plan.robot.entry.name == result["robot"] and plan.dt == result["dt"]


def _hang_cfg() -> dict:
    return config.resolve(overrides={"scenario": "hang", "duration": 0.05, "sensors": {"enabled": False},
                                     "log": {"mcap": False, "plot": False}})


def _takes_a_plan(fn) -> None:
    import inspect

    first = next(iter(inspect.signature(fn).parameters.values()))
    assert first.name == "plan" and first.annotation in (RunPlan, "RunPlan"), (fn.__qualname__, first)


@pytest.fixture
def counted_resolutions(monkeypatch) -> list:
    """Every resolve_run call, wherever it was imported from."""
    import eels_gz.run.export as export
    import eels_gz.run.resolve as resolve
    import eels_gz.run.runner as runner

    calls, real = [], resolve.resolve_run

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    for module in (resolve, runner, export):
        monkeypatch.setattr(module, "resolve_run", counting)
    return calls


def test_run_plan_runs_a_plan_and_run_resolves_once(tmp_path, counted_resolutions):
    """The embedded host's entry point takes a RunPlan (eels_gz.run.runner.run_plan, and the host dispatch
    eels_gz.run.hosts.run_plan); ``run`` of a configuration resolves it once, into the run's folder."""
    import json

    from eels_gz.run import hosts, runner

    for fn in (runner.run_plan, hosts.run_plan):
        _takes_a_plan(fn)
    plan = resolve_run(_hang_cfg(), tmp_path / "a")
    counted_resolutions.clear()
    summary = hosts.run_plan(plan, tmp_path / "a")
    assert not counted_resolutions, "run_plan resolved the configuration again"
    assert summary["status"] == "ok" and json.loads((tmp_path / "a" / "summary.json").read_text())["status"] == "ok"
    assert summary["sim_time"] == pytest.approx(0.05)
    again = hosts.run(_hang_cfg(), tmp_path / "b")
    assert [Path(a[1]).resolve() for a in counted_resolutions] == [(tmp_path / "b").resolve()]
    assert again["final_base_pose"] == summary["final_base_pose"]


def test_the_export_writes_a_plan_and_export_scenario_resolves_once(tmp_path, counted_resolutions):
    """write_export takes a RunPlan; export_scenario resolves its configuration once, as an export
    (its sets recorded beside the world), then writes it."""
    import json

    from eels_gz.run.export import export_scenario, resolve_export, write_export

    _takes_a_plan(write_export)
    cfg = config.resolve(overrides={"scenario": "screw_spin"})
    plan = resolve_export(cfg, tmp_path / "a")
    counted_resolutions.clear()
    result = write_export(plan, tmp_path / "a").result
    assert not counted_resolutions and result["dt"] == plan.dt and (tmp_path / "a" / "world.sdf").is_file()
    assert export_scenario(cfg, tmp_path / "b")["iterations"] == result["iterations"]
    assert len(counted_resolutions) == 1 and counted_resolutions[0][1].record
    assert json.loads((tmp_path / "b" / "export.json").read_text())["robot"] == result["robot"]


def test_the_launch_exports_the_plan_it_resolved(tmp_path, counted_resolutions):
    """launch/sim.launch.py resolves its arguments once (launch_plan) and hands the plan to the scenario's
    export (launch_export, which takes a RunPlan) or to the spawn."""
    from eels_gz.run.export import launch_export, launch_plan

    _takes_a_plan(launch_export)
    plan = launch_plan(scenario="screw_spin", out_dir=tmp_path / "x")
    assert len(counted_resolutions) == 1 and plan.files.work_dir == tmp_path / "x"
    result, exported, urdf = launch_export(plan, headless=True)
    assert len(counted_resolutions) == 1 and exported is plan
    assert result["headless"] is not None and Path(result["files"]["world"]).parent == (tmp_path / "x").resolve()
    tree = ast.parse((ROOT / "launch" / "sim.launch.py").read_text())
    takes = {f.name: [a.arg for a in f.args.args] for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
    assert takes["_spawn"][0] == takes["_scenario"][0] == "plan"


def test_the_resolution_reads_the_soil_set_once(monkeypatch):
    """The plan's soil set is the one parse of the run's soil file (it was two in the resolution)."""
    import eels_gz.soil.params as soil_params

    load, reads = soil_params.load_soil_params, []
    monkeypatch.setattr(soil_params, "load_soil_params", lambda *a, **k: reads.append(a) or load(*a, **k))
    plan = resolve_run(config.resolve(overrides={"robot": {"name": "archimede"}, "soil": {"params": "dry_sand"}}))
    assert len(reads) == 1 and plan.soil.params is not None and plan.soil.file == "dry_sand"


def test_a_sweep_sample_resolves_its_plan_once(tmp_path, counted_resolutions):
    """A sweep's sample (eels_gz.sweep.commands.RunCommand.run) is one run through the host dispatch
    (eels_gz.run.hosts.run): its plan resolved once, in the sample's staging folder."""
    from eels_gz.sweep.commands import RunCommand

    status, message = RunCommand().run(_hang_cfg(), tmp_path / "sample")
    assert (status, message) == ("ok", None)
    assert len(counted_resolutions) == 1 and Path(counted_resolutions[0][1]).name == "sample.partial"


def test_the_host_dispatch_hands_a_gazebo_plan_to_gz_sim(monkeypatch, hold_plan):
    """hosts.run_plan gives a plan whose sim.host is gazebo to eels_gz.gazebo.run.run_plan_in_gazebo (which
    takes a RunPlan), the plan itself, not its configuration."""
    import eels_gz.gazebo.run as gazebo_run
    from eels_gz.run import hosts

    _takes_a_plan(gazebo_run.run_plan_in_gazebo)
    given = []
    monkeypatch.setattr(gazebo_run, "run_plan_in_gazebo", lambda plan, out, progress=None, **kw: given.append(plan))
    plan = dataclasses.replace(hold_plan, cfg={**hold_plan.cfg, "sim": {**hold_plan.cfg["sim"], "host": "gazebo"}})
    hosts.run_plan(plan, "unused")
    assert given == [plan]
