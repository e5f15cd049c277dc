"""The world's contact (LCP) solver, as gz-physics' DART plugin chooses it.

Gazebo reads ``<physics><dart><solver><solver_type>`` (SdfEntityCreator ->
components::PhysicsSolver) and gz-physics' dartsim ``SetWorldSolver`` accepts
``dantzig``/``DantzigBoxedLcpSolver`` and ``pgs``/``PgsBoxedLcpSolver``; without the
element DART keeps its Dantzig solver (with PGS as its fallback).
"""

from __future__ import annotations

import math
import re

import pytest

from eels_gz import config
from eels_gz.errors import ConfigError, SdfError
from eels_gz.gzapi.gzsim import Link, Model, World
from eels_gz.dart.simulation import Simulation

G = 9.80665
MU = 0.1  # both surfaces: DART takes the smaller of the two coefficients
TILT = math.atan(0.3)  # gravity tilted by atan(0.3) > atan(MU): the box slides
BOX = 0.1  # m, cube edge
MASS = 1.0


def world_xml(solver_xml: str = "", tilt: float = 0.0) -> str:
    gx, gz = G * math.sin(tilt), -G * math.cos(tilt)
    i = MASS * BOX * BOX / 6
    return f"""<?xml version="1.0"?>
<sdf version="1.9">
  <world name="lcp">
    <physics name="1ms" type="dart">
      <max_step_size>0.001</max_step_size>
      <dart><collision_detector>ode</collision_detector>{solver_xml}</dart>
    </physics>
    <gravity>{gx} 0 {gz}</gravity>
    <model name="ground">
      <static>true</static>
      <link name="ground_link">
        <collision name="c">
          <geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry>
          <surface><friction><ode><mu>{MU}</mu><mu2>{MU}</mu2></ode></friction></surface>
        </collision>
      </link>
    </model>
    <model name="box">
      <pose>0 0 {BOX / 2} 0 0 0</pose>
      <link name="box_link">
        <inertial><mass>{MASS}</mass>
          <inertia><ixx>{i}</ixx><ixy>0</ixy><ixz>0</ixz><iyy>{i}</iyy><iyz>0</iyz><izz>{i}</izz></inertia>
        </inertial>
        <collision name="c">
          <geometry><box><size>{BOX} {BOX} {BOX}</size></box></geometry>
          <surface><friction><ode><mu>{MU}</mu><mu2>{MU}</mu2></ode></friction></surface>
        </collision>
      </link>
    </model>
  </world>
</sdf>
"""


def write(tmp_path, xml: str):
    path = tmp_path / "lcp.sdf"
    path.write_text(xml)
    return path


def solver_xml(name: str) -> str:
    return f"<solver><solver_type>{name}</solver_type></solver>"


@pytest.mark.parametrize("xml, expected", [
    ("", "DantzigBoxedLcpSolver"),
    (solver_xml("dantzig"), "DantzigBoxedLcpSolver"),
    (solver_xml("DantzigBoxedLcpSolver"), "DantzigBoxedLcpSolver"),
    (solver_xml("pgs"), "PgsBoxedLcpSolver"),
    (solver_xml("PgsBoxedLcpSolver"), "PgsBoxedLcpSolver"),
])
def test_world_chooses_the_lcp_solver(tmp_path, xml, expected):
    sim = Simulation(write(tmp_path, world_xml(xml)))
    cs = sim.world.getConstraintSolver()
    assert cs.getBoxedLcpSolver().getType() == expected
    assert sim.solver_name == ("pgs" if "Pgs" in expected else "dantzig")
    # DART's fallback stays PGS, a separate instance, as gz-physics leaves it
    assert cs.getSecondaryBoxedLcpSolver().getType() == "PgsBoxedLcpSolver"
    assert cs.getSecondaryBoxedLcpSolver() is not cs.getBoxedLcpSolver()


def test_run_setting_beats_the_world(tmp_path):
    sim = Simulation(write(tmp_path, world_xml(solver_xml("dantzig"))), solver="pgs")
    assert sim.world.getConstraintSolver().getBoxedLcpSolver().getType() == "PgsBoxedLcpSolver"


def test_unknown_solver_type_is_named(tmp_path):
    path = write(tmp_path, world_xml(solver_xml("lemke")))
    with pytest.raises(SdfError, match=r"lcp\.sdf:\d+: <solver_type> must be one of dantzig, "
                                       r"DantzigBoxedLcpSolver, pgs, PgsBoxedLcpSolver.*got 'lemke'"):
        Simulation(path)


def test_unknown_solver_setting_is_named():
    with pytest.raises(ConfigError, match=re.escape("--set physics.solver=lemke: 'physics.solver' must be one of "
                                                    "dantzig, pgs, got 'lemke'")):
        config.resolve(sets=["physics.solver=lemke"])


@pytest.mark.parametrize("solver", ["dantzig", "pgs"])
def test_both_solvers_slide_a_box_at_coulombs_rate(tmp_path, solver):
    """A cube on a plane under gravity tilted by theta (an incline) with tan(theta) = 0.3 > mu = 0.1
    slides at a = g (sin theta - mu cos theta) = 1.9 m/s^2, whichever solver. DART's friction is a
    box (pyramid) aligned with the contact frame; sliding along one of its axes the friction is
    exactly mu N, so the only error is the contact's settling into the plane at the start. Over 1 s
    (x = a/2 = 0.95 m) 1 % of the travel bounds it; the cube must also stay flat and on the plane."""
    sim = Simulation(write(tmp_path, world_xml(solver_xml(solver), tilt=TILT)))
    ecm = sim.ecm
    link = Link(Model(World(ecm.world_entity).model_by_name(ecm, "box")).canonical_link(ecm))
    x0 = link.world_pose(ecm).x()
    for _ in range(1000):
        sim.step()
    pose = link.world_pose(ecm)
    a = G * (math.sin(TILT) - MU * math.cos(TILT))
    expected = 0.5 * a * 1.0**2
    assert pose.x() - x0 == pytest.approx(expected, rel=0.01)
    assert abs(pose.z() - BOX / 2) < 1e-3
    assert abs(pose.pitch()) < 1e-3
