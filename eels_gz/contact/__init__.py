"""Screw–terrain contact model (EELS-DARTS §2.2.2): penalty normal force,
isotropic and anisotropic friction with a zero-slip regulator, contact-point
sets on screws, the vectorized wrench kernel, and the friction calibration
of Fig. 6/7. Pure numpy/numba; no engine imports."""

from eels_gz.contact.laws import EV_NORM_MIN, ev_norm_of_load, friction_force, normal_force
from eels_gz.contact.params import ContactParams, load_contact_params

__all__ = [
    "EV_NORM_MIN",
    "ContactParams",
    "ev_norm_of_load",
    "friction_force",
    "load_contact_params",
    "normal_force",
]
