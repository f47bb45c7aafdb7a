"""Where a worker's time goes (issue 25, item 1; tuning/timing.py), on a replay of the real H200
recording (tests/data/recorded, with the --restrict of its sidecar: every proposal recorded):
each phase present and non-negative, the phases adding up to the run's wall time, and the
phases that a replay must spend time in (the recording's rows, Optuna's storage) not empty."""

from __future__ import annotations

import json
import time

import pytest

from reducetune.tuning.timing import PHASES, Breakdown, running, timed
from replay_support import h200_grid_replay, needs_h200_grid

pytestmark = needs_h200_grid("the breakdown is tested on a real recording")

EVALS = 24


def replay(cli, db, *extra):
    return cli(*h200_grid_replay(db), "--max-evals", str(EVALS), "--json", *extra)


def check(doc: dict, points: int) -> None:
    phases = doc["phases"]
    assert set(phases) == set(PHASES)  # every phase present, none unknown
    assert all(v >= 0 for v in phases.values()), phases
    # The phases are exclusive (a storage call inside ask is not also the sampler's), so they
    # add up to the wall time; a phase counted twice would overshoot it.
    assert sum(phases.values()) == pytest.approx(doc["wall_s"], rel=0.02, abs=0.01)
    assert sum(v for k, v in phases.items() if k != "tuner") <= doc["wall_s"] * 1.001
    assert doc["points"] == points
    assert doc["points_per_s"] == pytest.approx(points / doc["wall_s"])
    # a replay reads its recording for every point and asks and tells the study every trial
    assert phases["measuring"] > 0 and doc["calls"]["measuring"] >= points
    assert phases["storage_read"] > 0 and phases["storage_write"] > 0
    assert doc["calls"]["sampler"] >= 2 * points  # an ask and a tell at least per point
    assert doc["calls"]["results"] >= points  # each point looked up in the results file
    check_startup(doc)
    check_first_unit(doc)


STEPS = ["cli", "configs", "evaluator", "store", "storage", "ceiling", "precompile"]


def check_startup(doc: dict) -> None:
    """The command's start, step by step (the part more GPUs do not divide): every step, in
    the order the command takes them, after the process started and before the loop ended."""
    steps = doc["startup"]
    assert list(steps) == STEPS, steps
    ends = [steps[k] for k in STEPS]
    assert ends == sorted(ends) and ends[0] >= 0, steps
    # the loop (wall_s) began after the storage was opened and before the ceiling's end
    assert steps["storage"] <= steps["ceiling"] <= steps["storage"] + doc["wall_s"]


def check_first_unit(doc: dict) -> None:
    """The first unit's setup before its first point, seconds into the loop: its CUB baseline,
    then its study, then its warm start, all before the first point was measured."""
    steps = doc["first_unit"]
    assert list(steps) == ["cub", "study", "warm"], steps
    ends = list(steps.values())
    assert ends == sorted(ends) and ends[0] >= 0, steps
    # a --devices worker may measure nothing (the others took every point): no first point
    if doc["first_point_s"] is not None:
        assert ends[-1] <= doc["first_point_s"], (steps, doc["first_point_s"])


@pytest.mark.parametrize("storage", ["file", "journal"])
def test_the_phases_add_up_to_the_wall_time(cli, tmp_path, storage):
    extra = ["--storage", f"journal:{tmp_path / 'studies.journal'}"] if storage == "journal" else []
    code, out, err = replay(cli, tmp_path / "r.db", "--strategy", "tpe", *extra)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["sizes"][0]["evaluated"] == EVALS
    check(doc["time"], EVALS)
    if storage == "journal":  # claims under the journal's claim lock: its waits are timed
        assert doc["time"]["calls"]["lock_wait"] >= EVALS


def test_a_resumed_run_measures_nothing_and_says_so(cli, tmp_path):
    db = tmp_path / "r.db"
    assert replay(cli, db, "--strategy", "grid")[0] == 0
    code, out, err = replay(cli, db, "--strategy", "grid")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["sizes"][0]["evaluated"] == 0
    assert doc["time"]["points"] == 0 and doc["time"]["points_per_s"] == 0
    assert doc["time"]["calls"]["measuring"] <= 2  # CUB and the ceiling at most, no point


def test_each_worker_of_a_devices_run_has_its_breakdown_and_idle_time(cli, tmp_path):
    code, out, err = replay(cli, tmp_path / "r.db", "--strategy", "grid", "--devices", "0,1")
    assert code == 0, err
    doc = json.loads(out)
    assert len(doc["workers"]) == 2 and not doc["failed"]
    for w in doc["workers"]:
        t = w["time"]
        check(t, sum(s["evaluated"] for s in w["sizes"]))
        # the command waits for both: a worker's wall time plus its idle time is the command's
        assert t["idle_s"] >= 0
        assert t["wall_s"] + t["idle_s"] == pytest.approx(doc["wall_s"], rel=1e-6)
    assert sum(w["time"]["points"] for w in doc["workers"]) == EVALS  # none measured twice


def test_a_phase_inside_another_pauses_it():
    b = Breakdown()
    slow = timed("storage_read", lambda: time.sleep(0.05))
    with running(b):
        with b.phase("sampler"):
            time.sleep(0.02)
            slow()
    assert b.seconds["storage_read"] >= 0.05
    assert 0.02 <= b.seconds["sampler"] < 0.05  # the read is not the sampler's too
    assert b.calls == {**dict.fromkeys(PHASES[:-1], 0), "sampler": 1, "storage_read": 1}
    assert slow() is None and b.calls["storage_read"] == 1  # outside the run: not counted
