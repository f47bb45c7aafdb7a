"""The axis benchmark's allocation record (benchmarks/_axis_alloc.py), without a GPU: a
stand-in torch whose memory_stats() reads counters that each stand-in contender moves as it
"allocates". Checked here: only the counters this PyTorch has are read; the Python call's own
count leaves out what the other contenders allocated between its calls; the rounds' count is
everything since the reading before them; and the extra calls' host times are dropped, so that
the row's host medians stay those of the timed rounds."""

from __future__ import annotations

from typing import Any, Callable

from reducetune.benchmarks import _axis_alloc


class _Cuda:
    def __init__(self, stats: dict[str, int]) -> None:
        self.stats = stats

    def memory_stats(self) -> dict[str, Any]:
        # PyTorch's dict holds byte counts and much else beside the counters read
        return {**self.stats, "allocated_bytes.all.current": 123}


class _Torch:
    def __init__(self, stats: dict[str, int]) -> None:
        self.cuda = _Cuda(stats)


def _contender(stats: dict[str, int], moves: dict[str, int], host: list[float]
               ) -> Callable[[], float]:
    """A timer that moves the allocator's counters by `moves` and appends a host time."""
    def once() -> float:
        for k, v in moves.items():
            stats[k] += v
        host.append(1e-6)
        return 1e-5

    return once


def test_only_the_counters_this_pytorch_has_are_read() -> None:
    older = _Torch({"segment.all.allocated": 4, "segment.all.freed": 1, "num_alloc_retries": 0})
    assert _axis_alloc.counters(older) == {"segment.all.allocated": 4, "segment.all.freed": 1,
                                           "num_alloc_retries": 0}
    assert _axis_alloc.change({"a": 1}, {"a": 5, "b": 2}) == {"a": 4}, "b was not read before"


def test_the_python_calls_count_leaves_out_the_others_allocations() -> None:
    stats = dict.fromkeys(_axis_alloc.COUNTERS, 0)
    torch = _Torch(stats)
    host: dict[str, list[float]] = {"reducetune_py": [], "reducetune": [], "torch": []}
    timers = {"reducetune_py": _contender(stats, {"num_device_alloc": 1, "num_device_free": 1},
                                          host["reducetune_py"]),
              "reducetune": _contender(stats, {}, host["reducetune"]),
              "torch": _contender(stats, {"num_device_alloc": 10, "num_alloc_retries": 1},
                                  host["torch"])}
    before = _axis_alloc.counters(torch)
    for _ in range(30):  # the timed rounds
        for t in timers.values():
            t()
    got = _axis_alloc.record(before, timers, "reducetune_py", host.values(),
                             lambda: _axis_alloc.counters(torch), rounds=4)
    assert got["rounds"]["num_device_alloc"] == 30 * 11
    assert got["rounds"]["num_alloc_retries"] == 30
    assert got["python_calls"] == 4
    assert got["python_call"]["num_device_alloc"] == 4, "torch's allocations are not its own"
    assert got["python_call"]["num_device_free"] == 4
    assert got["python_call"]["num_alloc_retries"] == 0
    assert stats["num_device_alloc"] == 30 * 11 + 4 * 11, "the others ran between its calls"
    assert {k: len(v) for k, v in host.items()} == dict.fromkeys(host, 30), \
        "the extra calls' host times are not the rounds' samples"
