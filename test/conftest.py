"""Shared fixtures of the eels_gz test suite.

The package is pip-installed (editable) in CI; in a bare checkout the repo
root is put on sys.path so that ``eels_gz`` imports. Nothing here is a
package named ``tests`` (the dartpy wheel installs one) and this folder has
no ``__init__.py`` (``test`` is also the name of CPython's own test package).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run ("repeatable", the
# default, so a CI result does not depend on the day's random seed); set
# HYPOTHESIS_PROFILE=explore to search with fresh random examples. A failure
# found while exploring is kept as an @example next to its test.
settings.register_profile("repeatable", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

REPO_ROOT = Path(__file__).resolve().parent.parent
# a run server the developer left running (eels-gz serve) is not used by the suite's `eels-gz run`
# processes; test/faults/test_run_server.py starts its own
os.environ.setdefault("EELS_GZ_SERVER", "off")

if importlib.util.find_spec("eels_gz") is None:  # bare checkout, not installed
    sys.path.insert(0, str(REPO_ROOT))


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    """A folder on GZ_SIM_SYSTEM_PLUGIN_PATH; ``plugin_dir(name, source)`` writes
    ``name.py`` into it. Modules written this way are dropped from
    ``sys.modules`` afterwards so that tests reusing a module name do not see
    each other's code, and ``sys.path`` (which the system loader extends) is
    restored."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    monkeypatch.setenv("GZ_SIM_SYSTEM_PLUGIN_PATH", str(folder))
    monkeypatch.setattr(sys, "path", list(sys.path))
    written: list[str] = []

    def write(name: str, source: str) -> Path:
        path = folder / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        sys.modules.pop(name, None)
        written.append(name)
        return path

    write.folder = folder
    yield write
    for name in written:
        sys.modules.pop(name, None)


def python_plugin(module: str, body: str = "") -> str:
    """The SDF/URDF ``<plugin>`` element that loads a gz-sim Python system."""
    return (
        '<plugin filename="gz-sim-python-system-loader-system" name="gz::sim::systems::PythonSystemLoader">'
        f"<module_name>{module}</module_name>{body}</plugin>"
    )


@pytest.fixture
def make_python_plugin():
    return python_plugin
