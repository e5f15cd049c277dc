"""The plugins' compat layer: what a gz-sim Python system of this package needs beyond its own code, the
same in both hosts, re-exported from the five modules that each do one of its jobs (a named contract:
every plugin imports from here):

- :mod:`gz_binding`: ``sim`` (Model, Link, Joint, World, ...), ``gzmath`` (Vector3d, Pose3d,
  Quaterniond) and ``HOST`` ("embedded" or the gz module name): the embedded host's API while it runs
  the plugin, else the newest (or the loader's) gz-sim release;
- :mod:`gz_middleware`: ``transport`` and ``msgs`` of that host or release (imported on first use);
- :mod:`sdf_params`: ``iter_elements``, ``param`` and ``scenario_params``, the ``<plugin>`` element read;
- :mod:`batched_state`: ``link_world_states``, ``link_world_inertials``, ``add_link_world_wrenches``,
  ``joint_states``, ``set_joint_forces`` (and their one-entity ``*_each`` paths);
- :mod:`scenario_support`: ``watched_link``, ``base_link``, ``register_peer``, ``peer``,
  ``request_run_end``, ``resolved_set`` (a run's resolved parameter set, from the embedded host's
  context), ``MetricsFile``.

None of them is a system (no ``get_system()``): gz-sim loads only the modules an SDF ``<module_name>``
names, and the host's loader refuses a module without ``get_system()``.
"""

from batched_state import (  # noqa: F401
    add_link_world_wrenches,
    add_link_world_wrenches_each,
    joint_states,
    joint_states_each,
    link_world_inertials,
    link_world_states,
    link_world_states_each,
    set_joint_forces,
    set_joint_forces_each,
)
from gz_binding import HOST, gzmath, sim  # noqa: F401
from scenario_support import (  # noqa: F401
    METRICS_EVERY_S,
    MetricsFile,
    base_link,
    peer,
    register_peer,
    request_run_end,
    resolved_set,
    watched_link,
)
from sdf_params import iter_elements, param, scenario_params  # noqa: F401


def __getattr__(name):
    # transport and msgs resolve on first use under Gazebo (PEP 562), so plugins that need no transport
    # do not import it
    if name in ("transport", "msgs"):
        import gz_middleware

        value = getattr(gz_middleware, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gz_compat' has no attribute '{name}'")
