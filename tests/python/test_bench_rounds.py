"""The benchmarks' rounds in seeded shuffled orders (runtime/rounds.py), on fake timers
that log their calls (no GPU): the whole-array benchmark (runtime.interleaved_stats) and the
axis benchmark (_axis_stats.rounds) take the same orders, each contender follows every other,
and the orders are the same in every run. A rotation fails these: each contender's predecessor
is the same in all but one round in n, and on the GPU the predecessor decides what L2 holds."""

from __future__ import annotations

import itertools

from reducetune.benchmarks._axis_stats import WARM_UP, rounds
from reducetune.runtime.rounds import ORDER_SEED, orders
from reducetune.benchmarks.runtime import interleaved_stats

# the whole-array benchmark's contenders (runtime._app)
NAMES = ["reducer", "cub", "reduce_torch", "torch", "reduce_cupy", "cupy"]


def _logged(log: list[str], name: str):
    def once() -> float:
        log.append(name)
        return 1.0 + len(log) * 1e-3  # distinct samples, so that a noise can be computed
    return once


def _runtime_rounds(samples: int, names: list[str] = NAMES) -> list[list[str]]:
    """The rounds interleaved_stats timed, after its 3 warm-up calls per contender."""
    log: list[str] = []
    interleaved_stats({n: _logged(log, n) for n in names}, samples)
    calls = log[3 * len(names):]
    assert len(calls) == samples * len(names)
    return [calls[k: k + len(names)] for k in range(0, len(calls), len(names))]


def _predecessors(rounds_: list[list[str]], name: str) -> dict[str, int]:
    """How often each other contender came just before `name` within a round."""
    before = [r[r.index(name) - 1] for r in rounds_ if r.index(name) > 0]
    return {n: before.count(n) for n in NAMES if n != name}


def test_each_contender_follows_every_other_within_some_round():
    """200 rounds of 6: every ordered pair adjacent (about 33 times each by chance), and no
    contender after the same one in over a third of the rounds it does not open (a rotation:
    all of them)."""
    got = _runtime_rounds(200)
    assert all(sorted(r) == sorted(NAMES) for r in got)  # each contender once a round
    for name in NAMES:
        counts = _predecessors(got, name)
        assert min(counts.values()) >= 5, (name, counts)
        assert max(counts.values()) <= sum(counts.values()) / 3, (name, counts)


def test_the_orders_are_the_same_in_every_run_and_the_seed_decides_them():
    first, again = _runtime_rounds(50), _runtime_rounds(50)
    assert first == again
    assert first == list(itertools.islice(orders(NAMES), 50))
    other = list(itertools.islice(orders(NAMES, ORDER_SEED + 1), 50))
    assert other != first and all(sorted(r) == sorted(NAMES) for r in other)


def test_a_counted_contender_keeps_its_first_rounds_in_the_shuffled_orders():
    """A contender named in `counts` (a far slower one) is timed in its first counts[name]
    rounds only, after one warm-up call, wherever the shuffle puts it."""
    log: list[str] = []
    got = interleaved_stats({n: _logged(log, n) for n in NAMES}, 20, counts={"cupy": 4})
    assert got["cupy"]["samples"] == 4 and log.count("cupy") == 1 + 4
    assert all(got[n]["samples"] == 20 for n in NAMES if n != "cupy")
    calls = log[3 * (len(NAMES) - 1) + 1:]
    expected = [n for r in itertools.islice(orders(NAMES), 20) for n in r]
    cupy_rounds = [k for k, n in enumerate(expected) if n == "cupy"][:4]
    assert calls == [n for k, n in enumerate(expected) if n != "cupy" or k in cupy_rounds]


def test_both_benchmarks_take_the_same_orders():
    """One rule, one place: the axis benchmark's rounds and the whole-array benchmark's are the
    same seeded shuffles of the same names (the axis benchmark's primed: each timed call after
    an untimed one of its own contender; the whole-array benchmark's not)."""
    log: list[str] = []
    rounds({n: _logged(log, n) for n in NAMES}, 30, max_calls=30)
    axis = log[WARM_UP * len(NAMES):]
    assert axis[::2] == axis[1::2] == [n for r in _runtime_rounds(30) for n in r]
