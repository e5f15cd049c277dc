"""``eels-gz export --scenario``: every shipped scenario's Gazebo world.

A scenario whose behaviour is gz-sim systems (or set points only) exports a world that real
libsdformat validates (``ign sdf -k``, libsdformat 12 here; Gazebo Harmonic reads it with sdformat
14), whose every Python system (``<module_name>``, the robot description's and the scenario's, read
from libsdformat's own parse of the whole world, URDF included) is a file of plugins_py/, that loads
gz-sim's Physics, Sensors, Imu and ForceTorque systems, and that includes the robot at the pose of
its placement.json. A scenario whose behaviour is still embedded-host code is refused, naming it.
The export resolves a configuration as ``run`` does: the same base pose, step, systems and contact
set as :func:`eels_gz.run.runner.prepare` builds, and the same error for a bad ``--set``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from lxml import etree

from eels_gz import config, registry
from eels_gz.cli import main
from eels_gz.paths import asset

IGN = shutil.which("ign")
PLUGINS = asset("plugins_py")
REQUIRED = ("gz-sim-physics-system", "gz-sim-sensors-system", "gz-sim-imu-system", "gz-sim-forcetorque-system")
# the export and the host both start from the same float64 arithmetic (eels_gz.spawn mirrors the host's
# placement, iterated to 1e-5 m: test/ros/test_spawn.py's POSE_TOL); the pose is written with repr()
POSE_TOL = 1e-6  # m and rad
SCENARIOS = sorted(registry.scenarios())


def cli(*args):
    return CliRunner().invoke(main, list(args))


def ign(*args) -> subprocess.CompletedProcess:
    if IGN is None:
        msg = "`ign` (libsdformat's command line tool) is not on PATH: SDF validation not run"
        if os.environ.get("CI"):
            pytest.fail(msg + " (it is required in CI)")
        pytest.skip(msg)
    env = dict(os.environ, SDF_PATH=str(asset("models")))  # the worlds' model:// terrain
    return subprocess.run([IGN, "sdf", *args], capture_output=True, text=True, timeout=120, env=env)


def parsed_world(world_file: Path):
    """The world as libsdformat reads it (``ign sdf -p``: includes resolved, the URDF converted)."""
    res = ign("-p", str(world_file))
    assert res.returncode == 0, res.stderr
    return etree.fromstring(res.stdout[res.stdout.index("<sdf"):].encode())


def include_pose(world_file: Path, robot: str) -> list[float]:
    (include,) = [i for i in etree.parse(str(world_file)).getroot().iter("include") if i.findtext("name") == robot]
    return [float(v) for v in include.findtext("pose").split()]


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_scenario_exports_a_valid_world(name, tmp_path):
    out = tmp_path / "export"
    res = cli("export", "--scenario", name, "--out", str(out))
    assert res.exit_code == 0, res.output
    world = out / "world.sdf"
    check = ign("-k", str(world))
    assert check.returncode == 0 and "Valid" in check.stdout, check.stdout + check.stderr
    parsed = parsed_world(world)
    modules = {m.text.strip() for m in parsed.iter("module_name")}
    assert modules, "no Python system in the exported world"
    assert all((PLUGINS / f"{m}.py").is_file() for m in modules), modules
    result = json.loads((out / "export.json").read_text())
    assert modules == set(result["python_systems"])
    systems = {p.get("filename") for p in parsed.find("world").findall("plugin")}
    assert set(REQUIRED) <= systems
    placement = json.loads((out / "placement.json").read_text())
    pose = include_pose(world, result["robot"])
    assert np.allclose(pose[:3], placement["base_pose"]["position"], atol=POSE_TOL, rtol=0)
    assert np.allclose(pose[3:], placement["base_pose"]["rpy"], atol=POSE_TOL, rtol=0)
    # libsdformat placed the model where the include says
    (model,) = [m for m in parsed.find("world").findall("model") if m.get("name") == result["robot"]]
    assert np.allclose([float(v) for v in model.findtext("pose").split()], pose, atol=POSE_TOL, rtol=0)


def test_a_world_without_the_sensor_systems_gets_them(tmp_path):
    """A user world that names only Physics: the export adds Sensors, Imu and ForceTorque (gz-sim 8
    names), once each, and libsdformat accepts it."""
    source = etree.parse(str(registry.world_path("ice_plane")))
    world = source.getroot().find("world")
    for plugin in world.findall("plugin"):
        if plugin.get("filename") != "gz-sim-physics-system":
            world.remove(plugin)
    mine = tmp_path / "bare.sdf"
    source.write(str(mine))
    out = tmp_path / "export"
    res = cli("export", "--scenario", "hold", "--world", str(mine), "--out", str(out))
    assert res.exit_code == 0, res.output
    plugins = [p.get("filename") for p in etree.parse(str(out / "world.sdf")).getroot().find("world").iter("plugin")]
    for filename in REQUIRED:
        assert plugins.count(filename) == 1, (filename, plugins)
    assert set(json.loads((out / "export.json").read_text())["systems_added"]) == set(REQUIRED[1:])
    assert ign("-k", str(out / "world.sdf")).returncode == 0


def test_export_resolves_as_run_does(tmp_path):
    """The same configuration through run's prepare and through the export: the base pose (pose: auto
    on the ice), the step, the robot's Python systems, the contact set the screw contact reads and the
    scenario parameters are the same."""
    from eels_gz.contact.params import load_contact_params
    from eels_gz.run.resolve import resolve_run
    from eels_gz.run.runner import prepare

    sets = ["contact.mu=0.11", "physics.dt=0.0005", "robot.n_modules=4"]
    out = tmp_path / "export"
    res = cli("export", "--scenario", "crescent_spin", "--contact", "screw", *sum((["--set", s] for s in sets), []),
              "--out", str(out))
    assert res.exit_code == 0, res.output
    cfg = config.resolve(None, {"scenario": "crescent_spin", "contact": {"model": "screw"}}, sets)
    prep = prepare(resolve_run(cfg, tmp_path / "run"))
    T = prep.sim.robot_skeleton.getBodyNode(0).getWorldTransform().matrix()
    from eels_gz.spawn import pose_of

    pose = include_pose(out / "world.sdf", "eels_1_0_front_only")
    assert np.allclose(pose, pose_of(T), atol=POSE_TOL, rtol=0), (pose, pose_of(T))
    result = json.loads((out / "export.json").read_text())
    assert result["dt"] == prep.sim.dt == 0.0005
    step = etree.parse(str(out / "world.sdf")).getroot().find("world/physics/max_step_size").text
    assert float(step) == 0.0005
    assert set(result["python_systems"]) == {s.module for s in prep.sim.systems if s.module}
    exported = load_contact_params(out / "contact.yaml")
    assert exported.to_dict() == prep.settings["resolved"]["contact_params"]
    assert exported.mu == 0.11
    urdf = etree.parse(str(out / "eels_1_0_front_only.urdf")).getroot()
    assert {p.findtext("contact_params") for p in urdf.iter("plugin") if p.findtext("module_name") == "screw_contact"} \
        == {str((out / "contact.yaml").resolve())}
    assert sum(1 for j in urdf.iter("joint") if j.get("name", "").endswith("_screw")) == 4
    for key in ("robot", "world", "contact", "soil", "scenario", "duration"):
        assert result["config"][key] == prep.settings["config"][key], key


def test_a_scenario_systems_are_those_run_loads(tmp_path):
    """screw_spin (a scenario of systems): its system is inside the robot's <include> with the priority,
    the resolved parameters (--set applied) and the description the run's host loads it with, plus
    <metrics_file> in the export folder; the host loads the exported world's modules, no more, no less."""
    from eels_gz.run.resolve import resolve_run
    from eels_gz.run.runner import prepare

    out = tmp_path / "export"
    res = cli("export", "--scenario", "screw_spin", "--set", "scenario.screw_rate=2.5", "--out", str(out))
    assert res.exit_code == 0, res.output
    cfg = config.resolve(None, {"scenario": "screw_spin"}, ["scenario.screw_rate=2.5"])
    sim = prepare(resolve_run(cfg, tmp_path / "run")).sim
    (include,) = etree.parse(str(out / "world.sdf")).getroot().iter("include")
    ns = "{http://gazebosim.org/schema}"
    exported = {p.findtext("module_name"): p for p in include.iter("plugin")}
    host = {s.module: s for s in sim.systems if s.module in exported}
    assert set(host) == set(exported) == {"screw_spin"}
    plugin = exported["screw_spin"]
    assert int(plugin.findtext(f"{ns}system_priority")) == host["screw_spin"].priority < 0
    assert {c.tag: float(c.text) for c in plugin.find("params")} == {"screw_rate": 2.5}
    assert plugin.findtext("description_file") == str((out / "eels_1_0_front_only.urdf").resolve())
    assert plugin.findtext("metrics_file") == str((out / "metrics.json").resolve())
    result = json.loads((out / "export.json").read_text())
    assert set(result["python_systems"]) == {s.module for s in sim.systems if s.module}


def test_a_rover_on_the_dem_starts_where_the_host_places_it(tmp_path):
    """Archimede on mars_dem (pose: auto, the ROAMS placement bends its suspension): the include's pose
    and its initial_joints system's positions are those the host's run starts from, and libsdformat
    accepts the include with that system inside."""
    from eels_gz.run.resolve import resolve_run
    from eels_gz.run.runner import prepare
    from eels_gz.spawn import pose_of

    out = tmp_path / "export"
    res = cli("export", "--scenario", "hold", "--robot", "archimede", "--world", "mars_dem", "--out", str(out))
    assert res.exit_code == 0, res.output
    cfg = config.resolve(None, {"scenario": "hold", "robot": {"name": "archimede"}, "world": "mars_dem"}, [])
    skel = prepare(resolve_run(cfg, tmp_path / "run")).sim.robot_skeleton
    host = {skel.getJoint(i).getName(): float(skel.getJoint(i).getPosition(0))
            for i in range(skel.getNumJoints()) if skel.getJoint(i).getNumDofs() == 1}
    pose = include_pose(out / "world.sdf", "archimede")
    assert np.allclose(pose, pose_of(skel.getRootBodyNode().getWorldTransform().matrix()), atol=POSE_TOL, rtol=0)
    (plugin,) = [p for p in parsed_world(out / "world.sdf").iter("plugin") if p.findtext("module_name") == "initial_joints"]
    initial = {j.get("name"): float(j.get("position")) for j in plugin.iter("joint")}
    assert initial and {n for n, q in host.items() if abs(q) > POSE_TOL} <= set(initial)
    for name, q in initial.items():
        assert q == pytest.approx(host[name], abs=POSE_TOL), name
    assert json.loads((out / "placement.json").read_text())["joints"] == initial


@pytest.mark.parametrize("sets", [["scenario.no_such_param=1"], ["physics.dt=fast"], ["no_such.key=1"],
                                  ["contact.mu=0.1"]])
def test_a_bad_set_is_refused_as_run_refuses_it(sets, tmp_path):
    """Exit 2, the message ``run`` gives for the same --set, and no output folder."""
    args = sum((["--set", s] for s in sets), [])
    out = tmp_path / "export"
    exported = cli("export", "--scenario", "hold", *args, "--out", str(out))
    ran = cli("run", "--scenario", "hold", *args, "--out", str(tmp_path / "run"))
    assert exported.exit_code == 2 and ran.exit_code == 2, (exported.output, ran.output)
    assert exported.output.strip().splitlines()[-1] == ran.output.strip().splitlines()[-1]
    assert "Traceback" not in exported.output and "eels-gz: error:" in exported.output
    assert not out.exists()


@pytest.mark.parametrize("flag, value, expected", [("--scenario", "no_such_scenario", "scenario"),
                                                    ("--robot", "no_such_robot", "robot"),
                                                    ("--world", "no_such_world", "world")])
def test_unknown_names_are_refused(flag, value, expected, tmp_path):
    args = {"--scenario": "hold", flag: value}
    out = tmp_path / "export"
    res = cli("export", *sum(([k, v] for k, v in args.items()), []), "--out", str(out))
    assert res.exit_code == 2, res.output
    assert value in res.output and expected in res.output and "Traceback" not in res.output
    assert not out.exists()


def test_an_existing_out_needs_overwrite_and_keeps_foreign_files(tmp_path):
    out = tmp_path / "export"
    assert cli("export", "--scenario", "hold", "--out", str(out)).exit_code == 0
    before = (out / "world.sdf").read_bytes()
    again = cli("export", "--scenario", "crescent_spin", "--out", str(out))
    assert again.exit_code == 2 and "--overwrite" in again.output, again.output
    assert (out / "world.sdf").read_bytes() == before
    replaced = cli("export", "--scenario", "crescent_spin", "--out", str(out), "--overwrite")
    assert replaced.exit_code == 0, replaced.output
    assert json.loads((out / "export.json").read_text())["scenario"] == "crescent_spin"
    (out / "notes.txt").write_text("mine")
    refused = cli("export", "--scenario", "hold", "--out", str(out), "--overwrite")
    assert refused.exit_code == 2 and "notes.txt" in refused.output
    assert (out / "notes.txt").read_text() == "mine"
    other = tmp_path / "other"
    other.mkdir()
    (other / "data.csv").write_text("1")
    refused = cli("export", "--scenario", "hold", "--out", str(other), "--overwrite")
    assert refused.exit_code == 2 and (other / "data.csv").read_text() == "1"


def test_the_export_imports_no_engine(tmp_path):
    """The launch file calls the export on a ROS 2 machine, where dartpy is no dependency."""
    code = ("import sys; from eels_gz import config; from eels_gz.run.export import export_scenario; "
            f"export_scenario(config.resolve(None, {{'scenario': 'hold'}}, []), {str(tmp_path)!r}); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dartpy', 'rclpy', 'gz')))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])))
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def _placing_scenario(tmp_path, monkeypatch, status: str = "ok"):
    """A scenario whose placement before the run (``placement:``) is a stand-in module returning a known
    start, registered beside the shipped ones."""
    import types

    from eels_gz.rotations import rpy_matrix
    from eels_gz.scenarios import Placement

    T = np.eye(4)
    T[:3, :3] = rpy_matrix(0.1, -0.2, 0.4)
    T[:3, 3] = [1.5, -0.25, 0.3]
    module = types.ModuleType("eels_gz.scenarios.export_test_place")
    calls = []

    def place(ctx):
        calls.append(ctx)
        return Placement(T, {"module_1_bend": 0.2}, {"settled": True}, status,
                         "" if status == "ok" else "did not settle in 5 s")

    module.place = place
    monkeypatch.setitem(sys.modules, module.__name__, module)
    path = tmp_path / "placed.yaml"
    path.write_text("description: a stand-in placement\nplacement: export_test_place\nduration: 1.0\n"
                    "setpoints:\n  - t: 0.0\n    position: {\"module_[0-9]+_bend\": 0.0}\n")
    known = registry.scenarios()
    monkeypatch.setattr(registry, "scenarios", lambda: {**known, "placed": path})
    return T, calls


def test_a_scenario_placed_before_the_run_starts_where_its_placement_puts_it(tmp_path, monkeypatch):
    """``placement:``: the export runs the run's placement step (with the engine) and includes the robot
    at its base pose, with its joint positions through initial_joints, and writes its placement.json."""
    from eels_gz.spawn import pose_of

    T, calls = _placing_scenario(tmp_path, monkeypatch)
    out = tmp_path / "export"
    res = cli("export", "--scenario", "placed", "--out", str(out))
    assert res.exit_code == 0, res.output
    assert len(calls) == 1 and calls[0].robot == "eels_1_0_front_only"
    assert np.allclose(include_pose(out / "world.sdf", "eels_1_0_front_only"), pose_of(T), atol=POSE_TOL, rtol=0)
    (plugin,) = [p for p in parsed_world(out / "world.sdf").iter("plugin")
                 if p.findtext("module_name") == "initial_joints"]
    assert {j.get("name"): float(j.get("position")) for j in plugin.iter("joint")} == {"module_1_bend": 0.2}
    record = json.loads((out / "placement.json").read_text())
    assert record["report"] == {"settled": True} and record["status"] == "ok"
    assert np.allclose(record["base_pose"]["position"], T[:3, 3], atol=POSE_TOL, rtol=0)


def test_a_failed_placement_is_refused(tmp_path, monkeypatch):
    _placing_scenario(tmp_path, monkeypatch, status="placement_failed")
    out = tmp_path / "export"
    res = cli("export", "--scenario", "placed", "--out", str(out))
    assert res.exit_code == 2, res.output
    assert "placement before the run failed (placement_failed): did not settle in 5 s" in res.output
    assert not out.exists()


def host_from_export(out: Path, scratch: Path):
    """The exported world in the embedded host. The host includes SDF models, not a URDF, so the robot's
    <include> is taken apart: the world without it (as exported, its step and systems), and the included
    URDF as the robot at the include's pose, with the include's <plugin>s (initial_joints, the scenario's
    systems) added to the description's own, as gz-sim attaches them to the included model."""
    from eels_gz.dart.simulation import RobotSpec, Simulation
    from eels_gz.description.xacro_loader import load_description
    from eels_gz.sdf_reader import load_world

    tree = etree.parse(str(out / "world.sdf"))
    world = tree.getroot().find("world")
    (include,) = world.findall("include")
    world.remove(include)
    tree.write(str(scratch / "world_only.sdf"))
    uri = include.findtext("uri")
    assert uri.startswith("file://")
    robot = RobotSpec(include.findtext("name"), load_description(Path(uri[len("file://"):])),
                      [float(v) for v in include.findtext("pose").split()],
                      plugins=tuple(etree.tostring(p, encoding="unicode") for p in include.findall("plugin")))
    return Simulation(load_world(scratch / "world_only.sdf"), robot)


# Round trip: on the flat ice both the run (eels_gz.dart.terrain_start) and the export (eels_gz.spawn)
# place the robot by the same closed form (its lowest collision corner 1 mm above z = 0, no iteration),
# so both start from the same state to round-off and step the same systems with the same parameters in
# the same DART world: they agree to round-off (measured: 4e-17 m, 1e-16 rad after 300 steps, 2-core
# machine under load 5-10). ROUND_TRIP_TOL leaves room for summation order only; a changed parameter
# (screw_rate 2 vs 3 rad/s, mu 0.11 vs the ice's) moves the robot by far more within 0.3 s.
ROUND_TRIP_STEPS = 300  # 0.3 s at the world's 1 ms step: screws spun up, the robot on the ice
ROUND_TRIP_TOL = 1e-9  # m and rad


def test_the_exported_world_steps_as_the_run_does(tmp_path):
    """screw_spin under the screw contact with --set contact.mu and scenario.screw_rate: the exported
    world, run by the embedded host, follows the run's own simulation step for step (base pose and every
    joint position after ROUND_TRIP_STEPS steps)."""
    from eels_gz.run.resolve import resolve_run
    from eels_gz.run.runner import prepare

    sets = ["contact.mu=0.11", "scenario.screw_rate=2.0"]
    out = tmp_path / "export"
    res = cli("export", "--scenario", "screw_spin", "--contact", "screw", *sum((["--set", s] for s in sets), []),
              "--out", str(out))
    assert res.exit_code == 0, res.output
    ran = prepare(resolve_run(config.resolve(None, {"scenario": "screw_spin", "contact": {"model": "screw"}}, sets),
                  tmp_path / "run")).sim
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    exported = host_from_export(out, scratch)
    assert sorted(s.module for s in exported.systems) == sorted(s.module for s in ran.systems)
    for _ in range(ROUND_TRIP_STEPS):
        ran.step()
        exported.step()

    def state(sim):
        skel = sim.robot_skeleton
        T = skel.getRootBodyNode().getWorldTransform().matrix()
        return T, np.asarray(skel.getPositions())[6:]  # the free joint's 6, then the joints

    (T_run, q_run), (T_exp, q_exp) = state(ran), state(exported)
    moved = np.linalg.norm(np.asarray(ran.robot_skeleton.getVelocities())[6:])
    assert moved > 1.0, "the screws did not spin: the round trip would compare two robots at rest"
    assert np.abs(T_exp - T_run).max() < ROUND_TRIP_TOL, np.abs(T_exp - T_run).max()
    assert np.abs(q_exp - q_run).max() < ROUND_TRIP_TOL, np.abs(q_exp - q_run).max()


@pytest.mark.parametrize("extra, message", [
    ("controller: screw_spin\n", "unknown scenario keys ['controller']"),
    ("tethers:\n  - {link: base_link, point: [0, 0, 0], anchor: [0, 0, 2], stiffness: 1000.0, damping: 10.0}\n",
     "'tethers:' are applied by the system 'tethers' (plugins_py/tethers.py): add it to 'systems:'")])
def test_host_code_beside_systems_is_refused(extra, message, tmp_path, monkeypatch):
    """A scenario that names a controller (the host-side form scenarios had before they were systems), or
    tethers without the system that applies them, is refused before anything is written: the Gazebo world
    would run without them."""
    path = tmp_path / "mixed.yaml"
    path.write_text("description: systems and host code\nsystems: [screw_spin]\nduration: 1.0\n"
                    "params: {screw_rate: 1.0}\nsetpoints:\n  - t: 0.0\n    position: {\"module_[0-9]+_bend\": 0.0}\n"
                    + extra)
    known = registry.scenarios()
    monkeypatch.setattr(registry, "scenarios", lambda: {**known, "mixed": path})
    out = tmp_path / "export"
    res = cli("export", "--scenario", "mixed", "--out", str(out))
    assert res.exit_code == 2, res.output
    assert message in " ".join(res.output.split()) and not out.exists()


def test_a_step_above_the_contact_stability_bound_is_refused_as_run_refuses_it(tmp_path):
    """The screw contact's stability bound (eels_gz.contact.stability) with the robot's weight from the
    URDF in both (the export has no engine) gives run's message, to the digit."""
    args = ["--scenario", "hold", "--contact", "screw", "--set", "physics.dt=0.01"]
    exported = cli("export", *args, "--out", str(tmp_path / "export"))
    ran = cli("run", *args, "--out", str(tmp_path / "run"))
    assert exported.exit_code == 2 and ran.exit_code == 2, (exported.output, ran.output)
    assert "stability bound" in ran.output
    assert exported.output.strip().splitlines()[-1] == ran.output.strip().splitlines()[-1]
    assert not (tmp_path / "export").exists()


def test_exact_mimic_is_refused_by_the_export_and_a_bad_value_by_both(tmp_path):
    """physics.mimic exact is the embedded host's coupling: gz-sim's DART plugin has no mimic
    constraint, so the export refuses it (exit 2, no folder); an unknown value is run's message."""
    exported = cli("export", "--scenario", "hold", "--set", "physics.mimic=exact", "--out", str(tmp_path / "export"))
    assert exported.exit_code == 2 and "physics.mimic: exact" in exported.output, exported.output
    assert "Traceback" not in exported.output and not (tmp_path / "export").exists()
    bad = ["--scenario", "hold", "--set", "physics.mimic=loose"]
    exported = cli("export", *bad, "--out", str(tmp_path / "export"))
    ran = cli("run", *bad, "--out", str(tmp_path / "run"))
    assert exported.exit_code == 2 and ran.exit_code == 2, (exported.output, ran.output)
    assert "'physics.mimic' must be one of none, exact, got 'loose'" in ran.output
    assert exported.output.strip().splitlines()[-1] == ran.output.strip().splitlines()[-1]


def test_the_export_names_the_mesh_friction_gz_sim_does_not_apply_and_the_robot_carries_it(tmp_path, caplog):
    """gz-sim 8 attaches a <mesh> collision without reading its <surface> (gz-physics' dartsim
    AttachMeshShape), so the moulin's ice (mu 0.15 in models/moulin) is DART's default 1 there:
    export.json lists each such collision. DART gives a contact the smaller of its shapes' coefficients,
    so the export writes the ice's coefficient on every colliding link of the robot (mu1 = mu2 = 0.15),
    and a link on the moulin meets 0.15 in gz-sim as in the host; nothing to warn of. The parallel walls
    are boxes (Slab), whose friction gz-sim applies: nothing listed, nothing carried."""
    from eels_gz.sdf_reader import load_world

    moulin = load_world(registry.world_path("moulin"))
    expected = [(m.name, c.name, c.surface.mu) for m in moulin.models for link in m.links for c in link.collisions
                if c.geometry.kind == "mesh"]
    assert expected and all(mu != 1.0 for _, _, mu in expected)
    out = tmp_path / "moulin"
    with caplog.at_level("WARNING"):
        res = cli("export", "--scenario", "moulin_descent", "--out", str(out))
    assert res.exit_code == 0, res.output
    result = json.loads((out / "export.json").read_text())
    listed = result["mesh_friction_ignored"]
    assert [(e["model"], e["collision"], e["mu"]) for e in listed] == expected
    assert all(e["gz_sim_mu"] == 1.0 for e in listed)
    assert "friction 1" not in caplog.text
    carried = result["robot_friction"]
    assert carried["carried"] and carried["mu"] == expected[0][2] and carried["reason"] == ""
    robot = etree.parse(str(out / Path(result["files"]["robot"]).name)).getroot()
    colliding = {link.get("name") for link in robot.iter("link") if link.find("collision") is not None}
    assert set(carried["links"]) == colliding and len(colliding) > 20
    mu = {(g.get("reference"), el.tag): float(el.text) for g in robot.iter("gazebo") for el in g
          if el.tag in ("mu1", "mu2")}
    assert mu == {(name, tag): expected[0][2] for name in colliding for tag in ("mu1", "mu2")}
    res = cli("export", "--scenario", "wall_climb", "--out", str(tmp_path / "walls"))
    assert res.exit_code == 0, res.output
    walls = json.loads((tmp_path / "walls" / "export.json").read_text())
    assert walls["mesh_friction_ignored"] == []
    assert walls["robot_friction"] == {"carried": False, "mu": None, "links": [], "reason": ""}
    assert "<mu1>" not in (tmp_path / "walls" / Path(walls["files"]["robot"]).name).read_text()


def test_a_mesh_coefficient_the_robot_cannot_carry_exactly_is_warned_of(tmp_path, caplog):
    """A box of mu 0.5 beside the moulin's ice (0.15): links at 0.15 would lower the box's pair with the
    robot, so the export carries nothing, warns, and export.json says why."""
    world = (registry.world_path("ice_plane")).read_text().replace(
        "</world>", """<include><uri>model://moulin</uri><pose>0 0 -20 0 0 0</pose></include>
    <model name="crate"><static>true</static><pose>5 0 0.1 0 0 0</pose><link name="crate_link">
      <collision name="crate_collision"><geometry><box><size>0.2 0.2 0.2</size></box></geometry>
        <surface><friction><ode><mu>0.5</mu><mu2>0.5</mu2></ode></friction></surface></collision></link></model>
  </world>""")
    path = tmp_path / "crate_world.sdf"
    path.write_text(world)
    out = tmp_path / "out"
    with caplog.at_level("WARNING"):
        res = cli("export", "--scenario", "hold", "--world", str(path), "--out", str(out))
    assert res.exit_code == 0, res.output
    result = json.loads((out / "export.json").read_text())
    assert [e["collision"] for e in result["mesh_friction_ignored"]] == ["moulin_collision"]
    carried = result["robot_friction"]
    assert not carried["carried"] and carried["links"] == [] and carried["mu"] is None
    assert "crate/crate_collision has mu 0.5 > 0.15" in carried["reason"]
    assert "friction 1" in caplog.text and "crate/crate_collision" in caplog.text
    assert "<mu1>" not in (out / Path(result["files"]["robot"]).name).read_text()


def test_the_mimic_settings_are_one_list():
    from eels_gz.dart.couplings import MIMIC

    assert config.MIMIC == MIMIC


def test_an_exported_scenario_writes_its_metrics_where_the_export_says(tmp_path):
    """Under Gazebo no system is called when the run ends (gz-sim 8's Python loader), so a scenario's
    watching systems write their metrics to the export's <metrics_file> every simulated second
    (gz_compat.MetricsFile): hang, exported and stepped by the embedded host as Gazebo would run it,
    has the file after a second with the hang system's figures of the steps up to it, and none before."""
    out = tmp_path / "export"
    res = cli("export", "--scenario", "hang", "--out", str(out))
    assert res.exit_code == 0, res.output
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    sim = host_from_export(out, scratch)
    (hang,) = [s.system for s in sim.systems if s.module == "hang"]
    metrics_file = out / "metrics.json"
    written_at = []
    for _ in range(int(round(2.5 / sim.dt))):
        sim.step()
        now = json.loads(json.dumps(hang.metrics())), sim.time  # what the system gives after this step
        if metrics_file.exists() and not written_at:
            written = json.loads(metrics_file.read_text())
            # written after the system's post_update of the step that ended the second: its steps up to it
            assert written == {"scenario": "hang", **now[0], "sim_time_s": written["sim_time_s"]}
            assert written["sim_time_s"] == pytest.approx(now[1], abs=1e-9)
            assert written["tether_force_over_weight"] > 0.9  # the tether carries the robot
        if metrics_file.exists():
            at = json.loads(metrics_file.read_text())["sim_time_s"]
            if not written_at or at != written_at[-1]:
                written_at.append(at)
    assert written_at == pytest.approx([1.0, 2.0], abs=1e-9)  # every simulated second, none before


def test_metrics_are_written_once_when_the_world_pauses_and_a_failure_only_warns(tmp_path, monkeypatch, caplog):
    """A scenario that ends its run under Gazebo pauses the world (gz_compat.request_run_end): the
    paused world's first post_update writes the metrics (at its time), later paused ones do not, and
    a metrics() that raises is logged once without raising into gz-sim (which would disable the system)."""
    import datetime
    import logging
    import types

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "plugins_py"))
    from gz_compat import MetricsFile

    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"scenario": "x", "other_system_key": 1}))
    sdf = types.SimpleNamespace(get_string=lambda key, default: {"metrics_file": (str(path), True),
                                                                 "scenario": ("x", True)}.get(key, (default, False)))

    def info(t: float, paused: bool):
        return types.SimpleNamespace(sim_time=datetime.timedelta(seconds=t), dt=datetime.timedelta(seconds=0.001),
                                     paused=paused)

    calls = []
    out = MetricsFile(sdf, "probe")
    out.after(info(0.5, False), lambda: calls.append(1) or {"a": 1})
    assert calls == []  # before a simulated second
    out.after(info(0.75, True), lambda: calls.append(1) or {"a": 2})
    out.after(info(0.75, True), lambda: calls.append(1) or {"a": 3})
    assert calls == [1] and json.loads(path.read_text()) == {"scenario": "x", "other_system_key": 1, "a": 2,
                                                              "sim_time_s": 0.75}
    with caplog.at_level(logging.WARNING, logger="gz_compat"):
        for t in (2.0, 3.0):
            out.after(info(t, False), lambda: 1 / 0)
    assert [r.getMessage() for r in caplog.records] == [
        f"probe: could not write its metrics to '{path}': division by zero"]
    assert json.loads(path.read_text())["a"] == 2  # the file as it was
    # a key this system gave before and gives no longer goes (the host's metrics.json would not have it);
    # the other systems' keys stay
    out.after(info(6.0, False), lambda: {"b": 1})
    assert json.loads(path.read_text()) == {"scenario": "x", "other_system_key": 1, "b": 1, "sim_time_s": 6.0}
    nowhere = MetricsFile(types.SimpleNamespace(get_string=lambda key, default: (default, False)), "probe")
    nowhere.after(info(5.0, False), lambda: 1 / 0)  # eels-gz run gives no <metrics_file>: nothing called


def test_a_link_a_system_names_that_the_model_lacks_is_named_in_its_error(monkeypatch):
    """gz_compat.watched_link, which every contact, rig and scenario system uses to take its links:
    the link with its velocity checks on, or an error naming the system, the link and the model."""
    import types

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "plugins_py"))
    import gz_compat
    import scenario_support

    checked = []
    model = types.SimpleNamespace(link_by_name=lambda ecm, name: 7 if name == "base" else 0,
                                  name=lambda ecm: "robot")
    link = types.SimpleNamespace(enable_velocity_checks=lambda ecm, on: checked.append(on))
    # watched_link takes its sim.Link from scenario_support, one of gz_compat's job modules
    monkeypatch.setattr(scenario_support, "sim",
                        types.SimpleNamespace(Link=lambda entity: link if entity == 7 else None))
    assert gz_compat.watched_link(model, None, "base", "screw link 'base'", "probe") is link and checked == [True]
    with pytest.raises(ValueError, match=r"^probe: screw link 'nope' is not a link of model 'robot'$"):
        gz_compat.watched_link(model, None, "nope", "screw link 'nope'", "probe")


def test_a_headless_export_leaves_out_what_gz_sim_renders_and_keeps_imu_and_force_torque(tmp_path):
    """gz-sim 8.14 crashes on a world with the Sensors system and a camera when no render engine loads:
    ``--headless`` drops both; the default export keeps them for a user with OGRE 2."""
    for headless in (False, True):
        out = tmp_path / f"headless_{headless}"
        res = cli("export", "--scenario", "rover_drive", "--out", str(out), *(["--headless"] if headless else []))
        assert res.exit_code == 0, res.output
        world = etree.parse(str(out / "world.sdf")).getroot()
        systems = {p.get("filename") for p in world.iter("plugin")}
        urdf = etree.parse(str(out / "archimede.urdf")).getroot()
        types = sorted(s.get("type") for s in urdf.iter("sensor"))
        result = json.loads((out / "export.json").read_text())
        if headless:
            assert "gz-sim-sensors-system" not in systems
            assert types == ["imu"]
            assert sorted(result["headless"]["sensors_removed"]) == [
                "camera_color (camera)", "camera_depth (depth_camera)", "lidar (gpu_lidar)"]
            assert result["headless"]["systems_removed"] == ["gz-sim-sensors-system"]  # ice_plane names it
            assert "headless: left out" in res.output
        else:
            assert "gz-sim-sensors-system" in systems
            assert {"camera", "depth_camera", "gpu_lidar", "imu"} <= set(types)
            assert result["headless"] is None
        assert {"gz-sim-imu-system", "gz-sim-forcetorque-system"} <= systems
        check = ign("-k", str(out / "world.sdf"))
        assert check.returncode == 0, check.stderr


def test_a_headless_export_keeps_force_torque_sensors(tmp_path):
    types = {}
    for flags in ((), ("--headless",)):
        out = tmp_path / ("headless" if flags else "default")
        res = cli("export", "--scenario", "hang", *flags, "--out", str(out))
        assert res.exit_code == 0, res.output
        urdf = etree.parse(str(out / "eels_1_5.urdf")).getroot()
        types[bool(flags)] = sorted(s.get("type") for s in urdf.iter("sensor"))
    assert types[True].count("force_torque") == 3  # EELS 1.5: one sensor every 2 modules (urdf/eels_variants.yaml)
    assert types[True] == [t for t in types[False] if t not in ("camera", "gpu_lidar", "depth_camera")]
