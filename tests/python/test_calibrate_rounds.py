"""``reducetune calibrate`` times its candidates in the benchmarks' rounds (runtime/rounds.py):
the orders are decided once, in Python, and the C++ timer (``_core.time_in_rounds``,
``_core.time_axis_in_rounds``) follows the orders it is given. Without a GPU: the orders are
the benchmarks' seeded shuffles by index, calibrate passes them for sizes and for axis shapes
(a fake ``_core`` that logs its calls), and the bindings refuse malformed orders before any
CUDA call. On a GPU (skipped with the reason otherwise): well-formed orders are timed, one
median per reducer."""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import NO_GPU
from reducetune import _core, errors
from reducetune.runtime import calibrate, calibrate_axis
from reducetune.runtime.rounds import ORDER_SEED, index_orders, orders

# the whole-array benchmark's contenders (benchmarks/runtime._app), for the same count
NAMES = ["reducer", "cub", "reduce_torch", "torch", "reduce_cupy", "cupy"]


def test_index_orders_are_the_benchmarks_shuffles_by_index():
    """Calibrate's k candidates follow each other as the benchmarks' k contenders do."""
    got = index_orders(len(NAMES), 40)
    named = itertools.islice(orders(NAMES), 40)
    assert got == [[NAMES.index(n) for n in r] for r in named]
    assert all(sorted(r) == list(range(len(NAMES))) for r in got)
    assert index_orders(len(NAMES), 40) == got  # the same in every run
    assert index_orders(len(NAMES), 40, ORDER_SEED + 1) != got


def test_index_orders_are_not_a_rotation():
    """A rotation gives each candidate the same predecessor in all but one round in n; the
    shuffles give every other candidate that place in some round."""
    got = index_orders(8, 60)
    for k in range(8):
        before = {r[r.index(k) - 1] for r in got if r.index(k) > 0}
        assert before == set(range(8)) - {k}, (k, before)


class _Logged:
    """A fake ``_core``'s timers: each call's orders logged, the medians 1, 2, 3, ... µs."""

    def __init__(self) -> None:
        self.orders: list[list[list[int]]] = []
        self.recorded: list[tuple[int, float, int]] = []

    def time(self, reducers: list[Any], orders_: list[list[int]]) -> list[float]:
        self.orders.append(orders_)
        return [1e-6 * (i + 1) for i in range(len(reducers))]

    def record(self, db: str, rows: list[tuple[int, float, int]]) -> None:
        self.recorded += rows


def test_a_size_is_timed_in_the_rules_orders(monkeypatch):
    log = _Logged()
    reducer = SimpleNamespace(choice=lambda n, ordinal: {"source": "tuned"})
    fake = SimpleNamespace(
        Reducer=SimpleNamespace(for_point=lambda point: reducer),
        time_in_rounds=lambda rs, dtype, n, orders_, ordinal: log.time(rs, orders_),
        record_application_times=log.record, measured_pick=_core.measured_pick)
    monkeypatch.setattr(calibrate, "_core", fake)
    cands = [{"measurement_id": i, "point": None, "median_s": 1e-6} for i in range(5)]
    row = calibrate._calibrate_size("file.db", "float32", "sum", 1 << 20, cands, 7, 0)
    assert log.orders == [index_orders(5, 7)]
    assert [r[0] for r in log.recorded] == list(range(5)) and row["pick"]["measurement_id"] == 0


def test_an_axis_shape_is_timed_in_the_rules_orders(monkeypatch):
    log = _Logged()
    reducer = SimpleNamespace(axis_choice=lambda *shape_and_ordinal: {"source": "table"})
    fake = SimpleNamespace(
        Reducer=lambda dtype, op, log_fallbacks, axis_table: reducer,
        time_axis_in_rounds=lambda rs, dtype, outer, r, inner, orders_, ordinal:
            log.time(rs, orders_))
    monkeypatch.setattr(calibrate_axis, "_core", fake)
    cands = [{"variant": f"v{i}", "launch": "l"} for i in range(3)]
    medians = calibrate_axis.time_on_gpu(0)("float32", "sum", (4, 1024, 1), cands, 9)
    assert log.orders == [index_orders(3, 9)]
    assert medians == [1e-6, 2e-6, 3e-6]


MALFORMED = {
    "no round": [],
    "a round too short": [[0, 1, 2], [0, 1]],
    "a round too long": [[0, 1, 2, 0]],
    "an index twice": [[0, 1, 2], [0, 0, 2]],
    "an index out of range": [[0, 1, 3]],
    "a negative index": [[0, -1, 2]],
}


def _reducers(count: int = 3) -> list[Any]:
    return [_core.Reducer("float32", "sum", log_fallbacks=False) for _ in range(count)]


@pytest.mark.parametrize("bad", MALFORMED.values(), ids=MALFORMED.keys())
def test_the_bindings_refuse_orders_that_are_not_permutations(bad):
    """Refused as the request's own error, before any CUDA call: without a GPU the refusal is
    this one, not the missing device's."""
    with pytest.raises(errors.InvalidConfiguration, match="order|round"):
        _core.time_in_rounds(_reducers(), "float32", 1 << 10, bad)
    with pytest.raises(errors.InvalidConfiguration, match="order|round"):
        _core.time_axis_in_rounds(_reducers(), "float32", 4, 256, 1, bad)


def test_the_refusal_names_the_round_and_its_order():
    with pytest.raises(errors.InvalidConfiguration,
                       match=r"round 1's order \[0, 0, 2\] is not a permutation of 0\.\.2"):
        _core.time_in_rounds(_reducers(), "float32", 1 << 10, [[2, 1, 0], [0, 0, 2]])


def test_an_empty_shape_is_refused_before_any_cuda_call():
    with pytest.raises(errors.InvalidConfiguration, match="extent"):
        _core.time_axis_in_rounds(_reducers(), "float32", 4, 0, 1, index_orders(3, 2))


@pytest.mark.skipif(NO_GPU is None, reason="checks the no-GPU error; this machine has a GPU")
def test_well_formed_orders_pass_the_checks_and_reach_the_device():
    with pytest.raises(errors.DeviceError):
        _core.time_in_rounds(_reducers(), "float32", 1 << 10, index_orders(3, 2))


@pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
def test_well_formed_orders_give_one_median_per_reducer_on_the_gpu():
    whole = _core.time_in_rounds(_reducers(), "float32", 1 << 20, index_orders(3, 5))
    axis = _core.time_axis_in_rounds(_reducers(), "float32", 64, 1024, 1, index_orders(3, 5))
    assert len(whole) == len(axis) == 3 and all(t > 0 for t in whole + axis)
