"""Messages say what is wrong, not something else (issue 45, class 7), and a plugin's failure is said
once, in the summary too, with its documented status and exit code."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from faults_cli import SMALL, cli

REPO = Path(__file__).resolve().parents[2]
SHORT = ("--duration", "0.05")
LOADER = 'filename="gz-sim-python-system-loader-system" name="gz::sim::systems::PythonSystemLoader"'
BOOM = '''
class Boom:
    def configure(self, entity, sdf, ecm, event_mgr):
        pass

    def pre_update(self, info, ecm):
        if info.iterations >= 3:
            raise RuntimeError("boom at step 3")


def get_system():
    return Boom()
'''


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_symlinked_output_folder_is_called_a_link_not_a_file(tmp_path, command):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    if command == "run":
        res = cli("run", *SMALL, *SHORT, "--out", link)
    else:
        spec = tmp_path / "spec.yaml"
        spec.write_text(yaml.safe_dump({"base": {"duration": 0.02}, "samples": 1, "seed": 1,
                                        "dispersions": {"physics.dt": {"grid": [0.001]}},
                                        "metrics": ["real_time_factor"]}))
        res = cli("sweep", spec, "--out", link)
    assert res.exit_code == 2, res.output
    assert "symbolic link" in res.output and "is a file" not in res.output, res.output
    assert link.is_symlink() and not any(real.iterdir())


def test_a_world_that_is_a_folder_is_called_a_folder(tmp_path):
    res = cli("run", *SMALL, *SHORT, "--world", REPO / "worlds", "--out", tmp_path / "r")
    assert res.exit_code == 2 and "is a folder, not an SDF world file" in res.output, res.output
    assert "does not exist" not in res.output


def test_a_scenario_for_another_robot_is_said_so_not_a_soil_the_user_never_set(tmp_path):
    res = cli("run", "--robot", "eels_1_5", "--scenario", "wheel_rig", *SHORT, "--out", tmp_path / "r")
    assert res.exit_code == 2 and "wheel_rig" in res.output, res.output
    assert "leave soil.params" not in res.output


def boom_world(tmp_path: Path, plugin_dir) -> Path:
    plugin_dir("boom", BOOM)
    text = (REPO / "worlds" / "ice_plane.sdf").read_text()
    marker = '<plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>'
    path = tmp_path / "boom.sdf"
    path.write_text(text.replace(marker, marker + f"<plugin {LOADER}><module_name>boom</module_name></plugin>"))
    return path


@pytest.mark.parametrize("command, result", [("run", "summary.json"), ("compare", "compare.json")])
def test_a_plugin_failure_is_said_once_and_in_the_result(tmp_path, plugin_dir, command, result):
    """A run's summary.json had message null; compare wrote no compare.json at all and said the error twice."""
    out = tmp_path / "o"
    res = cli(command, *SMALL, *SHORT, "--world", boom_world(tmp_path, plugin_dir), "--out", out)
    assert res.exit_code == 3, res.output
    assert res.output.count("boom at step 3") == 1, res.output
    written = json.loads((out / result).read_text())
    assert written["status"] == "plugin_error" and "boom at step 3" in (written.get("message") or ""), written


def test_every_status_a_run_writes_is_in_the_status_table_with_its_exit_code():
    """docs/running.md's table of how a run ends names every status the runner sets, and plugin_error
    with exit code 3 (exit_for: a plugin failure exits 3)."""
    source = (REPO / "eels_gz" / "run" / "runner.py").read_text()
    statuses = set(re.findall(r'self\.status(?:, self\.\w+)*\s*=\s*"(\w+)"', source)) - {"ok"}
    page = (REPO / "docs" / "running.md").read_text()
    table = page[page.index("## How a run ends"):page.index("## Output folders")]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \|.*\| ([^|]+) \|$", table, re.MULTILINE)}
    missing = statuses - set(rows)
    assert not missing, f"statuses without a row in docs/running.md: {sorted(missing)}"
    assert rows["plugin_error"].strip() == "3", rows
