"""Pick the gz-sim and gz-math Python modules for the host running this plugin.

- Under the embedded host (eels_gz.host), bind to its API, even on a machine
  where Gazebo's bindings are installed too.
- Under Gazebo: gz-sim 10 is ``gz.sim``/``gz.math``, 9 is ``gz.sim9``/
  ``gz.math8``, 8 is ``gz.sim8``/``gz.math7``; the newest found wins.

Exports ``sim`` (Model, Link, Joint, World, ...) and ``gzmath`` (Vector3d,
Pose3d, Quaterniond), ``HOST`` ("embedded" or the gz module name) and
``iter_elements`` for repeated parameter elements.
"""

import importlib
import sys

_CANDIDATES = (("gz.sim", "gz.math"), ("gz.sim9", "gz.math8"), ("gz.sim8", "gz.math7"))


def _embedded_host_running() -> bool:
    host = sys.modules.get("eels_gz.host.gzsim")
    return bool(host is not None and getattr(host, "HOST_ACTIVE", False))


def _select():
    if _embedded_host_running():
        from eels_gz.host import gzmath as math_module
        from eels_gz.host import gzsim as sim_module

        return sim_module, math_module, "embedded"
    errors = []
    for sim_name, math_name in _CANDIDATES:
        try:
            return importlib.import_module(sim_name), importlib.import_module(math_name), sim_name
        except ImportError as exc:
            errors.append(f"{sim_name}: {exc}")
    raise ImportError(
        "no gz-sim Python bindings found (tried " + "; ".join(errors) + ") and the eels_gz embedded host "
        "is not running this plugin"
    )


sim, gzmath, HOST = _select()


def iter_elements(sdf, name):
    """Every child element ``name`` of an sdformat Element, in order."""
    el = sdf.find_element(name) if sdf.has_element(name) else None
    while el is not None:
        yield el
        el = el.get_next_element(name)
