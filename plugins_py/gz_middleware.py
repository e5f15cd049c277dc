"""gz-transport and gz-msgs for the host running a plugin (one of the jobs of the plugins' compat
layer, ``gz_compat``, which re-exports ``transport`` and ``msgs``).

``transport`` (``Node`` with ``advertise``/``subscribe`` as in gz.transport13's Python API) and ``msgs``
(``msgs.Twist``, ``msgs.Odometry``, ``msgs.Pose_V``, ...): in the embedded host its in-process bus
(eels_gz.gzapi.transport, delivery before the next step's pre_update) and plain-Python gz.msgs classes
(eels_gz.gzapi.msgs); under Gazebo the gz-transport module and the gz-msgs ``*_pb2`` classes of the same
release as the gz-sim binding (:mod:`gz_binding`; gz-sim 8: transport13/msgs10, 9: transport14/msgs11,
10: transport/msgs), imported on first use. Not a system (no ``get_system()``).
"""

import importlib

from gz_binding import HOST

# gz-sim module -> (gz-transport module, gz-msgs package) of the same Gazebo release
_MIDDLEWARE = {"gz.sim": ("gz.transport", "gz.msgs"), "gz.sim9": ("gz.transport14", "gz.msgs11"),
               "gz.sim8": ("gz.transport13", "gz.msgs10")}
# gz-msgs message name -> its *_pb2 module where the name is not simply lower-cased
_PB2_MODULES = {"PointCloudPacked": "pointcloud_packed_pb2"}


class _GzMsgs:
    """``msgs.Twist`` etc. from a gz-msgs package's ``*_pb2`` modules, imported on first use."""

    def __init__(self, package: str):
        self._package = package

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        module = _PB2_MODULES.get(name, name.lower() + "_pb2")
        try:
            cls = getattr(importlib.import_module(f"{self._package}.{module}"), name)
        except (ImportError, AttributeError) as exc:
            raise AttributeError(f"gz-msgs has no message {name} in {self._package}.{module}: {exc}") from exc
        setattr(self, name, cls)
        return cls


if HOST == "embedded":
    from eels_gz.gzapi import msgs as msgs  # noqa: E402
    from eels_gz.gzapi import transport as transport  # noqa: E402
else:
    def __getattr__(name):
        # resolved on first use (PEP 562), so plugins that need no transport do not import it
        if name == "transport":
            value = importlib.import_module(_MIDDLEWARE[HOST][0])
        elif name == "msgs":
            value = _GzMsgs(_MIDDLEWARE[HOST][1])
        else:
            raise AttributeError(f"module 'gz_middleware' has no attribute '{name}'")
        globals()[name] = value
        return value
