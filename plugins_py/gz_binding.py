"""Which gz-sim and gz-math Python modules a plugin binds to, for the host running it (one of the jobs
of the plugins' compat layer, ``gz_compat``, which re-exports ``sim``, ``gzmath`` and ``HOST``).

- Under the embedded host (eels_gz.gzapi), bind to its API, even on a machine
  where Gazebo's bindings are installed too.
- Under Gazebo: gz-sim 10 is ``gz.sim``/``gz.math``, 9 is ``gz.sim9``/
  ``gz.math8``, 8 is ``gz.sim8``/``gz.math7``. gz-sim's PythonSystemLoader
  imports its own ``gz.sim<major>`` before the plugin's module
  (``PythonSystemLoader.cc``), so the module already in ``sys.modules`` is
  the loader's and wins: ``configure`` receives that module's objects even on
  a machine with several releases' bindings. Only when none is imported yet
  (a plain ``import gz_binding``) the newest installed wins.

``HOST`` is "embedded" or the gz-sim module's name. The choice is made once, on the first import. Not a
system (no ``get_system()``): gz-sim never loads it as one.
"""

import importlib
import sys

_CANDIDATES = (("gz.sim", "gz.math"), ("gz.sim9", "gz.math8"), ("gz.sim8", "gz.math7"))


def _embedded_host_running() -> bool:
    host = sys.modules.get("eels_gz.gzapi.gzsim")
    return bool(host is not None and getattr(host, "HOST_ACTIVE", False))


def _select():
    if _embedded_host_running():
        from eels_gz.gzapi import gzmath as math_module
        from eels_gz.gzapi import gzsim as sim_module

        return sim_module, math_module, "embedded"
    loaded = [(sim_name, math_name) for sim_name, math_name in _CANDIDATES if sim_name in sys.modules]
    if loaded:  # the loader's module (the newest, should several be imported)
        sim_name, math_name = loaded[0]
        return sys.modules[sim_name], importlib.import_module(math_name), sim_name
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
