"""Screw contact parameters from ``config/contact/<name>.yaml``, checked key by key (``eels_gz.paramsets``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from eels_gz.contact.laws import ev_norm_of_load
from eels_gz.paramsets import Bounds, ParamSetKind, write_param_set

DEFAULT = "ice"
# The packed record the compiled wrench kernel reads (``ContactParams.packed``): float64 values at these
# offsets. PACK_LAW holds the friction law, LAW_REGULATED (``screw_wrenches.py``) or LAW_BRISTLE (``stick.py``).
PACK_MU, PACK_EV_A, PACK_EV_B, PACK_K, PACK_C, PACK_V_EPS, PACK_STICK_LENGTH, PACK_ROLL_ARM, PACK_LAW = range(9)
PACK_SIZE = 9
LAW_REGULATED, LAW_BRISTLE = 0.0, 1.0


@dataclass(frozen=True)
class ContactParams:
    """Screw–terrain contact parameters (SI units).

    mu: friction coefficient along the threads (dimensionless).
    ev_a, ev_b: across-thread ratio |e_v| = ev_a + ev_b F_n, F_n the total
    normal load on one screw (ev_a dimensionless, ev_b in 1/N).
    k: penalty stiffness per contact point (N/m); c: damping per point (N s/m).
    v_eps: friction regulator speed (m/s); 0 is the unregulated Eq. 6.
    points_axial: stations along each screw; points_ring: points around each
    station (the first one faces "down"); points_per_screw is their product.
    stick_length: bristle length z0 of the stick-slip law (m, ``stick.py``);
    0 (the key may be left out) uses the regulator instead.
    roll_arm: rolling resistance of the embedded blades (m, ``point_terms.py``):
    the largest offset of the normal force from the contact line, so that a
    screw of load F_n starts to roll at the moment roll_arm F_n; 0 (the key
    may be left out): a line contact that does not resist rolling.
    """

    mu: float
    ev_a: float
    ev_b: float
    k: float
    c: float
    v_eps: float
    points_axial: int
    points_ring: int
    stick_length: float = 0.0
    roll_arm: float = 0.0

    def __post_init__(self) -> None:
        for f in fields(self):
            CONTACT.check(f.name, getattr(self, f.name), "ContactParams")

    @property
    def points_per_screw(self) -> int:
        return self.points_axial * self.points_ring

    def ev_norm(self, f_n: ArrayLike) -> np.ndarray:
        """|e_v| at screw load ``f_n`` (N), clamped as in ``ev_norm_of_load``."""
        return ev_norm_of_load(f_n, self.ev_a, self.ev_b)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def law(self) -> float:
        """The friction law: LAW_BRISTLE when ``stick_length > 0``, else LAW_REGULATED."""
        return LAW_BRISTLE if self.stick_length > 0.0 else LAW_REGULATED

    def packed(self) -> np.ndarray:
        """The parameters as one read-only float64 record, (PACK_SIZE,) at the ``PACK_*`` offsets, in
        the units of the fields: what the compiled wrench kernel takes. Built once per set (the set is
        frozen) and returned again on later calls."""
        record = self.__dict__.get("_packed")
        if record is None or record.flags.writeable:  # (an unpickled copy comes back writeable)
            record = np.empty(PACK_SIZE)
            record[PACK_MU], record[PACK_EV_A], record[PACK_EV_B] = self.mu, self.ev_a, self.ev_b
            record[PACK_K], record[PACK_C], record[PACK_V_EPS] = self.k, self.c, self.v_eps
            record[PACK_STICK_LENGTH], record[PACK_ROLL_ARM] = self.stick_length, self.roll_arm
            record[PACK_LAW] = self.law
            record.flags.writeable = False
            object.__setattr__(self, "_packed", record)
        return record


CONTACT = ParamSetKind("contact", "contact", {
    "mu": Bounds(0.0, True, "a friction coefficient >= 0"),
    "ev_a": Bounds(0.0, False, "an intercept > 0 (|e_v| at zero load)"),
    "ev_b": Bounds(0.0, True, "a slope >= 0 in 1/N (|e_v| grows with load, EELS-DARTS Fig. 6)"),
    "k": Bounds(0.0, False, "a stiffness > 0 in N/m"),
    "c": Bounds(0.0, True, "a damping >= 0 in N s/m"),
    "v_eps": Bounds(0.0, True, "a regulator speed >= 0 in m/s"),
    "points_axial": Bounds(1, True, "an integer >= 1", integer=True),
    "points_ring": Bounds(1, True, "an integer >= 1", integer=True),
    "stick_length": Bounds(0.0, True, "a bristle length >= 0 in m (0: the regulator)"),
    "roll_arm": Bounds(0.0, True, "a rolling-resistance arm >= 0 in m (0: no rolling resistance)"),
}, optional={"stick_length": 0.0, "roll_arm": 0.0})  # optional: keys a file may leave out, with their defaults
KEYS = tuple(CONTACT.keys)
OPTIONAL = CONTACT.optional


def contact_config_path(path_or_name: str | Path = DEFAULT) -> Path:
    """A YAML path as given, or ``config/contact/<name>.yaml`` for a bare name."""
    return CONTACT.path(path_or_name)


def load_contact_params(path_or_name: str | Path = DEFAULT) -> ContactParams:
    """Read and check a contact parameter file (a path, or a name under config/contact/).

    Every key of ``ContactParams`` is required; unknown keys and out-of-range
    values raise ConfigError naming the file, the key and the allowed range.
    (In the embedded host a run's contact system gets the set the run resolved from the host
    context instead, ``ecm.param_sets``.)
    """
    path = contact_config_path(path_or_name)
    values = CONTACT.read(path)
    return ContactParams(**values)


def check_contact_value(key: str, value: object, source: str) -> None:
    """Check one contact key (``mu``, ``ev_a``, ...) set on its own, e.g. ``--set contact.mu=0.12``:
    ConfigError naming the key and the valid ones if it is unknown, or its range if the value is out of it."""
    CONTACT.check_setting(key, value, source)


def resolve_contact_params(path_or_name: str | Path, overrides: dict | None = None,
                           base: ContactParams | None = None) -> ContactParams:
    """The set ``path_or_name`` with the keys of ``overrides`` (e.g. ``{"mu": 0.12}``) replaced, checked.
    ``base``: that set as already read from ``path_or_name`` (then the file is not read again)."""
    params = base if base is not None else load_contact_params(path_or_name)
    if not overrides:
        return params
    return ContactParams(**CONTACT.with_settings(params.to_dict(), overrides,
                                                 f"contact parameters over '{path_or_name}'"))


def write_contact_params(params: ContactParams, path: str | Path, header: str = "") -> Path:
    """Write a full parameter set (every key) as YAML that :func:`load_contact_params` reads back."""
    return write_param_set(params.to_dict(), path, header)
