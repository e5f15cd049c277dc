"""The slope campaign's figures and issue 44's bounds (eels_gz.sweep.slopes) on rows made here, whose
medians, quartiles and ratios are known."""

from __future__ import annotations

import numpy as np
import pytest

from eels_gz.sweep.slopes import checks, summarise

SLOPES = (0.0, 5.0, 10.0, 15.0, 20.0)


def rows(setup, wheel, soil, medians, grousers="on", spread=0.01):
    """Three drives per slope, rate and mode: the median plus -spread, 0, +spread."""
    out = []
    for a, m in zip(SLOPES, medians):
        for rate in (1.2, 2.4):
            for mode in (("straight", "lateral") if wheel == soil and grousers == "on" else ("straight",)):
                for d in (-spread, 0.0, spread):
                    out.append({"status": "ok", "setup": setup, "wheel": wheel, "soil": soil, "grousers": grousers,
                                "mode": mode, "slope_deg": a + 1e-9, "wheel_rate": rate, "slip": m + d})
    return out


A = [0.05, 0.10, 0.18, 0.30, 0.50]
B = [0.04, 0.07, 0.11, 0.16, 0.24]


def campaign(a=A, b=B):
    return (rows("A", "A", "A", a) + rows("B", "B", "B", b) + rows("wheel A on soil B", "A", "B", [0.1] * 5)
            + rows("wheel B on soil A", "B", "A", [0.2] * 5) + rows("A grousers off", "A", "A", [0.3] * 5, "off")
            + rows("B grousers off", "B", "B", [0.1] * 5, "off") + [{"status": "diverged", "setup": "A"}])


def test_statistics_per_setup_and_slope():
    s = summarise(campaign())
    a = s["setups"]["A"]
    assert s["statuses"] == {"ok": 240, "diverged": 1}  # A and B: 5 slopes x 2 rates x 2 modes x 3, the rest 30
    assert a["slopes"] == list(SLOPES) and a["n"] == [12] * 5
    assert a["median"] == pytest.approx(A) and a["median_by_rate"]["2.4"] == pytest.approx(A)
    assert a["q1"] == pytest.approx([m - 0.01 for m in A]) and a["q3"] == pytest.approx([m + 0.01 for m in A])
    assert set(a["median_by_mode"]) == {"straight", "lateral"} and (a["wheel"], a["soil"]) == ("A", "A")


def test_the_bounds_met_and_missed():
    c = checks(summarise(campaign()))
    assert c["b_over_a"]["ratios"] == pytest.approx({"15": 0.16 / 0.30, "20": 0.24 / 0.50})
    assert c["b_over_a"]["met"] and c["flat"]["met"] and c["convex"]["met"]
    assert c["cross"]["wheel A, soil B"]["median"] == pytest.approx([0.1] * 5)
    assert c["grouser_off"]["a_minus_b_on"] == pytest.approx(np.subtract(A, B))
    assert c["grouser_off"]["a_minus_b_off"] == pytest.approx([0.2] * 5)
    missed = checks(summarise(campaign(b=[0.12, 0.14, 0.18, 0.28, 0.45])))
    assert missed["b_over_a"]["ratios"]["15"] == pytest.approx(0.28 / 0.30) and not missed["b_over_a"]["met"]
    assert missed["flat"]["medians"]["B"] == pytest.approx(0.12) and missed["flat"]["met"] is False
    saturating = checks(summarise(campaign(a=[0.18, 0.30, 0.45, 0.78, 0.89])))
    assert saturating["convex"]["A"]["rising"] and not saturating["convex"]["A"]["convex"]
    assert not saturating["flat"]["met"] and not saturating["convex"]["met"]
