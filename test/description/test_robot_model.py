"""The robot model (eels_gz.description.model): one reading of a URDF that a description carries and
the optimizer takes and returns; its mass, kind and mimic pairs as the URDF gives them."""

from __future__ import annotations

import dataclasses

import pytest
from lxml import etree

from eels_gz import registry
from eels_gz.description.model import RobotModel
from eels_gz.description.optimizer import optimize_description
from eels_gz.description.xacro_loader import load_description
from eels_gz.errors import DescriptionError


def _description(robot: str):
    entry = registry.robot(robot)
    return load_description(entry.path, entry.args(None))


@pytest.mark.parametrize("robot, kind", [("eels_1_0_alternating", "snake"), ("archimede", "rover")])
def test_the_model_reads_mass_kind_and_mimics_from_the_urdf(robot, kind):
    desc = _description(robot)
    model = desc.model
    root = etree.fromstring(desc.urdf.encode())
    assert model.total_mass == pytest.approx(sum(float(m.get("value")) for m in root.iter("mass")), rel=1e-15)
    assert model.kind == kind and model.is_rover == (kind == "rover")
    mimics = {j.get("name"): j.find("mimic") for j in root.iter("joint") if j.find("mimic") is not None}
    assert {m.follower: (m.leader, m.multiplier) for m in model.mimics} == {
        name: (el.get("joint"), float(el.get("multiplier", "1"))) for name, el in mimics.items()}
    assert mimics or kind == "rover"  # EELS 1.0 alternating couples its counter-rotating screw pairs


def test_a_fixed_base_rig_is_a_rig():
    urdf = ('<robot name="r"><link name="world"/><link name="a"/>'
            '<joint name="j" type="prismatic"><parent link="world"/><child link="a"/></joint></robot>')
    assert RobotModel.from_urdf(urdf, "rig.urdf").kind == "rig"


def test_the_optimizer_returns_the_model_of_its_own_tree():
    desc = _description("eels_1_0_front_only")
    out, result = optimize_description(desc)
    assert out.model is result.model and out.model.urdf == out.urdf
    assert out.model.total_mass == pytest.approx(desc.model.total_mass, rel=1e-12)
    assert desc.model.urdf == desc.urdf  # the description's own model is not changed by the optimizer
    assert set(out.model.links) <= set(desc.model.links) == set(result.frames)


def test_a_description_whose_urdf_is_replaced_gets_the_model_of_the_new_text():
    desc = _description("eels_1_0_front_only")
    assert "base_link" in desc.model.links
    other = dataclasses.replace(desc, urdf='<robot name="x"><link name="only"/></robot>')
    assert other.model.links == ("only",)


def test_a_malformed_tree_is_refused_naming_the_source():
    with pytest.raises(DescriptionError, match="my.urdf: the URDF has 2 root links"):
        RobotModel.from_urdf('<robot name="r"><link name="a"/><link name="b"/></robot>', "my.urdf")
