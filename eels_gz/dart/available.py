"""Whether the engine (dartpy) can be imported here: a Gazebo machine need not have it (the export then
takes a scenario's shipped placement, eels_gz.run.placing). Imports nothing else of the adapter."""

from __future__ import annotations


def engine_available() -> bool:
    try:
        import dartpy  # noqa: F401
    except ImportError:
        return False
    return True
