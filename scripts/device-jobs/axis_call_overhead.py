"""Device probe (issue 26 item 5): the host time of one axis call, each way an application
makes it, on a small tensor whose kernel is short (so that the host time is what is timed):
the C++ call through the extension (reducer._core.reduce_axis), reducetune.reduce without and
with a table file (the benchmark's "Python call"), an AxisReducer's call, torch.sum; each
reducetune call with the resolved-call cache (runtime/axis_fast.py) and without it (the path
before it, every check on every call); the pieces a call is made of (the eager gate, the result's
allocation, the stream query). Two timings: "hot", calls back to back; "after a sync", each
call alone after torch.cuda.synchronize(), as the axis benchmark times one call between two
events (its host_s: 25-60 us for the Python call on an H200, 2026-11-26). Then cProfile of the
table call, by own time.
Run as  scripts/device-python -- python3 scripts/device-jobs/axis_call_overhead.py
(a device call: run(command=that, carry=[".deps", ".whl"])).
"""

import cProfile
import io
import json
import pstats
import statistics
import tempfile
import time
from pathlib import Path

import torch

import reducetune
from reducetune.runtime import axis_fast
from reducetune.runtime.axis import choice, default_reducer
from reducetune.runtime.eager import make_gate

CALLS = 3000
SHAPE = (4096, 16)


def hot_us(fn) -> float:
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(CALLS):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / CALLS * 1e6


def after_sync_us(fn) -> float:
    """The median host time of one call made after the GPU and the host were synchronised."""
    times = []
    for _ in range(CALLS // 3):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def without_cache(fn):
    """fn with the resolved-call cache off (nothing found, nothing kept): every call takes the
    checked path, as before the cache."""
    def off():
        keep = axis_fast.call, axis_fast.remember
        axis_fast.call, axis_fast.remember = (lambda *args: None), (lambda *args: None)
        try:
            return fn()
        finally:
            axis_fast.call, axis_fast.remember = keep
    return off


def ways(x, table: str) -> dict:
    red = default_reducer("float32", "sum")
    out = torch.empty(SHAPE[0], device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    core = red._core.reduce_axis
    ptr, optr = x.data_ptr(), out.data_ptr()
    plain = make_gate(torch)
    raw = torch._C._cuda_getCurrentRawStream
    calls = {
        "C++ call (reduce_axis on pointers)": lambda: core(ptr, *SHAPE, 1, optr, stream, 0),
        "reducetune.reduce(x, 'sum', axis=1)": lambda: reducetune.reduce(x, "sum", axis=1),
        "reducetune.reduce(x, 'sum', axis=1, table=F)":
            lambda: reducetune.reduce(x, "sum", axis=1, table=table),
        "AxisReducer(x, 1)": lambda: red(x, 1),
    }
    for name in list(calls)[1:]:
        calls[name + ", no cache"] = without_cache(calls[name])
    return {**calls,
            "torch.sum(x, 1)": lambda: torch.sum(x, 1),
            "torch.empty(4096, device='cuda')": lambda: torch.empty(SHAPE[0], device="cuda"),
            "x.new_empty((4096,))": lambda: x.new_empty((SHAPE[0],)),
            "the eager gate plain(x)": lambda: plain(x),
            "x.is_contiguous(); x.get_device()": lambda: (x.is_contiguous(), x.get_device()),
            "raw stream query": lambda: raw(0)}


def main() -> None:
    x = torch.randn(*SHAPE, device="cuda")
    folder = Path(tempfile.mkdtemp())
    table = folder / "table.json"
    rule = default_reducer("float32", "sum").choice(SHAPE[0], SHAPE[1], 1)
    table.write_text(json.dumps({"entries": [{"outer": SHAPE[0], "r": SHAPE[1], "inner": 1,
                                              "variant": rule["variant"],
                                              "launch": rule.get("launch", "")}]}))
    calls = ways(x, str(table))
    want = torch.sum(x, 1)
    for name, fn in calls.items():
        if name.startswith(("reducetune", "AxisReducer")):
            got = fn()
            assert torch.allclose(got, want, rtol=1e-5, atol=1e-4), name
    # the rule's, the table's and the AxisReducer's calls resolved: the repeats below hit them
    assert len(axis_fast._calls) == 3, f"resolved calls kept: {len(axis_fast._calls)}"
    source = choice("float32", "sum", (SHAPE[0], SHAPE[1], 1), table=str(table))["source"]
    print(f"{torch.cuda.get_device_name()}: host time per call, {SHAPE} float32; the table "
          f"file's point comes from: {source}")
    print(f"  {'':48s} {'hot':>8s} {'after a sync':>13s}")
    for name, fn in calls.items():
        print(f"  {name:48s} {hot_us(fn):6.1f} us {after_sync_us(fn):8.1f} us")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(CALLS):
        reducetune.reduce(x, "sum", axis=1, table=str(table))
    prof.disable()
    torch.cuda.synchronize()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(18)
    print(s.getvalue())


if __name__ == "__main__":
    main()
