"""The embedded host's engine side implements what ``eels_gz/gzapi/engine.py`` declares (issue 46): every
method of the ``Engine`` and ``ModelState`` protocols exists on ``dart.skeleton_state.DartEngine`` and
``SkeletonState`` with the same parameters, and the host's ECM and models carry them."""

from __future__ import annotations

import inspect

import pytest

from eels_gz.gzapi import engine

pytest.importorskip("dartpy")

from eels_gz.dart.skeleton_state import DartEngine, SkeletonState  # noqa: E402


def _methods(protocol) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(fn) for name, fn in vars(protocol).items()
            if inspect.isfunction(fn) and not name.startswith("_")}


@pytest.mark.parametrize("protocol, implementation", [(engine.Engine, DartEngine),
                                                      (engine.ModelState, SkeletonState)])
def test_the_dart_side_implements_each_protocol_method(protocol, implementation):
    declared = _methods(protocol)
    assert declared  # the protocol declares something to check
    for name, signature in declared.items():
        assert hasattr(implementation, name), f"{implementation.__name__} lacks {protocol.__name__}.{name}"
        wanted = [p for p in signature.parameters if p != "self"]
        got = [p for p in inspect.signature(getattr(implementation, name)).parameters if p != "self"]
        assert got == wanted, f"{implementation.__name__}.{name}{got} != {protocol.__name__}.{name}{wanted}"


def test_model_state_attributes_are_fields_of_the_skeleton_state():
    fields = set(SkeletonState.__dataclass_fields__)
    assert set(engine.ModelState.__annotations__) <= fields


def test_the_host_ecm_carries_the_engine_and_its_models_a_state():
    from eels_gz import registry
    from eels_gz.dart.simulation import Simulation

    sim = Simulation(registry.world_path("ice_plane"))
    assert isinstance(sim.ecm.engine, DartEngine)
    assert sim.ecm.batches == {} and sim.ecm.param_sets == {}
