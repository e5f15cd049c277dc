"""Physical validity of the values of a robot description (URDF) and of a world (SDF): the one check
both readers apply, so that no invalid value reaches the engine, a run or an exported world.

A value outside its valid range (not finite, not positive where it must be, a lower limit above its
upper) is an error naming the file, the element and what was expected; a valid value outside the
plausible range of a robot or a world is a warning that names that range. The ranges (SI units):

==========================================  ========================  =============================
value                                       valid (else an error)     plausible (else a warning)
==========================================  ========================  =============================
a robot's shape size (radius, length, box)  finite, > 0, <= 1e6 m     1e-4 to 100 m
a world's shape size                        finite, > 0, <= 1e6 m     (none)
a mesh's scale factor                       finite, != 0, |s| <= 1e6  (none)
a link's mass                               finite, > 0, <= 1e9 kg    1e-4 to 1e4 kg
a link's inertia                            finite, positive semi-definite, principal moments
                                            obeying the triangle inequality
a pose, an origin, an axis                  finite (an axis not zero)
a joint's limits                            finite, lower <= upper    (none)
a joint's effort, velocity, damping,        finite, >= 0              (none)
friction
a world's gravity                           finite, |g| <= 1e4 m/s^2  |g| <= 30 m/s^2 (Jupiter: 24.8)
==========================================  ========================  =============================

(``describe`` prints a robot's values; docs/robots.md and docs/worlds.md list these ranges.) The
robot model of the one-plan issue will hold these checks where it reads the description; they are
kept here, in a module of their own, so that they can move with it.
"""

from __future__ import annotations

import math

import numpy as np
from lxml import etree

from eels_gz.errors import DescriptionError
from eels_gz.ranges import InvalidValue, Range, check_value

ROBOT_LENGTH = Range(0.0, 1e6, "m", low_open=True, plausible=(1e-4, 100.0))
WORLD_LENGTH = Range(0.0, 1e6, "m", low_open=True)
MASS = Range(0.0, 1e9, "kg", low_open=True, plausible=(1e-4, 1e4))
NON_NEGATIVE = Range(0.0, math.inf, "")
GRAVITY = Range(0.0, 1e4, "m/s^2", plausible=(0.0, 30.0))  # of the vector's magnitude
SCALE_MAX = 1e6


def check_finite(values, name: str) -> None:
    """InvalidValue unless every number of ``values`` is finite."""
    if not all(math.isfinite(v) for v in values):
        raise InvalidValue(f"{name} must be finite numbers, got {' '.join(f'{v:g}' for v in values)}")


def check_scale(values, name: str = "scale") -> None:
    check_finite(values, name)
    if any(v == 0 or abs(v) > SCALE_MAX for v in values):
        raise InvalidValue(f"{name} factors must be non-zero and at most {SCALE_MAX:g} in size, got "
                           f"{' '.join(f'{v:g}' for v in values)}")


def check_inertia(matrix: np.ndarray, name: str = "inertia") -> None:
    """InvalidValue unless the 3x3 ``matrix`` (kg m^2) is finite, symmetric positive semi-definite
    and its principal moments obey the triangle inequality (a rigid body's, within round-off)."""
    m = np.asarray(matrix, dtype=float)
    if not np.all(np.isfinite(m)):
        raise InvalidValue(f"{name} must be finite, got {m.round(12).tolist()}")
    moments = np.linalg.eigvalsh(0.5 * (m + m.T))
    tol = 1e-9 * max(float(np.abs(moments).max()), 1e-300)
    if moments.min() < -tol:
        raise InvalidValue(f"{name} must be positive semi-definite, its principal moments are "
                           f"{', '.join(f'{v:g}' for v in moments)} kg m^2")
    a, b, c = moments
    if c > a + b + tol:
        raise InvalidValue(f"{name}'s principal moments {a:g}, {b:g}, {c:g} kg m^2 break the triangle inequality "
                           "(the largest must not exceed the sum of the other two): no rigid body has them")


def check_gravity(g, name: str = "gravity") -> str | None:
    """InvalidValue unless gravity ``g`` (3,) m/s^2 is finite and of a valid magnitude; a warning when
    its magnitude is implausible."""
    check_finite(g, name)
    return check_value(float(np.linalg.norm(np.asarray(g, dtype=float))), GRAVITY, f"{name}'s magnitude")


# --- a URDF -----------------------------------------------------------------------------------------------


def _floats(node, attr: str, default: str | None = None) -> tuple[float, ...] | None:
    text = node.get(attr, default)
    if text is None:
        return None
    try:
        return tuple(float(v) for v in text.split())
    except ValueError:
        raise InvalidValue(f"{attr} expects numbers, got '{text}'") from None


def _finite_attrs(node, attrs: tuple[str, ...]) -> None:
    """Each of ``attrs`` of ``node`` (when given) finite numbers."""
    if node is not None:
        for attr in attrs:
            values = _floats(node, attr)
            if values is not None:
                check_finite(values, f"<{node.tag} {attr}>")


def _origin(node, name: str) -> None:
    _finite_attrs(node.find("origin"), ("xyz", "rpy"))


def _geometry(node, warnings: list[str]) -> None:
    geometry = node.find("geometry")
    if geometry is None:
        return
    for shape in geometry:
        if not isinstance(shape.tag, str):
            continue
        if shape.tag in ("cylinder", "capsule"):
            for attr in ("radius", "length"):
                _length(shape, attr, warnings)
        elif shape.tag == "sphere":
            _length(shape, "radius", warnings)
        elif shape.tag == "box":
            size = _floats(shape, "size", "") or ()
            if len(size) != 3:
                raise InvalidValue(f"<box size> expects 3 numbers, got '{shape.get('size', '')}'")
            for v in size:
                note = check_value(v, ROBOT_LENGTH, "<box size>")
                if note:
                    warnings.append(note)
        elif shape.tag == "mesh":
            scale = _floats(shape, "scale")
            if scale is not None:
                check_scale(scale, "<mesh scale>")


def _length(shape, attr: str, warnings: list[str]) -> None:
    values = _floats(shape, attr)
    if values is None:
        return
    if len(values) != 1:
        raise InvalidValue(f"<{shape.tag} {attr}> expects one number, got '{shape.get(attr)}'")
    note = check_value(values[0], ROBOT_LENGTH, f"<{shape.tag} {attr}>")
    if note:
        warnings.append(note)


def _inertial(link, warnings: list[str]) -> None:
    inertial = link.find("inertial")
    if inertial is None:
        return
    _origin(inertial, "inertial")
    mass = inertial.find("mass")
    if mass is not None:
        (value,) = _floats(mass, "value", "nan") or (math.nan,)
        note = check_value(value, MASS, "<mass value>")
        if note:
            warnings.append(note)
    inertia = inertial.find("inertia")
    if inertia is not None:
        v = {k: (_floats(inertia, k, "0") or (0.0,))[0] for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        for key, value in v.items():
            if not math.isfinite(value):
                raise InvalidValue(f"<inertia {key}> must be a finite number, got {value:g}")
        check_inertia(np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]],
                                [v["ixz"], v["iyz"], v["izz"]]]), "<inertia>")


def _joint(joint) -> None:
    _origin(joint, "joint")
    axis = joint.find("axis")
    if axis is not None:
        xyz = _floats(axis, "xyz", "1 0 0")
        check_finite(xyz, "<axis xyz>")
        if not any(xyz):
            raise InvalidValue("<axis xyz> must not be zero")
    limit = joint.find("limit")
    if limit is not None:
        values = {}
        for attr in ("lower", "upper", "effort", "velocity"):
            got = _floats(limit, attr)
            if got is None:
                continue
            if len(got) != 1 or not math.isfinite(got[0]):
                raise InvalidValue(f"<limit {attr}> must be a finite number, got '{limit.get(attr)}'")
            values[attr] = got[0]
        for attr in ("effort", "velocity"):
            if values.get(attr, 0.0) < 0:
                raise InvalidValue(f"<limit {attr}> must be >= 0, got {values[attr]:g}")
        if joint.get("type") != "continuous" and values.get("lower", 0.0) > values.get("upper", 0.0):
            raise InvalidValue(f"<limit lower> must be <= upper, got lower {values.get('lower', 0.0):g} > upper "
                               f"{values.get('upper', 0.0):g}")
    dynamics = joint.find("dynamics")
    if dynamics is not None:
        for attr in ("damping", "friction"):
            got = _floats(dynamics, attr)
            if got is not None:
                check_value(got[0], NON_NEGATIVE, f"<dynamics {attr}>")
    _finite_attrs(joint.find("mimic"), ("multiplier", "offset"))


def check_urdf(root: etree._Element, source: str) -> list[str]:
    """Check every geometry, inertia, limit and origin of a URDF's ``<robot>`` element (a robot
    model's :attr:`~eels_gz.description.model.RobotModel.element`) from ``source`` (its file);
    DescriptionError naming the file, the link or joint, the element and what was expected; returns
    the warnings on implausible values (each naming its link)."""
    warnings: list[str] = []
    for node in root:
        if node.tag not in ("link", "joint"):
            continue
        name = node.get("name", "?")
        try:
            if node.tag == "link":
                notes: list[str] = []
                _inertial(node, notes)
                for part in ("collision", "visual"):
                    for element in node.findall(part):
                        _origin(element, part)
                        _geometry(element, notes if part == "collision" else [])
                warnings += [f"{source}: link '{name}': {n}" for n in dict.fromkeys(notes)]
            else:
                _joint(node)
        except InvalidValue as exc:
            where = node.xpath("ancestor-or-self::*")  # for the element's path in the message
            raise DescriptionError(f"{source}: {node.tag} '{name}' ({'/'.join(e.tag for e in where)}): {exc}") \
                from None
    return warnings
