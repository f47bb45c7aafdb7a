"""The scale-out model of the multi-GPU report (issue 25; experiments/multi_gpu.py): per-point
costs read from a one-GPU breakdown, points per second for W GPUs and for machines sharing a
PostgreSQL server; on SYNTHETIC breakdowns (not measurements)."""

from __future__ import annotations

import pytest

from reducetune.experiments.multi_gpu import (PG_RTT_S, SPAWN_S, model_section, predict,
                                              scale_section, time_section, trial_costs)
from reducetune.tuning.timing import PHASES


def _time(points: int, **phases: float) -> dict:
    """A SYNTHETIC ``tune --json`` "time" (not a measurement)."""
    ph = {p: 0.0 for p in PHASES} | phases
    return {"wall_s": sum(ph.values()), "points": points, "points_per_s": 0.0, "phases": ph,
            "calls": {"storage_read": 10 * points, "storage_write": 10 * points}}


GPU_BOUND = _time(1000, measuring=40.0, storage_write=2.0, compiling=5.0)  # 40 ms a point
STORAGE_BOUND = _time(1000, measuring=10.0, storage_write=20.0)  # writes in turn: 20 ms


def test_one_gpu_gives_back_the_measured_rate():
    costs = trial_costs(GPU_BOUND)
    wall = GPU_BOUND["wall_s"] + 3.0  # the command's start
    assert predict(costs, 1000, 3.0, 1) == pytest.approx(1000 / wall)


def test_gpus_scale_until_the_part_taken_in_turn_bounds_them():
    costs = trial_costs(GPU_BOUND)
    one, two, eight = (predict(costs, 1000, 0.0, w, spawn_s=0.0) for w in (1, 2, 8))
    assert 1.8 < two / one < 2.0  # the fixed compile and the writes in turn cost a little
    assert eight < 1000 / (5.0 + 1000 * 0.002) + 1e-9  # never above 1 / (in turn)
    storage = trial_costs(STORAGE_BOUND)
    assert predict(storage, 1000, 0.0, 8) == pytest.approx(predict(storage, 1000, 0.0, 2))


def test_machines_pay_the_round_trips():
    costs = trial_costs(GPU_BOUND)
    # 32 GPUs on 4 machines: each storage call a round trip to the server, slower than 32
    # GPUs on one host would be
    assert predict(costs, 1000, 0.0, 8, machines=4) < predict(costs, 1000, 0.0, 32)
    assert costs["calls"] == 20 and PG_RTT_S > 0


def test_the_report_puts_the_model_beside_the_measurements():
    text = model_section({"time": GPU_BOUND}, GPU_BOUND["wall_s"] + 3.0, {1: 21.0, 2: 40.0})
    rows = [line for line in text.splitlines() if line.startswith("| ")][1:]
    assert [r.split(" | ")[0] for r in rows] == ["| 1", "| 2", "| 4", "| 8", "| 4 machines x 8"]
    assert rows[0].endswith("| 21.0 |") and rows[1].endswith("| 40.0 |")
    assert rows[2].endswith("| - |")


def test_each_worker_pays_its_fixed_cost_whole_and_several_workers_their_spawn():
    # 5 s before the first point (compiling 3, the ceiling and first CUB 2), 40 ms a point
    t = {**GPU_BOUND, "first_point_s": 5.0,
         "phases": {**GPU_BOUND["phases"], "compiling": 3.0, "measuring": 42.0}}
    costs = trial_costs(t)
    assert costs["fixed_s"] == 5.0
    assert costs["own_s"] == pytest.approx(0.040)  # the 2 s before the first point left out
    one = predict(costs, 1000, 3.0, 1)
    two = predict(costs, 1000, 3.0, 2, spawn_s=1.0)
    assert 1000 / one == pytest.approx(3.0 + 5.0 + 1000 * 0.042)
    assert 1000 / two == pytest.approx(3.0 + 1.0 + 5.0 + 1000 * 0.042 / 2)  # fixed not halved


def test_the_two_gpu_runs_least_idle_worker_gives_the_spawn():
    # the last worker to finish was idle 5 s (its start and the command's end), the one-GPU
    # command 3 s besides its loop: several workers cost 2 s more
    dual = {"workers": [{"time": {**GPU_BOUND, "idle_s": 5.0}},
                        {"time": {**GPU_BOUND, "idle_s": 6.5}}]}
    text = model_section({"time": GPU_BOUND}, GPU_BOUND["wall_s"] + 3.0, {}, dual)
    assert "+2.0 s for several workers, measured" in text
    assert f"+{SPAWN_S:.1f} s for several workers, assumed" in model_section(
        {"time": GPU_BOUND}, GPU_BOUND["wall_s"] + 3.0, {})


def test_the_two_gpu_commands_own_start_counts_and_a_shorter_start_is_negative():
    # the command ran 1.5 s before starting its workers (its wall 3.5 s beyond the workers'
    # 100 s run): counted now (it was left out, 0.0 s on 2 x H100 where it took 1.3 s); and
    # workers whose start is shorter than the one-GPU command's give a negative spawn
    dual = {"wall_s": 102.0, "workers": [{"time": {**GPU_BOUND, "idle_s": 2.0}}]}
    single_s = GPU_BOUND["wall_s"] + 3.0
    assert "+0.5 s for several workers, measured" in model_section(
        {"time": GPU_BOUND}, single_s, {}, dual, dual_s=103.5)
    assert "-1.0 s for several workers, measured" in model_section(
        {"time": GPU_BOUND}, single_s, {}, dual)


def test_the_report_shows_each_workers_start_step_by_step():
    """time.startup (tuning/timing.py) per worker, as a table beside the phases: the steps in
    the order the workers took them, '-' where a worker lacks one; none where no worker has
    it (an older tune --json)."""
    one = {**GPU_BOUND, "startup": {"cli": 0.23, "evaluator": 1.2, "store": 1.21,
                                    "storage": 1.6, "ceiling": 1.82, "precompile": 2.01}}
    two = {**GPU_BOUND, "startup": {"cli": 0.53, "evaluator": 0.54, "storage": 1.6}}
    text = time_section([("one GPU", one), ("two GPUs GPU 0", two)])
    table = text[text.index("Each worker's start"):].splitlines()
    assert table[2] == "| worker | cli | evaluator | store | storage | ceiling | precompile |"
    assert table[4] == "| one GPU | 0.23 | 1.20 | 1.21 | 1.60 | 1.82 | 2.01 |"
    assert table[5] == "| two GPUs GPU 0 | 0.53 | 0.54 | - | 1.60 | - | - |"
    assert "Each worker's start" not in time_section([("one GPU", GPU_BOUND)])


def test_the_four_gpu_row_stands_beside_one_and_two_with_its_ratio_and_prediction():
    """scale_section: a row per run, the ratio of its whole command's rate to one GPU's beside
    Amdahl's bound on it, what it lost or measured twice against GPU 0 alone, and the model's
    rate for that many GPUs (the same predict as the model's table); '-' without the one-GPU
    breakdown."""
    one = {"single_points": 1000, "dual_points": 1000, "missing": 0, "twice": 0}
    four = {**one, "dual_points": 998, "missing": 2, "twice": 1}
    costs = trial_costs(GPU_BOUND)
    model = (costs, 1000, 3.0, 0.5, True)
    bounds = {1: 1.0, 2: 1.95, 4: 3.5}  # Amdahl's bound beside each measured ratio
    text = scale_section([(1, one, 50.0), (2, one, 26.0), (4, four, 16.0)], model, bounds)
    rows = [r for r in text.splitlines() if r[:3] in ("| 1", "| 2", "| 4")]
    alone = predict(costs, 1000, 3.0, 1)  # one GPU: no spawn
    assert rows[0] == f"| 1 | 1000 | 0 | 0 | 50.0 | 20.0 | 1.00 | 1.00 | {alone:.1f} |"
    assert rows[1].startswith("| 2 | 1000 | 0 | 0 | 26.0 | 38.5 | 1.92 | 1.95 |")
    assert rows[2] == (f"| 4 | 998 | 2 | 1 | 16.0 | 62.4 | 3.12 | 3.50 | "
                       f"{predict(costs, 1000, 3.0, 4, 1, 0.5):.1f} |")
    assert scale_section([(1, one, 50.0), (4, four, 16.0)], None).splitlines()[-1].endswith(
        "| 3.12 | - | - |")
