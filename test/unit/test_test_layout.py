"""The test tree itself: pytest collects test/ without packages (the dartpy
wheel owns a top-level ``tests`` package), so two test files with one
basename in different tiers would make collection fail."""

from __future__ import annotations

from collections import Counter
from pathlib import Path


def test_test_file_basenames_are_unique():
    root = Path(__file__).resolve().parents[1]
    names = Counter(p.name for p in root.rglob("test_*.py"))
    assert not [n for n, k in names.items() if k > 1], f"duplicate test file names: {names.most_common(3)}"
