"""Screw propulsion under the EELS contact against closed forms (issue 5).

Rig (test/rigs/screw_module.urdf.xacro): one eels_concept module's shell
with its counter-rotating screw pair, on a frictionless x-z guide, built from
the robot's own macros, numbers and gazebo additions. The guide leaves the
module free to advance along its axis and to rest its weight on the screws.
It is needed because an in-line pair makes a yaw couple (test below): a lone
module on flat ice turns about its middle instead of advancing.

Steady state of one screw (radius r, lead angle a from the circumferential
direction, spin w) advancing at v: the blade-edge slip is (v, w r) in
(axial, circumferential) components, and the axial friction of Eq. 6 is zero
when v (1 + (|e_v| - 1) cos^2 a) = (|e_v| - 1) sin a cos a w r. The default
ice's bristle law gives Eq. 6 exactly while the blades slide, and the
regulated law scales u = v/sqrt(|v|^2 + v_eps^2) along v, so it cancels
(the rolling resistance acts only on sideways travel, none here), and

    v(|e_v|) = w r (|e_v| - 1) sin a cos a / (1 + (|e_v| - 1) cos^2 a),

which tends to w r tan a as |e_v| grows (REFERENCE §1).
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from click.testing import CliRunner
from mcap.reader import make_reader
from rosbags.typesys import Stores, get_typestore

from eels_gz import registry
from eels_gz.cli import main
from eels_gz.contact.params import load_contact_params
from eels_gz.description.xacro_loader import load_description
from eels_gz.dart.simulation import RobotSpec, Simulation
from eels_gz.paths import asset

RIG = asset("test", "rigs", "screw_module.urdf.xacro")
VARIANT = "eels_concept"
OMEGA = 2.0  # rad/s
SETTLE, END = 1.5, 2.5  # s: speed averaged over [SETTLE, END]


def screw_record() -> dict:
    return yaml.safe_load(asset("urdf", "eels_variants.yaml").read_text())["variants"][VARIANT]["screw"]


def advance(omega: float, ev: float, lead: float, radius: float) -> float:
    """Steady axial speed of the pair (module docstring)."""
    k = ev - 1.0
    return omega * radius * k * np.sin(lead) * np.cos(lead) / (1.0 + k * np.cos(lead) ** 2)


def params_file(tmp_path, **override) -> str:
    p = yaml.safe_load(asset("config", "contact", "ice.yaml").read_text())
    p.update(override)
    path = tmp_path / f"contact_{len(list(tmp_path.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump(p))
    return str(path)


def guided_run(tmp_path, omega: float, contact: str = "screw", params: str = "ice") -> dict:
    world = registry.world_path("ice_plane")
    scenario = tmp_path / f"spin_{omega:+g}_{contact}.yaml"
    scenario.write_text(f"setpoints:\n  - t: 0.0\n    velocity: {{module_1_screw: {omega}}}\n")
    desc = load_description(RIG, {"variant": VARIANT, "guide": "true", "contact": contact, "contact_params": params,
                                  "world_file": str(world), "scenario": str(scenario)})
    screw = screw_record()
    sim = Simulation(world, RobotSpec("rig", desc, [0.0, 0.0, screw["radius"], 0.0, 0.0, 0.0]))
    skel = sim.robot_skeleton
    guide = skel.getJoint("guide_x")
    speeds = []
    while sim.time < END - 1e-9:
        sim.step()
        if sim.time >= SETTLE:
            speeds.append(guide.getVelocity(0))
    contact_system = next((s.system for s in sim.systems if s.module == "screw_contact"), None)
    # the x carriage rides on the world; everything else rests on the screws
    supported = skel.getMass() - skel.getBodyNode("guide_x_link").getMass()
    weight = supported * float(np.linalg.norm(sim.world.getGravity()))
    return {"v": float(np.mean(speeds)), "spread": float(np.ptp(speeds)), "weight": weight,
            "screw_rate": skel.getJoint("module_1_screw").getVelocity(0), "plugin": contact_system}


@pytest.fixture(scope="module")
def stiff(tmp_path_factory):
    """|e_v| = 100 at every load (ev_b = 0), the default ice's bristle law."""
    tmp = tmp_path_factory.mktemp("stiff")
    params = params_file(tmp, ev_a=100.0, ev_b=0.0)
    return {"forward": guided_run(tmp, OMEGA, params=params), "reverse": guided_run(tmp, -OMEGA, params=params),
            "ev": 100.0, "params": load_contact_params(params)}


def test_large_ev_advances_at_omega_r_tan_alpha(stiff):
    s = screw_record()
    ideal = OMEGA * s["radius"] * np.tan(s["lead_angle"])
    run = stiff["forward"]
    assert run["screw_rate"] == pytest.approx(OMEGA, rel=1e-3)
    # |e_v| = 100 gives v/ideal = 99 cos^2 a / (1 + 99 cos^2 a) = 0.988 for
    # a = 0.40 rad: within the 3 %
    assert run["v"] == pytest.approx(ideal, rel=0.03)
    # right-handed front screw spinning positively pushes towards +x
    assert np.sign(run["v"]) == np.sign(OMEGA * s["handedness"])
    # and it is the model's finite-|e_v| value to within the PI's residual
    # speed error after 1.5 s (< 1e-3) and the guide carriages (0.02 kg)
    assert run["v"] == pytest.approx(advance(OMEGA, stiff["ev"], s["lead_angle"], s["radius"]), rel=2e-3)
    assert run["spread"] < 1e-3 * abs(run["v"])  # steady, no thrashing


def test_reversing_omega_reverses_the_motion(stiff):
    fwd, rev = stiff["forward"]["v"], stiff["reverse"]["v"]
    # mirror-symmetric rig and law: the same speed the other way
    assert rev == pytest.approx(-fwd, rel=1e-3)


@pytest.mark.parametrize("params", ["ice", "ice_regulated"])
def test_finite_ev_speed_matches_the_model_prediction(tmp_path, params):
    """With the default ice (and the same ice under the regulated law), but the steep load line of
    before issue 33 (|e_v| = 3 + 0.04 F_n: the identified 300 + 0.1 F_n slips by only 0.3 %, too little
    to tell the line from a constant), |e_v| = ev_a + ev_b F_n at each screw's load F_n = W/2 (equal
    loads by the rig's symmetry)."""
    path = tmp_path / f"{params}_steep.yaml"
    path.write_text(yaml.safe_dump({**yaml.safe_load(asset("config", "contact", f"{params}.yaml").read_text()),
                                    "ev_a": 3.0, "ev_b": 0.04}))
    s, p = screw_record(), load_contact_params(path)
    run = guided_run(tmp_path, OMEGA, params=str(path))
    load = run["weight"] / 2.0
    ev = p.ev_a + p.ev_b * load
    predicted = advance(OMEGA, ev, s["lead_angle"], s["radius"])
    ideal = OMEGA * s["radius"] * np.tan(s["lead_angle"])
    assert predicted < 0.9 * ideal  # the slip is large enough to be seen
    assert run["v"] == pytest.approx(predicted, rel=2e-3)
    # static equilibrium: the penalty normal forces carry the weight exactly
    assert run["plugin"].last.normal_force.sum(axis=1) == pytest.approx([load, load], rel=1e-6)


def test_pair_cancels_side_force_and_roll_but_makes_a_yaw_couple(stiff):
    """Equal and opposite pair speeds: the reaction torques about the axis and
    the side forces cancel exactly (mirror symmetry). The side forces act
    at the two screws, a distance d apart, so they form a yaw couple; with no
    across-thread slip, axial balance gives the across-thread reaction
    mu F_n tan a per screw and the couple is d mu F_n / cos a (times the
    regulator's scale s = |v|/sqrt(|v|^2 + v_eps^2) under the regulated law;
    1 under the bristle law, which slides at Eq. 6 exactly). Tolerance 2 %:
    the finite |e_v| = 100 leaves 1.2 % across-thread slip."""
    s, plugin = screw_record(), stiff["forward"]["plugin"]
    last = plugin.last
    pos = plugin.pos
    mid = pos.mean(axis=0)
    force = last.force.sum(axis=0)
    torque = sum(last.torque[i] + np.cross(pos[i] - mid, last.force[i]) for i in range(2))
    fn = last.normal_force.sum(axis=1).mean()
    axis = plugin.rot[0][:, 0]
    assert abs(force[1]) < 1e-9 * fn
    assert abs(torque @ axis) < 1e-9 * fn * s["radius"]
    slip = np.hypot(stiff["forward"]["v"], OMEGA * s["radius"])
    p = stiff["params"]
    scale = 1.0 if p.stick_length > 0.0 else slip / np.hypot(slip, p.v_eps)
    d = np.linalg.norm(pos[0] - pos[1])
    couple = d * p.mu * fn * scale / np.cos(s["lead_angle"])
    assert abs(torque[2]) == pytest.approx(couple, rel=0.02)


def test_stock_contact_gives_no_axial_propulsion(tmp_path, stiff):
    """Isotropic friction on a spinning cylinder pushes only sideways (and the
    pair's side pushes cancel): at most 10 % of the screw model's speed."""
    stock = guided_run(tmp_path, OMEGA, contact="stock")
    assert stock["screw_rate"] == pytest.approx(OMEGA, rel=1e-2)
    assert abs(stock["v"]) <= 0.1 * abs(stiff["forward"]["v"])


def test_screw_spin_rate_is_set_from_the_command_line(tmp_path):
    """`eels-gz run --scenario screw_spin --set scenario.screw_rate=2.0`:
    every pair spins at 2 rad/s, the rear screw at -2 rad/s."""
    res = CliRunner().invoke(main, ["run", "--robot", VARIANT, "--n-modules", "2", "--scenario", "screw_spin",
                                    "--set", "scenario.screw_rate=2.0", "--contact", "screw", "--duration", "1.0",
                                    "--out", str(tmp_path), "--set", "log.plot=false"])
    assert res.exit_code == 0, res.output
    assert yaml.safe_load((tmp_path / "scenario.yaml").read_text())["params"] == {"screw_rate": 2.0}
    with open(tmp_path / "log.mcap", "rb") as f:
        last = [m for _, ch, m in make_reader(f).iter_messages() if ch.topic == "/joint_states"][-1]
    js = get_typestore(Stores.ROS2_JAZZY).deserialize_cdr(last.data, "sensor_msgs/msg/JointState")
    rates = dict(zip(js.name, js.velocity))
    for i in (1, 2):
        # velocity PI after 1 s: within 1 % of the set point
        assert rates[f"module_{i}_screw"] == pytest.approx(2.0, rel=1e-2)
        assert rates[f"module_{i}_screw_rear"] == pytest.approx(-2.0, rel=1e-2)


@pytest.mark.parametrize("ev", [20.0, 300.0, 1000.0])
def test_stiff_ev_meets_eq6_at_the_default_step(tmp_path, ev):
    """Issue 33: at dt = 1 ms the across-thread friction of |e_v| = 300 and 1000 (20-100 times the
    explicit step's bound) is integrated implicitly (eels_gz/contact/implicit.py), and the steady speed
    is Eq. 6's. Tolerance 2e-3, as for |e_v| = 100 above (the PI's residual and the guide carriages),
    well inside the issue's 5 %; steady to 1e-3 of the speed (the explicit step of before gave 0.39 and
    0.0 of the speed, spreads of 0.14 and 0.95 m/s, and screws at 6 and 10 rad/s instead of 2)."""
    s = screw_record()
    run = guided_run(tmp_path, OMEGA, params=params_file(tmp_path, ev_a=ev, ev_b=0.0))
    assert run["plugin"].contact.mobility.shape[0] == 2  # the implicit step is on
    assert run["screw_rate"] == pytest.approx(OMEGA, rel=1e-3)
    assert run["v"] == pytest.approx(advance(OMEGA, ev, s["lead_angle"], s["radius"]), rel=2e-3)
    assert run["spread"] < 1e-3 * abs(run["v"])
