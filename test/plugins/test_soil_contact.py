"""plugins_py/soil_contact.py in the embedded host, on the single-wheel rig
(urdf/wheel_rig.urdf.xacro) with Archimede's low-grouser wheel (its radius,
width and mass read from Archimede's URDF) loaded with a quarter of
Archimede's mass, on the flat ice_plane as the soil surface (the plane is the
soil's level; the soil set names the soil):

- the engine's contact on the wheel is off while the system runs;
- the loaded wheel sinks to the sinkage at which the Wong-Reece load
  integral, computed here by quadrature, carries its weight;
- standing still it stays put; its spin locked and pushed along the bin with
  half of the soil's shear capacity, it is held; with twice that it slides.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from lxml import etree
from scipy.integrate import quad

from eels_gz import registry
from eels_gz.description.assemble import robot_description
from eels_gz.description.xacro_loader import load_description, process_xacro
from eels_gz.gzapi import gzsim
from eels_gz.dart.simulation import RobotSpec, Simulation
from eels_gz.paths import asset
from eels_gz.soil.params import load_soil_params
from eels_gz.soil.wong_reece import GL_U, GL_W, pack_soil, steady_coefficients, wheel_forces, wong_reece
from soil_truth import quad_wong_reece

WORLD = registry.world_path("ice_plane")
G = 9.80665  # ice_plane's <gravity>
SETTLE = 3000  # steps (1 ms): the sinkage's damped oscillation (ratio ~0.7, ~6 Hz) has long died out


def archimede_wheel() -> tuple[float, float, float, float]:
    """(radius, width, wheel mass, corner mass) of Archimede's default wheel set, from its URDF; the corner
    mass is a quarter of the rover's."""
    entry = registry.robot("archimede")
    tree = etree.fromstring(process_xacro(entry.path, entry.args(None)).encode())
    link = tree.find("link[@name='fl_wheel_link']")
    radius = float(link.find("collision/geometry/sphere").get("radius"))
    width = float(link.find("visual/geometry/cylinder").get("length"))
    mass = float(link.find("inertial/mass").get("value"))
    total = sum(float(m.get("value")) for m in tree.iter("mass"))
    return radius, width, mass, total / 4.0


def rig(soil: str, world=WORLD, **extra: str):
    radius, width, mass, corner = archimede_wheel()
    desc = load_description(asset("urdf", "wheel_rig.urdf.xacro"), {
        "radius": repr(radius), "width": repr(width), "wheel_mass": repr(mass), "normal_load": repr(corner * G),
        "gravity": repr(G), "soil": soil, "world_file": str(world), **extra})
    sim = Simulation(world, RobotSpec("wheel_rig", desc, [0.0, 0.0, radius, 0.0, 0.0, 0.0], optimize=False))
    model = gzsim.Model(sim.robot_entity)
    joints = {n: gzsim.Joint(model.joint_by_name(sim.ecm, n)) for n in ("rig_x", "rig_z", "rig_wheel")}
    system = next(s.system for s in sim.systems if s.module == "soil_contact")
    return sim, joints, system, (radius, width, corner * G)


def q(sim, joint: str) -> float:
    """A rig joint's position (m or rad), read from the engine."""
    return float(sim.robot_skeleton.getJoint(joint).getPosition(0))


def quad_load(p, r, b, h):
    """Wong-Reece load W(h) of a wheel at rest (j = 0: no shear), by quad, independently of the kernel."""
    k = p.k_c / b + p.k_phi
    th1 = math.acos(1.0 - h / r)
    thm = p.c1 * th1

    def sigma(th):
        eq = th if th >= thm else th1 - th * (th1 - thm) / thm
        return k * r ** p.n * max(math.cos(eq) - math.cos(th1), 0.0) ** p.n

    return r * b * sum(quad(lambda t: sigma(t) * math.cos(t), lo, hi, epsrel=1e-10)[0]
                       for lo, hi in ((0.0, thm), (thm, th1)))


def test_engine_contact_is_off_on_the_wheel():
    sim, *_ = rig("eac1a")
    assert not sim.robot_skeleton.getBodyNode("wheel_link").isCollidable()


@pytest.mark.parametrize("soil", ["eac1a", "lava_gravel", "dry_sand"])
def test_loaded_wheel_sinks_to_the_bekker_sinkage_and_stays_put(soil):
    sim, joints, system, (radius, width, weight) = rig(soil)
    skel = sim.robot_skeleton
    wheel = skel.getBodyNode("wheel_link")
    for _ in range(SETTLE):
        sim.step()
    x0, spin0 = q(sim, "rig_x"), q(sim, "rig_wheel")
    link = gzsim.Link(gzsim.Model(sim.robot_entity).link_by_name(sim.ecm, "wheel_link"))
    for _ in range(999):
        sim.step()
    # the system sinks the wheel where gz-sim reports it in the last step's pre_update: the pose of the last
    # step that moved it beyond 1e-6 (eels_gz/gzapi/reported_links.py), not the engine's own
    seen = radius - link.world_pose(sim.ecm).pos().z()
    sim.step()
    h = radius - wheel.getWorldTransform().translation()[2]
    p = load_soil_params(soil)
    # the vertical balance: the quadrature's load at the simulated sinkage is the wheel's weight. Tolerance:
    # 1e-3 of it; the residual is the damped sinkage oscillation, which has decayed by e^-(zeta w t) < 1e-9.
    assert quad_load(p, radius, width, h) == pytest.approx(weight, rel=1e-3)
    assert system.last.sinkage[0] == pytest.approx(seen, abs=1e-9)
    assert seen == pytest.approx(h, abs=2e-6)  # the tolerance, and the last step's motion
    # standing still: no drift along the bin and no spin (m, rad over the last second)
    assert abs(q(sim, "rig_x") - x0) < 1e-9
    assert abs(q(sim, "rig_wheel") - spin0) < 1e-9


def _push(soil, factor, seconds):
    """The rig settled, then its spin held at 0 and its carriage pushed along x with ``factor`` times the locked
    wheel's shear capacity at the settled sinkage; returns (capacity N, travel in the last second, total travel)."""
    sim, joints, system, (radius, width, _) = rig(soil)
    for _ in range(SETTLE):
        sim.step()
    h = float(system.last.sinkage[0])
    packed = pack_soil(load_soil_params(soil), G)
    resistance = -wong_reece(radius, width, h, 0.0, 0.0, 0.0, 0.0, packed, GL_U, GL_W)[1]
    skid = -wheel_forces(radius, width, h, *steady_coefficients(radius, 1.0, 0.0, 0.0), 1.0, 0.0, packed, GL_U, GL_W)[0]
    capacity = skid - resistance
    x0 = q(sim, "rig_x")
    xs = []
    for _ in range(int(seconds * 1000)):
        joints["rig_wheel"].set_velocity(sim.ecm, [0.0])
        joints["rig_x"].set_force(sim.ecm, [factor * capacity])
        sim.step()
        xs.append(q(sim, "rig_x"))
    return capacity, xs[-1] - xs[-1001], xs[-1] - x0


def test_locked_wheel_is_held_against_half_its_capacity():
    capacity, last, total = _push("eac1a", 0.5, 8.0)
    assert capacity > 0.0
    assert 0.0 <= last < 1e-3 and total < 0.1  # m: settled on the shear spring, a few K from where it stood


def test_locked_wheel_slides_under_twice_its_capacity():
    _, last, total = _push("eac1a", 2.0, 2.0)
    assert total > 0.2 and last > 0.1  # m: a slide, not a hold


def test_archimede_rests_on_soil_with_its_weight_on_the_four_wheels():
    """Archimede with soil:=eac1a (its high-grouser set, Setup B): the soil contact replaces the engine's contact
    on the four wheels (their collisions off), which sink until the soil carries the rover's weight; the rover
    then stands still. Tolerance 1e-3 of the weight: the settling transient has decayed."""
    entry = registry.robot("archimede")
    desc = robot_description(entry, xacro_args={"soil": "eac1a", "wheels": "high_grousers", "world_file": str(WORLD)},
                             gazebo=True)
    sim = Simulation(WORLD, RobotSpec("archimede", desc))
    skel = sim.robot_skeleton
    assert not any(skel.getBodyNode(f"{c}_wheel_link").isCollidable() for c in ("fl", "fr", "rl", "rr"))
    system = next(s.system for s in sim.systems if s.module == "soil_contact")
    for _ in range(SETTLE):
        sim.step()
    weight = skel.getMass() * G
    assert float(system.last.force[:, 2].sum()) == pytest.approx(weight, rel=1e-3)
    assert np.all(system.last.sinkage > 0.0) and np.all(system.last.sinkage < 0.05)
    assert np.max(np.abs(skel.getVelocities()[:6])) < 1e-3


@pytest.mark.parametrize("slip", [-0.3, 0.1, 0.5])
def test_driven_wheel_at_commanded_slip_matches_wong_reece(slip):
    """The rig's wheel turned at the paper's omega_1 = 1.2 rad/s and its carriage moved at r omega (1 - s)
    (driving) or r omega / (1 + s) (braking): at steady state the quadrature's load at the simulated sinkage
    is the wheel's weight, and the system's drawbar pull and axle torque are the quadrature's. Tolerance 1e-3
    of the weight (N) and of weight x radius (N m): the shear state has relaxed for 14 patch-passage times
    (e^-14 of the start-up transient), and with it the sinkage, which follows it under eac1a's slip-sinkage
    (time constant about 0.6 s, 6 s here)."""
    soil = "eac1a"
    sim, joints, system, (radius, width, weight) = rig(soil)
    omega = 1.2
    v = radius * omega * (1.0 - slip) if slip >= 0.0 else radius * omega / (1.0 + slip)
    for _ in range(SETTLE):
        sim.step()
    for _ in range(6000):
        joints["rig_wheel"].set_velocity(sim.ecm, [omega])
        joints["rig_x"].set_velocity(sim.ecm, [v])
        sim.step()
    h = float(system.last.sinkage[0])
    # a smooth rim (no lugs) shears at the wheel-grain interface (eac1a: delta / phi = 0.7)
    w_ref, dp_ref, t_ref = quad_wong_reece(load_soil_params(soil), radius, width, h, slip,
                                           tuple(system.contact.wheels[0]))
    fx, _, fz, ty, _ = system.last.local[0]
    assert w_ref == pytest.approx(weight, rel=1e-3)
    assert fx == pytest.approx(dp_ref, abs=1e-3 * weight)
    assert -ty == pytest.approx(t_ref, abs=1e-3 * weight * radius)


# a coarse made-up soil (not a shipped set): the low-grouser wheel's lugs (1.8 mm) stand in 3 mm grains,
# untrapped, with an interface weaker than the soil and Ding's slip-sinkage
COARSE = {"k_c": 0.0, "k_phi": 3.0e6, "n": 1.0, "cohesion": 200.0, "friction_angle_deg": 40.0, "shear_modulus_K": 0.01,
          "c1": 0.4, "c2": 0.3, "density": 1400.0, "slip_sinkage_n1": 0.5, "interface_friction_ratio": 0.7,
          "grain_size": 0.003}


def lugged_rig(tmp_path, wheels: str, grousers: str = "true"):
    """The rig with an Archimede wheel set (its lugs reach the soil system) on the COARSE soil."""
    import yaml

    soil = tmp_path / "coarse.yaml"
    soil.write_text(yaml.safe_dump(COARSE))
    desc = load_description(asset("urdf", "wheel_rig.urdf.xacro"), {
        "wheels": wheels, "normal_load": "16.0", "gravity": repr(G), "soil": str(soil), "world_file": str(WORLD),
        "grouser_terms": grousers})
    sim = Simulation(WORLD, RobotSpec("wheel_rig", desc, [0.0, 0.0, 0.1, 0.0, 0.0, 0.0], optimize=False))
    model = gzsim.Model(sim.robot_entity)
    joints = {n: gzsim.Joint(model.joint_by_name(sim.ecm, n)) for n in ("rig_x", "rig_wheel")}
    system = next(s.system for s in sim.systems if s.module == "soil_contact")
    return sim, joints, system


@pytest.mark.parametrize("wheels, grousers", [("low_grousers", "true"), ("high_grousers", "true"),
                                              ("low_grousers", "false")])
def test_a_lugged_wheel_through_the_system_matches_the_lugged_integrals(tmp_path, wheels, grousers):
    """A lugged Archimede wheel on coarse soil, driven at kernel slip 0.3 (its contact radius, the rim plus
    the lug effect, times omega (1 - s)): at steady state the gz-sim system's load, drawbar pull and torque
    are the lugged integrals by quad (test/soil_truth.py: the interface and the lugs' Rankine thrust,
    slip-sinkage) at the simulated sinkage with the system's wheel record. The low-grouser wheel's lugs are
    untrapped (chi = 0), the high-grouser wheel's part trapped, and grousers off gives the tips' cylinder
    with the soil's strength. Tolerance 1e-3 of the load, as for the smooth wheel."""
    sim, joints, system = lugged_rig(tmp_path, wheels, grousers)
    step = system.contact
    r_c, record = float(step.contact_radius[0]), tuple(step.wheels[0])
    tips = {"low_grousers": 0.0823, "high_grousers": 0.093}[wheels]
    if grousers == "false":
        assert (r_c, record) == (tips, (1.0, 0.0, 0.0))
    else:
        assert record[0] == (0.0 if wheels == "low_grousers" else pytest.approx((0.0125 / 0.003 - 1) / 9))
        assert tips - step.lug_height[0] < r_c < tips and record[2] == pytest.approx(16 / (2 * math.pi))
    omega, slip = 1.2, 0.3
    for _ in range(SETTLE):
        sim.step()
    for _ in range(3000):
        joints["rig_wheel"].set_velocity(sim.ecm, [omega])
        joints["rig_x"].set_velocity(sim.ecm, [r_c * omega * (1.0 - slip)])
        sim.step()
    h = float(system.last.sinkage[0])
    w_ref, dp_ref, t_ref = quad_wong_reece(system.params, r_c, 0.085, h, slip, record)
    fx, _, fz, ty, _ = system.last.local[0]
    assert w_ref == pytest.approx(16.0, rel=1e-3)
    assert fx == pytest.approx(dp_ref, abs=1e-3 * 16.0)
    assert -ty == pytest.approx(t_ref, abs=1e-3 * 16.0 * r_c)


def run_rig_system(soil: str, slip: float):
    """The rig with its drives (plugins_py/wheel_rig.py) at ``slip``, run through settle_s + measure_s."""
    import yaml

    sim, _, soil_system, (radius, width, weight) = rig(soil, slip=repr(slip))
    timing = yaml.safe_load(asset("config", "soil_rig.yaml").read_text())
    for _ in range(int(round((timing["settle_s"] + timing["measure_s"]) / sim.dt)) + 1):
        sim.step()
    system = next(s.system for s in sim.systems if s.module == "wheel_rig")
    return system.metrics(), (radius, width, weight, tuple(soil_system.contact.wheels[0]))


@pytest.mark.parametrize("slip", [-0.3, 0.2, 0.6])
def test_wheel_rig_system_measures_wong_reece(slip):
    """The rig's drives hold the commanded slip at 1.2 rad/s; the efforts they apply (the carriage's force,
    the drive's torque), averaged over the measuring window, are the drawbar pull and torque of the Wong-Reece
    integrals by quadrature at the measured sinkage, and that sinkage carries the normal load. Tolerance: 1e-3
    of the load (N) and of load x radius (N m), as for the directly driven wheel; the PI loops (damping ratios
    0.97 and 1.3, config/soil_rig.yaml) have settled long before the window."""
    metrics, (radius, width, weight, wheel) = run_rig_system("eac1a", slip)
    assert set(metrics) == {"drawbar_pull_N", "sinkage_m", "wheel_torque_Nm", "normal_load_N", "slip",
                            "wheel_radius_m", "wheel_width_m"}
    assert (metrics["slip"], metrics["wheel_radius_m"], metrics["wheel_width_m"]) == (slip, radius, width)
    assert metrics["normal_load_N"] == pytest.approx(weight, rel=1e-12)
    w_ref, dp_ref, t_ref = quad_wong_reece(load_soil_params("eac1a"), radius, width, metrics["sinkage_m"], slip,
                                           wheel)
    assert w_ref == pytest.approx(weight, rel=1e-3)
    assert metrics["drawbar_pull_N"] == pytest.approx(dp_ref, abs=1e-3 * weight)
    assert metrics["wheel_torque_Nm"] == pytest.approx(t_ref, abs=1e-3 * weight * radius)
