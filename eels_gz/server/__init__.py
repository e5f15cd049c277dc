"""A resident warm run server: ``eels-gz run`` in a moment.

A fresh ``eels-gz run`` spends over a second importing numpy, numba, DART and matplotlib and loading
its kernels before its first step. ``eels-gz serve`` (:mod:`eels_gz.server.daemon`) does that once:
it warms itself as a sweep's worker does (:func:`eels_gz.sweep.forked.warm`: the run's imports, a
0.1 s run of the default configuration, ``gc.freeze``) and listens on a Unix socket in a private
folder (:mod:`eels_gz.server.common`). ``eels-gz run`` (:mod:`eels_gz.server.client`) hands it its
command line, working folder, environment and its stdin/stdout/stderr; the server forks a child per
command that takes all of them and runs the same CLI code path, and the client exits with the
child's exit code. A client whose source files, interpreter or search path differ from the
server's (a user who edited a plugin) runs cold instead, and says why. Linux only.
"""
