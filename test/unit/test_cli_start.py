"""The CLI's start reads nothing it does not need: ``run --help`` still lists every robot, world and
scenario of the registry, read when the help is shown rather than at every command's import."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from eels_gz import registry
from eels_gz.cli import main


def test_run_help_lists_the_registry():
    out = CliRunner().invoke(main, ["run", "--help"])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    for name in [*registry.ROBOTS, *registry.WORLDS, *registry.scenarios()]:
        assert name in text, name


def test_importing_the_cli_does_not_scan_the_scenarios():
    code = ("import eels_gz.registry as r; seen = []; f = r.scenarios; "
            "r.scenarios = lambda *a, **k: (seen.append(1), f(*a, **k))[1]; "
            "import eels_gz.cli; print(len(seen))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0"
