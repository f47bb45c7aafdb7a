"""Measuring's parts (issue 25, item 1; tuning/timing.py): the evaluator's results say where
their time went (compile, prepare, sampling, verify: measure/measurement.hpp's
evaluation_times, the dict's "times"); the tuner sums them over the run's evaluations, CUB's
included, and shows them in tune --json's "time", under the breakdown's table and in the rows
of scripts/device-jobs/z_summary.py. Without a GPU: a FAKE worker (test_tune_options.py's,
its "measurements" a formula) reports made-up times, distinct per part so that a mix-up
shows."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from reducetune.cli.report import measuring_text, time_table
from reducetune.tuning.timing import MEASURING_PARTS, PREPARE_PARTS, Breakdown, running
from test_tune_options import FakeWorker, gpu_tune, install_worker

ROOT = Path(__file__).resolve().parents[2]
# a point's made-up times (s): powers of two, so that sums over points are exact
POINT_TIMES = {"compile_s": 2.0**-4, "prepare_s": 2.0**-6, "sampling_s": 2.0**-2,
               "verify_s": 2.0**-8,
               # prepare_s's parts, inside it (15 x 2^-12 of its 2^-6)
               "workload_s": 2.0**-9, "setup_s": 2.0**-10, "graphs_s": 2.0**-11,
               "teardown_s": 2.0**-12}
CUB_TIMES = {"compile_s": 0.0, "prepare_s": 0.0, "sampling_s": 2.0**-3, "verify_s": 2.0**-7}


class TimedFakeWorker(FakeWorker):
    """The fake worker whose results carry times, as _core.evaluate's do."""

    def _evaluate(self, **args: Any) -> dict[str, Any]:
        reply = super()._evaluate(**args)
        reply["result"]["times"] = dict(POINT_TIMES)
        return reply

    def _evaluate_cub(self, **args: Any) -> dict[str, Any]:
        reply = super()._evaluate_cub(**args)
        reply["result"]["times"] = dict(CUB_TIMES)
        return reply


@pytest.fixture
def timed_worker(monkeypatch):
    return install_worker(monkeypatch, TimedFakeWorker)


def test_a_tune_sums_its_evaluations_times_into_measurings_parts(timed_worker, cli, tmp_path):
    code, out, err = gpu_tune(cli, tmp_path / "r.db", "--json")
    assert code == 0, err
    (worker,) = timed_worker.instances
    points, cubs = len(worker.calls("evaluate")), len(worker.calls("evaluate_cub"))
    assert points == 8 and cubs == 2  # two sizes, four points each, a CUB baseline each
    parts = json.loads(out)["time"]["measuring_parts"]
    assert parts["evaluations"] == points + cubs
    for part in MEASURING_PARTS:
        assert parts[part] == points * POINT_TIMES[part] + cubs * CUB_TIMES[part], part
    assert parts["other_s"] >= 0.0  # measuring less the parts, never negative
    prepare = parts["prepare_parts"]  # CUB's times have none: the points' alone
    for part in PREPARE_PARTS:
        assert prepare[part] == points * POINT_TIMES[part], part
    assert prepare["other_s"] == pytest.approx(
        points * (POINT_TIMES["prepare_s"] - sum(POINT_TIMES[p] for p in PREPARE_PARTS)))


def test_the_breakdowns_table_shows_measurings_parts(timed_worker, cli, tmp_path):
    code, _, err = gpu_tune(cli, tmp_path / "r.db")
    assert code == 0, err
    text = " ".join(err.split())  # the table's caption may wrap
    assert "this process: measuring, 10 evaluations: compile 0.50 s" in text
    assert "sampling 2.25 s" in text  # 8 x 1/4 + 2 x 1/8
    assert "prepare: workload 0.02 s, setup 0.01 s, graphs 0.00 s, teardown 0.00 s" in text


def test_results_without_times_add_nothing_and_other_is_the_rest():
    b = Breakdown()
    with running(b):
        with b.phase("measuring"):
            pass
        b.note_times({"status": "ok", "times": {"compile_s": 0.5, "sampling_s": 1.0}})
        b.note_times({"status": "ok"})  # a recording's row: no times
        b.note_times(None)  # the ceiling's bytes per second
    b.seconds["measuring"] = 2.0  # as if the loop had measured for 2 s
    parts = b.to_json(1)["measuring_parts"]
    assert parts["evaluations"] == 1
    assert parts["compile_s"] == 0.5 and parts["sampling_s"] == 1.0
    assert parts["prepare_s"] == 0.0 and parts["verify_s"] == 0.0
    assert parts["other_s"] == pytest.approx(0.5)
    assert measuring_text(b.to_json(1)).startswith("measuring, 1 evaluations: compile 0.50 s (25%)")
    assert "prepare:" not in measuring_text(b.to_json(1))  # no parts of prepare reported
    # a run whose results reported no times (a replay) prints no parts
    assert measuring_text(Breakdown().to_json(0)) is None
    assert time_table([("w", Breakdown().to_json(0))]).caption is None


def _z_summary() -> Any:
    spec = importlib.util.spec_from_file_location(
        "z_summary", ROOT / "scripts" / "device-jobs" / "z_summary.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_z_summary_sums_the_workers_parts():
    z = _z_summary()
    parts = {"compile_s": 1.0, "prepare_s": 2.0, "sampling_s": 30.0, "verify_s": 4.0,
             "other_s": 3.0, "evaluations": 200}
    worker = {"time": {"phases": {"measuring": 40.0}, "measuring_parts": parts}}
    row = z.time_row({"workers": [worker, worker]}, "new")
    assert row == "| new | 400 | 80.0 | 200.0 | 2.0 | 4.0 | 60.0 | 8.0 | 6.0 |"
    assert row.count("|") == z.TIME_HEADER.split("\n")[0].count("|")
    # an older run's document (e304aed's) has measuring but no parts
    old = z.time_row({"runs": [], "time": {"phases": {"measuring": 12.5}}}, "e304aed")
    assert old.startswith("| e304aed | - | 12.5 | - |") and old.count("|") == row.count("|")
