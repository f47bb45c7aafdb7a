"""Issue 12 on the CPU: no unit's share of a run's time collapses to one point.

On an H100 (docs/results/h100_2026-11-23_issue12_rerun, the README's main command, 132 units)
every unit got 10-34 points except float32 min at 2^28, which got 1: the estimate of the fixed
cost of the 127 units still to come had jumped to 1.83 s each (see _budget._Line), and its
share came out at 0.06 s. These tests replay that run's costs, once as the observations the
schedule had (from the database's timestamps) and once as a whole run on a clock that each
evaluator call advances by what it cost on the H100."""

from __future__ import annotations

import statistics
from types import SimpleNamespace

import pytest

import reducetune
from reducetune.tuning import budget as _budget, run as _tune_run
from reducetune.tuning.budget import MIN_SHARE, Schedule
from reducetune.evaluate.replay import ReplayEvaluator
from reducetune.tuning.run import element_bytes, tune_all, unit_order

from conftest import synthetic_median

GIB = 1 << 30
EVAL_S = 0.07  # one evaluation on the H100, Optuna included (0.065-0.08 s at every size)
SIZES = [1 << k for k in range(10, 31, 2)]  # the README's main command: 2^10..2^30:2

# The H100 run's first units, from h100_tune.db.xz: (fixed part, further evaluations, their
# seconds), as _tune_run._unit observed them. The fixed part runs from the end of the unit
# before to the end of the first trial (trials.datetime_complete); unit 0's (data generation,
# 47 s after the start with the ceiling and the precompile) is inferred: 10 s makes the
# schedule give units 0-3 the 1.14-1.26 s they had (1.15-1.20 s measured).
H100_UNITS = [(10.0, 14, 1.197), (2.287, 9, 1.192), (2.184, 15, 1.145), (1.829, 18, 1.192)]
H100_UNIT4_AT = 68.722  # float32 min 2^28's first trial ended, seconds after the start


def _units(dtypes: list[str], ops: list[str]) -> tuple[list[int], list[bool]]:
    """The run's units in its order: their input bytes, and whether each is its type's
    first."""
    configs = [reducetune.TuneConfig(dtype=d, op=o, sizes=SIZES) for d in dtypes for o in ops]
    units = unit_order(configs)
    kinds = [configs[k].dtype for k, _ in units]
    return ([n * element_bytes(configs[k].dtype) for k, n in units],
            [i == kinds.index(d) for i, d in enumerate(kinds)])


def test_the_h100_units_share_is_not_taken_by_one_slow_preparation():
    unit_bytes, first = _units(["float32", "float64", "int32", "int64"], ["sum", "min", "max"])
    s = Schedule(360.0, unit_bytes, start=0.0, first=first)
    for i, (fixed_s, evals, evals_s) in enumerate(H100_UNITS):
        s.observe(i, fixed_s, evals, evals_s)
    share = s.deadline(4, now=H100_UNIT4_AT, fixed_spent=True) - H100_UNIT4_AT
    # it got 0.06 s (one point) where the units around it got ~1.2 s (13-19 points)
    assert share >= 12 * EVAL_S


def test_a_wildly_wrong_estimate_still_leaves_a_unit_its_minimum_share():
    s = Schedule(100.0, [GIB] * 50, start=0.0)
    s.observe(0, 60.0, 10, 10 * EVAL_S)  # one unit's fixed part hung for a minute
    now = 70.0
    share = s.deadline(1, now=now, fixed_spent=True) - now
    assert share == pytest.approx(MIN_SHARE * (100.0 - now) / 49, rel=1e-6)


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def monotonic(self) -> float:
        return self.t


class _CostedReplay(ReplayEvaluator):
    """The synthetic recording's device, answering every float32 workload with synthetic
    points, on a clock each call advances by what it cost on the H100: the first workload
    generates the type's data; each workload then uploads and computes its reference (the
    compensated sum's costs three times min's or max's); each evaluation costs EVAL_S."""

    def __init__(self, path: object, clock: _Clock) -> None:
        super().__init__(path)  # type: ignore[arg-type]
        self.clock = clock
        self.generated = False

    def cub(self, w: dict) -> dict:
        per_gib = 1.75 if w["op"] == "sum" else 0.55
        self.clock.t += 0.03 + per_gib * w["n"] * 4 / GIB + (0.0 if self.generated else 3.0)
        self.generated = True
        t = w["n"] * 4 / 3.0e12 + 3e-6
        return {"status": "ok", "samples_s": [t] * 10, "median_s": t, "gbps": w["n"] * 4 / t / 1e9}

    def evaluate(self, point, problem, data=None) -> dict:
        self.calls += 1
        self.clock.t += EVAL_S
        t = synthetic_median(point.variant_label, point.launch_label, problem.elements)
        return {"status": "ok", "kind": "", "reason": "", "samples_s": [t] * 10, "median_s": t,
                "rel_stddev": 0.0, "gbps": problem.elements * 4 / t / 1e9, "pct_of_peak": None,
                "pct_of_ceiling": None}


def test_a_run_with_the_h100s_costs_gives_every_unit_its_share(synthetic_db, monkeypatch):
    clock = _Clock()
    fake_time = SimpleNamespace(monotonic=clock.monotonic)
    monkeypatch.setattr(_budget, "time", fake_time)
    monkeypatch.setattr(_tune_run, "time", fake_time)
    limit = 60.0  # before the fix: float32 min at 2^28 got 1 point, as on the H100
    configs = [reducetune.TuneConfig(dtype="float32", op=o, sizes=SIZES, strategy="random",
                                     seed=1, time_limit_s=limit) for o in ("sum", "min", "max")]
    with _CostedReplay(synthetic_db, clock) as ev:
        results = tune_all(ev, configs)
    points = {(c.op, r.n): r.points for c, rs in zip(configs, results, strict=True) for r in rs}
    median = statistics.median(points.values())
    assert median >= 10
    assert min(points.values()) >= median / 2, points  # the H100 run: 1 against 22
    assert clock.t <= limit + 2.0  # and the run keeps to its limit
