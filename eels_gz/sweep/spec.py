"""A campaign spec (``eels-gz sweep SPEC.yaml``): read, checked key by key, and expanded into samples.

::

    base:            # the settings every sample starts from: an `eels-gz run` configuration
      robot: eels_1_0_alternating          # (the keys of config/run_defaults.yaml, dotted or nested)
      scenario: screw_spin
      contact: {model: screw}
    samples: 32      # draws of the random dispersions (per grid point; ignored by pure grids)
    seed: 7          # campaign seed; each sample's seed is derived from it and the sample's index
    dispersions:     # a dotted settings key -> one distribution
      scenario.screw_rate: {uniform: [1.0, 4.0]}     # lo, hi
      contact.mu: {normal: [0.15, 0.02]}             # mean, standard deviation
      world: {choice: [ice_plane, slope_10]}         # one of these, equally likely
      robot.n_modules: {grid: [4, 6, 10]}            # every one of these
    metrics:         # dotted keys of summary.json or metrics.json, one column each
      - real_time_factor
      - final_base_pose.position

Extensions beside those keys: ``command`` (``run``, the default, or ``rover drive``: then ``base`` and
the dispersions take the settings of a rover drive, :mod:`eels_gz.sweep.commands`) and ``cases``: a
list of dispersion mappings, each expanded on its own (with ``dispersions`` common to all) and the
samples of all cases run in one campaign: a union of grids, e.g. the rover campaign's flat and slope
plans.

Expansion: in each case, the grid dispersions' Cartesian product; at every grid point ``samples``
draws of the random ones (one draw when there are none). Sample ``i`` (numbered from 0 over the
whole campaign) gets the seed ``SeedSequence([seed, i])`` and draws its values from a generator of
that seed, in the order the spec lists the keys, so a sample's values depend only on the spec, the
campaign seed and its index. The seed also becomes the run's ``sensors.seed`` (sensor noise), unless
the spec sets that itself.

``draws: shared`` (the default is ``per_sample``) gives every grid point of every case the same
``samples`` seeds: the k-th sample of each grid point takes ``SeedSequence([seed, k])``. A campaign over
unknown parameters then runs each drawn parameter set at every grid point (every slope, every rate),
so a curve over the grid is one parameter set's and the grid points' statistics are over the same
sets; and cases whose random dispersions are listed alike draw alike (common random numbers: the k-th
draw of each is at the same quantiles of its own ranges), so they compare draw by draw.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from eels_gz.config import load_yaml
from eels_gz.errors import ConfigError
from eels_gz.ranges import MAX_SAMPLES_TOTAL, SAMPLES
from eels_gz.sweep.figures import check_figures

SPEC_KEYS = ("base", "samples", "seed", "dispersions", "metrics", "command", "cases", "figures", "draws")
DRAWS = ("per_sample", "shared")
DISTRIBUTIONS = {
    "uniform": "[lo, hi], lo < hi: a number drawn evenly between them",
    "normal": "[mean, std], std > 0: a number drawn from the normal distribution",
    "choice": "[a, b, ...]: one of the values, each equally likely",
    "grid": "[a, b, ...]: every value (the grids' Cartesian product)",
}
RESERVED_COLUMNS = ("sample", "case", "seed", "status", "message", "run", "wall_time")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass(frozen=True)
class Dispersion:
    """One dispersed key: ``kind`` is a key of DISTRIBUTIONS, ``values`` its list."""

    key: str
    kind: str
    values: tuple

    @property
    def random(self) -> bool:
        return self.kind != "grid"

    def draw(self, rng: np.random.Generator) -> Any:
        if self.kind == "uniform":
            return float(rng.uniform(self.values[0], self.values[1]))
        if self.kind == "normal":
            return float(rng.normal(self.values[0], self.values[1]))
        return self.values[int(rng.integers(len(self.values)))]

    def representatives(self) -> list:
        """Values that stand for the whole distribution when the spec is checked (its bounds, its mean,
        every choice)."""
        return [self.values[0]] if self.kind == "normal" else list(self.values)

    def to_dict(self) -> dict:
        return {self.kind: list(self.values)}


@dataclass(frozen=True)
class Sample:
    """One run of the campaign: its index, its seed and the values drawn for the dispersed keys."""

    index: int
    seed: int
    inputs: dict
    case: int = 0
    labels: dict = field(default_factory=dict)  # the case's constant columns (``labels:`` of a case)

    @property
    def name(self) -> str:
        return f"{self.index:05d}"


def sample_seed(seed: int, index: int) -> int:
    """The seed of sample ``index`` of a campaign of seed ``seed`` (a 32-bit integer); with ``draws: shared``,
    of the ``index``-th draw at every grid point."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1, np.uint32)[0])


@dataclass(frozen=True)
class SweepSpec:
    """A checked campaign spec (module docstring). ``source`` names the file in messages."""

    base: dict
    samples: int | None
    seed: int
    dispersions: tuple[Dispersion, ...]
    metrics: tuple[str, ...]
    command: str = "run"
    cases: tuple[tuple[Dispersion, ...], ...] = ()
    source: str = "<spec>"
    case_labels: tuple[dict, ...] = ()  # per case: label column -> value (``labels:`` of a case)
    figures: tuple[str, ...] = ()  # campaign figures by name (eels_gz.sweep.figures)
    raw: dict = field(default_factory=dict, compare=False)
    draws: str = "per_sample"  # or "shared": every grid point takes the same draws (module docstring)

    @property
    def keys(self) -> list[str]:
        """Every dispersed key, common ones first, in the spec's order."""
        out = [d.key for d in self.dispersions]
        for case in self.cases:
            out += [d.key for d in case if d.key not in out]
        for labels in self.case_labels:
            out += [k for k in labels if k not in out]
        return out

    def case_dispersions(self) -> list[tuple[Dispersion, ...]]:
        return [self.dispersions + case for case in self.cases] if self.cases else [self.dispersions]

    def count(self) -> int:
        """How many samples :meth:`expand` gives, without making them."""
        total = 0
        for dispersions in self.case_dispersions():
            grid = [d for d in dispersions if not d.random]
            n = (self.samples or 1) if any(d.random for d in dispersions) else 1
            total += math.prod(len(d.values) for d in grid) * n
        return total

    def expand(self) -> list[Sample]:
        """Every sample of the campaign, in index order (module docstring)."""
        out: list[Sample] = []
        for c, dispersions in enumerate(self.case_dispersions()):
            grid = [d for d in dispersions if not d.random]
            draws = [d for d in dispersions if d.random]
            n = (self.samples or 1) if draws else 1
            for point in itertools.product(*(d.values for d in grid)):
                fixed = dict(zip((d.key for d in grid), point))
                for k in range(n):
                    index = len(out)
                    seed = sample_seed(self.seed, k if self.draws == "shared" else index)
                    rng = np.random.default_rng(seed)
                    drawn = {d.key: d.draw(rng) for d in draws}
                    inputs = {d.key: fixed[d.key] if d.key in fixed else drawn[d.key] for d in dispersions}
                    labels = dict(self.case_labels[c]) if c < len(self.case_labels) else {}
                    out.append(Sample(index, seed, inputs, c, labels))
        return out

    def to_dict(self) -> dict:
        """The spec as checked, in the file's layout (``sweep.json`` and the fingerprint)."""
        out = {"command": self.command, "base": self.base, "samples": self.samples, "seed": self.seed,
               "dispersions": {d.key: d.to_dict() for d in self.dispersions}, "metrics": list(self.metrics)}
        if self.cases:
            out["cases"] = [{d.key: d.to_dict() for d in case} for case in self.cases]
            for case, labels in zip(out["cases"], self.case_labels):
                if labels:
                    case["labels"] = dict(labels)
        if self.figures:
            out["figures"] = list(self.figures)
        if self.draws != "per_sample":  # absent by default: the fingerprints of earlier campaigns stand
            out["draws"] = self.draws
        return out

    def fingerprint(self) -> str:
        """A hash of what decides the samples and their runs (``--resume`` refuses another spec's folder)."""
        decides = {k: v for k, v in self.to_dict().items() if k != "figures"}  # figures are drawn afterwards
        text = json.dumps(decides, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _fail(source: str, where: str, message: str) -> ConfigError:
    return ConfigError(f"{source}: {where}: {message}")


def _dispersion(key: Any, value: Any, source: str, where: str) -> Dispersion:
    if not isinstance(key, str) or not key or any(not part for part in key.split(".")):
        raise _fail(source, where, f"the key {key!r} must be a dotted settings key, e.g. contact.mu")
    at = f"{where}.{key}"
    expected = "; ".join(f"{k}: {v}" for k, v in DISTRIBUTIONS.items())
    if not isinstance(value, dict) or len(value) != 1:
        raise _fail(source, at, f"expected one distribution, e.g. {{uniform: [0.1, 0.2]}}, got {value!r} "
                                f"(distributions: {expected})")
    kind, values = next(iter(value.items()))
    if kind not in DISTRIBUTIONS:
        raise _fail(source, at, f"unknown distribution '{kind}'; expected one of {', '.join(DISTRIBUTIONS)}")
    if not isinstance(values, list):
        raise _fail(source, at, f"{kind} takes a list, {DISTRIBUTIONS[kind]}; got {values!r}")
    if kind in ("uniform", "normal"):
        if len(values) != 2 or not all(_number(v) for v in values):
            raise _fail(source, at, f"{kind} takes two finite numbers, {DISTRIBUTIONS[kind]}; got {values!r}")
        if kind == "uniform" and not values[0] < values[1]:
            raise _fail(source, at, f"uniform needs lo < hi, got [{values[0]}, {values[1]}]")
        if kind == "normal" and not values[1] > 0:
            raise _fail(source, at, f"normal needs a standard deviation > 0, got {values[1]}")
        return Dispersion(key, kind, (float(values[0]), float(values[1])))
    if not values:
        raise _fail(source, at, f"empty {kind}: it needs at least one value, {DISTRIBUTIONS[kind]}")
    return Dispersion(key, kind, tuple(values))


def _dispersions(data: Any, source: str, where: str) -> tuple[Dispersion, ...]:
    if data is None:
        return ()
    if not isinstance(data, dict):
        raise _fail(source, where, f"expected a mapping of settings keys to distributions, got {data!r}")
    return tuple(_dispersion(k, v, source, where) for k, v in data.items())


def _draws(data: dict, source: str) -> str:
    draws = data.get("draws", "per_sample")
    if draws not in DRAWS:
        raise _fail(source, "draws", f"expected one of {', '.join(DRAWS)}, got {draws!r}")
    return draws


def _labels(case: Any, source: str, where: str) -> dict:
    """A case's ``labels:``: constant columns of its samples' rows (names or numbers), not settings of
    the run, e.g. ``labels: {setup: A}``."""
    if not isinstance(case, dict) or "labels" not in case:
        return {}
    labels = case["labels"]
    if not isinstance(labels, dict) or not labels or not all(
            isinstance(k, str) and k and "." not in k and k not in RESERVED_COLUMNS for k in labels):
        raise _fail(source, f"{where}.labels", "expected a mapping of column names (no dots, not "
                                               f"{', '.join(RESERVED_COLUMNS)}) to values, got {labels!r}")
    for k, v in labels.items():
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise _fail(source, f"{where}.labels.{k}", f"expected a name or a number, got {v!r}")
    return dict(labels)


def _integer(data: dict, key: str, source: str, low: int, default: int | None,
             high: float | None = None) -> int | None:
    value = data.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        raise _fail(source, key, f"expected a whole number >= {low}" + (f" and <= {high:g}" if high is not None
                                                                           else "") + f", got {value!r}")
    return value


def parse_spec(data: Any, source: str = "<spec>") -> SweepSpec:
    """Check a spec mapping key by key (structure only; :func:`check_spec` checks the settings)."""
    from eels_gz.sweep.commands import command

    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a sweep spec must be a mapping with base, dispersions and metrics, "
                          f"got {type(data).__name__}")
    unknown = [str(k) for k in data if k not in SPEC_KEYS]
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {', '.join(unknown)}; valid keys: {', '.join(SPEC_KEYS)}")
    name = data.get("command", "run")
    command(name, source)  # a known command
    base = data.get("base") or {}
    if not isinstance(base, dict):
        raise _fail(source, "base", f"expected a mapping of settings (an `eels-gz {name}` configuration), "
                                    f"got {base!r}")
    dispersions = _dispersions(data.get("dispersions"), source, "dispersions")
    raw_cases = data.get("cases")
    cases: tuple[tuple[Dispersion, ...], ...] = ()
    labels: tuple[dict, ...] = ()
    if raw_cases is not None:
        if not isinstance(raw_cases, list) or not raw_cases:
            raise _fail(source, "cases", f"expected a non-empty list of dispersion mappings, got {raw_cases!r}")
        labels = tuple(_labels(c, source, f"cases[{i}]") for i, c in enumerate(raw_cases))
        cases = tuple(_dispersions({k: v for k, v in c.items() if k != "labels"} if isinstance(c, dict) else c,
                                   source, f"cases[{i}]") for i, c in enumerate(raw_cases))
    common = {d.key for d in dispersions}
    for i, case in enumerate(cases):
        both = [d.key for d in case if d.key in common]
        if both:
            raise _fail(source, f"cases[{i}].{both[0]}", "is dispersed in `dispersions` too; give it in one place")
    samples = _integer(data, "samples", source, 1, None, SAMPLES.high)
    seed = _integer(data, "seed", source, 0, 0)
    metrics = data.get("metrics") or []
    if not isinstance(metrics, list) or not all(isinstance(m, str) and m and all(m.split(".")) for m in metrics):
        raise _fail(source, "metrics", f"expected a list of dotted keys of summary.json or metrics.json, "
                                       f"e.g. [real_time_factor, final_base_pose.position], got {metrics!r}")
    seen = set()
    for m in metrics:
        if m in seen:
            raise _fail(source, f"metrics: '{m}'", "is listed twice")
        seen.add(m)
        if m in RESERVED_COLUMNS and m != "status":
            raise _fail(source, f"metrics: '{m}'", f"is a column of every results table "
                                                   f"({', '.join(RESERVED_COLUMNS)}); leave it out")
    spec = SweepSpec(base=copy.deepcopy(base), samples=samples, seed=seed, dispersions=dispersions,
                     metrics=tuple(m for m in metrics if m != "status"), command=name, cases=cases, source=source,
                     case_labels=labels if any(labels) else (), figures=check_figures(data.get("figures"), source),
                     raw=copy.deepcopy(data), draws=_draws(data, source))
    clash = [m for m in spec.metrics if m in spec.keys]
    if clash:
        raise _fail(source, f"metrics: '{clash[0]}'", "is also a dispersed key; a column holds one of them")
    random = any(d.random for ds in spec.case_dispersions() for d in ds)
    if random and samples is None:
        raise _fail(source, "samples", "needed: the number of draws of the random dispersions "
                                       "(uniform, normal, choice)")
    total = spec.count()
    if total > MAX_SAMPLES_TOTAL:
        raise _fail(source, "samples", f"the campaign would run {total:.3g} samples (grid points x samples, over "
                                       f"its cases), more than {MAX_SAMPLES_TOTAL:.0e}: split it, or draw fewer")
    return spec


def load_spec(path: str | Path) -> SweepSpec:
    """Read a spec file and check it whole (structure, settings keys and values, metrics): a
    ConfigError names the file and the key."""
    spec = parse_spec(load_yaml(path), str(path))
    check_spec(spec)
    return spec


def check_spec(spec: SweepSpec) -> None:
    """Check the settings a spec gives before anything runs, by the command's own checks: in each
    case, base with the first value standing for each dispersion, then with each other such value
    in turn (its bounds, its mean, every choice and grid value); and the metrics as far as they can
    be known before a run. A ConfigError names the file and the key."""
    from eels_gz.sweep.commands import command

    cmd = command(spec.command, spec.source)
    base_items = flatten(spec.base, "base", spec.source)
    cmd.settings(base_items, complete=False)  # base on its own first: its errors name base's keys
    items_list = representative_items(spec, base_items)
    for items in items_list:
        cmd.settings(items)
    cmd.check_metrics(spec, items_list)


def representative_items(spec: SweepSpec, base_items: list) -> list[list]:
    """Settings items (see :func:`check_spec`) that stand for every value a campaign may give."""
    out = []
    for dispersions in spec.case_dispersions():
        first = [(d.key, d.representatives()[0], f"{spec.source}: dispersions.{d.key} = "
                                                  f"{d.representatives()[0]!r}") for d in dispersions]
        out.append(base_items + first)
        for i, d in enumerate(dispersions):
            for v in d.representatives()[1:]:
                items = list(first)
                items[i] = (d.key, v, f"{spec.source}: dispersions.{d.key} = {v!r}")
                out.append(base_items + items)
    return out


def flatten(tree: dict, where: str, source: str) -> list[tuple[str, Any, str]]:
    """(dotted key, value, source for messages) for every leaf of a nested settings mapping whose keys
    may themselves be dotted; the free-form sections (scenario, robot.xacro_args) stay whole."""
    from eels_gz.config import FREE_FORM

    out = []

    def walk(node: dict, prefix: str) -> None:
        for k, v in node.items():
            key = f"{prefix}{k}"
            if isinstance(v, dict) and key not in FREE_FORM and v:
                walk(v, key + ".")
            else:
                out.append((key, v, f"{source}: {where}.{key}"))

    walk(tree, "")
    return out


def dump(spec: SweepSpec) -> str:
    return yaml.safe_dump(spec.to_dict(), sort_keys=False)
