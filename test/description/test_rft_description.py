"""EELS descriptions with contact:=rft (issue 34, item 9): every EELS variant with screws goes xacro -> URDF
-> real libsdformat with the RFT contact's Gazebo block; the block names every screw link once with the
variant record's geometry (the core radius included, one source: urdf/eels_variants.yaml), switches the
screws' collisions off, and a missing medium is a clear xacro error."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from lxml import etree

from eels_gz import registry
from eels_gz.description.xacro_loader import process_xacro
from eels_gz.errors import DescriptionError

IGN = shutil.which("ign")
WORLD = str(registry.world_path("soil_bin"))
SCREWED = [n for n, v in registry.eels_variants().items() if v.get("screws")]


def urdf(name: str, **extra: str) -> str:
    entry = registry.robot(name)
    return process_xacro(entry.path, entry.args(2, gazebo="true", contact="rft", world_file=WORLD, **extra))


@pytest.mark.parametrize("name", SCREWED)
def test_the_rft_block_carries_each_screw_with_its_geometry(name):
    v = registry.eels_variants()[name]
    root = etree.fromstring(urdf(name, granular_params="mars_simulant_mms").encode())
    plugins = [p for p in root.iter("plugin") if (p.findtext("module_name") or "").strip() == "rft_contact"]
    assert len(plugins) == 1 and not any((p.findtext("module_name") or "").strip() == "screw_contact"
                                         for p in root.iter("plugin"))
    screws = plugins[0].findall("screw")
    links = {s.get("link") for s in screws}
    assert len(screws) == len(links) == 2 * v["screws"]  # two modules
    for s in screws:
        assert float(s.get("radius")) == v["screw"]["radius"]
        assert float(s.get("root_radius")) == v["screw"]["root_radius"]
        assert float(s.get("lead_angle")) == v["screw"]["lead_angle"]
    assert plugins[0].findtext("granular_params").strip() == "mars_simulant_mms"
    off = {g.get("reference") for g in root.iter("gazebo") if g.find("collision/surface/contact/collide_bitmask")
           is not None}
    assert links <= off


@pytest.mark.skipif(IGN is None, reason="libsdformat's `ign` CLI is not installed (make test installs it)")
@pytest.mark.parametrize("name", SCREWED)
def test_libsdformat_accepts_the_rft_description(name, tmp_path):
    f = tmp_path / f"{name}_rft.urdf"
    f.write_text(urdf(name, granular_params="mars_simulant_mms"))
    res = subprocess.run([IGN, "sdf", "-k", str(f)], capture_output=True, text=True, timeout=60)
    output = res.stdout + res.stderr
    assert res.returncode == 0 and "Valid." in res.stdout, output
    assert not [line for line in output.splitlines() if "Error" in line or "Warning" in line], output


def test_rft_without_a_medium_is_named():
    with pytest.raises(DescriptionError, match="contact rft needs granular_params"):
        urdf("eels_1_0_front_only")
