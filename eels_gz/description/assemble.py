"""A registry robot's description as the hosts load it: xacro with checked
arguments, optionally replaced by a user-corrected URDF that must be
structurally similar to the baseline (EELS-DARTS §2.1.5)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from eels_gz.description.similarity import check_similar
from eels_gz.description.xacro_loader import Description, load_description
from eels_gz.errors import DescriptionError


def robot_description(entry, *, n_modules=None, xacro_args: dict | None = None, urdf_file: str | Path | None = None,
                      gazebo: bool = True, scenario: str = "") -> Description:
    """Process ``entry``'s xacro (a registry ``RobotEntry``) and apply a user URDF if given.

    ``urdf_file`` (``.urdf`` or ``.xacro``, processed with the same
    arguments) replaces the baseline only if it has the same tree, joint
    names and joint types; masses, axes, origins, limits and meshes may
    differ. Without ``<gazebo>`` blocks of its own it keeps the baseline's
    plugins and sensors.
    """
    args = entry.args(n_modules, **{str(k): str(v) for k, v in (xacro_args or {}).items()})
    args["gazebo"] = "true" if gazebo else "false"
    args["scenario"] = scenario
    baseline = load_description(entry.path, args)
    if urdf_file is None:
        return baseline
    path = Path(urdf_file)
    if not path.is_file():
        raise DescriptionError(f"user description '{path}' does not exist")
    user = load_description(path, args)
    check_similar(baseline.urdf, user.urdf, str(path))
    return dataclasses.replace(
        user,
        gazebo=user.gazebo or baseline.gazebo,
        references=user.references or baseline.references,
    )
