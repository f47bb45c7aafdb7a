"""Device probe (issue 26): why the axis benchmark's "Python call" (reducetune.reduce(x, "sum",
axis=A, table=FILE)) costs 12-50 us more host time per call than the C++ call in the benchmark
(docs/results/h200_2026-11-26_axis_bench_shuffled_rounds: about 3.5 x the C++ call's host time,
both growing with the total, not with the result's size: rows of 2^22 over 2^28, a 64-byte
result, cost more than rows of 2, a 512 MB one) when a hot loop at (4096, 16) costs 9 us more
(axis_call_overhead.py).

For each shape, three calls: the C++ call (reduce_axis on pointers, its output made once, the
benchmark's _direct_timer), the Python call (the benchmark's _app_call_timer: a table file
naming the rule's point for the shape) and x.new_empty of the result (what the Python call
allocates, freed at once as the Python call's result is), each timed in these modes:
  hot          back to back, no wait between calls (host time only)
  bench        the benchmark's sample: an event, the call, an event, synchronize; the wait
               before each call is the previous call's kernel
  sleep 250us  a 250 us sleep kernel and a synchronize before each sample (a 2^28 kernel's wait)
  sleep 2ms    the same, 2 ms
  poll 250us   the sleep kernel, the host polling the event from Python (never waiting in the
               driver), then the sample: a host kept busy through the wait
  peers        bench samples in shuffled rounds with torch.sum and a device copy (the
               benchmark's memcpy ceiling) between, with --compile a torch.compile'd sum
               too: other contenders' host code in the caches
Each mode gives the median host time (perf_counter around the call, the result freed inside it
as in the benchmark) and the median time between the events. Then, over CALLS Python calls in
the bench mode: the caching allocator's counters that count cudaMalloc / cudaFree
(benchmarks/_axis_alloc.py), the resolved-call cache's hits (runtime/axis_fast.py), and the
Python call's host time split at its C++ launch (before it: what delays the kernel); and the
CPU share of a 2 ms synchronize (thread CPU time / wall time: near 1, the driver spins; near 0,
the thread slept, and a sleeping core comes back with cold caches and a low clock).

    scripts/device-python -- python3 scripts/device-jobs/axis_call_probe.py --log $OUT/probe.log
(a device call: run(command=that, carry=[".deps", ".whl"]); about 30 s on an H100). --dry
prints the plan without PyTorch or a GPU. The log also goes to stdout, its numbers to LOG.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

# (name, tensor shape, axis reduced): float32, the shapes the issue names
SHAPES = (("(4096, 16) rows", (4096, 16), 1), ("(2^27, 2) rows", (1 << 27, 2), 1),
          ("(32768, 8192) rows", (32768, 8192), 1),
          ("(65536, 4096) columns", (65536, 4096), 0))
MODES = ("hot", "bench", "sleep 250us", "sleep 2ms", "poll 250us", "peers")
CALLS = 200
WAITS_US = {"sleep 250us": 250.0, "sleep 2ms": 2000.0, "poll 250us": 250.0}


class Log:
    """Lines to stdout and to the log file."""

    def __init__(self, path: Path | None) -> None:
        self.file = None if path is None else path.open("w")

    def __call__(self, line: str = "") -> None:
        print(line, flush=True)
        if self.file is not None:
            self.file.write(line + "\n")
            self.file.flush()


class Gpu:
    """The probe's PyTorch pieces: events, the sleep kernel calibrated in microseconds."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.start, self.stop, self.wait = (torch.cuda.Event(enable_timing=True)
                                            for _ in range(3))
        torch.cuda._sleep(1000)
        self.start.record()
        torch.cuda._sleep(10_000_000)
        self.stop.record()
        self.stop.synchronize()
        self.cycles_per_us = 10_000_000 / (self.start.elapsed_time(self.stop) * 1e3)

    def sleep(self, us: float) -> None:
        self.torch.cuda._sleep(int(us * self.cycles_per_us))
        self.wait.record()

    def sample(self, fn: Callable[[], Any]) -> tuple[float, float]:
        """The benchmark's sample (_event_timer around _host_timed): host and event seconds."""
        self.start.record()
        t0 = time.perf_counter()
        fn()
        host = time.perf_counter() - t0
        self.stop.record()
        self.stop.synchronize()
        return host, self.start.elapsed_time(self.stop) / 1e3


def timed(gpu: Gpu, mode: str, fn: Callable[[], Any], calls: int,
          peers: dict[str, Callable[[], Any]]) -> tuple[list[float], list[float]]:
    """Host and event times of `calls` samples of fn in `mode` (the module's docstring)."""
    host: list[float] = []
    event: list[float] = []
    if mode == "hot":
        for _ in range(calls):
            t0 = time.perf_counter()
            fn()
            host.append(time.perf_counter() - t0)
        gpu.torch.cuda.synchronize()
        return host, event
    from reducetune.runtime.rounds import orders

    order = orders(["call", *peers])
    for _ in range(calls if mode != "sleep 2ms" else calls // 2):
        if mode in WAITS_US:
            gpu.sleep(WAITS_US[mode])
            if mode.startswith("poll"):
                while not gpu.wait.query():
                    pass
            else:
                gpu.wait.synchronize()
        if mode == "peers":
            for name in next(order):
                if name != "call":
                    gpu.sample(peers[name])
                    continue
                h, e = gpu.sample(fn)
                host.append(h)
                event.append(e)
            continue
        h, e = gpu.sample(fn)
        host.append(h)
        event.append(e)
    return host, event


def table_file(folder: Path, dtype: str, view: tuple[int, int, int],
               point: dict | None = None) -> tuple[str, dict]:
    """A table file naming `point` (its variant and launch) for the view, else the rule's point
    for it, as the benchmark's _app_call_timer writes one for its tuned point (no tuning
    needed), and that point."""
    from reducetune.runtime.axis import default_reducer

    rule = point or default_reducer(dtype, "sum").choice(*view)
    path = folder / f"{dtype}_{'_'.join(map(str, view))}.json"
    path.write_text(json.dumps({"entries": [{"outer": view[0], "r": view[1], "inner": view[2],
                                             "variant": rule["variant"],
                                             "launch": rule.get("launch", "")}]}))
    return str(path), rule


def fast_path_hits(calls: int, fn: Callable[[], Any], gpu: Gpu) -> dict[str, int]:
    """How many of `calls` Python calls the resolved-call cache answered (axis_fast.call
    returned a result) and how many went the checked way."""
    from reducetune.runtime import axis_fast

    counts = {"hits": 0, "misses": 0}
    real = axis_fast.call

    def counted(*args: Any) -> Any:
        out = real(*args)
        counts["hits" if out is not None else "misses"] += 1
        return out

    axis_fast.call = counted
    try:
        for _ in range(calls):
            gpu.sample(fn)
    finally:
        axis_fast.call = real
    return {**counts, "kept_calls": len(axis_fast._calls)}


def python_phases(gpu: Gpu, fn: Callable[[], Any], calls: int) -> list[float]:
    """The Python call's host time in the bench mode split at its C++ launch, medians in us:
    before it (what delays the kernel, and so the time between the events), the launch, after
    it (the result's free, the returns). The kept calls' launches are wrapped for this only."""
    from reducetune.runtime import axis_fast

    marks: list[float] = []
    kept = dict(axis_fast._calls)

    def wrap(launch: Callable[..., None]) -> Callable[..., None]:
        def marked(*args: Any) -> None:
            marks.append(time.perf_counter())
            launch(*args)
            marks.append(time.perf_counter())
        return marked

    def call() -> None:
        marks.append(time.perf_counter())
        fn()  # its result freed here, as in the benchmark
        marks.append(time.perf_counter())

    axis_fast._calls.update({k: (wrap(v[0]), *v[1:]) for k, v in kept.items()})
    phases = []
    try:
        for _ in range(calls):
            marks.clear()
            gpu.sample(call)
            if len(marks) == 4:
                t0, launch, launched, t1 = marks
                phases.append((launch - t0, launched - launch, t1 - launched))
    finally:
        axis_fast._calls.clear()
        axis_fast._calls.update(kept)
    return [statistics.median(p) * 1e6 for p in zip(*phases)]


def sync_cpu_share(gpu: Gpu) -> float:
    """Thread CPU time over wall time of a synchronize on a 2 ms kernel."""
    gpu.sleep(2000.0)
    w, c = time.perf_counter(), time.thread_time()
    gpu.wait.synchronize()
    return (time.thread_time() - c) / (time.perf_counter() - w)


def hooks() -> dict[str, Any]:
    """What taxes every Python call in this process: a trace or profile function, and
    sys.monitoring tools (Python 3.12; a library that left one on slows the Python call's
    frames, not the C++ call's launch)."""
    monitoring = getattr(sys, "monitoring", None)
    tools = [] if monitoring is None else [monitoring.get_tool(i) for i in range(6)]
    return {"trace": repr(sys.gettrace()), "profile": repr(sys.getprofile()),
            "monitoring": [t for t in tools if t is not None]}


def probe_shape(torch: Any, gpu: Gpu, folder: Path, name: str, shape: tuple[int, int],
                axis: int, calls: int, log: Log, compiled: bool = False) -> dict[str, Any]:
    import reducetune
    from reducetune.benchmarks import _axis_alloc
    from reducetune.runtime import axis as axis_runtime
    from reducetune.runtime.axis_args import axis_call

    x = torch.randn(shape, device="cuda")
    call = axis_call(shape, axis, False)
    view = (call.outer, call.r, call.inner)
    path, rule = table_file(folder, "float32", view)
    red = reducetune.AxisReducer("float32", "sum", table=path)  # the C++ call's reducer
    out = torch.empty(call.shape, device="cuda")
    core, ptr, optr = red._core.reduce_axis, x.data_ptr(), out.data_ptr()
    stream, device = torch.cuda.current_stream().cuda_stream, x.device.index or 0
    fns = {"C++": lambda: core(ptr, *view, optr, stream, device),
           "Python": lambda: reducetune.reduce(x, "sum", axis=axis, table=path),
           "new_empty": lambda: x.new_empty(call.shape)}
    got = fns["Python"]()
    fns["C++"]()
    assert torch.allclose(got, out) and torch.allclose(got, x.sum(dim=axis), rtol=1e-4,
                                                       atol=1e-2), name
    source = axis_runtime.choice("float32", "sum", view, table=path)["source"]
    src, dst = (torch.empty(x.numel() * 3 // 4 * 4, dtype=torch.uint8, device="cuda")
                for _ in range(2))
    peers = {"torch.sum": lambda: x.sum(dim=axis), "copy": lambda: dst.copy_(src)}
    if compiled:  # as the benchmark's peer: one graph per shape
        torch._dynamo.reset()
        summed = torch.compile(lambda t: t.sum(dim=axis), dynamic=False)
        summed(x)
        peers["torch.compile"] = lambda: summed(x)
    log(f"{name} float32, view {view}, point {rule.get('preset')} from the {source}; "
        f"result {out.numel() * 4 / 2**20:.3f} MB; medians of {calls} calls (us)")
    log(f"  {'mode':12s} {'C++ host':>9s} {'Py host':>8s} {'Py-C++':>7s} {'new_empty':>9s}"
        f" | {'C++ event':>9s} {'Py event':>8s} {'Py-C++':>7s}")
    modes: dict[str, dict[str, Any]] = {}
    for mode in MODES:
        m = {k: timed(gpu, mode, fn, calls, peers) for k, fn in fns.items()}
        med = {k: (statistics.median(h) * 1e6, statistics.median(e) * 1e6 if e else None)
               for k, (h, e) in m.items()}
        modes[mode] = med
        c, p, a = med["C++"], med["Python"], med["new_empty"]
        events = ("" if c[1] is None else
                  f" | {c[1]:9.1f} {p[1]:8.1f} {p[1] - c[1]:7.1f}")
        log(f"  {mode:12s} {c[0]:9.1f} {p[0]:8.1f} {p[0] - c[0]:7.1f} {a[0]:9.1f}{events}")
    before = _axis_alloc.counters(torch)
    hits = fast_path_hits(calls, fns["Python"], gpu)
    alloc = _axis_alloc.change(before, _axis_alloc.counters(torch))
    log(f"  over {calls} Python calls (bench mode): allocator {alloc}; fast path {hits}")
    phases = python_phases(gpu, fns["Python"], calls)
    log("  the Python call in the bench mode, split at its launch (us): "
        + (", ".join(f"{k} {v:.1f}" for k, v in zip(("before", "launch", "after"), phases))
           or "no kept call was launched (the fast path missed)"))
    axis_runtime.release(table=path)
    red.close()
    taxes = hooks()
    log(f"  tracing hooks after the shape: {taxes}")
    return {"view": view, "point": rule.get("preset"), "source": source, "modes": modes,
            "hooks": taxes, "alloc": alloc, "fast_path": hits, "python_phases_us": phases}


def selected(parts: list[str]) -> list[tuple[str, tuple[int, int], int]]:
    """The SHAPES whose names hold one of `parts` (all of them for none)."""
    return [s for s in SHAPES if not parts or any(part in s[0] for part in parts)]


def run(args: argparse.Namespace, log: Log) -> dict[str, Any]:
    import torch

    gpu = Gpu(torch)
    log(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"{gpu.cycles_per_us:.0f} sleep cycles per us, {os.cpu_count()} CPUs")
    share = sync_cpu_share(gpu)
    log(f"CPU share of a 2 ms synchronize: {share:.2f} (1: the driver spins; 0: it sleeps)")
    result: dict[str, Any] = {"device": torch.cuda.get_device_name(), "sync_cpu_share": share,
                              "shapes": {}}
    with tempfile.TemporaryDirectory() as folder:
        for name, shape, axis in selected(args.shapes):
            log()
            result["shapes"][name] = probe_shape(torch, gpu, Path(folder), name, shape, axis,
                                                 args.calls, log, args.compile)
            torch.cuda.empty_cache()
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    out = os.environ.get("OUT")
    p.add_argument("--log", type=Path, default=Path(out) / "axis_call_probe.log" if out else None,
                   help="the log (its numbers to LOG.json beside it); default $OUT/"
                   "axis_call_probe.log, else stdout only")
    p.add_argument("--calls", type=int, default=CALLS, help="samples per call and mode")
    p.add_argument("--shapes", nargs="*", default=[],
                   help="only the shapes whose names hold one of these, e.g. '2^27' '(4096'")
    p.add_argument("--compile", action="store_true",
                   help="a torch.compile'd sum among the peers too (compiles per shape: "
                   "some 10 s each)")
    p.add_argument("--dry", action="store_true", help="print the plan; no PyTorch, no GPU")
    args = p.parse_args(argv)
    if args.dry:
        print(f"shapes: {[s[0] for s in selected(args.shapes)]}; modes: {list(MODES)}; "
              f"{args.calls} calls; log: {args.log}")
        return 0
    log = Log(args.log)
    result = run(args, log)
    if args.log is not None:
        args.log.with_suffix(".json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
