"""A terrain's soil (issue 34, "DEM worlds with a soil set"): ``eels-gz world ... --soil NAME`` records a
soil set of config/soil/ in the terrain model's terrain.json, and a wheeled robot's run on that world
takes it for its soil contact unless the run (``soil.params``) names another; a robot without soil
contact runs there as anywhere. A name that is not a soil set is refused before any terrain is made, and
a world whose terrains record different soils is refused naming them."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from eels_gz.cli import main
from eels_gz.errors import TerrainError
from eels_gz.paths import asset
from eels_gz.terrain.world_terrain import world_soil

EXAMPLE_DEM = asset("examples", "crater.png")


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def soil_dem(tmp_path_factory):
    out = tmp_path_factory.mktemp("soil_dem")
    res = cli("world", "dem", EXAMPLE_DEM, "--size", 20, 20, "--height-range", 2.0, "--name", "crater_soil",
              "--soil", "eac1a", "--out", out)
    assert res.exit_code == 0, res.output
    return out


def run_summary(tmp_path, monkeypatch, soil_dem, *args):
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(soil_dem / "models"))
    out = tmp_path / "run"
    res = cli("run", "--world", soil_dem / "worlds" / "crater_soil.sdf", "--duration", "0.2", "--set", "log.mcap=false",
              "--set", "log.plot=false", "--set", "sensors.enabled=false", *args, "--out", out)
    assert res.exit_code == 0, res.output
    return json.loads((out / "summary.json").read_text())


def test_the_dem_records_its_soil(soil_dem, monkeypatch):
    meta = json.loads((soil_dem / "models" / "crater_soil" / "terrain.json").read_text())
    assert meta["soil"] == "eac1a"
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(soil_dem / "models"))
    assert world_soil(soil_dem / "worlds" / "crater_soil.sdf") == "eac1a"
    assert world_soil(asset("worlds", "mars_dem.sdf")) is None


def test_a_rover_takes_the_worlds_soil_unless_the_run_names_one(tmp_path, monkeypatch, soil_dem):
    from eels_gz.soil.params import load_soil_params

    summary = run_summary(tmp_path, monkeypatch, soil_dem, "--robot", "archimede")
    resolved = summary["settings"]["resolved"]
    assert summary["settings"]["config"]["soil"]["params"] == "eac1a" and "soil_contact" in resolved["systems"]
    assert resolved["soil_params"] == load_soil_params("eac1a").to_dict()
    other = run_summary(tmp_path / "b", monkeypatch, soil_dem, "--robot", "archimede", "--set",
                        "soil.params=lava_gravel")
    assert other["settings"]["resolved"]["soil_params"] == load_soil_params("lava_gravel").to_dict()
    snake = run_summary(tmp_path / "c", monkeypatch, soil_dem, "--robot", "eels_1_0_front_only")
    assert "soil_params" not in snake["settings"]["resolved"] and snake["settings"]["config"]["soil"]["params"] is None


def test_an_unknown_soil_is_refused_before_anything_is_made(tmp_path):
    res = cli("world", "primitive", "slope", "--soil", "mud", "--out", tmp_path / "out")
    assert res.exit_code == 2
    assert "unknown soil parameter set 'mud'" in res.output and "eac1a" in res.output
    assert not (tmp_path / "out").exists()


def test_two_terrains_with_different_soils_are_named(tmp_path, monkeypatch, soil_dem):
    models = tmp_path / "models"
    shutil.copytree(soil_dem / "models" / "crater_soil", models / "crater_a")
    shutil.copytree(soil_dem / "models" / "crater_soil", models / "crater_b")
    meta = json.loads((models / "crater_b" / "terrain.json").read_text())
    (models / "crater_b" / "terrain.json").write_text(json.dumps({**meta, "soil": "lava_gravel"}))
    world = tmp_path / "two.sdf"
    world.write_text('<?xml version="1.0"?><sdf version="1.9"><world name="two">'
                     '<include><uri>model://crater_a</uri></include>'
                     '<include><uri>model://crater_b</uri><pose>30 0 0 0 0 0</pose></include></world></sdf>')
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(models))
    with pytest.raises(TerrainError, match=r"different soils \(model://crater_a: eac1a, model://crater_b: lava_gravel\)"):
        world_soil(world)
