"""Old path of :mod:`eels_gz.contact.screw_wrenches` (the screw contact's wrenches, one compiled loop
for both friction laws), kept importable for plugins installed from earlier releases."""

from eels_gz.contact.screw_wrenches import (  # noqa: F401
    NO_ACROSS,
    NO_MOBILITY,
    ContactWorkspace,
    ScrewContactStep,
    ScrewWrenches,
    contact_wrench_kernel,
    half_space_wrenches,
    new_contact_state,
    screw_wrenches,
    stick_wrench_kernel,
    wrench_kernel,
)
