"""A registry robot's description as the hosts load it: xacro with checked
arguments, optionally replaced by a user-corrected URDF that must be
structurally similar to the baseline (EELS-DARTS §2.1.5)."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from eels_gz.description.similarity import check_similar
from eels_gz.description.validity import check_urdf
from eels_gz.description.xacro_loader import Description, load_description
from eels_gz.errors import ConfigError, DescriptionError

# xacro arguments eels_gz sets itself, and the setting a user changes instead
SET_BY_EELS_GZ = {
    "variant": "robot.name (--robot)",
    "layout": "robot.name (--robot)",
    "n_modules": "robot.n_modules (--n-modules)",
    "gazebo": "the host (always true for a run)",
    "scenario": "scenario.name (--scenario)",
    "contact": "contact.model (--contact)",
    "contact_params": "contact.params",
    "granular_params": "granular.params (--set granular.params=NAME)",
    "world_file": "world (--world)",
    "gravity": "the world's <gravity> (--world)",
    "soil": "soil.params (--set soil.params=NAME)",
    "state_rate": "ros.state_rate",
}
XACRO_NS = "{http://www.ros.org/wiki/xacro}"
log = logging.getLogger(__name__)


_DECLARED: dict[str, tuple[bytes, frozenset[str], tuple[str, ...]]] = {}  # file -> (its bytes, args, includes)


def _declared(file: Path) -> tuple[frozenset[str], tuple[str, ...]]:
    """The ``<xacro:arg>`` names a xacro file declares and the files it includes (their names as given),
    read once per version of the file (:func:`~eels_gz.description.xacro_cache.source_bytes`: the read
    xacro's run shares); OSError or XMLSyntaxError when it cannot be read."""
    from lxml import etree

    from eels_gz.description.xacro_cache import source_bytes

    data = source_bytes(file)
    known = _DECLARED.get(str(file))
    if known is not None and known[0] is data:
        return known[1], known[2]
    root = etree.fromstring(data)
    names = frozenset(el.get("name") for el in root.iter(f"{XACRO_NS}arg") if el.get("name"))
    includes = tuple(el.get("filename") for el in root.iter(f"{XACRO_NS}include")
                     if el.get("filename") and "$" not in el.get("filename"))
    _DECLARED[str(file)] = (data, names, includes)
    return names, includes


def xacro_arg_names(path: str | Path) -> set[str]:
    """The ``<xacro:arg name=...>`` a xacro file declares, with those of the files it includes."""
    from lxml import etree

    names: set[str] = set()
    todo, seen = [Path(path)], set()
    while todo:
        file = todo.pop()
        if file in seen or not file.is_file():
            continue
        seen.add(file)
        try:
            declared, includes = _declared(file)
        except (OSError, etree.XMLSyntaxError):
            continue  # xacro reports it with its own message
        names |= declared
        todo += [file.parent / name for name in includes]
    return names


def check_xacro_args(entry, args: dict, where: str, reserved: dict[str, str] | None = None) -> None:
    """Refuse xacro arguments the robot's xacro does not declare, or that eels_gz sets from another
    setting (``reserved``, default SET_BY_EELS_GZ), naming the key and what to use instead."""
    reserved = SET_BY_EELS_GZ if reserved is None else reserved
    declared = xacro_arg_names(entry.path)
    free = sorted(declared - set(reserved))
    for key in args:
        if key in reserved:
            raise ConfigError(f"{where}: '{key}' is set by eels_gz from {reserved[key]}; set that instead")
        if key not in declared:
            raise ConfigError(f"{where}: urdf/{entry.xacro} has no xacro argument '{key}'; the arguments "
                              f"a user may set for '{entry.name}' are: {', '.join(free) or 'none'}")


def _check_values(desc: Description) -> None:
    """Every geometry, inertia, limit and origin physically valid (eels_gz.description.validity):
    DescriptionError naming the file and element; a warning for each implausible value."""
    for warning in check_urdf(desc.model.element, desc.source):
        log.warning("%s", warning)


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
        _check_values(baseline)
        return baseline
    path = Path(urdf_file)
    if not path.is_file():
        raise DescriptionError(f"user description '{path}' does not exist")
    user = load_description(path, args)
    check_similar(baseline.urdf, user.urdf, str(path))
    _check_values(user)
    return dataclasses.replace(
        user,
        gazebo=user.gazebo or baseline.gazebo,
        references=user.references or baseline.references,
    )
