"""Old path of :mod:`eels_gz.sdf_reader` (the SDF subset the embedded host supports, read into plain
dataclasses; it uses no engine), a named contract kept importable: earlier issues, launch files and
user code name it."""

from eels_gz.sdf_reader import (  # noqa: F401
    PYTHON_LOADER,
    RENDER_ONLY,
    SOLVERS,
    CollisionSpec,
    Geometry,
    Inertial,
    LinkSpec,
    ModelSpec,
    PluginSpec,
    Surface,
    WorldSpec,
    load_world,
    parse_xml,
    resolve_uri,
)
