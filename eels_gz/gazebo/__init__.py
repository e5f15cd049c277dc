"""Real Gazebo: find an installed gz-sim 8 (Harmonic) and run a scenario's exported world in it.

``eels-gz run --host gazebo`` (and ``compare --host gazebo``, ``--set sim.host=gazebo``) exports the
resolved run as ``eels-gz export --headless`` writes it, runs it in the gz-sim server found here
(:mod:`eels_gz.gazebo.install`) on a private ``GZ_PARTITION`` over loopback (:mod:`eels_gz.gazebo.server`),
listens to its gz-transport topics from a separate process that has Gazebo's Python bindings
(:mod:`eels_gz.gazebo.listen`), and writes the same run folder the embedded host writes
(:mod:`eels_gz.gazebo.run`). The project never builds Gazebo: a user installs Gazebo Harmonic from
its binary packages (with ROS 2 Jazzy, or packages.osrfoundation.org).

This package is the only one that starts gz-sim or imports Gazebo's own ``gz.transport13``/``gz.msgs10``
(the listener, in its own interpreter); ``plugins_py/`` run inside gz-sim through ``gz_compat``.
"""
