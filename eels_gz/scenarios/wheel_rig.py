"""The ``wheel_rig`` scenario (issue 34): its system is ``plugins_py/wheel_rig.py``.

The rig's drives and measurements are that gz-sim system, which the rig's description
(``urdf/wheel_rig.urdf.xacro``) loads with the scenario's ``slip``, ``load`` and ``grousers``; the
scenario names it under ``systems:`` for its metrics, and the run does not load it a second time. It
ends the run once its measuring window is over and gives the steady-state figures of
``metrics.json`` (drawbar_pull_N, sinkage_m, wheel_torque_Nm, normal_load_N, slip, wheel_radius_m,
wheel_width_m), or a ``message`` when the window had no sample.
"""

from __future__ import annotations

from eels_gz.soil.rig import METRIC_KEYS

METRICS = (*METRIC_KEYS, "message")
