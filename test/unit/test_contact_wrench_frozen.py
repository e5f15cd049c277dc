"""The screw contact's wrenches are bit for bit those of the two kernels it replaced.

data/contact_wrench_reference.npz holds the forces, torques, normal forces, point forces and the
per-point state (bristles, rolling seats) that the regulated and bristle kernels computed before they
became one loop (commit 6e01780, made by contact_wrench_reference.py on that commit), for both laws
with and without rolling resistance and the unregulated law, on the compiled half-space path, the
general terrain path (a tube) and ``screw_wrenches`` with a plane's query, over twelve steps so that
the state carries over. The merged kernel performs the same floating-point operations in the same
order (fastmath off, so numba may not reassociate them): the comparison is exact, no tolerance.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from contact_wrench_reference import PARAMS, PATHS, compute

DATA = Path(__file__).parent / "data" / "contact_wrench_reference.npz"


@pytest.fixture(scope="module")
def frozen() -> dict[str, np.ndarray]:
    with np.load(DATA) as data:
        return {k: data[k] for k in data.files}


@pytest.fixture(scope="module")
def today(frozen) -> dict[str, np.ndarray]:
    floors = {floor: {k: frozen[f"input/{floor}/{k}"] for k in ("pos", "rot", "lin", "ang")}
              for floor in ("plane", "tube")}
    return compute(floors)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", PARAMS)
def test_wrenches_equal_the_frozen_kernels_bit_for_bit(frozen, today, name, path):
    in_contact = frozen[f"{name}/{path}/normal_force"] > 0.0
    assert 0 < np.count_nonzero(in_contact) < in_contact.size  # some points touch, some do not
    for key in ("force", "torque", "normal_force", "point_force", "state"):
        full = f"{name}/{path}/{key}"
        assert today[full].shape == frozen[full].shape, full
        diff = np.flatnonzero(today[full] != frozen[full])
        assert diff.size == 0, (f"{full}: {diff.size} of {today[full].size} values differ, largest by "
                                f"{np.max(np.abs(today[full] - frozen[full]))}")
