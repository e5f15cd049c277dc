#!/usr/bin/env python3
"""Extract the gz-sim 8 Python API that eels_gz's plugins may use from the
real binding sources, into ``test/conformance/gz_api_manifest.json``.

What is read (each at a pinned branch, its commit recorded in the manifest):

- gz-sim ``gz-sim8``: ``python/src/gz/sim/*.cc`` (pybind11 ``.def`` chains of
  Model, Link, Joint, World, UpdateInfo, EntityComponentManager,
  EventManager), ``include/gz/sim/*.hh`` (C++ return types and parameter
  counts), ``src/Joint.cc``/``src/Link.cc`` (what ``enable_*_check`` creates),
  ``src/systems/python_system_loader/PythonSystemLoader.cc`` (the loader's
  contract), ``src/systems/*`` (system file names and plugin names, sensor
  topic defaults);
- sdformat ``sdf14``: ``python/src/sdf/pyElement.cc`` (Element, with the
  ``get_<type>`` family expanded over ``ParamPrivate::ParamVariant``),
  ``include/sdf/Element.hh`` and ``include/sdf/Param.hh``;
- gz-math ``gz-math7``: ``src/python_pybind11/src/{Vector3,Quaternion,Pose3}.hh``;
- gz-transport ``gz-transport13``: ``python/src/__init__.py`` (the Python
  Node/Publisher wrappers) over ``python/src/transport/_gz_transport_pybind11.cc``;
- gz-msgs ``gz-msgs10``: ``proto/gz/msgs/*.proto`` for the messages the host
  defines (``eels_gz.gzapi.msgs.MESSAGES``).

Python argument forms follow pybind11: a bound function without ``py::arg``
takes its C++ parameters positionally (C++ default values are invisible to
Python); with ``py::arg`` the names may be given as keywords and
``py::arg(...) = v`` may be omitted.

Usage (a source is a git directory, bare or not, or a plain checkout; a
missing source is cloned from GitHub into a temporary folder)::

    python tools/gz_api_manifest.py --src gz-sim=/path/to/gz-sim ... [--out FILE] [--check]

``--check`` compares with the committed manifest instead of writing it.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "test" / "conformance" / "gz_api_manifest.json"

SOURCES = {
    "gz-sim": ("gazebosim/gz-sim", "gz-sim8"),
    "sdformat": ("gazebosim/sdformat", "sdf14"),
    "gz-math": ("gazebosim/gz-math", "gz-math7"),
    "gz-transport": ("gazebosim/gz-transport", "gz-transport13"),
    "gz-msgs": ("gazebosim/gz-msgs", "gz-msgs10"),
}
SIM_CLASSES = ("Model", "Link", "Joint", "World", "UpdateInfo", "EntityComponentManager", "EventManager")
MATH_CLASSES = {"Vector3d": ("Vector3", "double"), "Quaterniond": ("Quaternion", "double"),
                "Pose3d": ("Pose3", "double")}
UNARY_DUNDERS = {"__str__", "__repr__", "__len__", "__copy__", "__hash__"}
OPERATORS = {"+": "__add__", "-": "__sub__", "*": "__mul__", "/": "__truediv__", "+=": "__iadd__",
             "-=": "__isub__", "*=": "__imul__", "/=": "__itruediv__", "==": "__eq__", "!=": "__ne__",
             "<": "__lt__", ">": "__gt__"}


# --- reading sources -----------------------------------------------------------------------
@dataclass
class Source:
    name: str
    path: Path
    ref: str

    def read(self, rel: str) -> str:
        if (self.path / rel).is_file() and not self._is_git():
            return (self.path / rel).read_text()
        return subprocess.run(["git", "-C", str(self.path), "show", f"{self.ref}:{rel}"], check=True,
                              capture_output=True, text=True).stdout

    def ls(self, rel: str) -> list[str]:
        if not self._is_git():
            return sorted(str(p.relative_to(self.path)) for p in (self.path / rel).rglob("*") if p.is_file())
        out = subprocess.run(["git", "-C", str(self.path), "ls-tree", "-r", "--name-only", self.ref, rel],
                             check=True, capture_output=True, text=True).stdout
        return out.split()

    def commit(self) -> str | None:
        if not self._is_git():
            return None
        return subprocess.run(["git", "-C", str(self.path), "rev-parse", f"{self.ref}^{{commit}}"], check=True,
                              capture_output=True, text=True).stdout.strip()

    def _is_git(self) -> bool:
        return subprocess.run(["git", "-C", str(self.path), "rev-parse", "--git-dir"],
                              capture_output=True).returncode == 0


def clone(name: str, into: Path) -> Path:
    repo, ref = SOURCES[name]
    dest = into / name
    subprocess.run(["git", "clone", "--quiet", "--bare", "--filter=blob:none", "--single-branch", "--branch", ref,
                    f"https://github.com/{repo}.git", str(dest)], check=True)
    return dest


# --- C++ text ---------------------------------------------------------------------------------
def strip_comments(text: str) -> str:
    """C++ without comments, string literals kept, line breaks kept (for line numbers)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            out.append("\n" * text.count("\n", i, j))
            i = j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def balanced(text: str, start: int) -> int:
    """Index just past the bracket that closes the one at ``start`` ('(' or '{')."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack, i = [], start
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in pairs:
            stack.append(pairs[c])
        elif c in ")}]":
            if not stack or stack.pop() != c:
                raise ValueError(f"unbalanced '{c}' at {i}")
            if not stack:
                return i + 1
        i += 1
    raise ValueError("unterminated bracket")


def split_top(text: str) -> list[str]:
    """Split at commas outside (), [], {}, <> (template brackets) and strings."""
    parts, depth, angle, cur, i = [], 0, 0, [], 0
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "<" and depth == 0 and re.search(r"[\w:]\s*$", text[:i]) and not text.startswith("<<", i):
            angle += 1
        elif c == ">" and angle and depth == 0 and not text.startswith(">>", i - 1 if i else 0):
            angle -= 1
        if c == "," and depth == 0 and angle == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def cpp_params(params: str) -> list[dict]:
    """C++ parameter list -> [{type, name, default}]."""
    out = []
    for p in split_top(params):
        if not p or p == "void":
            continue
        default = None
        if "=" in p:
            p, default = (s.strip() for s in p.split("=", 1))
        m = re.match(r"(.*?)([A-Za-z_]\w*)$", p.strip())
        ptype, pname = (m.group(1).strip(), m.group(2)) if m and m.group(1).strip() else (p.strip(), "")
        out.append({"type": " ".join(ptype.split()), "name": pname, "default": default})
    return out


def line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


# --- header declarations -------------------------------------------------------------------
def declarations(header: str, method: str) -> list[dict]:
    """``public:`` declarations of ``method`` in a class header: return type and parameters."""
    text = strip_comments(header)
    out = []
    for m in re.finditer(rf"public:\s*([\w:<>,\s*&]+?)\s*([&*]?)\s*\b{method}\s*\(", text):
        end = balanced(text, m.end() - 1)
        ret = " ".join((m.group(1) + m.group(2)).replace("GZ_DEPRECATED", "").split())
        ret = re.sub(r"^(virtual|explicit|static|inline)\s+", "", ret)
        # sdformat's error-reporting overloads: ErrorWrappedCast turns sdf::Errors& into an exception
        params = [p for p in cpp_params(text[m.end():end - 1]) if normalize_type(p["type"]) != "Errors"]
        out.append({"returns": ret, "params": params})
    return out


# gz-math's bindings are templates over ``Class`` (e.g. gz::math::Vector3<T>); set per class while reading them
CLASS_ALIAS: dict[str, str] = {}


def normalize_type(t: str) -> str:
    t = t.replace("gz::math::", "").replace("gz::sim::", "").replace("math::", "").replace("sim::", "")
    t = t.replace("const ", "").replace("&", "").replace("sdf::", "").replace("<T>", "")
    for alias, real in CLASS_ALIAS.items():
        t = re.sub(rf"\b{alias}\b", real, t)
    return re.sub(r"\s+", " ", t).strip()


def pick(decls: list[dict], arg_types: list[str] | None) -> dict | None:
    """The declaration whose parameter types match an overload_cast list (or the only one)."""
    if arg_types is None:
        # nested classes can repeat a signature (Node::Publisher::Valid, Node::Subscriber::Valid)
        distinct = {(d["returns"], tuple(normalize_type(p["type"]) for p in d["params"])) for d in decls}
        return decls[0] if len(distinct) == 1 else None
    want = [normalize_type(t) for t in arg_types]
    for d in decls:
        if [normalize_type(p["type"]) for p in d["params"]] == want:
            return d
    return None


# --- pybind11 .def chains ---------------------------------------------------------------------
def def_chain(text: str, start: int) -> list[tuple[str, str, int]]:
    """``(kind, args, index)`` of the ``.def*(...)`` calls chained after ``start``."""
    out, i = [], start
    while True:
        m = re.compile(r"\s*\.\s*(def\w*)\s*\(").match(text, i)
        if not m:
            return out
        end = balanced(text, m.end() - 1)
        out.append((m.group(1), text[m.end():end - 1], m.start()))
        i = end


def py_args(parts: list[str]) -> list[dict] | None:
    """Named arguments from ``py::arg("x")``/``"x"_a`` pieces, or None when there are none."""
    named = []
    for p in parts:
        m = re.match(r'(?:py::|pybind11::)?arg\("(\w+)"\)\s*(=\s*(.+))?$', p) or \
            re.match(r'"(\w+)"_a\s*(=\s*(.+))?$', p)
        if m:
            named.append({"name": m.group(1), "default": m.group(2) is not None})
    return named or None


def member_target(expr: str):
    """(class, method, arg types or None, errors wrapped) of a bound member pointer expression."""
    m = re.match(r"(?:py::|pybind11::)?overload_cast<(.*)>\s*\(\s*&([\w:]+?)::(operator\s*\S+?|\w+)(?:<[^>]*>)?"
                 r"\s*(?:,.*)?\)$", expr, re.S)
    if m:
        return m.group(2).split("::")[-1], m.group(3), split_top(m.group(1)), False
    m = re.match(r"ErrorWrappedCast<(.*?)>\s*\(\s*&([\w:]+)::(\w+)(?:<[^>]*>)?\s*(?:,.*)?\)$", expr, re.S)
    if m:
        return m.group(2).split("::")[-1], m.group(3), split_top(m.group(1)), True
    m = re.match(r"&([\w:]+)::(\w+)$", expr.strip())
    if m:
        return m.group(1).split("::")[-1], m.group(2), None, False
    return None


def lambda_params(expr: str) -> list[dict] | None:
    m = re.match(r"\[[^\]]*\]\s*\(", expr)
    if not m:
        return None
    end = balanced(expr, m.end() - 1)
    return cpp_params(expr[m.end():end - 1])[1:]  # the first parameter is self


def overload_from_def(args: str, header: str | None, where: str) -> tuple[str, dict]:
    parts = split_top(args)
    name = parts[0].strip('"')
    named = py_args(parts[1:])
    target, returns, params = None, None, None
    for p in parts[1:]:
        if (t := member_target(p)) is not None:
            target = t
            break
        if (lp := lambda_params(p)) is not None:
            params, returns = lp, "lambda"
            break
    if target is not None:
        cls, method, arg_types, _ = target
        decls = declarations(header, method) if header and not method.startswith("operator") else []
        if arg_types is None and named is not None and len(decls) > 1:  # e.g. Node::Unsubscribe vs Subscriber's
            decls = [d for d in decls if len(d["params"]) == len(named)]
        decl = pick(decls, arg_types)
        if decl is not None:
            returns, params = decl["returns"], decl["params"]
        elif arg_types is not None:
            params = [{"type": t, "name": "", "default": None} for t in arg_types]
        if decl is None and header and arg_types is None:
            raise ValueError(f"{where}: cannot find the declaration of {cls}::{method}{arg_types or ''}")
    if params is None and name in UNARY_DUNDERS:
        params = []  # bound to a named lambda of self alone, e.g. .def("__str__", toString)
    if named is None:
        if params is None:
            raise ValueError(f"{where}: cannot tell the parameters of '{name}'")
        named = [{"name": None, "default": False} for _ in params]  # positional only
    return name, {"params": named, "returns": returns, "where": where}


def class_defs(text: str, start: int, header: str | None, where: str) -> dict:
    """Methods, constructors, attributes and operators of one py::class_ chain."""
    cls = {"constructors": [], "methods": {}, "attributes": {}}
    for kind, args, index in def_chain(text, start):
        loc = f"{where}:{line_of(text, index)}"
        parts = split_top(args)
        if kind == "def" and parts[0].startswith(("py::init", "pybind11::init")):
            m = re.match(r"(?:py|pybind11)::init<(.*)>\(\)", parts[0], re.S)
            types = split_top(m.group(1)) if m and m.group(1).strip() else []
            cls["constructors"].append({"params": [{"name": None, "default": False} for _ in types],
                                        "types": types, "where": loc})
        elif kind == "def" and "py::self" in parts[0]:
            expr = parts[0]
            if expr.startswith("-py::self"):
                op = "__neg__"
            else:
                m = re.match(r"py::self\s*([+\-*/=!<>]+)\s*(.*)$", expr)
                op = OPERATORS[m.group(1)]
            cls["methods"].setdefault(op, []).append({"params": [{"name": None, "default": False}]
                                                      if op != "__neg__" else [], "returns": None, "where": loc})
        elif kind == "def":
            name, ov = overload_from_def(args, header, loc)
            cls["methods"].setdefault(name, []).append(ov)
        elif kind in ("def_readwrite", "def_readonly", "def_property", "def_property_readonly",
                      "def_readonly_static"):
            cls["attributes"][parts[0].strip('"')] = {"kind": kind, "where": loc}
    return cls


def find_class(text: str, pattern: str) -> int:
    """Index just past the constructor call of the py::class_ matching ``pattern``
    (whose first group is the call's opening parenthesis)."""
    m = re.search(pattern, text)
    if not m:
        raise ValueError(f"no class matching {pattern!r}")
    return balanced(text, m.start(1))


# --- gz-sim -------------------------------------------------------------------------------------
def cpp_to_python(t: str | None) -> str | None:
    """A C++ return type as the Python value pybind11 gives."""
    if t is None or t == "lambda":
        return None
    t = normalize_type(t)
    m = re.fullmatch(r"std::optional<(.*)>", t)
    if m:
        inner = cpp_to_python(m.group(1))
        return f"{inner} | None"
    m = re.fullmatch(r"std::vector<(.*)>", t)
    if m:
        return f"list[{cpp_to_python(m.group(1))}]"
    m = re.fullmatch(r"std::pair<(.*)>", t)
    if m:
        return "tuple[" + ", ".join(cpp_to_python(x) for x in split_top(m.group(1))) + "]"
    simple = {"bool": "bool", "double": "float", "float": "float", "int": "int", "uint64_t": "int",
              "unsigned int": "int", "std::size_t": "int", "size_t": "int", "std::string": "str",
              "Entity": "int", "void": "None", "std::chrono::steady_clock::duration": "datetime.timedelta",
              "ElementPtr": "Element", "std::shared_ptr<Element>": "Element", "Vector3d": "Vector3d",
              "Pose3d": "Pose3d", "Quaterniond": "Quaterniond", "T": "T"}
    return simple.get(t, t)


def annotate(classes: dict) -> None:
    for cls in classes.values():
        for overloads in cls["methods"].values():
            for ov in overloads:
                ov["py_returns"] = cpp_to_python(ov["returns"])


def extract_sim(src: Source) -> dict:
    classes = {}
    for name in SIM_CLASSES:
        rel = f"python/src/gz/sim/{name}.cc"
        text = strip_comments(src.read(rel))
        header_rel = f"include/gz/sim/{name}.hh"
        header = src.read(header_rel) if name not in ("UpdateInfo", "EntityComponentManager", "EventManager") \
            else None
        start = find_class(text, rf'(?:py|pybind11)::class_<[\w:]+>\s*(\()\s*\w+\s*,\s*"{name}"')
        classes[name] = class_defs(text, start, header, rel)
    annotate(classes)
    types = strip_comments(src.read("include/gz/sim/Types.hh"))
    start = re.search(r"struct UpdateInfo\s*\{", types).end() - 1
    body = types[start + 1:balanced(types, start) - 1]
    for m in re.finditer(r"([\w:]+(?:<[^>]*>)?)\s+(\w+)\s*\{[^}]*\};", body):
        py = {"simTime": "sim_time", "realTime": "real_time", "dt": "dt", "iterations": "iterations",
              "paused": "paused"}[m.group(2)]
        classes["UpdateInfo"]["attributes"][py]["type"] = cpp_to_python(m.group(1))
    return classes


def extract_loader(src: Source) -> dict:
    rel = "src/systems/python_system_loader/PythonSystemLoader.cc"
    text = strip_comments(src.read(rel))
    dtor = re.search(r"PythonSystemLoader::~PythonSystemLoader\(\)\s*\{", text)
    dtor_body = text[dtor.end() - 1:balanced(text, dtor.end() - 1)]
    path_op = re.search(r'attr\("path"\)\.attr\("(\w+)"\)\(pluginPath\)', text).group(1)
    call = re.search(r"void PythonSystemLoader::CallPythonMethod\(", text)
    call_body = text[call.start():balanced(text, text.index("{", call.end()))]
    configure = re.search(r'attr\("configure"\)\(([^;]*)\);', text)
    return {
        "source": rel,
        "module_path": {"operation": path_op, "list": "sys.path",
                        "note": "the system plugin paths are added to sys.path with this list operation"},
        "callbacks": sorted(set(re.findall(r'py::hasattr\(this->pythonSystem, "(\w+)"\)', text))),
        "configure_args": split_top(configure.group(1)),
        "shutdown_on_destruction": '"shutdown"' in dtor_body,
        "callback_exception_disables": "this->validConfig = false" in call_body,
        "configure_exception_disables": bool(re.search(
            r'attr\("configure"\).*?catch[^{]*\{[^}]*return;\s*\}', text, re.S)),
        "reset_args": re.search(r"CallPythonMethod\(this->resetMethod, ([^)]*)\)", text).group(1),
    }


def extract_checks(src: Source) -> dict:
    """What each enable_*_check creates: the component, with its default when given."""
    out = {}
    for cls, method_py in (("Joint", "enable_position_check"), ("Joint", "enable_velocity_check"),
                           ("Link", "enable_velocity_checks")):
        text = strip_comments(src.read(f"src/{cls}.cc"))
        cpp = "".join(w.capitalize() for w in method_py.split("_"))
        m = re.search(rf"void {cls}::{cpp}\([^)]*\)\s*(?:const)?\s*\{{", text)
        body = text[m.end() - 1:balanced(text, m.end() - 1)]
        comps = []
        for c in re.finditer(r"enableComponent(?:<(components::\w+)>)?\(\s*_ecm,\s*[^,]+,\s*_enable"
                             r"(?:,\s*(components::\w+)\(([^)]*)\))?\)", body):
            comps.append({"component": c.group(1) or c.group(2), "initial": (c.group(3) or "").strip() or "T()"})
        out[f"{cls}.{method_py}"] = {"source": f"src/{cls}.cc:{line_of(text, m.start())}", "creates": comps}
    for cls, method, comp in (("Joint", "Position", "JointPosition"), ("Joint", "Velocity", "JointVelocity"),
                              ("Link", "WorldLinearVelocity", "WorldLinearVelocity"),
                              ("Link", "WorldAngularVelocity", "WorldAngularVelocity")):
        text = strip_comments(src.read(f"src/{cls}.cc"))
        m = re.search(rf"{cls}::{method}\(\s*const EntityComponentManager &_ecm\) const\s*\{{", text)
        body = text[m.end() - 1:balanced(text, m.end() - 1)]
        out[f"{cls}.{method}"] = {"source": f"src/{cls}.cc:{line_of(text, m.start())}",
                                  "reads": f"components::{comp}" if f"components::{comp}" in body else None}
    return out


def extract_systems(src: Source) -> dict:
    """gz-sim's system libraries: file name -> plugin names (aliases)."""
    out = {}
    for rel in src.ls("src/systems"):
        if not rel.endswith("CMakeLists.txt"):
            continue
        m = re.search(r"gz_add_system\(\s*([\w-]+)", src.read(rel))
        if not m:
            continue
        folder = rel.rsplit("/", 1)[0]
        names = set()
        for cc in src.ls(folder):
            if cc.endswith(".cc"):
                names |= set(re.findall(r'GZ_ADD_PLUGIN_ALIAS\(\s*[\w:]+\s*,\s*"([\w:]+)"',
                                        strip_comments(src.read(cc))))
        out[f"gz-sim-{m.group(1)}-system"] = sorted(names)
    return dict(sorted(out.items()))


def extract_sensor_topics(src: Source) -> dict:
    out = {}
    for system, rel in (("ForceTorque", "src/systems/force_torque/ForceTorque.cc"),
                        ("Imu", "src/systems/imu/Imu.cc")):
        text = strip_comments(src.read(rel))
        m = re.search(r'std::string topic = scopedName\(_entity, _ecm\) \+ "([^"]+)"', text)
        out[system] = {"default_topic": "<scoped sensor name>" + m.group(1),
                       "source": f"{rel}:{line_of(text, m.start())}",
                       "scoped_name": "world/<world>/model/<model>/<joint or link>/<name>/sensor/<sensor> "
                                      "(gz::sim::scopedName with type prefixes, '/' delimiter)"}
    return out


# --- sdformat -----------------------------------------------------------------------------------
def extract_sdformat(src: Source) -> tuple[dict, dict]:
    rel = "python/src/sdf/pyElement.cc"
    text = strip_comments(src.read(rel))
    header = src.read("include/sdf/Element.hh")
    # auto elemClass = PyClassElement(module, "Element"); elemClass.def(py::init<>())...
    find_class(text, r'PyClassElement(\()\s*module\s*,\s*"Element"')
    element = class_defs(text, text.index("elemClass.def(") + len("elemClass"), header, rel)
    # get_<suffix>/set_<suffix> for every type of ParamPrivate::ParamVariant
    param = strip_comments(src.read("include/sdf/Param.hh"))
    variant = re.search(r"typedef std::variant<(.*?)>\s*ParamVariant;", param, re.S).group(1)
    to_string = dict(re.findall(r"std::is_same_v<T,\s*([\w:]+)>\)\s*return \"([\w ]+)\";", param))
    suffix = {t: ("unsigned_int" if t == "unsigned int" else to_string[t].replace(" ", "_"))
              for t in (x.strip() for x in split_top(variant))}
    getter_loc = f"{rel}:{line_of(text, text.index('forEachParamType('))}"
    for ctype, sfx in suffix.items():
        element["methods"][f"get_{sfx}"] = [
            {"params": [{"name": "key", "default": True}], "returns": ctype, "where": getter_loc,
             "note": "Element::Get<T>(key): T() when the key is missing"},
            {"params": [{"name": None, "default": False}, {"name": None, "default": False}],
             "returns": f"std::pair<{ctype}, bool>", "where": getter_loc,
             "note": "Element::Get<T>(key, default): (value, found)"}]
        element["methods"][f"set_{sfx}"] = [{"params": [{"name": None, "default": False}], "returns": "bool",
                                             "where": getter_loc}]
    annotate({"Element": element})
    for ov in (o for k, v in element["methods"].items() if k.startswith("get_") for o in v):
        if ov.get("note"):
            ov["py_returns"] = ov["py_returns"].replace("gz::math::", "")
    # Get<T>(key): a missing key gives T(); Get<T>(key, default): (default, false)
    body = strip_comments(header)
    one = re.search(r"T Element::Get\(const std::string &_key\) const\s*\{(.*?)\n\s*\}", body, re.S).group(1)
    two = re.search(r"std::pair<T, bool> Element::Get\(sdf::Errors &_errors,\s*const std::string &_key,\s*"
                    r"const T &_defaultValue\) const\s*\{(.*?)\n  \}", body, re.S).group(1)
    rules = {
        "one_arg_missing_key": "T()" if "T result = T();" in one and "return ret.first;" in one else None,
        "two_arg_returns": "(value, found)" if "std::pair<T, bool> result(_defaultValue, true);" in two else None,
        "two_arg_missing_key": "(default, False)" if "result.second = false;" in two else None,
        "lookup_order": "attribute, then child element, then element description"
        if two.index("GetAttribute") < two.index("HasElement(_key)") else None,
        "source": "include/sdf/Element.hh",
    }
    return element, rules


# --- gz-math ----------------------------------------------------------------------------------------
def extract_math(src: Source) -> dict:
    classes = {}
    for py_name, (stem, _) in MATH_CLASSES.items():
        rel = f"src/python_pybind11/src/{stem}.hh"
        text = strip_comments(src.read(rel))
        start = find_class(text, r"py::class_<Class>\s*(\()")
        header = src.read(f"include/gz/math/{stem}.hh")
        CLASS_ALIAS.clear()
        CLASS_ALIAS.update({"Class": stem})
        try:
            classes[py_name] = class_defs(text, start, header, rel)
        finally:
            CLASS_ALIAS.clear()
    annotate(classes)
    names = {stem: py for py, (stem, _) in MATH_CLASSES.items()}
    for cls in classes.values():  # Python values of the double instantiations
        for ov in (o for overloads in cls["methods"].values() for o in overloads):
            if ov["py_returns"] is not None:
                ov["py_returns"] = re.sub(r"\bT\b", "float", ov["py_returns"])
                ov["py_returns"] = names.get(re.sub(r"<.*>", "", ov["py_returns"]), ov["py_returns"])
    return classes


# --- gz-transport -------------------------------------------------------------------------------------
def extract_transport(src: Source) -> dict:
    rel = "python/src/transport/_gz_transport_pybind11.cc"
    text = strip_comments(src.read(rel))
    header = src.read("include/gz/transport/Node.hh")  # declares Node and Node::Publisher
    node = class_defs(text, find_class(text, r'py::class_<Node>(\()m,\s*"Node"'), header, rel)
    pub = class_defs(text, find_class(text, r'py::class_<gz::transport::Node::Publisher>(\()node,\s*"Publisher"'),
                     header, rel)
    wrapper = ast.parse(src.read("python/src/__init__.py"))
    for cls in (c for c in wrapper.body if isinstance(c, ast.ClassDef)):
        target = {"Node": node, "Publisher": pub}.get(cls.name)
        for fn in (f for f in cls.body if isinstance(f, ast.FunctionDef)):
            a = fn.args
            n_def = len(a.defaults)
            params = [{"name": p.arg, "default": k >= len(a.args) - n_def}
                      for k, p in enumerate(a.args)][1:]
            target["methods"][fn.name] = [{"params": params, "returns": None,
                                           "where": f"python/src/__init__.py:{fn.lineno}"}]
    for cls in (node, pub):
        for overloads in cls["methods"].values():
            for ov in overloads:
                ov["py_returns"] = None
    return {"Node": node, "Publisher": pub}


# --- gz-msgs ------------------------------------------------------------------------------------------
def _proto_messages(text: str, prefix: str = "") -> dict:
    out = {}
    for m in re.finditer(r"\bmessage\s+(\w+)\s*\{", text):
        if prefix == "" and _depth(text, m.start()) != 0:
            continue
        end = balanced(text, m.end() - 1)
        body = text[m.end():end - 1]
        name = prefix + m.group(1)
        fields = {}
        top = _top_level(body)
        for f in re.finditer(r"(repeated\s+)?([\w.]+)\s+(\w+)\s*=\s*\d+", top):
            fields[f.group(3)] = {"type": f.group(2).split(".")[-1], "repeated": bool(f.group(1))}
        out[name] = fields
        for sub in re.finditer(r"\bmessage\s+(\w+)\s*\{", body):
            if _depth(body, sub.start()) == 0:
                sub_end = balanced(body, sub.end() - 1)
                out.update(_proto_messages(body[sub.start():sub_end], name + "."))
    return out


def _depth(text: str, index: int) -> int:
    return text.count("{", 0, index) - text.count("}", 0, index)


def _top_level(body: str) -> str:
    out, depth = [], 0
    for c in body:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            continue
        if depth == 0:
            out.append(c)
    return "".join(out)


def extract_msgs(src: Source, names: list[str]) -> dict:
    protos = {}
    for rel in src.ls("proto/gz/msgs"):
        if rel.endswith(".proto"):
            protos.update(_proto_messages(strip_comments(src.read(rel))))
    wanted = {}
    for name in names:
        # the host names nested messages Outer_Inner (protobuf: Outer.Inner); Map is Header.Map
        key = "Header.Map" if name == "Map" else name if name in protos else name.replace("_", ".", 1)
        if key not in protos:
            raise ValueError(f"gz-msgs has no message {key}")
        wanted[name] = {"proto_name": key, "fields": protos[key]}
    return wanted


# --- main ---------------------------------------------------------------------------------------------
def build(sources: dict[str, Source]) -> dict:
    sys.path.insert(0, str(REPO))
    from eels_gz.gzapi.msgs import MESSAGES

    element, element_rules = extract_sdformat(sources["sdformat"])
    return {
        "about": "The real gz-sim 8 Python API, extracted from its binding sources by tools/gz_api_manifest.py; "
                 "do not edit by hand. test/conformance reads it.",
        "sources": {k: {"repository": SOURCES[k][0], "branch": s.ref, "commit": s.commit()}
                    for k, s in sources.items()},
        "modules": {
            "gz.sim8": extract_sim(sources["gz-sim"]),
            "sdformat14": {"Element": element},
            "gz.math7": extract_math(sources["gz-math"]),
            "gz.transport13": extract_transport(sources["gz-transport"]),
        },
        "element_get": element_rules,
        "checks": extract_checks(sources["gz-sim"]),
        "loader": extract_loader(sources["gz-sim"]),
        "systems": extract_systems(sources["gz-sim"]),
        "sensor_topics": extract_sensor_topics(sources["gz-sim"]),
        "gz.msgs10": extract_msgs(sources["gz-msgs"], sorted(MESSAGES)),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", action="append", default=[], metavar="NAME=PATH",
                        help=f"a source folder (git dir or checkout); NAME one of {', '.join(SOURCES)}")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args(argv)
    given = dict(s.split("=", 1) for s in args.src)
    unknown = set(given) - set(SOURCES)
    if unknown:
        parser.error(f"unknown source(s) {sorted(unknown)}; expected {', '.join(SOURCES)}")
    with tempfile.TemporaryDirectory() as tmp:
        sources = {name: Source(name, Path(given[name]) if name in given else clone(name, Path(tmp)), ref)
                   for name, (_, ref) in SOURCES.items()}
        manifest = build(sources)
    text = json.dumps(manifest, indent=1, sort_keys=False) + "\n"
    if args.check:
        if args.out.read_text() != text:
            print(f"{args.out} differs from the sources; regenerate it", file=sys.stderr)
            return 1
        print(f"{args.out} matches the sources")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
