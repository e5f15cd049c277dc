"""The part of sdformat's Python ``Element`` that plugins use, over lxml.

Plugins read their parameters with ``get_double("key")``, ``get_string``,
``has_element``, ``find_element`` and so on, exactly as with sdformat's
bindings in Gazebo. As in sdformat, ``get_T(key)`` looks for an attribute
named ``key`` first, then for a child element; ``get_T(key, default)``
returns ``(value, found)``.
"""

from __future__ import annotations

from typing import Any, Callable

from lxml import etree

from eels_gz.errors import SdfError

_MISSING = object()


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

    def to_string(self, prefix: str = "") -> str:
        return prefix + etree.tostring(self._node, encoding="unicode")

    # --- tree -----------------------------------------------------------
    def _children(self, name: str = ""):
        for child in self._node:
            if not isinstance(child.tag, str):
                continue  # comments and processing instructions
            if not name or etree.QName(child).localname == name:
                yield child

    def has_element(self, name: str) -> bool:
        return next(self._children(name), None) is not None

    def find_element(self, name: str) -> Element | None:
        child = next(self._children(name), None)
        return None if child is None else Element(child, self._file)

    def get_first_element(self) -> Element | None:
        return self.find_element("")

    def get_next_element(self, name: str = "") -> Element | None:
        sib = self._node.getnext()
        while sib is not None:
            if isinstance(sib.tag, str) and (not name or etree.QName(sib).localname == name):
                return Element(sib, self._file)
            sib = sib.getnext()
        return None

    def get_parent(self) -> Element | None:
        parent = self._node.getparent()
        return None if parent is None else Element(parent, self._file)

    def has_attribute(self, key: str) -> bool:
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

    def _get(self, key: str, parse: Callable[[str], Any], kind: str, default: Any = _MISSING):
        raw = self._raw(key)
        if raw is None:
            if default is _MISSING:
                raise SdfError(
                    f"<{self.get_name()}> has no attribute or element '{key}' (expected a {kind})",
                    self._file, self._node.sourceline,
                )
            return default, False
        try:
            value = parse(raw)
        except ValueError as exc:
            raise SdfError(
                f"<{self.get_name()}> '{key}': cannot read a {kind}: {exc}", self._file, self._node.sourceline
            ) from None
        return value if default is _MISSING else (value, True)

    def get_double(self, key: str = "", default: Any = _MISSING):
        return self._get(key, float, "double", default)

    def get_float(self, key: str = "", default: Any = _MISSING):
        return self._get(key, float, "float", default)

    def get_int(self, key: str = "", default: Any = _MISSING):
        return self._get(key, int, "int", default)

    def get_unsigned_int(self, key: str = "", default: Any = _MISSING):
        def parse(text: str) -> int:
            v = int(text)
            if v < 0:
                raise ValueError(f"expected a non-negative integer, got {v}")
            return v

        return self._get(key, parse, "unsigned int", default)

    def get_bool(self, key: str = "", default: Any = _MISSING):
        return self._get(key, _parse_bool, "bool", default)

    def get_string(self, key: str = "", default: Any = _MISSING):
        return self._get(key, lambda t: t.strip(), "string", default)

    def get_vector3d(self, key: str = "", default: Any = _MISSING):
        from eels_gz.host.gzmath import Vector3d

        return self._get(key, lambda t: Vector3d(*_floats(3)(t)), "vector3d", default)

    def get_pose3d(self, key: str = "", default: Any = _MISSING):
        from eels_gz.host.gzmath import Pose3d

        return self._get(key, lambda t: Pose3d(*_floats(6)(t)), "pose3d", default)
