"""3D replay of run folders: ``eels-gz view RUN_DIR [--out FILE.html]`` (see docs/viewer.md)."""

from eels_gz.viewer.html import write_replay
from eels_gz.viewer.replay import load_run

__all__ = ["load_run", "write_replay"]
