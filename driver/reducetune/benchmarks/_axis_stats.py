"""The axis benchmark's statistics: how long contenders are timed, and when two of them tie.

Rounds (``rounds``): every round times each contender once, in a new seeded shuffle each round
(``rounds.orders``: the host's drift reaches them alike, and each contender follows every other
alike; that module says why not a rotation), and the rounds go on until the median of every
*close* contender is known to ``MAX_NOISE`` (the relative half-width of its distribution-free
95 % interval, the tuner's stopping rule: measure/stopping_rule.hpp), or ``MAX_CALLS`` calls, or
``TIME_CAP_S`` of rounds. A fixed 30 calls left a 2^24 shape's medians (10-40 µs a call) up to
1.28 x apart in one run; a 2^28 shape (0.1-0.5 ms a call) mostly converges by 30.

Primed (``PRIMED``): in the axis benchmark each timed call follows an untimed call of the same
contender, in the same place of the round. A call finds L2 as the call before it left it, and
without the primer that was another contender's: on an H200 every contender lost 6-9 us of
about 130 after the memcpy ceiling (its copy's dirty lines written back during the next call's
reads) and 1-7 us after torch.compile or JAX, the read-only streaming kernel itself read 512 MB
at 84.0 % of the peak after memcpy and at 89.8-90.2 % after itself
(docs/results/h200x4_2026-11-27_axis_cxx_timed_pdl/h200x2_probes/predecessors.md). So each
contender's rate depended on which other contenders the benchmark happened to run, its own
ceilings among them, and the shapes' % of peak moved with them (the streaming kernel 81-88 % in
one run's rounds). Primed, a contender's call starts from the L2 that contender itself leaves:
its own input hot, its own writes dirty, as when an application calls it again; the shuffles
still spread the host's drift over every contender alike. The whole-array benchmark
(runtime.interleaved_stats) is not primed: its recorded ratios were measured without.

Ties (``ratio_interval``): two medians are compared through their intervals. The ratio
peer / reducetune lies in [peer_low / reducetune_high, peer_high / reducetune_low] when both
medians lie in their 95 % intervals (both at once: at least 90 %), and the shape is a tie when
that interval holds 1. Each interval comes from ``_core.summarize``: the order statistics the
tuner's stopping rule uses, not a second formula. The relative standard deviation of single
calls, which the report compared the ratio with before, is the spread of one call, not the
uncertainty of a median of many: it called a 2 % margin measured over 200 calls a tie.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from reducetune import _core
from reducetune.runtime.rounds import orders

MAX_NOISE = _core.MAX_NOISE  # 1 %: the median interval's relative half-width that stops
MAX_CALLS = 200  # per contender, at most
TIME_CAP_S = 0.5  # of rounds per call of rounds() (a shape's tune, then its peers): 2^28
# calls take 0.1-0.5 ms, a round of 8 contenders 1-4 ms, so 0.5 s holds over 100 rounds
WARM_UP = 3  # calls per contender before the rounds (one for a contender timed `counts` times)
PRIMED = True  # the axis benchmark's rounds: an untimed call of a contender before each timed
# one (so a round of 8 contenders at 2^28 takes 2-8 ms: 0.5 s still holds over 60 rounds)

Timers = dict[str, Callable[[], float]]


def stats(samples: list[float]) -> dict[str, Any]:
    """A contender's median, its 95 % interval, the relative standard deviation and the count
    (_core.summarize)."""
    s = _core.summarize(samples)
    return {"median_s": s["median"], "median_low_s": s["median_low"],
            "median_high_s": s["median_high"], "rel_stddev": s["rel_stddev"],
            "median_halfwidth": s["median_rel_halfwidth"], "samples": s["count"]}


def rounds(timers: Timers, min_samples: int, close: set[str] | None = None,
           counts: dict[str, int] | None = None, max_calls: int = MAX_CALLS,
           time_cap_s: float = TIME_CAP_S, clock: Callable[[], float] = time.monotonic,
           primed: bool = PRIMED) -> dict[str, dict[str, Any]]:
    """Each contender's stats (``stats``) from rounds in shuffled orders (each contender after
    every other alike, the module's docstring says why): at least `min_samples` rounds,
    then on until every contender of `close` (default: all) has a median interval within
    MAX_NOISE, or `max_calls` rounds, or `time_cap_s` seconds of rounds. A contender named in
    `counts` takes part in its first counts[name] rounds only, after one warm-up call (a far
    slower one, warm from screening). Primed (the module's docstring says why), each timed call
    follows an untimed call of the same contender. Each entry says why its rounds stopped
    ("stopped")."""
    counts = counts or {}
    times, stopped = round_times(timers, min_samples, close, counts, max_calls, time_cap_s, clock,
                                 primed)
    return {name: {**stats(t), "stopped": "counted" if name in counts else stopped}
            for name, t in times.items()}


def round_times(timers: Timers, min_samples: int, close: set[str] | None = None,
                counts: dict[str, int] | None = None, max_calls: int = MAX_CALLS,
                time_cap_s: float = TIME_CAP_S, clock: Callable[[], float] = time.monotonic,
                primed: bool = False) -> tuple[dict[str, list[float]], str]:
    """The samples of ``rounds`` (its arguments), by contender, and why the rounds stopped: the
    one loop of both benchmarks (runtime.interleaved_stats takes a fixed count of rounds, with
    `close` empty and `max_calls` its count, not primed)."""
    counts, names = counts or {}, list(timers)
    close = set(names if close is None else close) - set(counts)
    for name in names:  # warm-up: modules loaded, results pooled, clocks up
        for _ in range(1 if name in counts else WARM_UP):
            timers[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    started, stopped, i, order = clock(), "max_calls", 0, orders(names)
    while i < max_calls:
        for name in next(order):
            if len(times[name]) < counts.get(name, max_calls):
                if primed:
                    timers[name]()  # untimed: the L2 as this contender leaves it
                times[name].append(timers[name]())
        i += 1
        if i < min_samples:
            continue
        if all(_converged(times[n]) for n in close):
            stopped = "converged"
            break
        if clock() - started > time_cap_s:
            stopped = "time_cap"
            break
    return times, stopped


def _converged(samples: list[float]) -> bool:
    return bool(_core.summarize(samples)["median_rel_halfwidth"] <= MAX_NOISE)


def ratio_interval(mine: dict[str, float], other: dict[str, float]) -> tuple[float, float]:
    """The interval of other's median over mine (> 1: mine faster), from their 95 % median
    intervals (``median_low_s``, ``median_high_s``)."""
    return (other["median_low_s"] / mine["median_high_s"],
            other["median_high_s"] / mine["median_low_s"])


def is_tie(interval: tuple[float, float] | None) -> bool:
    """A ratio whose interval holds 1: the run cannot tell which is faster."""
    return interval is not None and interval[0] <= 1.0 <= interval[1]
