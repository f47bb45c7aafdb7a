"""The axis benchmark's statistics without a GPU (benchmarks/_axis_stats.py), on synthetic
samples: a tie is a ratio whose interval, from the two medians' distribution-free 95 %
intervals (the tuner's order statistics, _core.summarize), holds 1; the rounds go on until every
close contender's median is known to 1 %, within a cap of calls and of time. Where the rule
the report used before (|ratio - 1| within the larger relative standard deviation of single
calls) decides otherwise, the cases say why."""

from __future__ import annotations

import itertools
import random

import pytest

from reducetune import _core
from reducetune.benchmarks._axis_stats import (MAX_CALLS, MAX_NOISE, PRIMED, WARM_UP, is_tie,
                                               ratio_interval, round_times, rounds, stats)
from reducetune.benchmarks._axis_tune import Candidate, Tuner, protocol_time
from reducetune._space import limits_for_arch


def _noisy(median: float, spread: float, n: int, seed: int) -> list[float]:
    """n samples spread uniformly over median +- spread (relative)."""
    rng = random.Random(seed)
    return [median * (1 + spread * (2 * rng.random() - 1)) for _ in range(n)]


def _old_rule_tie(a: list[float], b: list[float]) -> bool:
    """The report's rule before: |ratio - 1| within the larger relative standard deviation."""
    sa, sb = stats(a), stats(b)
    return abs(sb["median_s"] / sa["median_s"] - 1) <= max(sa["rel_stddev"], sb["rel_stddev"])


def _tie(a: list[float], b: list[float]) -> bool:
    return is_tie(ratio_interval(stats(a), stats(b)))


def test_the_median_interval_is_the_tuners_order_statistics():
    s = stats([float(k) for k in range(1, 31)])
    # n = 30: ranks 9 and 22 (measure/stopping_rule.hpp)
    assert (s["median_low_s"], s["median_s"], s["median_high_s"]) == (9.0, 15.5, 22.0)
    assert s["samples"] == 30


def test_clearly_separated_samples_are_not_a_tie():
    mine, peer = _noisy(1.0, 0.01, 30, 1), _noisy(1.2, 0.01, 30, 2)
    low, high = ratio_interval(stats(mine), stats(peer))
    assert 1.15 < low < 1.2 < high < 1.25
    assert not _tie(mine, peer) and not _old_rule_tie(mine, peer)


def test_overlapping_samples_are_a_tie():
    mine, peer = _noisy(1.0, 0.05, 30, 3), _noisy(1.01, 0.05, 30, 4)
    assert _tie(mine, peer) and _old_rule_tie(mine, peer)


def test_a_small_margin_measured_over_many_calls_is_no_tie_though_single_calls_spread_wider():
    """Single calls spread +-8 % (relative standard deviation ~4.6 %), 200 of each: the
    medians are known to about 1 %, and 4 % apart. The old rule called that a tie."""
    mine, peer = _noisy(1.0, 0.08, MAX_CALLS, 5), _noisy(1.04, 0.08, MAX_CALLS, 6)
    assert stats(mine)["rel_stddev"] > 0.04
    assert not _tie(mine, peer)
    assert _old_rule_tie(mine, peer)


def test_ten_calls_with_one_slow_one_cannot_tell_a_4_percent_margin():
    """At n = 10 the median's interval is the whole range of the samples: one slow call
    among ten leaves the median uncertain, though the relative standard deviation stays below
    the margin. The old rule called reducetune 4 % faster; the interval rule calls a tie."""
    mine = [1.0] * 9 + [1.08]
    peer = [1.04] * 9 + [0.99]
    assert max(stats(mine)["rel_stddev"], stats(peer)["rel_stddev"]) < 0.04
    assert not _old_rule_tie(mine, peer)
    assert _tie(mine, peer)


def _timer(samples):
    it = itertools.cycle(samples)
    calls = []

    def once() -> float:
        calls.append(1)
        return next(it)

    once.calls = calls  # type: ignore[attr-defined]
    return once


def test_rounds_stop_at_the_fewest_calls_once_every_close_median_is_known():
    timers = {"reducetune": _timer([1.0]), "torch": _timer([2.0])}
    got = rounds(timers, 30)
    assert got["reducetune"]["samples"] == 30 and got["torch"]["samples"] == 30
    assert got["reducetune"]["stopped"] == "converged"
    assert got["torch"]["median_s"] == 2.0


def test_rounds_go_on_while_a_close_median_is_uncertain_and_stop_at_the_cap():
    # calls spread +-10 % (seeded; not two modes in turn, of which a primed round's second
    # call would take one): 80 leave its median's interval wider than 1 %
    timers = {"reducetune": _timer(_noisy(1.1, 0.1, 997, 3)), "torch": _timer([2.0])}
    got = rounds(timers, 30, max_calls=80)
    assert got["reducetune"]["samples"] == 80 and got["torch"]["samples"] == 80
    assert got["reducetune"]["stopped"] == "max_calls"
    assert got["reducetune"]["median_halfwidth"] > MAX_NOISE


def test_rounds_converge_once_a_noisy_median_narrows():
    """Calls spread +-5 %: 30 leave the median's interval wider than 1 %, more calls narrow
    it; the rounds stop as soon as it is within 1 %, before the cap."""
    timers = {"reducetune": _timer(_noisy(1.0, 0.05, 997, 7))}
    got = rounds(timers, 30)["reducetune"]
    assert got["stopped"] == "converged"
    assert 30 < got["samples"] < MAX_CALLS
    assert got["median_halfwidth"] <= MAX_NOISE
    assert _core.summarize(_noisy(1.0, 0.05, 997, 7)[:30])["median_rel_halfwidth"] > MAX_NOISE


def test_a_contender_not_close_never_holds_the_rounds():
    timers = {"reducetune": _timer([1.0]), "jax": _timer([3.0, 4.0])}
    got = rounds(timers, 30, close={"reducetune"})
    assert got["jax"]["samples"] == 30 and got["reducetune"]["stopped"] == "converged"


def test_a_counted_contender_takes_its_rounds_only_and_the_time_cap_stops_the_rest():
    slow = _timer([0.2])
    ticks = itertools.count()
    timers = {"reducetune": _timer(_noisy(1.1, 0.1, 997, 3)), "cub_segmented": slow}
    got = rounds(timers, 10, counts={"cub_segmented": 3}, time_cap_s=20,
                 clock=lambda: float(next(ticks)))
    assert got["cub_segmented"]["samples"] == 3 and got["cub_segmented"]["stopped"] == "counted"
    assert len(slow.calls) == 1 + 2 * 3  # one warm-up, three rounds of a primer and a call
    # the fake clock ticks once per check from round 10 on: 20 s after the start
    assert got["reducetune"]["stopped"] == "time_cap"
    assert 10 <= got["reducetune"]["samples"] < 40


def _logged(log: list[str], name: str):
    def once() -> float:
        log.append(name)
        return 1.0
    return once


def test_each_contender_follows_every_other_alike_and_the_same_shuffles_every_run():
    """A call finds L2 as the call before it left it: in rotating rounds the C++ call followed
    the memcpy ceiling (dirty lines, no input) in 5 rounds of 6 on 2026-11-26. Over 120 rounds
    of 6 contenders every contender's primer follows every other, none the same one in over a
    third of its rounds, and the orders are the same in every run (a seeded shuffle)."""
    names = ["reducetune", "reducetune_py", "torch", "torch_compile", "jax", "memcpy"]
    runs = []
    for _ in range(2):
        log: list[str] = []
        rounds({n: _logged(log, n) for n in names}, 120, max_calls=120)
        runs.append(log)
    assert runs[0] == runs[1]
    calls = runs[0][3 * len(names):]  # after the warm-up calls
    assert len(calls) == 2 * 120 * len(names)  # a primer and a timed call each
    primers = calls[::2]
    for name in names:
        before = [a for a, b in zip(primers, primers[1:]) if b == name]
        counts = {n: before.count(n) for n in names if n != name}
        assert min(counts.values()) >= 5, (name, counts)
        assert max(counts.values()) <= len(before) / 3, (name, counts)


def test_each_timed_call_follows_an_untimed_call_of_its_own_contender():
    """Primed rounds (_axis_stats.PRIMED): on an H200 every contender lost 6-9 us of 130 after
    the memcpy ceiling and the streaming kernel read 84 % of the peak after it, 90 % after
    itself. Each timed call comes right after its own contender's untimed call, and the
    samples are the timed calls' values, not the primers'."""
    names = ["reducetune", "torch", "memcpy", "streaming"]
    log: list[str] = []
    values: dict[str, list[float]] = {n: [] for n in names}

    def timer(name: str):
        def once() -> float:
            log.append(name)
            values[name].append(float(len(log)))
            return float(len(log))
        return once

    got, _ = round_times({n: timer(n) for n in names}, 10, close=set(), max_calls=10,
                         primed=True)
    calls = log[WARM_UP * len(names):]
    assert len(calls) == 2 * 10 * len(names)
    assert all(a == b for a, b in zip(calls[::2], calls[1::2]))
    for name in names:
        mine = values[name][WARM_UP:]
        assert got[name] == mine[1::2] and len(got[name]) == 10
    # the rounds' orders are those of the unprimed rounds: only the primers are added
    plain: list[str] = []
    round_times({n: _logged(plain, n) for n in names}, 10, close=set(), max_calls=10)
    assert calls[1::2] == plain[WARM_UP * len(names):]


def test_the_axis_rounds_are_primed_and_say_so_in_the_report_protocol():
    from reducetune.benchmarks.axis import _rounds
    assert PRIMED
    log: list[str] = []
    rounds({"a": _logged(log, "a"), "b": _logged(log, "b")}, 5, max_calls=5)
    assert len(log) == 2 * WARM_UP + 2 * 2 * 5
    assert "untimed call of the same contender" in _rounds(30)


class _FakeEvaluator:
    def __init__(self, reply: dict):
        self.reply, self.calls = reply, []

    def evaluate(self, point, problem, data):
        self.calls.append((point, problem, data))
        return self.reply


def test_the_chosen_point_is_measured_in_the_tuners_protocol_on_the_tunes_workload():
    t = Tuner("float32", "sum", limits_for_arch("sm_90"), [(4096, 16, 1)])
    p = t.space.preset("staged_short_rows")
    c = Candidate("staged_short_rows", p.variant_label, p.launch_label)
    ev = _FakeEvaluator({"status": "ok", "samples_s": [2e-5] * 9 + [9e-5],
                         "stopped": "converged"})
    got = protocol_time(ev, t, c, (4096, 16, 1))
    assert got["status"] == "ok" and got["median_s"] == 2e-5 and got["samples"] == 10
    assert got["median_high_s"] == 9e-5  # n = 10: the interval is the samples' range
    point, problem, data = ev.calls[0]
    assert point.labels == (p.variant_label, p.launch_label)
    assert problem.shape == (4096, 16, 1) and problem.dtype == "float32"
    assert data["pattern"] == "uniform" and data["seed"] == _core.WORKLOAD_SEED
    failed = protocol_time(_FakeEvaluator({"status": "failed", "reason": "wrong"}), t, c,
                           (4096, 16, 1))
    assert failed == {"status": "failed", "reason": "wrong"}


@pytest.mark.parametrize("bad", [[], [-1.0], [float("nan")]])
def test_no_samples_or_a_bad_one_is_refused(bad):
    with pytest.raises(Exception, match="sample"):
        stats(bad)
