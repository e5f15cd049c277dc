"""A resolved run in the host its ``sim.host`` names: the embedded DART host (:func:`eels_gz.run.runner.run`)
or an installed gz-sim 8 (:func:`eels_gz.gazebo.run.run_in_gazebo`, which writes the same run folder).
``eels-gz run``, ``compare`` and ``sweep`` start their runs here."""

from __future__ import annotations

from pathlib import Path


def run(cfg: dict, out_dir: str | Path, progress=None, **kwargs) -> dict:
    """Run ``cfg`` in its host; the arguments and outcome of :func:`eels_gz.run.runner.run`."""
    if cfg["sim"].get("host", "embedded") == "gazebo":
        from eels_gz.gazebo.run import run_in_gazebo

        return run_in_gazebo(cfg, out_dir, progress, **kwargs)
    from eels_gz.run.runner import run as run_embedded

    return run_embedded(cfg, out_dir, progress, **kwargs)
