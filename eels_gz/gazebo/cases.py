"""The real-Gazebo tier's cases (test/gazebo/cases.yaml): each a scenario, a contact model and a short
duration, resolved into the configuration both hosts run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from eels_gz.errors import ConfigError


@dataclass(frozen=True)
class Case:
    scenario: str
    contact: str | None
    duration: float
    sets: tuple[str, ...] = field(default=())

    @property
    def name(self) -> str:
        return f"{self.scenario}-{self.contact or 'own'}"

    def config(self, host: str = "embedded") -> dict:
        """The resolved configuration of this case on ``host`` (embedded or gazebo)."""
        from eels_gz import config

        overrides: dict = {"scenario": self.scenario, "duration": float(self.duration), "sim": {"host": host}}
        if self.contact:
            overrides["contact"] = {"model": self.contact}
        return config.resolve(None, overrides, list(self.sets))


def load_cases(path: str | Path) -> list[Case]:
    from eels_gz.yamlio import load

    raw = load(Path(path), "the Gazebo tier's cases")
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: expected a list of cases")
    cases = [Case(c["scenario"], c.get("contact"), float(c["duration"]), tuple(c.get("sets") or ())) for c in raw]
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise ConfigError(f"{path}: a scenario and contact model listed twice")
    return cases
