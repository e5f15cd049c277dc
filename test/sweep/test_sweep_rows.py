"""A sample's row without Ray (eels_gz/sweep/execute.py run_job in this process): a drawn value the
run refuses is an input_error naming the key, recorded in the row and in row.json; metrics are looked
up in summary.json then metrics.json, lists and mappings one column per item; the results table keeps
its columns in order and its types when values are missing or mixed."""

from __future__ import annotations

import json

import pyarrow as pa

from eels_gz.sweep import parse_spec
from eels_gz.sweep.execute import Job, metric_columns, run_job
from eels_gz.sweep.results import columns, table

BASE = [("robot.name", "eels_1_0_front_only", "base.robot"), ("robot.n_modules", 2, "base.robot.n_modules"),
        ("duration", 0.02, "base.duration"), ("contact.model", "screw", "base.contact.model"),
        ("log.mcap", False, "base.log.mcap"), ("log.plot", False, "base.log.plot")]


def job(tmp_path, items, metrics=("steps",)) -> Job:
    return Job("run", BASE + items, str(tmp_path / "samples" / "00003"), str(tmp_path), 3, 1234, 0,
               {k: v for k, v, _ in items}, tuple(metrics))


def test_a_value_the_run_refuses_is_an_input_error_that_names_the_key(tmp_path):
    row = run_job(job(tmp_path, [("contact.mu", -0.02, "spec.yaml: sample 3: dispersions.contact.mu = -0.02")]))
    assert row["status"] == "input_error" and row["sample"] == 3 and row["seed"] == 1234
    assert "dispersions.contact.mu = -0.02: 'contact.mu' = -0.02 is out of range" in row["message"]
    assert row["steps"] is None and row["contact.mu"] == -0.02
    assert json.loads((tmp_path / "samples" / "00003" / "row.json").read_text()) == row


def test_a_run_in_this_process_gives_its_row(tmp_path):
    row = run_job(job(tmp_path, [("contact.mu", 0.12, "dispersions.contact.mu")],
                      ("steps", "final_base_pose.position", "settings.resolved.contact_params.mu", "absent.key")))
    assert row["status"] == "ok" and row["steps"] == 20 and row["settings.resolved.contact_params.mu"] == 0.12
    assert [k for k in row if k.startswith("final_base_pose")] == [f"final_base_pose.position.{i}" for i in range(3)]
    assert row["absent.key"] is None and row["run"] == "samples/00003" and row["wall_time"] > 0


def test_metrics_from_summary_then_metrics_json():
    summary, metrics = {"steps": 5, "a": {"b": [1, {"c": 2}]}}, {"steps": 6, "advance_m": 0.1}
    assert metric_columns("steps", [summary, metrics]) == {"steps": 5}
    assert metric_columns("advance_m", [summary, metrics]) == {"advance_m": 0.1}
    assert metric_columns("a.b", [summary]) == {"a.b.0": 1, "a.b.1.c": 2}
    assert metric_columns("a.b.1.c", [summary]) == {"a.b.1.c": 2}
    assert metric_columns("a.b.7", [summary]) == {"a.b.7": None}


def test_the_table_keeps_its_columns_and_types():
    spec = parse_spec({"base": {}, "samples": 1, "dispersions": {"world": {"choice": ["ice_plane", "tube"]},
                                                                 "robot.pose": {"grid": [[0, 0, 1, 0, 0, 0]]}},
                       "metrics": ["final_base_pose.position", "real_time_factor"]}, "t.yaml")
    rows = [{"sample": 0, "case": 0, "seed": 1, "world": "tube", "robot.pose": [0, 0, 1, 0, 0, 0], "status": "ok",
             "message": None, "final_base_pose.position.0": 1.0, "final_base_pose.position.1": 2,
             "real_time_factor": 3, "run": "samples/00000", "wall_time": 1.5},
            {"sample": 1, "case": 0, "seed": 2, "world": "ice_plane", "robot.pose": [0, 0, 1, 0, 0, 0],
             "status": "input_error", "message": "bad", "final_base_pose.position": None,
             "final_base_pose.position.1": 2.5, "real_time_factor": None,
             "run": "samples/00001", "wall_time": 0.1}]
    assert columns(spec, rows) == ["sample", "case", "seed", "world", "robot.pose", "status", "message",
                                   "final_base_pose.position.0", "final_base_pose.position.1", "real_time_factor",
                                   "run", "wall_time"]
    t = table(spec, rows)
    assert t.schema.field("real_time_factor").type == pa.int64()  # whole numbers and a gap stay whole
    assert t.schema.field("final_base_pose.position.1").type == pa.float64()  # 2 and 2.5: one type
    assert t.column("robot.pose").to_pylist() == ["[0, 0, 1, 0, 0, 0]"] * 2  # a list drawn: its JSON text
    assert t.column("message").to_pylist() == [None, "bad"]


def test_overhead_splits_a_sample_s_cost_by_where_it_went():
    """sweep.json's overhead from the tasks' results: the fork and exit beyond the run (in_worker_s),
    a worker's wait between its samples (between_s, per worker, not across workers), the warm-ups,
    and the campaign's wall per sample beyond the run (per_sample_s)."""
    from eels_gz.sweep.execute import overhead

    def task(worker, began, ended, wall, warm=0.0):
        return {"row": {"wall_time": wall}, "sample_s": ended - began - 0.01, "warm_s": warm, "worker": worker,
                "began": began, "ended": ended}

    results = [task(1, 0.0, 1.5, 0.4, warm=1.0), task(2, 0.0, 1.6, 0.5, warm=1.1),
               task(1, 1.52, 2.0, 0.45), task(2, 1.66, 2.1, 0.4)]  # worker 1 waits 0.02 s, worker 2 0.06 s
    o = overhead(results, dispatch_s=2.2, at_once=2)
    assert o["samples"] == 4 and abs(o["run_s"] - 0.4375) < 1e-12
    assert abs(o["between_s"] - 0.04) < 1e-12  # (0.02 + 0.06) / 2; 1.52 - 1.6 across workers is not a wait
    assert o["warm_up_s"] == [1.0, 1.1]
    assert abs(o["per_sample_s"] - (2.2 * 2 / 4 - 0.4375)) < 1e-12
    assert overhead(results[:2], dispatch_s=2.2, at_once=2)["between_s"] is None  # no worker ran two
