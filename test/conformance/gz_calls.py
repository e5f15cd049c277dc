"""Every gz call in a plugin's source, checked against the manifest of the
real gz-sim 8 API without running it (``check_file``).

A small type inference over the AST follows values from where they come from:

- ``configure(self, entity, sdf, ecm, event_mgr)`` and ``pre_update``/
  ``update``/``post_update``/``reset(self, info, ecm)`` parameters; a
  parameter named ``sim``, ``model``, ``ecm``, ``sdf``, ``info``, ``header``
  or ``pose`` in a helper function (the repository's convention);
- ``sim.X(...)``, ``gzmath.X(...)``, ``transport.Node()``, ``msgs.X()``
  constructors, and the return types the manifest gives for every method
  (``Model.joints`` -> list of entities, ``Element.find_element`` ->
  Element, ``Pose3d.rot`` -> Quaterniond...);
- assignments, tuple unpacking, ``for`` loops, comprehensions, ``self.x``
  attributes set anywhere in the class, ``gz_compat.iter_elements`` and
  ``gz_compat.param``, subscription callbacks (typed by their
  ``subscribe(msgs.X, ...)`` call);
- gz.msgs fields, nested and repeated (``odom.pose.position.x``,
  ``header.data.add(key=...)``).

What is reported (``Problem``): a method or attribute the real class lacks;
an argument form no overload takes; a one-argument sdformat getter
(``get_double("key")`` reads a missing key as 0); a method called with the
ECM on an untyped receiver that no real class has; a name that only the
embedded host's imitation offers; a gz.msgs field that does not exist;
any attribute read on the ECM (opaque in the Python API).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from gz_manifest import CLASSES, MESSAGES, accepts, py_type

MODULES = {"sim": "gz.sim8", "gzmath": "gz.math7", "transport": "gz.transport13", "msgs": "gz.msgs10"}
PARAM_TYPES = {"ecm": "EntityComponentManager", "sdf": "Element", "info": "UpdateInfo",
               "event_mgr": "EventManager", "model": "Model", "sim": "module:sim", "header": "msg:Header",
               "pose": "msg:Pose"}
SYSTEM_METHODS = {"configure", "pre_update", "update", "post_update", "reset", "shutdown"}
# protobuf message methods (not fields)
MESSAGE_METHODS = {"CopyFrom", "MergeFrom", "Clear", "ClearField", "HasField", "ListFields", "SerializeToString",
                   "ParseFromString", "IsInitialized"}
PROTO_SCALARS = {"double": "float", "float": "float", "int32": "int", "int64": "int", "uint32": "int",
                 "uint64": "int", "sint32": "int", "sint64": "int", "bool": "bool", "string": "str", "bytes": "bytes"}
# sdformat's getters of parameter values: the one-argument form gives T() for a missing key
VALUE_GETTERS = {name for name, c in CLASSES["Element"]["methods"].items()
                 if any("Get<T>(key)" in (ov.get("note") or "") for ov in c)}


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


def _manifest_type(t: str | None) -> str | None:
    """A manifest return type as this checker's type name."""
    if not t:
        return None
    t = t.replace(" | None", "")
    if t in CLASSES:
        return t
    if t.startswith("list[") and t[5:-1] in CLASSES:
        return t
    if t.startswith("tuple["):
        return t
    return {"float": "float", "int": "int", "str": "str", "bool": "bool", "list[int]": "list[int]",
            "list[float]": "list[float]"}.get(t)


class _Checker(ast.NodeVisitor):
    def __init__(self, path: Path, host_only: set[str]):
        self.path = path
        self.host_only = host_only
        self.problems: list[Problem] = []
        self.checked = 0  # gz calls and accesses checked against the manifest
        self.self_attrs: dict[str, str | None] = {}
        self.callbacks: dict[str, str] = {}  # method name -> message type of its subscription
        self.recording = False  # only the last pass reports
        self.module_env: dict[str, str] = {}  # ``from gz_compat import sim, gzmath, msgs, transport``

    # --- reporting ---------------------------------------------------------------------
    def problem(self, node: ast.AST, message: str) -> None:
        if self.recording:
            self.problems.append(Problem(str(self.path), getattr(node, "lineno", 0), message))

    # --- types ---------------------------------------------------------------------------
    def expr_type(self, node: ast.AST, env: dict) -> str | None:
        if isinstance(node, ast.Name):
            return env.get(node.id)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                return self.self_attrs.get(node.attr)
            return self.attribute(node, self.expr_type(node.value, env), env)
        if isinstance(node, ast.Call):
            return self.call(node, env)
        if isinstance(node, ast.Subscript):
            base = self.expr_type(node.value, env)
            if base and base.startswith("list["):
                return base[5:-1]
            if base and base.startswith("repeated:"):
                return "msg:" + base[9:]
            return None
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            inner = dict(env)
            for gen in node.generators:
                self.bind(gen.target, self.element_type(self.expr_type(gen.iter, inner)), inner)
            return f"list[{self.expr_type(node.elt, inner)}]"
        if isinstance(node, ast.List):
            kinds = {self.expr_type(e, env) for e in node.elts}
            return f"list[{kinds.pop()}]" if len(kinds) == 1 else None
        return None

    @staticmethod
    def element_type(t: str | None) -> str | None:
        if t and t.startswith("list["):
            return t[5:-1]
        if t and t.startswith("iter:"):
            return t[5:]
        if t and t.startswith("repeated:"):
            return "msg:" + t[9:]
        return None

    def bind(self, target: ast.AST, t: str | None, env: dict) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = t
        elif isinstance(target, (ast.Tuple, ast.List)):
            parts = []
            if t and t.startswith("tuple["):
                parts = [p.strip() for p in t[6:-1].split(",")]
            for k, elt in enumerate(target.elts):
                self.bind(elt, _manifest_type(parts[k]) if k < len(parts) else None, env)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            if t is not None or target.attr not in self.self_attrs:
                self.self_attrs[target.attr] = t

    # --- attribute access (no call) -----------------------------------------------------
    def attribute(self, node: ast.Attribute, base: str | None, env: dict) -> str | None:
        if base is None:
            return None
        if base.startswith("module:"):
            module = base[7:]
            if module == "msgs":
                if node.attr not in MESSAGES:
                    self.problem(node, f"gz.msgs10 has no message {node.attr}")
                return "msgclass:" + node.attr
            self.checked += 1
            if node.attr not in CLASSES:
                self.problem(node, f"{MODULES[module]} has no class {node.attr}")
                return None
            return "class:" + node.attr
        if base.startswith("msg:"):
            fields = MESSAGES.get(base[4:], {}).get("fields", {})
            if node.attr in MESSAGE_METHODS:
                return None
            self.checked += 1
            if node.attr not in fields:
                self.problem(node, f"gz.msgs {base[4:]} has no field '{node.attr}' (fields: {', '.join(fields)})")
                return None
            f = fields[node.attr]
            if f["type"] in PROTO_SCALARS:
                return "list" if f["repeated"] else PROTO_SCALARS[f["type"]]
            sub = f["type"] if f["type"] in MESSAGES else {"Map": "Map", "Field": "PointCloudPacked_Field"}.get(
                f["type"], f["type"])
            return ("repeated:" if f["repeated"] else "msg:") + sub
        if base == "EntityComponentManager":
            self.checked += 1
            self.problem(node, f"the ECM is opaque in gz-sim's Python API: no attribute '{node.attr}'")
            return None
        if base in CLASSES:
            entry = CLASSES[base]
            self.checked += 1
            if node.attr in entry["attributes"]:
                return {"sim_time": "timedelta", "real_time": "timedelta", "dt": "timedelta", "paused": "bool",
                        "iterations": "int"}.get(node.attr)
            if node.attr not in entry["methods"]:
                self.problem(node, f"{base} has no attribute or method '{node.attr}' in the real API")
            return "method:" + base + "." + node.attr
        if base == "timedelta":
            return None
        return None

    # --- calls ---------------------------------------------------------------------------------
    def call(self, node: ast.Call, env: dict) -> str | None:
        for arg in node.args:
            self.expr_type(arg, env)
        for kw in node.keywords:
            self.expr_type(kw.value, env)
        npos = len(node.args)
        keywords = {kw.arg for kw in node.keywords if kw.arg}
        func = node.func
        if isinstance(func, ast.Name):
            return self.function(node, func.id, env)
        if not isinstance(func, ast.Attribute):
            return None
        if isinstance(func.value, ast.Name) and func.value.id == "self":
            return None
        base = self.expr_type(func.value, env)
        name = func.attr
        if base and base.startswith("module:"):
            module = base[7:]
            if module == "msgs":
                if name not in MESSAGES:
                    self.problem(node, f"gz.msgs10 has no message {name}")
                    return None
                return "msg:" + name
            self.checked += 1
            if name not in CLASSES:
                self.problem(node, f"{MODULES[module]} has no class {name}")
                return None
            if not accepts(CLASSES[name]["constructors"], npos, keywords):
                self.problem(node, f"{name}() takes no constructor with {npos} positional argument(s) "
                                   f"and keywords {sorted(keywords)}")
            return name
        if base and base in CLASSES:
            return self.method(node, base, name, npos, keywords)
        if base and base.startswith("repeated:"):
            if name == "add":
                sub = base[9:]
                fields = MESSAGES.get(sub, {}).get("fields", {})
                for kw in keywords - set(fields):
                    self.problem(node, f"gz.msgs {sub} has no field '{kw}'")
                return "msg:" + sub
            return None
        if base and base.startswith("msg:"):
            return None
        if base and base.startswith("helperobj:"):  # checked in the helper's own file
            return None
        if base == "EntityComponentManager":
            self.problem(node, f"the ECM has no methods in gz-sim's Python API ('{name}')")
            return None
        # untyped receiver: a call that passes the ECM is a gz call
        passes_ecm = any(isinstance(a, ast.Name) and env.get(a.id) == "EntityComponentManager" for a in node.args)
        if name in self.host_only:
            self.checked += 1
            self.problem(node, f"'{name}' is offered by the embedded host only, not by the real gz API")
        elif passes_ecm:
            self.checked += 1
            owners = [c for c, e in CLASSES.items() if name in e["methods"]]
            if not owners:
                self.problem(node, f"no gz-sim class has a method '{name}' (called with the ECM)")
            elif not any(accepts(CLASSES[c]["methods"][name], npos, keywords) for c in owners):
                self.problem(node, f"'{name}' takes no {npos} positional argument(s) with keywords "
                                   f"{sorted(keywords)} in {', '.join(owners)}")
            else:
                kinds = {py_type(CLASSES[c]["methods"][name]) for c in owners}
                return _manifest_type(kinds.pop()) if len(kinds) == 1 else None
        return None

    def method(self, node: ast.Call, cls: str, name: str, npos: int, keywords: set[str]) -> str | None:
        self.checked += 1
        methods = CLASSES[cls]["methods"]
        if name not in methods:
            self.problem(node, f"{cls} has no method '{name}' in the real API")
            return None
        if not accepts(methods[name], npos, keywords):
            forms = "; ".join("(" + ", ".join(p["name"] or "_" for p in ov["params"]) + ")" for ov in methods[name])
            self.problem(node, f"{cls}.{name} takes no {npos} positional argument(s) with keywords "
                               f"{sorted(keywords)}; the real overloads are {forms}")
        if cls == "Element" and name in VALUE_GETTERS and npos + len(keywords) < 2:
            self.problem(node, f"one-argument Element.{name}: sdformat gives T() (0, '', False) for a missing key; "
                               "read it with the two-argument form (gz_compat.param for a required one)")
        if cls == "Node" and name == "advertise":
            return "Publisher"
        if cls == "Node" and name == "subscribe" and len(node.args) >= 3:
            msg, cb = node.args[0], node.args[2]
            if isinstance(msg, ast.Attribute) and isinstance(cb, ast.Attribute) and isinstance(cb.value, ast.Name) \
                    and cb.value.id == "self":
                self.callbacks[cb.attr] = msg.attr
        if len(node.args) == 2 and cls == "Element" and name.startswith("get_"):
            return _manifest_type(py_type([ov for ov in methods[name] if len(ov["params"]) == 2]))
        return _manifest_type(py_type([ov for ov in methods[name] if len(ov["params"]) >= npos]))

    def function(self, node: ast.Call, name: str, env: dict) -> str | None:
        if name == "iter_elements":
            return "iter:Element"
        if (env.get(name) or "").startswith("helper:"):
            return "helperobj:" + name
        if name == "param" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            getter = node.args[1].value
            self.checked += 1
            if getter not in CLASSES["Element"]["methods"]:
                self.problem(node, f"Element has no getter '{getter}' in the real API")
                return None
            return _manifest_type(py_type([ov for ov in CLASSES["Element"]["methods"][getter]
                                           if len(ov["params"]) == 1]))
        return None

    # --- statements ------------------------------------------------------------------------
    def run_function(self, fn: ast.FunctionDef, in_class: bool) -> None:
        env: dict = dict(self.module_env)
        args = [a.arg for a in fn.args.args]
        if in_class and args and args[0] == "self":
            args = args[1:]
        if in_class and fn.name == "configure":
            env.update(zip(args, ["int", "Element", "EntityComponentManager", "EventManager"]))
        elif in_class and fn.name in SYSTEM_METHODS:
            env.update(zip(args, ["UpdateInfo", "EntityComponentManager"]))
        elif in_class and fn.name in self.callbacks and args:
            env[args[0]] = "msg:" + self.callbacks[fn.name]
        for a in args:
            env.setdefault(a, PARAM_TYPES.get(a))
        self.block(fn.body, env)

    def block(self, body: list, env: dict) -> None:
        for stmt in body:
            self.statement(stmt, env)

    def statement(self, stmt: ast.stmt, env: dict) -> None:
        if isinstance(stmt, ast.Assign):
            t = self.expr_type(stmt.value, env)
            for target in stmt.targets:
                self.bind(target, t, env)
                self.visit_targets(target, env)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.bind(stmt.target, self.expr_type(stmt.value, env), env)
        elif isinstance(stmt, ast.AugAssign):
            self.expr_type(stmt.value, env)
        elif isinstance(stmt, ast.For):
            self.bind(stmt.target, self.element_type(self.expr_type(stmt.iter, env)), env)
            self.block(stmt.body, env)
            self.block(stmt.orelse, env)
        elif isinstance(stmt, ast.While):
            self.expr_type(stmt.test, env)
            self.block(stmt.body, env)
        elif isinstance(stmt, ast.If):
            self.expr_type(stmt.test, env)
            self.block(stmt.body, env)
            self.block(stmt.orelse, env)
        elif isinstance(stmt, (ast.Expr, ast.Return)) and stmt.value is not None:
            t = self.expr_type(stmt.value, env)
            if isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
                    and stmt.value.func.attr == "append" and isinstance(stmt.value.func.value, ast.Attribute) \
                    and isinstance(stmt.value.func.value.value, ast.Name) and stmt.value.func.value.value.id == "self":
                arg_t = self.expr_type(stmt.value.args[0], env) if stmt.value.args else None
                if arg_t is not None:
                    self.self_attrs[stmt.value.func.value.attr] = f"list[{arg_t}]"
            del t
        elif isinstance(stmt, ast.Try):
            self.block(stmt.body, env)
            for h in stmt.handlers:
                self.block(h.body, env)
            self.block(stmt.finalbody, env)
        elif isinstance(stmt, ast.With):
            self.block(stmt.body, env)
        elif isinstance(stmt, ast.Raise) and stmt.exc is not None:
            self.expr_type(stmt.exc, env)
        for node in ast.walk(stmt):  # expressions nested in statements not followed above
            if isinstance(node, (ast.JoinedStr, ast.BoolOp, ast.Compare, ast.BinOp, ast.UnaryOp, ast.Dict)):
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, (ast.Call, ast.Attribute)):
                        self.expr_type(child, env)

    def visit_targets(self, target: ast.AST, env: dict) -> None:
        if isinstance(target, ast.Attribute) and not (isinstance(target.value, ast.Name) and target.value.id == "self"):
            self.expr_type(target.value, env)
            base = self.expr_type(target.value, env)
            self.attribute(target, base, env)


# the plugins_py modules that give a plugin gz-sim's own modules: the compat layer and the two of its
# modules that choose them (the gz-sim and gz-math binding, the middleware of the same release)
API_MODULES = ("gz_compat", "gz_binding", "gz_middleware")


def check_file(path: Path, host_only: set[str], functions: set[str] | None = None) -> tuple[list[Problem], int]:
    """Problems in ``path`` and the number of gz calls and accesses checked.
    ``functions``: only these top-level functions (and every class)."""
    tree = ast.parse(path.read_text(), str(path))
    checker = _Checker(path, host_only)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in API_MODULES:
            for alias in node.names:
                if alias.name in MODULES:
                    checker.module_env[alias.asname or alias.name] = "module:" + alias.name
        elif (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
              and (path.parent / f"{node.module}.py").is_file()):
            # a plugin-side helper module beside it (e.g. snake_io): checked as a file of its own
            for alias in node.names:
                checker.module_env[alias.asname or alias.name] = "helper:" + alias.name
    if path.stem in API_MODULES:  # the binding itself: its own sim, gzmath, msgs and transport
        checker.module_env.update({name: "module:" + name for name in MODULES})
    for recording in (False, False, True):  # self attributes and callbacks settle in the first passes
        checker.recording = recording
        checker.checked = 0
        checker.problems = []
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                for fn in node.body:
                    if isinstance(fn, ast.FunctionDef):
                        checker.run_function(fn, in_class=True)
            elif isinstance(node, ast.FunctionDef) and (functions is None or node.name in functions):
                checker.run_function(node, in_class=False)
    return checker.problems, checker.checked
