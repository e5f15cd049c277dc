"""A plugin's parameters read from its ``<plugin>`` element, with sdformat's getters (one of the jobs of
the plugins' compat layer, ``gz_compat``, which re-exports these names): ``iter_elements`` for repeated
elements, ``param(el, getter, key, plugin)`` for a required one, read with the two-argument getter (the
one-argument form gives 0 or "" for a missing key; a missing one is a ValueError naming it and the
plugin), and ``scenario_params`` for a scenario's ``<params>``. Runs the same in both hosts. Not a
system (no ``get_system()``).
"""


def iter_elements(sdf, name):
    """Every child element ``name`` of an sdformat Element, in order."""
    el = sdf.find_element(name) if sdf.has_element(name) else None
    while el is not None:
        yield el
        el = el.get_next_element(name)


# the two-argument getters need a default of the getter's type
_DEFAULTS = {"get_double": 0.0, "get_float": 0.0, "get_int": 0, "get_unsigned_int": 0, "get_bool": False,
             "get_string": ""}


def param(el, getter: str, key: str, plugin: str):
    """A required parameter ``key`` (attribute or child element) of ``el``, read
    with ``el.<getter>(key, default)``; ValueError naming it and ``plugin`` when missing."""
    value, found = getattr(el, getter)(key, _DEFAULTS[getter])
    if not found:
        raise ValueError(f"{plugin}: <{el.get_name()}> has no '{key}' (a required {getter[4:]} parameter)")
    return value


def scenario_params(sdf) -> dict:
    """The scenario's resolved parameters: every child of the ``<params>`` element as a float
    (eels_gz.scenarios.plugin_elements writes them; SI units and radians). {} without ``<params>``; a child
    that is not a number is a ValueError naming it."""
    if not sdf.has_element("params"):
        return {}
    out = {}
    el = sdf.find_element("params").get_first_element()
    while el is not None:
        value, found = el.get_double("", 0.0)  # the element's own value (sdformat: an empty key)
        if not found:
            text, _ = el.get_string("", "")
            raise ValueError(f"scenario <params>: <{el.get_name()}> must be a number, got {text!r}")
        out[el.get_name()] = value
        el = el.get_next_element("")
    return out
