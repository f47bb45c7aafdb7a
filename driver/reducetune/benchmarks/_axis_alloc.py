"""Whether a timed call paid for device allocations: the counters of PyTorch's caching
allocator that move when it goes to cudaMalloc / cudaFree, read around a stretch of calls.

Why (issue 26): the axis benchmark's "Python call" (``reducetune.reduce(x, "sum", axis=...,
table=FILE)``) allocates its result from PyTorch's allocator on every call (up to 512 MB over
2^27 rows of 2), the C++ call writes into a buffer made once. A cached block costs a look-up;
a block the allocator had to free and map again (memory held by the peers: CuPy's pool, JAX,
torch.compile) costs a cudaMalloc before the launch and a cudaFree, both inside the timed call.
The counters say which it was, so that a run answers it rather than a guess.

``record`` gives the axis benchmark's row its ``alloc``: the change of the counters over the
screening and the rounds (every contender that allocates from PyTorch: the Python call,
torch.sum, torch.compile), and over a few more rounds after them in which the counters are read just before and just
after each call of the Python call only (what that call itself allocated, with the others'
calls between its calls, as in the rounds). Those extra calls are not timed samples: the
reading just before a call leaves the host busy, so their host times are dropped from the
row's lists. A counter this PyTorch lacks is left out (``num_device_alloc`` and
``num_device_free`` are newer than the ``segment`` counts).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from reducetune.runtime.rounds import orders

# cudaMalloc / cudaFree calls, retries after a failed cudaMalloc (the cache freed, then
# allocated again), out-of-memory errors, and synchronisations of every stream (a cudaFree
# of a block another stream used)
COUNTERS = ("num_device_alloc", "num_device_free", "segment.all.allocated", "segment.all.freed",
            "num_alloc_retries", "num_ooms", "num_sync_all_streams")
ATTRIBUTION_ROUNDS = 5  # rounds after the timed ones, the named call's counters read around it

Counters = dict[str, int]


def counters(torch: Any = None) -> Counters:
    """The allocator's COUNTERS on the current device, those this PyTorch has."""
    if torch is None:
        import torch  # optional: only for PyTorch tensors
    stats = torch.cuda.memory_stats()
    return {k: int(stats[k]) for k in COUNTERS if k in stats}


def change(before: Counters, after: Counters) -> Counters:
    """How much each counter read in both moved."""
    return {k: after[k] - before[k] for k in after if k in before}


def attributed(timers: dict[str, Callable[[], Any]], name: str, rounds: int,
               read: Callable[[], Counters]) -> Counters:
    """The counters' change summed over `rounds` calls of timers[name], read just before and
    just after each, the calls of the other timers between them in shuffled rounds (as the
    timed rounds order them, runtime/rounds.py): what `name`'s own calls allocated, with the
    memory the others hold at the time."""
    total: Counters = {}
    order = orders(list(timers))
    for _ in range(rounds):
        for n in next(order):
            if n != name:
                timers[n]()
                continue
            before = read()
            timers[n]()
            for k, v in change(before, read()).items():
                total[k] = total.get(k, 0) + v
    return total


def record(before: Counters, timers: dict[str, Callable[[], Any]], name: str,
           host: Iterable[list[float]], read: Callable[[], Counters] = counters,
           rounds: int = ATTRIBUTION_ROUNDS) -> dict[str, Any]:
    """A row's ``alloc`` (the module's docstring), read once the timed rounds that started at
    the counters `before` are over: their change over those rounds, then over `rounds` more
    calls of timers[name] among the others. `host`: the lists the timers append their host
    times to, cut back to the timed rounds' samples afterwards."""
    rounds_change = change(before, read())
    host = list(host)
    kept = [len(h) for h in host]
    own = attributed(timers, name, rounds, read)
    for h, n in zip(host, kept):
        del h[n:]
    return {"rounds": rounds_change, "python_call": own, "python_calls": rounds}
