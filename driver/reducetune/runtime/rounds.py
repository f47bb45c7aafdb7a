"""The order in which rounds time their contenders: ``reducetune calibrate``'s
(``_core.time_in_rounds``, ``_core.time_axis_in_rounds``: the C++ timer follows the orders
given, ``index_orders``), the runtime benchmark's ``interleaved_stats`` and the axis
benchmark's ``_axis_stats.rounds``. One rule, here, below both runtime and benchmarks.

Every round times each contender once, so that the host's drift reaches them alike. The order
is a new seeded shuffle each round, not a rotation: a call finds L2 as the call before it left
it, and a rotation keeps each contender's predecessor the same in all but one round in n. On
2026-11-26 the axis benchmark's rotation had the C++ call follow the memcpy ceiling (its copy's
dirty lines in L2, none of the input) in 5 rounds of 6 (bfloat16), torch the Python call (the
input hot): over the H100's bfloat16 shapes of 2^24 (32 MB, within L2) the C++ call's median was
1.48 x its screening time (the median over shapes), the Python call's 1.16 x and the peers'
0.98-1.23 x, and rows of 1024 lost 0.82 x to torch where the screening, each contender after its
own warm call, had it 1.41 x ahead (docs/results/h100_2026-11-26_axis_bench_median_ci/axis.json.xz).
On an H200 the 2^24 axis shapes' worst ratio against the fastest peer went from 0.94 to 1.14
with the shuffle (commit b1f38e4). The seed makes the orders the same in every run: two runs
differ by the GPU, not by the order.
"""

from __future__ import annotations

import itertools
import random
from typing import Iterator, Sequence, TypeVar

ORDER_SEED = 26  # the rounds' orders: the same shuffles in every run

T = TypeVar("T")


def orders(names: Sequence[T], seed: int = ORDER_SEED) -> Iterator[list[T]]:
    """The rounds' orders, one per round without end: each a shuffle of `names` drawn from
    one generator seeded with `seed`."""
    rng = random.Random(seed)
    while True:
        yield rng.sample(list(names), len(names))


def index_orders(count: int, rounds: int, seed: int = ORDER_SEED) -> list[list[int]]:
    """The first `rounds` orders of `count` contenders by index (0..count-1), as the C++
    timers take them: the same shuffles as ``orders`` of any `count` names (a shuffle draws
    positions, whatever the names are)."""
    return list(itertools.islice(orders(range(count), seed), rounds))
