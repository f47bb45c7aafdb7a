"""Amdahl's bound beside the multi-GPU report's measured ratios (issue 25, target 2;
experiments/_scale_bound.py), and its row in scripts/device-jobs/z_summary.py; on SYNTHETIC
breakdowns (not measurements): a one-GPU command of 10 s whose loop ran 7 s, its first point
measured 1 s into the loop and its 101st and last 6.9 s in."""

from __future__ import annotations

import json

import pytest

from reducetune.experiments._scale_bound import (TARGETS, bound, bound_numbers, fixed_part,
                                                 numbers, points_for, run_span, section)
from reducetune.experiments.multi_gpu import main as report_main
from reducetune.tuning.timing import PHASES
from test_measuring_parts import _z_summary  # z_summary.py, loaded from its path

ONE = {"wall_s": 7.0, "points": 101, "first_point_s": 1.0, "last_point_s": 6.9,
       "began_at": 1000.0}
COMMAND_S = 10.0


def test_the_fixed_part_is_the_command_less_the_first_to_last_measurement():
    f = fixed_part(ONE, COMMAND_S)
    assert f is not None
    assert f["span_s"] == pytest.approx(5.9) and f["fixed_s"] == pytest.approx(4.1)
    # its parts: the command less the loop, the loop's head before its first point, its tail
    assert f["start_end_s"] == pytest.approx(3.0) and f["first_point_s"] == 1.0
    assert f["tail_s"] == pytest.approx(0.1)
    assert f["start_end_s"] + f["first_point_s"] + f["tail_s"] == pytest.approx(f["fixed_s"])
    assert f["per_point_s"] == pytest.approx(0.059)  # 5.9 s over the 100 points after the first
    # an older breakdown (no points' times) or one point gives no split
    assert fixed_part({**ONE, "first_point_s": None}, COMMAND_S) is None
    assert fixed_part({**ONE, "points": 1}, COMMAND_S) is None


def test_the_bound_divides_only_the_span():
    f = fixed_part(ONE, COMMAND_S)
    assert bound(f, 1) == pytest.approx(1.0)
    assert bound(f, 2) == pytest.approx(10.0 / (4.1 + 5.9 / 2))  # 1.42
    assert bound(f, 4) == pytest.approx(10.0 / (4.1 + 5.9 / 4))  # 1.79
    assert bound(f, 1000) < 10.0 / 4.1  # never the fixed part's own limit


@pytest.mark.parametrize(("gpus", "target"), TARGETS)
def test_the_points_for_a_target_are_the_fewest_that_reach_it(gpus, target):
    f = fixed_part(ONE, COMMAND_S)
    n = points_for(f, gpus, target)

    def ratio(points: int) -> float:  # a sweep of this fixed part and per-point cost
        span = (points - 1) * f["per_point_s"]
        return (f["fixed_s"] + span) / (f["fixed_s"] + span / gpus)

    assert n is not None and n > 101  # this sweep is too short for either target
    assert ratio(n) >= target > ratio(n - 1)
    assert points_for(f, gpus, gpus) is None  # N x on N GPUs: never, whatever the points


def test_a_devices_runs_span_lines_its_workers_up_by_began_at():
    workers = {"workers": [
        {"time": {**ONE, "began_at": 1000.0, "first_point_s": 1.0, "last_point_s": 4.0}},
        {"time": {**ONE, "began_at": 1000.5, "first_point_s": 0.8, "last_point_s": 3.9}},
        {"ordinal": 2}]}  # a worker that failed has no "time"
    assert run_span(workers) == pytest.approx(1004.4 - 1001.0)
    assert run_span({"time": ONE}) == pytest.approx(5.9)
    assert run_span({"time": {**ONE, "first_point_s": None}}) is None


def test_each_run_stands_beside_its_bound_with_its_own_fixed_part():
    f = fixed_part(ONE, COMMAND_S)
    # two GPUs: 101 points in 6 s, its first to last measurement 3.4 s (5.9 / 3.4 = 1.74 x)
    nums = numbers(f, {1: (101, 10.0, 5.9), 2: (101, 6.0, 3.4)})
    two = nums["runs"][2]
    assert two["x_one"] == pytest.approx(10.0 / 6.0) and two["bound"] == pytest.approx(bound(f, 2))
    assert two["fixed_s"] == pytest.approx(2.6) and two["divided"] == pytest.approx(5.9 / 3.4)
    assert [t["gpus"] for t in nums["targets"]] == [2, 4]
    text = section(nums)
    assert "| 2 | 1.67 | 1.42 | 2.60 | 1.74 x |" in text
    assert f"| 2 | 1.8 | {points_for(f, 2, 1.8)} | " in text
    assert "fixed 4.10 s" in text and "(first_point_s) 1.00 s" in text


def test_the_numbers_come_from_the_one_gpu_runs_tune_json_or_not_at_all():
    runs = {1: (101, COMMAND_S, {"time": ONE}), 2: (101, 6.0, None)}
    nums = bound_numbers(runs)
    assert nums is not None and nums["runs"][2]["fixed_s"] is None  # no two-GPU breakdown
    assert bound_numbers({1: (101, COMMAND_S, None), 2: (101, 6.0, None)}) is None
    assert bound_numbers({**runs, 1: (101, 0.0, {"time": ONE})}) is None  # no one-GPU wall


def test_z_summary_prints_a_sweeps_ratios_beside_their_bounds(tmp_path):
    z = _z_summary()
    f = fixed_part(ONE, COMMAND_S)
    nums = numbers(f, {1: (101, 10.0, 5.9), 2: (101, 6.0, 3.4), 4: (101, 5.0, 2.0)})
    (tmp_path / "bound.json").write_text(json.dumps(nums))  # as multi_gpu.py --json writes it
    row = z.scaling_row(tmp_path, "long")
    n2, n4 = points_for(f, 2, 1.8), points_for(f, 4, 3.4)
    assert row == (f"| long | 101 | 10.0 | 6.0 | 10.1 | 16.8 | 1.67 | 1.42 | 5.0 | 20.2 | "
                   f"2.00 | {bound(f, 4):.2f} | 4.1 | 59.00 | {n2} | {n4} |")
    columns = z.SCALING_HEADER.split("\n")[0].count("|")
    assert row.count("|") == columns
    # a sweep that failed (no bound.json) still has its row, of '-'
    assert z.scaling_row(tmp_path / "none", "journal").count("|") == columns


def test_the_report_writes_the_bound_and_its_numbers(tmp_path, monkeypatch):
    """multi_gpu.main with the one-GPU run's tune --json: the wall-time ratio's line carries the
    bound, the Amdahl section is printed, and --json holds the same numbers; the results
    files' rows are SYNTHETIC (read() stubbed: two points, one measured by each GPU)."""
    rows = [("GPU-A", "H", "v", "l1", 1024, 1e-5, "ok"),
            ("GPU-A", "H", "v", "l2", 1024, 2e-5, "ok")]
    dual = [rows[0], ("GPU-B", "H", "v", "l2", 1024, 2e-5, "ok")]
    monkeypatch.setattr("reducetune.experiments.multi_gpu.read",
                        lambda db: rows if db.name == "single.db" else dual)
    monkeypatch.setattr("reducetune.experiments.multi_gpu.measuring_s", lambda db: 1.0)
    phases = {p: 0.0 for p in PHASES} | {"measuring": 2.0}
    one = {**ONE, "points": 2, "last_point_s": 1.5, "phases": phases, "points_per_s": 0.3}
    (tmp_path / "single.json").write_text(json.dumps({"time": one}))
    out, nums_path = tmp_path / "report.md", tmp_path / "bound.json"
    report_main(["--single", str(tmp_path / "single.db"), "--dual", str(tmp_path / "dual.db"),
                 "--single-s", "4.0", "--dual-s", "3.9", "--single-json",
                 str(tmp_path / "single.json"), "--out", str(out), "--json", str(nums_path)])
    text, nums = out.read_text(), json.loads(nums_path.read_text())
    # one GPU: 4 s = fixed 3.5 s + 0.5 s of points; two GPUs at most 4 / 3.75
    assert nums["fixed"]["fixed_s"] == pytest.approx(3.5)
    assert nums["runs"]["2"]["bound"] == pytest.approx(4.0 / 3.75)
    assert "ratio 1.03 (Amdahl's bound from the one-GPU run's fixed part: 1.07)" in text
    assert "## Amdahl's bound" in text
