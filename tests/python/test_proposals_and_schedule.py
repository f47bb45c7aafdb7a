"""Issue 12 on the CPU: what a study proposes (only values some selected valid point takes,
so that under 5 % of proposals are rejected before compiling) and how a run's time is shared
(every size answered first, the rest by what an evaluation costs there)."""

from __future__ import annotations

import pytest

import reducetune
from reducetune.tuning.budget import ANSWER_ATTEMPTS, Budget, CostModel, Schedule
from reducetune.tuning.config import SizeResult

from conftest import RECORDED

H90 = reducetune.limits_for_arch("sm_90")


def _space(dtype: str, op: str) -> reducetune.Space:
    return reducetune.Space("tunable", dtype, op, H90)


@pytest.mark.parametrize("dtype, op, absent, present", [
    ("float32", "sum", {"warp": ["redux", "volatile_unsafe"], "finish": ["atomic"]},
     {"vec": [4], "finish": ["two_pass", "ticket"]}),
    ("int32", "sum", {"warp": ["volatile_unsafe"]}, {"warp": ["redux"], "finish": ["atomic"]}),
    ("float64", "max", {"vec": [4], "warp": ["redux"]}, {"finish": ["atomic"]}),
    ("float64", "prod", {"vec": [4], "warp": ["redux"], "finish": ["atomic"]}, {"vec": [2]}),
])
def test_proposable_values_leave_out_what_no_selected_valid_point_takes(dtype, op, absent,
                                                                         present):
    space = _space(dtype, op)
    values = space.proposable()
    for name, vs in absent.items():
        assert not set(vs) & set(values[name]), (name, values[name])
    for name, vs in present.items():
        assert set(vs) <= set(values[name]), (name, values[name])
    # widening the selection brings the values back, never an invalid one
    wide = space.proposable(allow_flagged=True, nondeterministic=True)
    assert "volatile_unsafe" in wide["warp"] and "atomic" in wide["finish"]
    assert ("redux" in wide["warp"]) == (dtype == "int32")


@pytest.mark.parametrize("dtype, op", [("float32", "sum"), ("int32", "sum")])
def test_every_proposable_value_is_taken_by_a_selected_valid_point(dtype, op):
    space = _space(dtype, op)
    taken: dict[str, set] = {}
    for p in space.points():
        if space.selected(p):
            for k, v in p.params.items():
                taken.setdefault(k, set()).add(v)
    assert {k: set(v) for k, v in space.proposable().items()} == taken


def test_a_selection_without_points_is_a_clear_error():
    space = reducetune.Space("tunable", "float32", "sum", H90, {"finish": ["atomic"]})
    with pytest.raises(reducetune.InvalidConfiguration, match="--nondeterministic"):
        space.proposable()


@pytest.mark.skipif(not RECORDED, reason="no recording in tests/data/recorded")
@pytest.mark.parametrize("dtype, op", [("float32", "sum"), ("int32", "sum")])
@pytest.mark.parametrize("strategy", ["tpe", "random"])
def test_under_five_percent_of_proposals_are_rejected(dtype, op, strategy):
    """A replayed run over the whole space (no --restrict): the recording answers only part of
    it, which does not matter here: rejection is decided before any evaluation."""
    ev = reducetune.ReplayEvaluator(RECORDED[0])
    try:
        (r,) = reducetune.tune(ev, reducetune.TuneConfig(
            dtype=dtype, op=op, sizes=[1 << 16], strategy=strategy, max_evals=150, seed=3))
    finally:
        ev.close()
    assert r.proposed >= 150
    assert r.rejected_rate < 0.05, (r.invalid, r.flagged, r.nondeterministic, r.proposed)


def test_a_deadline_never_leaves_a_size_without_an_answer():
    past = Budget(deadline=0.0)  # long gone
    r = SizeResult(1024)
    assert past.stop(r) == ""  # nothing tried yet: go on
    r.points = ANSWER_ATTEMPTS - 1
    assert past.stop(r) == ""  # all failed so far: go on, up to ANSWER_ATTEMPTS
    r.points = ANSWER_ATTEMPTS
    assert past.stop(r) == "time-limit"
    r.points, r.best = 1, {"median_s": 1e-5}
    assert past.stop(r) == "time-limit"


def test_cost_model_fits_fixed_and_per_byte_costs():
    m = CostModel()
    m.observe(1 << 12, 0.2, 10, 10 * 0.11)
    m.observe(1 << 32, 4.2, 10, 10 * 0.15)
    assert m.mandatory(1 << 12) == pytest.approx(0.2, abs=1e-3)
    assert m.mandatory(1 << 32) == pytest.approx(4.2, abs=1e-3)
    assert m.mandatory(1 << 31) == pytest.approx(2.2, abs=0.01)
    assert m.per_eval(1 << 32) > m.per_eval(1 << 12) > 0


def test_schedule_reserves_what_later_sizes_need_and_shares_the_rest_by_cost():
    sizes = [1 << 12, 1 << 32]  # 4 KiB, 4 GiB
    s = Schedule(60.0, sizes, start=0.0)
    s.costs.observe(1 << 12, 0.2, 10, 10 * 0.1)
    s.costs.observe(1 << 32, 4.2, 10, 10 * 0.3)
    first = s.deadline(0, now=0.0)
    # unit 0: its own fixed cost, plus a quarter of what is left after both fixed costs
    # (per-evaluation costs 0.1 : 0.3)
    assert first == pytest.approx(0.2 + (60.0 - 0.2 - 4.2) * 0.25, rel=0.02)
    # the last unit gets everything left
    assert s.deadline(1, now=first) == pytest.approx(60.0, rel=1e-6)


def test_schedule_gives_every_unit_its_fixed_cost_even_when_time_is_short():
    s = Schedule(1.0, [1 << 30] * 4, start=0.0)  # far less than 4 prepared workloads need
    for i in range(4):
        d = s.deadline(i, now=10.0 * i)
        assert d is not None and d >= 10.0 * i + s.costs.mandatory(1 << 30) - 1e-9


def test_units_go_type_by_type_largest_first_with_the_operators_of_a_size_together():
    from reducetune.tuning.run import unit_order

    configs = [reducetune.TuneConfig(dtype=d, op=o, sizes=[1 << 10, 1 << 20])
               for d in ("float32", "int64") for o in ("sum", "max")]
    order = [(configs[k].dtype, configs[k].op, n) for k, n in unit_order(configs)]
    assert order == [("float32", "sum", 1 << 20), ("float32", "max", 1 << 20),
                     ("float32", "sum", 1 << 10), ("float32", "max", 1 << 10),
                     ("int64", "sum", 1 << 20), ("int64", "max", 1 << 20),
                     ("int64", "sum", 1 << 10), ("int64", "max", 1 << 10)]


def test_the_first_unit_of_a_type_is_charged_the_data_generation():
    s = Schedule(100.0, [1 << 32, 1 << 32, 1 << 12], start=0.0, first=[True, False, False])
    s.observe(0, 12.0, 0, 0.0)  # generated 4 GiB
    s.observe(1, 1.0, 0, 0.0)  # reused it
    assert s.costs.fixed(1 << 32, True) == pytest.approx(12.0)
    assert s.costs.fixed(1 << 32, False) == pytest.approx(1.0)
    # one size seen: the slope goes through the prior's fixed part, not flat
    assert s.costs.fixed(1 << 33, True) > 20.0


def test_a_lazy_deadline_is_asked_once_the_size_is_answered():
    asked: list[int] = []
    budget = Budget(deadline=lambda: asked.append(1) or 0.0)
    r = SizeResult(1024)
    assert budget.stop(r) == "" and not asked  # not answered: the share is not computed yet
    r.points, r.best = 1, {"median_s": 1e-5}
    assert budget.stop(r) == "time-limit" and asked == [1]
    assert budget.stop(r) == "time-limit" and asked == [1]  # asked once


def test_a_share_asked_after_the_fixed_part_does_not_count_it_again():
    s = Schedule(60.0, [1 << 20, 1 << 20], start=0.0)
    s.costs.observe(1 << 20, 5.0, 10, 1.0)
    assert s.deadline(0, now=10.0, fixed_spent=True) == pytest.approx(10.0 + (50.0 - 5.0) / 2)
