"""How the process that runs a run came to be, for summary.json's ``process`` (a run never lies
about it): ``fresh`` (a new interpreter, ``eels-gz run`` as typed), ``server`` (a child forked by a
warm run server, :mod:`eels_gz.server`) or ``forked`` (a sweep sample forked from its warm worker,
:mod:`eels_gz.sweep.forked`). Whoever forks the process says so with :func:`set_start` in the child."""

from __future__ import annotations

import os

_start: dict = {"start": "fresh"}


def set_start(start: str, **info) -> None:
    """Record how this process started (``start``) and what else a reader should know (JSON values)."""
    global _start
    _start = {"start": start, **info}


def process_info() -> dict:
    """summary.json's ``process``: {"start": ..., "pid": this process, ...}."""
    return {**_start, "pid": os.getpid()}
