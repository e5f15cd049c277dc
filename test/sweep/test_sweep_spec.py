"""Campaign specs (eels_gz/sweep/spec.py): every shipped spec loads and is valid, a spec expands into
the samples its grids and draws give with seeds derived from the campaign seed and the index, the
draws follow their distributions, and every bad spec gets an error that names the key."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from eels_gz.errors import ConfigError
from eels_gz.run.drive_runs import PATHS
from eels_gz.paths import asset
from eels_gz.sweep import load_spec, parse_spec
from eels_gz.sweep.spec import check_spec, sample_seed

SHIPPED = sorted(asset("config", "sweeps").glob("*.yaml"))
BASE = {"robot": {"name": "eels_1_0_front_only", "n_modules": 2}, "scenario": "screw_spin", "duration": 0.05,
        "contact": {"model": "screw"}}


def spec(**parts) -> dict:
    return {"base": dict(BASE), "samples": 4, "seed": 7, "metrics": ["real_time_factor"], **parts}


def checked(data: dict, source: str = "spec.yaml"):
    s = parse_spec(data, source)
    check_spec(s)
    return s


def test_the_issue_names_three_shipped_specs():
    assert {p.stem for p in SHIPPED} >= {"screw_contact", "wall_climb_hold", "rover_campaign"}


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_spec_is_valid(path):
    s = load_spec(path)
    samples = s.expand()
    # a seed per sample; with shared draws a seed per draw, and no two samples alike
    assert samples and len({x.seed for x in samples}) == (s.samples if s.draws == "shared" else len(samples))
    assert len({(x.case, repr(sorted(x.inputs.items()))) for x in samples}) == len(samples)
    assert s.metrics


def test_the_issue_example_is_valid(tmp_path):
    """The spec in issue 21's text, as written (robot: NAME is short for robot.name)."""
    text = """
base:
  robot: eels_1_0_alternating
  world: ice_plane
  scenario: screw_spin
  duration: 5
  contact: {model: screw}
samples: 32
seed: 7
dispersions:
  scenario.screw_rate: {uniform: [1.0, 4.0]}
  contact.mu: {normal: [0.15, 0.02]}
  world: {choice: [ice_plane, slope_10]}
  robot.n_modules: {grid: [4, 6, 10]}
metrics:
  - real_time_factor
  - final_base_pose.position
"""
    path = tmp_path / "issue.yaml"
    path.write_text(text)
    s = load_spec(path)
    samples = s.expand()
    assert len(samples) == 3 * 32  # every grid point gets `samples` draws
    assert [x.inputs["robot.n_modules"] for x in samples[::32]] == [4, 6, 10]
    x = np.array([v.inputs["scenario.screw_rate"] for v in samples])
    assert x.min() >= 1.0 and x.max() <= 4.0
    assert {v.inputs["world"] for v in samples} == {"ice_plane", "slope_10"}


def test_rover_campaign_spec_is_the_papers_plan():
    """The campaign's plan lives in its spec; the flat paths are the drive code's test paths."""
    s = load_spec(asset("config", "sweeps", "rover_campaign.yaml"))
    flat, slopes = ({d.key: list(d.values) for d in case} for case in s.case_dispersions())
    assert flat["path"] == list(PATHS) and flat["speed"] == [1.2, 2.4, 3.6, 4.8]
    assert slopes["world"] == [f"slope:{a}" for a in (0, 5, 10, 15, 20)] and slopes["speed"] == [1.2, 2.4]
    assert len(s.expand()) == 6 * 4 + 5 * 3 * 2 == 54


def test_seeds_and_draws_depend_only_on_the_campaign_seed_and_the_index():
    a = checked(spec(dispersions={"contact.mu": {"uniform": [0.1, 0.2]}, "scenario.screw_rate": {"normal": [2, 0.5]},
                                  "world": {"choice": ["ice_plane", "slope_10"]}}))
    first, again = a.expand(), a.expand()
    assert first == again
    assert [x.seed for x in first] == [sample_seed(7, i) for i in range(4)]
    more = checked({**a.raw, "samples": 6}).expand()
    assert more[:4] == first  # drawing more samples keeps the first ones
    other = checked({**a.raw, "seed": 8}).expand()
    assert [x.inputs for x in other] != [x.inputs for x in first]


def test_shared_draws_give_every_grid_point_the_same_draws():
    """``draws: shared``: the k-th sample at every grid point takes SeedSequence([seed, k]) and so the same
    values; a case listing its random dispersions alike draws at the same quantiles of its own ranges; the
    default (per_sample) is unchanged and not in the fingerprint."""
    data = spec(samples=3, dispersions={"scenario.screw_rate": {"grid": [1.0, 2.0]}},
                cases=[{"contact.mu": {"uniform": [0.1, 0.2]}}, {"contact.mu": {"uniform": [0.3, 0.5]}}])
    default = checked(data)
    shared = checked({**data, "draws": "shared"})
    samples = shared.expand()
    assert len(samples) == 12 and [s.seed for s in samples] == [sample_seed(7, k) for k in (0, 1, 2)] * 4
    mu = [s.inputs["contact.mu"] for s in samples]
    assert mu[:3] == mu[3:6] and mu[6:9] == mu[9:12] and len(set(mu[:3])) == 3
    assert [(b - 0.3) / 0.2 for b in mu[6:9]] == pytest.approx([(a - 0.1) / 0.1 for a in mu[:3]], rel=1e-9)
    assert [s.inputs["scenario.screw_rate"] for s in samples[:6]] == [1.0] * 3 + [2.0] * 3
    assert "draws" not in default.to_dict() and shared.to_dict()["draws"] == "shared"
    assert default.fingerprint != shared.fingerprint
    with pytest.raises(ConfigError, match="draws: expected one of per_sample, shared, got 'some'"):
        parse_spec({**data, "draws": "some"}, "spec.yaml")


def test_draws_follow_their_distributions():
    """2000 draws: uniform within its bounds with the uniform mean and variance, normal with its mean and
    standard deviation, choice near 1/k each; tolerances are 5 standard errors of each estimate."""
    n = 2000
    s = checked(spec(samples=n, dispersions={"contact.mu": {"uniform": [0.1, 0.2]},
                                             "contact.ev_a": {"normal": [3.0, 0.5]},
                                             "world": {"choice": ["ice_plane", "slope_10", "tube"]}}))
    samples = s.expand()
    u = np.array([x.inputs["contact.mu"] for x in samples])
    g = np.array([x.inputs["contact.ev_a"] for x in samples])
    assert u.min() >= 0.1 and u.max() <= 0.2
    width = 0.1
    assert abs(u.mean() - 0.15) < 5 * width / np.sqrt(12 * n)
    assert abs(u.var() - width**2 / 12) < 5 * width**2 / np.sqrt(180 * n)
    assert abs(g.mean() - 3.0) < 5 * 0.5 / np.sqrt(n)
    assert abs(g.std() - 0.5) < 5 * 0.5 / np.sqrt(2 * n)
    counts = np.array([sum(x.inputs["world"] == w for x in samples) for w in ("ice_plane", "slope_10", "tube")])
    assert np.all(np.abs(counts / n - 1 / 3) < 5 * np.sqrt((1 / 3) * (2 / 3) / n))


def test_pure_grids_ignore_samples_and_cases_add_up():
    s = checked(spec(samples=50, dispersions={"contact.mu": {"grid": [0.1, 0.2]},
                                              "scenario.screw_rate": {"grid": [1, 2, 3]}}))
    assert [x.inputs for x in s.expand()] == [{"contact.mu": m, "scenario.screw_rate": r}
                                               for m in (0.1, 0.2) for r in (1, 2, 3)]
    c = checked(spec(samples=2, dispersions={"contact.mu": {"uniform": [0.1, 0.2]}},
                     cases=[{"scenario.screw_rate": {"grid": [1, 2]}}, {"contact.ev_a": {"grid": [3.0]}}]))
    samples = c.expand()
    assert len(samples) == 2 * 2 + 2 and [x.case for x in samples] == [0, 0, 0, 0, 1, 1]
    assert set(samples[-1].inputs) == {"contact.mu", "contact.ev_a"}


@pytest.mark.parametrize("change, message", [
    ({"dispersion": 1}, "spec.yaml: unknown key(s) dispersion; valid keys: base, samples, seed, dispersions, metrics"),
    ({"dispersions": {"contact.muu": {"uniform": [0.1, 0.2]}}},
     "dispersions.contact.muu = 0.1: unknown config key 'contact.muu'; valid keys here: contact.model"),
    ({"dispersions": {"robot.nmodules": {"grid": [2]}}}, "unknown config key 'robot.nmodules'"),
    ({"dispersions": {"contact.mu": {"uniformm": [0.1, 0.2]}}},
     "dispersions.contact.mu: unknown distribution 'uniformm'; expected one of uniform, normal, choice, grid"),
    ({"dispersions": {"contact.mu": {"uniform": [0.2, 0.1]}}}, "dispersions.contact.mu: uniform needs lo < hi"),
    ({"dispersions": {"contact.mu": {"uniform": [0.1]}}}, "dispersions.contact.mu: uniform takes two finite numbers"),
    ({"dispersions": {"contact.mu": {"normal": [0.15, 0]}}},
     "dispersions.contact.mu: normal needs a standard deviation > 0"),
    ({"dispersions": {"contact.mu": {"normal": [0.15, "wide"]}}}, "normal takes two finite numbers"),
    ({"dispersions": {"contact.mu": {"grid": []}}}, "dispersions.contact.mu: empty grid: it needs at least one value"),
    ({"dispersions": {"world": {"choice": []}}}, "dispersions.world: empty choice"),
    ({"dispersions": {"world": {"choice": "ice_plane"}}}, "dispersions.world: choice takes a list"),
    ({"dispersions": {"contact.mu": 0.1}}, "dispersions.contact.mu: expected one distribution"),
    ({"dispersions": {"contact.mu": {"uniform": [0.1, 0.2], "grid": [1]}}},
     "dispersions.contact.mu: expected one distribution"),
    ({"dispersions": {"robot.n_modules": {"uniform": [2, 4]}}},
     "dispersions.robot.n_modules = 2.0: n_modules must be a whole number >= 1, got '2.0'"),
    ({"dispersions": {"contact.mu": {"grid": [0.1, -0.1]}}},
     "dispersions.contact.mu = -0.1: 'contact.mu' = -0.1 is out of range"),
    ({"dispersions": {"world": {"grid": ["ice_plane", "marsh"]}}},
     "dispersions.world = 'marsh': unknown world 'marsh'"),
    ({"dispersions": {"scenario.screw_rat": {"grid": [1.0]}}},
     ("dispersions.scenario.screw_rat = 1.0: ", "scenario has no parameter 'screw_rat'")),
    ({"dispersions": {"robot.n_modules": {"grid": [2, 500]}}}, "dispersions.robot.n_modules = 500: n_modules = 500"),
    ({"base": {**BASE, "worlds": "ice_plane"}}, "base.worlds: unknown config key 'worlds'"),
    ({"base": ["robot"]}, "spec.yaml: base: expected a mapping"),
    ({"samples": 0}, "spec.yaml: samples: expected a whole number >= 1 and <= 100000, got 0"),
    ({"samples": 2.5}, "samples: expected a whole number >= 1"),
    ({"seed": -1}, "spec.yaml: seed: expected a whole number >= 0"),
    ({"metrics": "real_time_factor"}, "spec.yaml: metrics: expected a list of dotted keys"),
    ({"metrics": ["real_time_factor", "real_time_factor"]}, "metrics: 'real_time_factor': is listed twice"),
    ({"metrics": ["sample"]}, "metrics: 'sample': is a column of every results table"),
    ({"metrics": ["advance_m"], "base": {**BASE, "scenario": "crescent_spin"}},
     ("metrics: 'advance_m' is neither a key of summary.json", "scenario 'crescent_spin' (it has no systems")),
    ({"command": "rover"}, "spec.yaml: command: unknown command 'rover'; expected one of 'run', 'rover drive'"),
    ({"cases": []}, "spec.yaml: cases: expected a non-empty list"),
    ({"dispersions": {"contact.mu": {"grid": [0.1]}}, "cases": [{"contact.mu": {"grid": [0.2]}}]},
     "cases[0].contact.mu: is dispersed in `dispersions` too"),
])
def test_bad_specs_name_the_key(change, message):
    data = spec(dispersions={"contact.mu": {"uniform": [0.1, 0.2]}})
    data.update(change)
    with pytest.raises(ConfigError) as err:
        checked(data)
    for text in (message,) if isinstance(message, str) else message:
        assert text in str(err.value)


def test_random_dispersions_need_samples():
    data = spec(dispersions={"contact.mu": {"uniform": [0.1, 0.2]}})
    del data["samples"]
    with pytest.raises(ConfigError, match="spec.yaml: samples: needed: the number of draws"):
        checked(data)


@pytest.mark.parametrize("change, message", [
    ({"base": {"path": "straight"}}, "rover drive setting(s) speed missing"),
    ({"base": {"path": "straight", "speed": 1.2, "wheels": 4}}, "base.wheels: unknown rover drive setting 'wheels'"),
    ({"base": {"path": "zigzag", "speed": 1.2}}, "unknown rover path 'zigzag'"),
    ({"base": {"path": "straight", "speed": "fast"}}, "base.speed: 'speed' expects a finite number"),
    ({"base": {"path": "straight"}, "dispersions": {"speed": {"grid": [1.2, -1]}}},
     "dispersions.speed = -1: speed must be a positive wheel rate"),
    ({"base": {"path": "straight", "speed": 1.2}, "dispersions": {"world": {"grid": ["slope:steep"]}}},
     "world 'slope:DEG' needs a number of degrees"),
    ({"base": {"path": "straight", "speed": 1.2, "robot": "eels_1_5"}}, "robot 'eels_1_5' is not a rover"),
    ({"base": {"path": "straight", "speed": 1.2}, "metrics": ["final_base_pose"]},
     "metrics: 'final_base_pose' is not a key of a rover drive's summary"),
])
def test_bad_rover_drive_specs_name_the_key(change, message):
    data = {"command": "rover drive", "metrics": ["end_error_relative"], **change}
    with pytest.raises(ConfigError) as err:
        checked(data)
    assert message in str(err.value)


def test_a_bad_spec_file_names_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("base: [1\n")
    with pytest.raises(ConfigError, match="bad.yaml:2: invalid YAML"):
        load_spec(path)
    path.write_text(yaml.safe_dump([1, 2]))
    with pytest.raises(ConfigError, match="bad.yaml: a sweep spec must be a mapping"):
        load_spec(path)


def test_case_labels_are_columns_not_settings():
    """A case's ``labels:`` (the slope campaign's setup A/B) give each of its samples constant columns;
    they are not passed to the run (an unknown setting would be refused) and not dispersed."""
    from eels_gz.sweep.execute import jobs

    spec = parse_spec({"base": {"robot": "archimede", "scenario": "rover_drive"},
                       "dispersions": {"scenario.rate": {"grid": [1.2, 2.4]}},
                       "cases": [{"labels": {"setup": "A"}, "soil.params": {"grid": ["lava_gravel"]}},
                                 {"labels": {"setup": "B"}, "soil.params": {"grid": ["eac1a"]}}],
                       "metrics": ["slip"]}, "labels.yaml")
    check_spec(spec)
    samples = spec.expand()
    assert [s.labels["setup"] for s in samples] == ["A", "A", "B", "B"]
    assert "setup" in spec.keys and all("setup" not in s.inputs for s in samples)
    made = jobs(spec, samples, Path("/tmp/labels"))
    assert all(k != "setup" for j in made for k, _, _ in j.items)
    assert spec.to_dict()["cases"][1]["labels"] == {"setup": "B"}
    for bad, message in (({"setup.x": "A"}, "expected a mapping of column names"),
                         ({"status": "A"}, "expected a mapping of column names"),
                         ({"setup": ["A"]}, "labels.setup: expected a name or a number")):
        with pytest.raises(ConfigError, match=message):
            parse_spec({"cases": [{"labels": bad, "scenario.rate": {"grid": [1.2]}}]}, "bad.yaml")
