"""Device probe (issue 26): where reducetune.reduce(x, "sum", axis=...)'s time between the events
goes, step by step, at the 2^24 shapes where the Python call lost to torch.sum while the C++ call
won (docs/results/h100_2026-11-27_axis_bench_primed_all/: bfloat16 rows (16384, 1024) C++ 2.05 x
torch, Python call 0.84 x).

A ladder of calls, each adding one step of the Python call's fast path (runtime/axis_fast.py) to
the one before, timed as the axis benchmark times its Python contenders (an event, the call, an
event, a synchronize; primed: each timed call right after an untimed call of the same one; the
calls in a new shuffled order each round, runtime/rounds.py):
  launch      the C++ reduce_axis from Python, pointers, stream and output made once
  +alloc      x.new_empty(result shape) per call
  +empty      torch.empty(result shape, dtype=, device=) instead (the other allocation)
  +queries    x.get_device(), the current stream's raw handle, both data_ptr()s per call
  fast        axis_fast.call(x, axis, False, source): its gate, key and dict look-up too
  reduce      reducetune.reduce(x, "sum", axis=A, table=FILE): the public call
  reduce nogc the same with the garbage collector off
  torch.sum   x.sum(dim=A), the peer
  torch out=  torch.sum(x, dim=A, out=o), the peer without its allocation
Each line: the median between the events and the median host time (perf_counter around the
call), in us, and the difference to the line above.

    scripts/device-python -- python3 scripts/device-jobs/axis_py_steps.py --out $OUT/steps.md
(or, after x_session.sh build, PYTHONPATH=build/z-site-new:/tmp/site python3 ...)
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from axis_call_probe import table_file  # this script's folder is first on sys.path

SHAPES = (("bfloat16", (16384, 1024), 1), ("float32", (2048, 8192), 1),
          ("bfloat16", (256, 65536), 1), ("float32", (128, 131072), 0),
          ("bfloat16", (4096, 16), 1))
ROUNDS = 300


def ladder(torch: Any, x: Any, axis: int, path: str) -> dict[str, Callable[[], Any]]:
    import reducetune
    from reducetune.runtime import axis_fast
    from reducetune.runtime.arrays import raw_stream_query
    from reducetune.runtime.axis_args import axis_call

    call = axis_call(tuple(x.shape), axis, False)
    view, shape = (call.outer, call.r, call.inner), call.shape
    dtype = str(x.dtype).removeprefix("torch.")
    core = reducetune.AxisReducer(dtype, "sum", table=path)._core.reduce_axis
    out = x.new_empty(shape)
    ptr, optr = x.data_ptr(), out.data_ptr()
    raw = raw_stream_query(torch)
    device = x.get_device()
    stream = raw(device)
    source = ("sum", "run_to_run", None, path)

    def alloc() -> Any:
        o = x.new_empty(shape)
        core(ptr, *view, o.data_ptr(), stream, device)
        return o

    def empty() -> Any:
        o = torch.empty(shape, dtype=x.dtype, device=x.device)
        core(ptr, *view, o.data_ptr(), stream, device)
        return o

    def queries() -> Any:
        d = x.get_device()
        o = x.new_empty(shape)
        core(x.data_ptr(), *view, o.data_ptr(), raw(d), d)
        return o

    def reduce() -> Any:
        return reducetune.reduce(x, "sum", axis=axis, table=path)

    reduce()  # the first call resolves the key (axis_fast.remember)
    assert axis_fast.call(x, axis, False, source) is not None, "the fast path missed"
    return {"launch": lambda: core(ptr, *view, optr, stream, device), "+alloc": alloc,
            "+empty": empty, "+queries": queries,
            "fast": lambda: axis_fast.call(x, axis, False, source), "reduce": reduce,
            "reduce nogc": reduce, "torch.sum": lambda: x.sum(dim=axis),
            "torch out=": lambda: torch.sum(x, dim=axis, out=out)}


def timed(torch: Any, fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, tuple]:
    from reducetune.runtime.rounds import orders

    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    host: dict[str, list[float]] = {k: [] for k in fns}
    event: dict[str, list[float]] = {k: [] for k in fns}
    order = orders(list(fns))
    for _ in range(rounds):
        for name in next(order):
            fn = fns[name]
            nogc = name.endswith("nogc")
            if nogc:
                gc.disable()
            fn()  # the primer, synchronized as the benchmark's (a whole untimed sample)
            torch.cuda.synchronize()
            start.record()
            t0 = time.perf_counter()
            fn()  # its result freed here, as in the benchmark
            host[name].append(time.perf_counter() - t0)
            stop.record()
            stop.synchronize()
            event[name].append(start.elapsed_time(stop) * 1e3)
            if nogc:
                gc.enable()
    return {k: (statistics.median(event[k]), statistics.median(host[k]) * 1e6) for k in fns}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, help="the Markdown table (and .json beside it)")
    p.add_argument("--rounds", type=int, default=ROUNDS)
    p.add_argument("--points", nargs="*", default=[],
                   help="axis benchmark records (axis.json[.xz]) whose tuned points to call")
    args = p.parse_args(argv)
    import torch
    from reducetune.benchmarks._axis_report import load
    from reducetune.runtime.axis_args import axis_call

    points = {(row["dtype"], tuple(row["view"])): row["point"]
              for path in args.points for row in load(path)["rows"]}

    lines = [f"{torch.cuda.get_device_name()}, torch {torch.__version__}, {args.rounds} "
             f"primed rounds; medians in us; points from {args.points or 'the rule'}", ""]
    record = {}
    with tempfile.TemporaryDirectory() as folder:
        for dtype, shape, axis in SHAPES:
            x = torch.randn(shape, device="cuda").to(getattr(torch, dtype))
            call = axis_call(shape, axis, False)
            view = (call.outer, call.r, call.inner)
            path, _ = table_file(Path(folder), dtype, view, points.get((dtype, view)))
            fns = ladder(torch, x, axis, path)
            got = timed(torch, fns, args.rounds)
            record[f"{dtype} {shape} axis {axis}"] = got
            lines += [f"{dtype} {shape} axis {axis}", "",
                      "| call | between events | step | host | step |", "|---|---|---|---|---|"]
            prev = None
            for name, (ev, h) in got.items():
                d = "" if prev is None else f"{ev - prev[0]:+.1f}"
                dh = "" if prev is None else f"{h - prev[1]:+.1f}"
                lines.append(f"| {name} | {ev:.1f} | {d} | {h:.1f} | {dh} |")
                prev = (ev, h)
            lines.append("")
            print("\n".join(lines[-14:]), flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
        args.out.with_suffix(".json").write_text(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
