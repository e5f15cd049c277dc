"""A run in the host its ``sim.host`` names: the embedded DART host (:func:`eels_gz.run.runner.run_plan`)
or an installed gz-sim 8 (:func:`eels_gz.gazebo.run.run_plan_in_gazebo`, which writes the same run folder).
``eels-gz run``, ``compare`` and ``sweep`` start their runs here, from a configuration (:func:`run`: its
plan resolved once, as the host resolves it) or a plan (:func:`run_plan`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eels_gz.run.plan import RunPlan


def _gazebo(cfg: dict) -> bool:
    return cfg["sim"].get("host", "embedded") == "gazebo"


def run(cfg: dict, out_dir: str | Path, progress=None, **kwargs) -> dict:
    """Run ``cfg`` in its host: its plan resolved once into ``out_dir`` (:func:`eels_gz.run.runner.run`;
    under Gazebo as the run's export, :func:`eels_gz.gazebo.run.run_in_gazebo`), then :func:`run_plan`'s run."""
    if _gazebo(cfg):
        from eels_gz.gazebo.run import run_in_gazebo

        return run_in_gazebo(cfg, out_dir, progress, **kwargs)
    from eels_gz.run.runner import run as run_embedded

    return run_embedded(cfg, out_dir, progress, **kwargs)


def run_plan(plan: RunPlan, out_dir: str | Path, progress=None, **kwargs) -> dict:
    """Run ``plan`` in the host its ``sim.host`` names; the arguments and outcome of
    :func:`eels_gz.run.runner.run_plan`."""
    if _gazebo(plan.cfg):
        from eels_gz.gazebo.run import run_plan_in_gazebo

        return run_plan_in_gazebo(plan, out_dir, progress, **kwargs)
    from eels_gz.run.runner import run_plan as run_embedded

    return run_embedded(plan, out_dir, progress, **kwargs)
