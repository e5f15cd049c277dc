"""The identification's scoring (eels_gz/contact/identify.py) on hand-made campaign tables: the
residuals are the excess over each bound (relative), a failed run scores 1, the fit is the least
sum of squares, and a table that is missing or does not cover both campaigns is a clear error."""

from __future__ import annotations

import csv

import pytest

from eels_gz.contact.identify import LF_MAX_MAX, LF_MEAN_MAX, main, score
from eels_gz.errors import ConfigError

LF_KEYS = ["sample", "status", "contact.ev_a", "contact.ev_b", "scenario.speed", "tracking_error.mean_m",
           "tracking_error.max_m", "average_speed_m_s"]
WC_KEYS = ["sample", "status", "contact.ev_a", "contact.ev_b", "scenario.climb_speed", "climb_ratio", "hold_drift_m",
           "max_axis_gravity_angle_deg"]


def _table(folder, keys, rows):
    folder.mkdir()
    with (folder / "results.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys)
        w.writerows(rows)
    return folder


@pytest.fixture
def campaigns(tmp_path):
    lf = _table(tmp_path / "lf", LF_KEYS, [
        [0, "ok", 30, 0.1, 0.05, 0.10, 0.45, 0.04],   # mean 1.5 x and max 1.5 x the bounds
        [1, "ok", 30, 0.1, 0.1, 0.05, 0.20, 0.09],
        [2, "ok", 300, 0.1, 0.05, 0.02, 0.15, 0.05],
        [3, "ok", 300, 0.1, 0.1, 0.03, 0.25, 0.10],
    ])
    wc = _table(tmp_path / "wc", WC_KEYS, [
        [0, "ok", 30, 0.1, 0.02, 0.5, 0.004, 20.0],
        [1, "slip_failure", 30, 0.1, -0.02, "", "", 10.0],
        [2, "ok", 300, 0.1, 0.02, 0.95, 0.004, 8.0],
        [3, "ok", 300, 0.1, -0.02, 0.85, 0.004, 8.0],
    ])
    return lf, wc


def test_residuals_and_fit(campaigns):
    best, other = score(*campaigns)
    assert (best.ev_a, best.ev_b) == (300.0, 0.1) and best.meets() and not other.meets()
    assert best.residuals["climb_ratio"] == pytest.approx(0.05) and best.residuals["lf_0.1_max"] == 0.0
    assert other.residuals["lf_0.05_mean"] == pytest.approx((0.10 - LF_MEAN_MAX) / LF_MEAN_MAX)
    assert other.residuals["lf_0.05_max"] == pytest.approx((0.45 - LF_MAX_MAX) / LF_MAX_MAX)
    assert other.residuals["down_climb_ratio"] == 1.0 and other.residuals["down_climb_hold"] == 1.0
    assert best.cost == pytest.approx(0.05**2 + 0.15**2)


def test_a_point_missing_from_one_campaign_is_an_error(campaigns, tmp_path):
    lf, _ = campaigns
    wc = _table(tmp_path / "wc2", WC_KEYS, [[0, "ok", 300, 0.1, 0.02, 0.95, 0.004, 8.0],
                                            [1, "ok", 300, 0.1, -0.02, 0.85, 0.004, 8.0]])
    with pytest.raises(ConfigError, match="ev_a = 30, ev_b = 0.1 is not in both campaigns"):
        score(lf, wc)


def test_the_command_reports_and_refuses_a_missing_table(campaigns, tmp_path, capsys):
    assert main([str(c) for c in campaigns]) == 0
    assert capsys.readouterr().out.startswith("fit: ev_a = 300, ev_b = 0.1 1/N")
    assert main([str(tmp_path / "none"), str(campaigns[1])]) == 2
    assert "no campaign table" in capsys.readouterr().err


def test_eels_gz_calibrate_identify(campaigns, tmp_path):
    """The user's command: the report, --json, and exit code 2 with the folder named on a missing table."""
    import json

    from click.testing import CliRunner

    from eels_gz.cli import main as cli_main

    res = CliRunner().invoke(cli_main, ["calibrate", "identify", *map(str, campaigns)])
    assert res.exit_code == 0 and res.output.startswith("fit: ev_a = 300, ev_b = 0.1 1/N"), res.output
    res = CliRunner().invoke(cli_main, ["calibrate", "identify", *map(str, campaigns), "--json"])
    assert res.exit_code == 0 and json.loads(res.output)[0]["meets"] is True
    res = CliRunner().invoke(cli_main, ["calibrate", "identify", str(tmp_path / "none"), str(campaigns[1])])
    assert res.exit_code == 2 and "none/results.csv: no campaign table" in res.output
    assert "Traceback" not in res.output
