"""Set-point schedules (hold and ramp semantics, validation) and the run
configuration (precedence, key and type checks, --set parsing)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import yaml

from eels_gz import config
from eels_gz.control.setpoints import SetpointSchedule, load_scenario
from eels_gz.errors import ConfigError
from eels_gz.paths import asset

NAMES = ["module_1_bend", "module_1_screw", "module_2_bend", "module_2_screw", "module_3_bend"]
NAN = float("nan")


def at(schedule, t):
    pos, vel = schedule.at(t)
    return pos.tolist(), vel.tolist()


def same(a, b) -> bool:
    """Elementwise equality with NaN == NaN."""
    return len(a) == len(b) and all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b))


# --- hold ---------------------------------------------------------------------------
def test_nothing_before_the_first_keyframe():
    s = SetpointSchedule(NAMES, [{"t": 1.0, "position": {"module_1_bend": 0.5}}])
    pos, vel = at(s, 0.999)
    assert all(math.isnan(x) for x in pos + vel)


def test_zero_order_hold():
    s = SetpointSchedule(NAMES, [
        {"t": 1.0, "position": {"module_1_bend": 0.5}, "velocity": {"module_1_screw": 3.0}},
        {"t": 2.0, "position": {"module_2_bend": -0.2}},
        {"t": 3.0, "position": {"module_1_bend": 0.1}, "velocity": {"module_1_screw": 0.0}},
    ])
    # a keyframe's values hold from its time t (inclusive) to the next change
    assert same(at(s, 1.0)[0], [0.5, NAN, NAN, NAN, NAN])
    assert same(at(s, 1.999)[0], [0.5, NAN, NAN, NAN, NAN])
    # a later keyframe that does not name a joint keeps that joint's target
    assert same(at(s, 2.0)[0], [0.5, NAN, -0.2, NAN, NAN])
    assert same(at(s, 2.0)[1], [NAN, 3.0, NAN, NAN, NAN])
    assert same(at(s, 3.0)[0], [0.1, NAN, -0.2, NAN, NAN])
    assert same(at(s, 3.0)[1], [NAN, 0.0, NAN, NAN, NAN])
    assert same(at(s, 1e6)[0], [0.1, NAN, -0.2, NAN, NAN])  # the last keyframe holds forever


def test_later_keyframe_at_the_same_time_wins():
    s = SetpointSchedule(NAMES, [
        {"t": 1.0, "position": {"module_1_bend": 0.5}},
        {"t": 1.0, "position": {"module_1_bend": 0.7}},
    ])
    assert at(s, 1.0)[0][0] == 0.7


def test_patterns_are_full_match_regular_expressions():
    s = SetpointSchedule(NAMES, [{"t": 0.0, "position": {"module_[13]_bend": 0.2, "module_2_bend": -0.1},
                                  "velocity": {"module_[0-9]+_screw": 4.0}}])
    pos, vel = at(s, 0.0)
    assert same(pos, [0.2, NAN, -0.1, NAN, 0.2])
    assert same(vel, [NAN, 4.0, NAN, 4.0, NAN])
    # "module_1" alone does not fully match any joint name
    with pytest.raises(ConfigError, match="joint pattern 'module_1' matches no joint"):
        SetpointSchedule(NAMES, [{"t": 0.0, "position": {"module_1": 0.2}}])


# --- ramp --------------------------------------------------------------------------------
def test_ramp_interpolates_positions_linearly():
    s = SetpointSchedule(NAMES, [
        {"t": 1.0, "position": {"module_1_bend": 0.0, "module_2_bend": 1.0}, "velocity": {"module_1_screw": 2.0}},
        {"t": 3.0, "position": {"module_1_bend": 1.0, "module_3_bend": 0.4}, "velocity": {"module_1_screw": 5.0},
         "ramp": True},
        {"t": 4.0, "position": {"module_1_bend": -1.0}},  # no ramp: a step at t = 4
    ])
    for t, a in [(1.0, 0.0), (1.5, 0.25), (2.0, 0.5), (2.999, 0.9995)]:
        pos, vel = at(s, t)
        assert pos[0] == pytest.approx(a, abs=1e-12)  # (1 - a) * 0 + a * 1, a = (t - 1) / 2
        assert pos[2] == 1.0  # same value at both ends: constant
        assert math.isnan(pos[4])  # no value before the ramp's keyframe: nothing to interpolate from
        assert vel[1] == 2.0  # velocities are held, never ramped
    pos, vel = at(s, 3.0)
    assert pos[0] == 1.0 and pos[4] == 0.4 and vel[1] == 5.0
    assert at(s, 3.999)[0][0] == 1.0
    assert at(s, 4.0)[0][0] == -1.0


def test_ramp_to_a_keyframe_at_the_same_time_is_a_step():
    s = SetpointSchedule(NAMES, [
        {"t": 1.0, "position": {"module_1_bend": 0.0}},
        {"t": 1.0, "position": {"module_1_bend": 1.0}, "ramp": True},
    ])
    assert at(s, 1.0)[0][0] == 1.0


# --- schedule validation ---------------------------------------------------------------------
def test_non_monotonic_times_are_rejected():
    with pytest.raises(ConfigError, match=re.escape("scen.yaml: setpoint times must be non-decreasing, got [0.0, 2.0, 1.0]")):
        SetpointSchedule(NAMES, [{"t": 0.0}, {"t": 2.0}, {"t": 1.0}], source="scen.yaml")


@pytest.mark.parametrize("frame, message", [
    ({"position": {"module_1_bend": 0.1}}, "setpoints[0]: needs a numeric time 't'"),
    ({"t": "soon"}, "setpoints[0]: needs a numeric time 't'"),
    ({"t": 0.0, "speed": {}}, "setpoints[0]: unknown keys ['speed']"),
    ({"t": 0.0, "position": {"module_1_bend": "up"}}, "setpoints[0]: position of 'module_1_bend' must be a finite number, got 'up'"),
    ({"t": 0.0, "velocity": {"module_1_screw": float("inf")}}, "setpoints[0]: velocity of 'module_1_screw' must be a finite number, got inf"),
    ({"t": 0.0, "position": {"module_1_bend": True}}, "setpoints[0]: position of 'module_1_bend' must be a finite number, got True"),
    ({"t": 0.0, "position": {"module_(": 0.1}}, "setpoints[0]: bad joint pattern 'module_('"),
    ([0.0, 1.0], "setpoints[0]: expected a mapping"),
])
def test_bad_keyframe_is_named(frame, message):
    with pytest.raises(ConfigError, match=re.escape("scen.yaml: " + message)):
        SetpointSchedule(NAMES, [frame], source="scen.yaml")


def test_load_scenario(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("description: test\nsetpoints:\n  - t: 0\n    position: {module_1_bend: 0.1}\n")
    assert load_scenario(good)["setpoints"] == [{"t": 0, "position": {"module_1_bend": 0.1}}]

    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("setpoints: []\nsetpionts: []\n")
    with pytest.raises(ConfigError, match=re.escape(f"{unknown}: unknown scenario keys ['setpionts']")):
        load_scenario(unknown)

    bad = tmp_path / "bad.yaml"
    bad.write_text("setpoints: [\n")
    with pytest.raises(ConfigError, match=re.escape(f"{bad}:2: invalid YAML")):
        load_scenario(bad)

    with pytest.raises(ConfigError, match=re.escape(f"cannot read scenario '{tmp_path / 'missing.yaml'}'")):
        load_scenario(tmp_path / "missing.yaml")


# --- configuration -----------------------------------------------------------------------------
def test_defaults_are_the_shipped_file():
    assert config.resolve() == yaml.safe_load(asset("config", "run_defaults.yaml").read_text())


def test_precedence_defaults_file_overrides_set(tmp_path):
    """defaults < config file < overrides (CLI flags) < --set, key by key."""
    d = config.defaults()
    cfg_file = tmp_path / "run.yaml"
    cfg_file.write_text("physics:\n  max_velocity: 100.0\n  collision_detector: bullet\nlog:\n  rate: 50.0\n"
                        "world: ice_plane\n")
    overrides = {"physics": {"max_velocity": 150.0}, "log": {"mcap": False}}
    cfg = config.resolve(cfg_file, overrides, ["physics.max_velocity=300.0", "duration=5.0"])
    assert cfg["physics"]["max_velocity"] == 300.0  # --set beats overrides and file
    assert cfg["physics"]["collision_detector"] == "bullet"  # file beats defaults
    assert cfg["log"]["rate"] == 50.0  # file beats defaults
    assert cfg["log"]["mcap"] is False  # overrides beat defaults
    assert cfg["duration"] == 5.0
    # untouched keys keep their defaults, and the defaults themselves are not modified
    assert cfg["log"]["plot"] == d["log"]["plot"] and cfg["robot"] == d["robot"]
    assert config.defaults() == d
    # overrides beat the file when there is no --set
    assert config.resolve(cfg_file, overrides)["physics"]["max_velocity"] == 150.0


def test_unknown_key_is_named(tmp_path):
    cfg_file = tmp_path / "run.yaml"
    cfg_file.write_text("physics:\n  dtt: 0.001\n")
    with pytest.raises(ConfigError, match=re.escape(f"{cfg_file}: unknown config key 'physics.dtt'")
                       + ".*valid keys here: .*physics\\.dt"):
        config.resolve(cfg_file)
    with pytest.raises(ConfigError, match=re.escape("--set phisics.dt=0.002: unknown config key 'phisics'")):
        config.resolve(sets=["phisics.dt=0.002"])
    with pytest.raises(ConfigError, match=re.escape("command line: unknown config key 'log.colour'")):
        config.resolve(overrides={"log": {"colour": "red"}})


@pytest.mark.parametrize("item, message", [
    ("physics.max_velocity=fast", "'physics.max_velocity' expects a float, got 'fast'"),
    ("log.mcap=1", "'log.mcap' expects a bool, got 1"),
    ("log.rate=true", "'log.rate' expects a float, got True"),
    ("world=[1, 2]", "'world' expects a str, got [1, 2]"),
    ("robot.pose=[0, 0, 1]", "robot.pose must be 'auto' or a list of 6 numbers, got [0, 0, 1]"),
    ("robot.pose=up", "robot.pose must be 'auto' or a list of 6 numbers, got 'up'"),
    ("physics=3", "expected a mapping at 'physics', got 3"),
    ("physics.dt=-0.001", "'physics.dt' must be positive, got -0.001"),
    ("physics.max_velocity=0", "'physics.max_velocity' must be positive, got 0"),
    ("duration=0.0", "'duration' must be positive, got 0.0"),
    ("physics.collision_detector=bulet", "'physics.collision_detector' must be one of ode, bullet, fcl, dart, got 'bulet'"),
])
def test_wrong_type_is_named(item, message):
    with pytest.raises(ConfigError, match=re.escape(f"--set {item}: {message}")):
        config.resolve(sets=[item])


def test_int_is_accepted_for_float_and_free_form_keys():
    cfg = config.resolve(sets=["log.rate=50", "robot.pose=[0, 0, 1, 0, 0, 0]", "robot.xacro_args={n_modules: '4'}"])
    assert cfg["log"]["rate"] == 50
    assert cfg["robot"]["pose"] == [0, 0, 1, 0, 0, 0]
    assert cfg["robot"]["xacro_args"] == {"n_modules": "4"}


@pytest.mark.parametrize("item", ["physics.dt=fast", "duration=ten", "physics.dt=[1]"])
def test_wrong_type_of_nullable_key_is_named(item):
    """physics.dt and duration default to null ("take it from the world / the
    scenario") but are numbers when given; a string must be refused here, with
    the key named, not fail later deep in the simulation."""
    key = item.split("=")[0]
    with pytest.raises(ConfigError, match=re.escape(f"'{key}'")):
        config.resolve(sets=[item])


@pytest.mark.parametrize("item, expected", [
    ("physics.dt=0.002", (["physics", "dt"], 0.002)),
    ("log.mcap=false", (["log", "mcap"], False)),
    ("robot.pose=[0, 0, 1, 0, 0, 0.5]", (["robot", "pose"], [0, 0, 1, 0, 0, 0.5])),
    ("robot.pose=auto", (["robot", "pose"], "auto")),
    ("scenario=", (["scenario"], None)),
    ("scenario=null", (["scenario"], None)),
    ("world=a=b", (["world"], "a=b")),  # only the first '=' splits
    ("world=a: b: c", (["world"], "a: b: c")),  # not YAML: kept as text
    ("physics.dt=1.0e-3", (["physics", "dt"], 0.001)),
])
def test_parse_set(item, expected):
    assert config.parse_set(item) == expected


def test_parse_set_scientific_notation_is_a_number():
    """`--set physics.dt=1e-3` is how people write a step size; YAML 1.1 (PyYAML)
    reads "1e-3" as a string, so the value must not be left as text."""
    assert config.parse_set("physics.dt=1e-3") == (["physics", "dt"], 0.001)
    assert config.resolve(sets=["log.rate=1e2"])["log"]["rate"] == 100.0


@pytest.mark.parametrize("item, message", [
    ("physics.dt", "--set 'physics.dt': expected KEY=VALUE"),
    ("=3", "--set '=3': empty key"),
])
def test_parse_set_errors(item, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        config.parse_set(item)


def test_config_file_errors(tmp_path):
    missing = tmp_path / "missing.yaml"
    with pytest.raises(ConfigError, match=re.escape(f"cannot read config file '{missing}'")):
        config.resolve(missing)
    bad = tmp_path / "bad.yaml"
    bad.write_text("physics:\n  dt: 0.001\n   rate: 3\n")  # bad indentation on line 3
    with pytest.raises(ConfigError, match=re.escape(f"{bad}:3: invalid YAML")):
        config.resolve(bad)
    not_a_mapping = tmp_path / "list.yaml"
    not_a_mapping.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match=re.escape(f"{not_a_mapping}: expected a mapping at '<top>'")):
        config.resolve(not_a_mapping)


def test_save_round_trip(tmp_path):
    cfg = config.resolve(sets=["log.rate=25.0", "robot.pose=[1, 2, 0.5, 0, 0, 1.57]"])
    path = tmp_path / "saved.yaml"
    config.save(cfg, path)
    assert config.resolve(path) == cfg
    assert np.isclose(yaml.safe_load(path.read_text())["log"]["rate"], 25.0)


# --- scenario parameters ------------------------------------------------------------
PARAM_SCENARIO = """
duration: 4.0
params: {rate: 3.0, t_rev: 2.0}
setpoints:
  - t: 0.0
    velocity: {module_1_screw: rate, module_2_screw: -rate}
  - t: t_rev
    velocity: {module_1_screw: 0.5*rate, module_2_screw: -1.5e-1*rate}
"""


def test_parameters_take_their_defaults_and_overrides(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(PARAM_SCENARIO)
    data = load_scenario(path)
    assert data["params"] == {"rate": 3.0, "t_rev": 2.0}
    assert data["setpoints"][0]["velocity"] == {"module_1_screw": 3.0, "module_2_screw": -3.0}
    assert data["setpoints"][1]["t"] == 2.0
    data = load_scenario(path, {"rate": 2.0})
    assert data["setpoints"][1]["velocity"] == {"module_1_screw": 1.0, "module_2_screw": -0.3}
    # the resolved keyframes drive the schedule like literal numbers
    s = SetpointSchedule(NAMES, data["setpoints"], str(path))
    assert at(s, 1.0)[1][1] == 2.0 and at(s, 3.0)[1][3] == pytest.approx(-0.3, abs=1e-15)


@pytest.mark.parametrize("overrides, text, message", [
    ({"rte": 1.0}, PARAM_SCENARIO, "scenario has no parameter 'rte' (its parameters: rate, t_rev)"),
    ({"rate": "fast"}, PARAM_SCENARIO, "parameter 'rate' must be a finite number, got 'fast'"),
    ({}, PARAM_SCENARIO.replace("-rate}", "-speed}"), "'-speed' is neither a number nor a scenario parameter"),
    ({}, PARAM_SCENARIO.replace("rate: 3.0", "rate: .nan"), "parameter 'rate' needs a finite number as default"),
    ({}, PARAM_SCENARIO.replace("params: {rate: 3.0, t_rev: 2.0}", "params: [rate]"),
     "'params' must map parameter names to default numbers"),
])
def test_bad_parameters_are_named(tmp_path, overrides, text, message):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_scenario(path, overrides)


def test_scenario_section_merges_name_and_parameters(tmp_path):
    cfg = config.resolve(None, {"scenario": "screw_spin"}, ["scenario.screw_rate=2.0"])
    assert cfg["scenario"] == {"name": "screw_spin", "screw_rate": 2.0}
    # the short form `scenario: NAME` in a config file, then a parameter on top
    f = tmp_path / "c.yaml"
    f.write_text("scenario: crescent_spin\n")
    assert config.resolve(f, None, ["scenario.x=1"])["scenario"] == {"name": "crescent_spin", "x": 1}
    with pytest.raises(ConfigError, match=re.escape("scenario parameter 'scenario.screw_rate' must be a number")):
        config.resolve(None, None, ["scenario.screw_rate=fast"])


def test_shipped_scenario_parameters_resolve():
    data = load_scenario(asset("config", "scenarios", "screw_spin.yaml"), {"screw_rate": 2.0})
    assert data["setpoints"][0]["velocity"] == {"module_[0-9]+_screw": 2.0}


def test_scenario_contact_fills_what_the_run_leaves_null():
    """contact.model / contact.params are null by default: the scenario's
    `contact:` fills them, else stock contact with the `ice` parameters; a
    run that names them (--contact, --set, or compare) keeps its own."""
    from eels_gz.run.runner import scenario_defaults

    scen = {"contact": {"model": "screw", "params": "ice_grip"}}
    cfg = config.resolve()
    assert cfg["contact"] == {"model": None, "params": None}
    assert scenario_defaults(cfg, scen)["contact"] == {"model": "screw", "params": "ice_grip"}
    assert scenario_defaults(cfg, None)["contact"] == {"model": "stock", "params": "ice"}
    assert scenario_defaults(cfg, {"contact": {"params": "ice_grip"}})["contact"] == {"model": "stock",
                                                                                     "params": "ice_grip"}
    named = config.resolve(None, {"contact": {"model": "stock"}}, ["contact.params=ice"])
    assert scenario_defaults(named, scen)["contact"] == {"model": "stock", "params": "ice"}


@pytest.mark.parametrize("text", ["contact: screw\n", "contact: {model: screw, friction: 2}\n",
                                  "contact: {model: 3}\n"])
def test_bad_scenario_contact_is_named(tmp_path, text):
    path = tmp_path / "s.yaml"
    path.write_text("setpoints: []\n" + text)
    with pytest.raises(ConfigError, match=re.escape(f"{path}: 'contact' must map ['model', 'params'] to names")):
        load_scenario(path)
