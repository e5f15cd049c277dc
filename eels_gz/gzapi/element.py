"""The part of sdformat 14's Python ``Element`` that plugins use, over lxml.

Plugins read their parameters with ``get_double``, ``get_string``,
``has_element``, ``find_element`` and so on, exactly as with sdformat's
bindings in Gazebo, and with their semantics (include/sdf/Element.hh,
python/src/sdf/pyElement.cc):

- ``get_T(key)`` looks for an attribute named ``key`` first, then for a child
  element, and gives ``T()`` (0, 0.0, "", False, a zero vector or pose) when
  there is neither: a misspelt parameter is silently zero. Plugins therefore
  read required parameters with the two-argument form;
- ``get_T(key, default)`` (positional arguments only) returns ``(value,
  found)``; ``(default, False)`` for a missing key;
- a value that cannot be read as ``T`` raises (an SdfError naming the file
  and line; sdformat raises its SDFErrorsException);
- the getter names are sdformat's: ``get_vector3`` and ``get_pose`` give
  gz.math ``Vector3d`` and ``Pose3d``;
- ``get_next_element(name)`` and ``to_string(prefix)`` take their argument
  (the bindings do not expose the C++ defaults).
"""

from __future__ import annotations

from typing import Any, Callable

from lxml import etree

from eels_gz.errors import SdfError

def _parse_bool(text: str) -> bool:
    t = text.strip().lower()
    if t in ("true", "1"):
        return True
    if t in ("false", "0"):
        return False
    raise ValueError(f"expected true/false/1/0, got '{text}'")


def _floats(n: int) -> Callable[[str], list[float]]:
    def parse(text: str) -> list[float]:
        values = [float(v) for v in text.split()]
        if len(values) != n:
            raise ValueError(f"expected {n} numbers, got '{text.strip()}'")
        return values

    return parse


class Element:
    """A read-only view of one XML element with sdformat's getter names."""

    def __init__(self, node: etree._Element, file: str):
        self._node = node
        self._file = file

    # --- identity -------------------------------------------------------
    def get_name(self) -> str:
        return etree.QName(self._node).localname

    def file_path(self) -> str:
        return self._file

    def line_number(self) -> int | None:
        return self._node.sourceline

    def xml_path(self) -> str:
        return self._node.getroottree().getpath(self._node)

    def to_string(self, prefix: str) -> str:
        return prefix + etree.tostring(self._node, encoding="unicode")

    # --- tree -----------------------------------------------------------
    def _children(self, name: str = ""):
        for child in self._node:
            if not isinstance(child.tag, str):
                continue  # comments and processing instructions
            if not name or etree.QName(child).localname == name:
                yield child

    def has_element(self, name: str, /) -> bool:
        return next(self._children(name), None) is not None

    def find_element(self, name: str, /) -> Element | None:
        child = next(self._children(name), None)
        return None if child is None else Element(child, self._file)

    def get_first_element(self) -> Element | None:
        return self.find_element("")

    def get_next_element(self, name: str, /) -> Element | None:
        sib = self._node.getnext()
        while sib is not None:
            if isinstance(sib.tag, str) and (not name or etree.QName(sib).localname == name):
                return Element(sib, self._file)
            sib = sib.getnext()
        return None

    def get_parent(self) -> Element | None:
        parent = self._node.getparent()
        return None if parent is None else Element(parent, self._file)

    def has_attribute(self, key: str, /) -> bool:
        return key in self._node.attrib

    # --- values ---------------------------------------------------------
    def _raw(self, key: str) -> str | None:
        if not key:
            return self._node.text or ""
        if key in self._node.attrib:
            return self._node.attrib[key]
        child = next(self._children(key), None)
        if child is None:
            return None
        return child.text or ""

    def _get(self, key: str, parse: Callable[[str], Any], kind: str, empty: Callable[[], Any], default: tuple):
        if len(default) > 1:
            raise TypeError(f"get_{kind}() takes a key and at most one default (given {1 + len(default)} arguments)")
        raw = self._raw(key)
        if raw is None:
            return (default[0], False) if default else empty()  # sdformat: T() for a missing key
        try:
            value = parse(raw)
        except ValueError as exc:
            raise SdfError(
                f"<{self.get_name()}> '{key}': cannot read a {kind}: {exc}", self._file, self._node.sourceline
            ) from None
        return (value, True) if default else value

    # sdformat binds two overloads: get_T(key="") and get_T(key, default) (positional only)
    def get_double(self, key: str = "", *default):
        return self._get(key, float, "double", float, default)

    def get_float(self, key: str = "", *default):
        return self._get(key, float, "float", float, default)

    def get_int(self, key: str = "", *default):
        return self._get(key, int, "int", int, default)

    def get_unsigned_int(self, key: str = "", *default):
        def parse(text: str) -> int:
            v = int(text)
            if v < 0:
                raise ValueError(f"expected a non-negative integer, got {v}")
            return v

        return self._get(key, parse, "unsigned_int", int, default)

    def get_bool(self, key: str = "", *default):
        return self._get(key, _parse_bool, "bool", bool, default)

    def get_string(self, key: str = "", *default):
        return self._get(key, lambda t: t.strip(), "string", str, default)

    def get_vector3(self, key: str = "", *default):
        from eels_gz.gzapi.gzmath import Vector3d

        return self._get(key, lambda t: Vector3d(*_floats(3)(t)), "vector3", Vector3d, default)

    def get_pose(self, key: str = "", *default):
        from eels_gz.gzapi.gzmath import Pose3d

        return self._get(key, lambda t: Pose3d(*_floats(6)(t)), "pose", Pose3d, default)
