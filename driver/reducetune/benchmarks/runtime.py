"""The runtime benchmark (issue 13): the Reducer beside CUB's DeviceReduce, torch.sum,
cupy.sum and the streaming ceiling, measured two ways in one run on this GPU.

- **As an application calls it**: one call on the stream between two CUDA events, launches
  (and, for the Python calls, the Python around them) included, the GPU idle before each
  call; the median of ``samples`` calls on hot data, the contenders timed in rounds (one call
  each per round, each round in a new seeded shuffle: runtime/rounds.py) so that drift and
  the call before each (what L2 holds) hit them alike. The Reducer and CUB are timed from C++
  (``_core.app_time_*``); ``reducetune.reduce`` on a PyTorch tensor and on a CuPy array
  beside ``torch.sum`` / ``cupy.sum`` are timed from Python with each library's events.
- **The tuner's protocol**: the point the Reducer launches and CUB, each measured by the
  worker with cold L2 and graph replay (the same recipe as tuning), and the ceiling.

    python -m reducetune.benchmarks.runtime --db results.db --out docs/results/NAME
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any, Callable

from reducetune import _core
from reducetune._space import Point
from reducetune.benchmarks import _runtime_report
from reducetune.benchmarks._axis_stats import round_times
from reducetune.benchmarks._provenance import reducetune_commit
from reducetune.cli.args import SAMPLE_TIME_MAX_S, duration, integer, show_ranges
from reducetune.evaluate.base import data_of, problem_of, sampling_options, workload
from reducetune.evaluate.gpu import GpuEvaluator
from reducetune.runtime.reducer import Reducer, reduce

CASES = (("float32", "sum"), ("int32", "sum"), ("float32", "min"), ("float32", "max"),
         ("float64", "sum"))
SIZES = tuple(1 << k for k in range(10, 31, 2))


def _event_timer(call: Callable[[], Any], events: Callable[[], Any],
                 elapsed_s: Callable[[Any, Any], float]) -> Callable[[], float]:
    """One sample of `call` between two of its library's events on the current stream, the
    GPU idle before it (the same recipe as _core.app_time_* in C++)."""
    start, stop = events(), events()

    def once() -> float:
        start.record()
        call()
        stop.record()
        stop.synchronize()
        return elapsed_s(start, stop)

    return once


def _torch_timer(call: Callable[[], Any]) -> Callable[[], float]:
    import torch  # optional: only for PyTorch tensors

    return _event_timer(call, lambda: torch.cuda.Event(enable_timing=True),
                        lambda a, b: a.elapsed_time(b) / 1e3)


def _cupy_timer(call: Callable[[], Any]) -> Callable[[], float]:
    import cupy  # optional: only for CuPy arrays

    return _event_timer(call, cupy.cuda.Event, lambda a, b: cupy.cuda.get_elapsed_time(a, b) / 1e3)


def interleaved_medians(timers: dict[str, Callable[[], float]], samples: int) -> dict[str, float]:
    """The median of each contender's samples (interleaved_stats)."""
    return {name: s["median_s"] for name, s in interleaved_stats(timers, samples).items()}


def interleaved_stats(timers: dict[str, Callable[[], float]], samples: int,
                      counts: dict[str, int] | None = None) -> dict[str, dict[str, float]]:
    """The median and the relative standard deviation (stdev / mean, nvbench's noise: what
    tells a 0.5 % margin from noise) of `samples` samples of each contender, taken in
    rounds (``_axis_stats.round_times``, the axis benchmark's loop): every round times each
    contender once, in a new seeded shuffle each round (``runtime.rounds.orders``: a rotation
    kept each contender's predecessor, and with it what L2 held when it started). Timing one
    contender's calls after another's let the host's drift (several µs at small n on an H100,
    docs/results/h100_2026-11-23_peak_probe/) decide the ratio; in rounds each contender sees
    the same drift. A contender named in `counts` takes part in its first counts[name] rounds
    only, after one warm-up call: a far slower contender, already warm from a screening pass,
    whose hundreds of ms per call would otherwise take most of the time."""
    # no contender waits for convergence: the rounds stop at `samples`
    times, _ = round_times(timers, samples, close=set(), counts=counts, max_calls=samples)
    return {name: {"median_s": statistics.median(t), "rel_stddev": _rel_stddev(t),
                   "samples": len(t)} for name, t in times.items()}


def _rel_stddev(t: list[float]) -> float:
    mean = statistics.fmean(t)
    return statistics.stdev(t) / mean if len(t) > 1 and mean > 0 else 0.0


def _input(dtype: str, n: int) -> Any:
    import torch  # optional: only for PyTorch tensors

    if dtype.startswith("int"):
        return torch.randint(-1000, 1000, (n,), dtype=getattr(torch, dtype), device="cuda")
    return torch.randn(n, dtype=getattr(torch, dtype), device="cuda")


def _reference_ok(got: Any, x: Any, op: str) -> bool:
    """The Reducer's answer against PyTorch's in float64: a wrong number is never timed."""
    import torch  # optional: only for PyTorch tensors

    if op in ("min", "max"):
        return bool(got.item() == getattr(torch, op)(x).item())
    ref = x.double().sum().item()
    if not x.is_floating_point():  # wraps at the type's width, as the GPU's integers do
        bits = x.element_size() * 8
        ref = int(x.long().sum().item())
        ref = ((ref + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))
        return int(got.item()) == ref
    bound = 4 * x.numel() * torch.finfo(x.dtype).eps * x.double().abs().sum().item()
    return abs(got.item() - ref) <= bound


def _app(r: Any, x: Any, op: str, samples: int, src: dict[str, Any]
         ) -> dict[str, dict[str, float]]:
    import cupy  # optional: only for CuPy arrays
    import torch  # optional: only for PyTorch tensors

    xc = cupy.from_dlpack(x)
    out = torch.empty((), dtype=x.dtype, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    n = x.numel()
    dtype = str(x.dtype).removeprefix("torch.")
    t_op, c_op = getattr(torch, op), getattr(cupy, op)
    timers = {
        "reducer": lambda: _core.app_time_reducer(r._core, x.data_ptr(), n, out.data_ptr(), 1,
                                                  stream)[0],
        "cub": lambda: _core.app_time_cub(dtype, op, x.data_ptr(), n, out.data_ptr(), 1,
                                          stream)[0],
        "reduce_torch": _torch_timer(lambda: reduce(x, op, **src)),
        "torch": _torch_timer(lambda: t_op(x)),
        "reduce_cupy": _cupy_timer(lambda: reduce(xc, op, **src)),
        "cupy": _cupy_timer(lambda: c_op(xc)),
    }
    return interleaved_stats(timers, samples)


def _protocol(ev: Any, point: Point, dtype: str, op: str, n: int) -> dict[str, Any]:
    """The tuner's protocol on the Reducer's choice (its typed point: reducer_choice carries
    it) and on CUB."""
    w = workload(dtype, op, n)
    tuned = ev.evaluate(point, problem_of(w), data_of(w))
    cub = ev.cub(w) or {"status": "failed"}
    keep = ("status", "median_s", "rel_stddev", "gbps", "pct_of_peak", "reason")
    return {"tuned": {k: tuned.get(k) for k in keep}, "cub": {k: cub.get(k) for k in keep}}


def run(src: dict[str, Any], cases: tuple[tuple[str, str], ...], sizes: tuple[int, ...],
        samples: int, sample_time: float) -> dict[str, Any]:
    import torch  # optional: only for PyTorch tensors

    rows = []
    started = time.monotonic()
    with closing(GpuEvaluator(0)) as ev:
        ev.set_sampling(sampling_options(sample_time, 1000, False))
        ceiling = ev.ceiling_bytes_per_s()
        for dtype, op in cases:
            r = Reducer(dtype, op, **src)
            for n in sizes:
                x = _input(dtype, n)
                choice = r.choice(n)
                point = choice.pop("point")  # typed, for the protocol; the row keeps labels
                ok = _reference_ok(reduce(x, op, **src), x, op)
                app = _app(r, x, op, samples, src) if ok else {}
                # app_s keeps its medians (the report's input); app_noise each contender's
                # relative standard deviation over the same calls
                row = {"dtype": dtype, "op": op, "n": n, "choice": choice, "correct": ok,
                       "app_s": {k: v["median_s"] for k, v in app.items()},
                       "app_noise": {k: v["rel_stddev"] for k, v in app.items()},
                       "protocol": _protocol(ev, point, dtype, op, n)}
                rows.append(row)
                del x
                torch.cuda.empty_cache()
                print(f"runtime bench: {dtype} {op} n=2^{n.bit_length() - 1} "
                      f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
            rows[-1]["fallbacks"] = r.fallbacks
        device = dict(ev.device)
    return {"device": device, "ceiling_gbps": (ceiling or 0) / 1e9, "samples": samples,
            "rows": rows, **provenance(samples, sample_time),
            "versions": {"torch": torch.__version__, "cupy": __import__("cupy").__version__}}


def provenance(samples: int, sample_time: float) -> dict[str, Any]:
    """What a reader needs beside the numbers to judge them: the commit, and how each column
    was measured (its noise is in the rows: app_noise, protocol.*.rel_stddev)."""
    return {"commit": reducetune_commit(), "protocol": {
        "application": (f"one call between two CUDA events on the current stream, the GPU idle "
                        f"before each call, hot data; {samples} calls per contender in rounds "
                        "in seeded shuffled orders, after 3 warm-up calls each; median and "
                        "relative standard deviation (app_s, app_noise)"),
        "tuner": (f"the tuner's measurement in its worker: L2 flushed before each cold sample, "
                  f"graph replay, at most {sample_time:g} s and 1000 samples per point; median "
                  "and relative standard deviation (protocol.tuned, protocol.cub)")}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m reducetune.benchmarks.runtime",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--db", help="results database (default: reducetune's own)")
    p.add_argument("--table", help="an exported JSON table (reducetune export json) instead")
    p.add_argument("--out", required=True, help="output prefix: PREFIX.json, .md, .png")
    # the CLI's ranged types: a bad value is one line naming the range, digits 0-9 only
    p.add_argument("--samples", type=integer(2, 1_000_000), default=200,
                   help="calls timed per contender (at least 2: a noise needs two)")
    p.add_argument("--sample-time", type=duration(0, SAMPLE_TIME_MAX_S, lo_open=True),
                   default=0.3, help="the tuner protocol's sampling time cap per point (s)")
    p.add_argument("--quick", action="store_true", help="float32 sum at 2^10, 2^20 only")
    show_ranges(p)
    a = p.parse_args(argv)
    cases = CASES[:1] if a.quick else CASES
    sizes = (1 << 10, 1 << 20) if a.quick else SIZES
    result = run({"db": a.db, "table": a.table}, cases, sizes, a.samples, a.sample_time)
    result["command"] = "python -m reducetune.benchmarks.runtime " + " ".join(
        sys.argv[1:] if argv is None else argv)
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=1))
    _runtime_report.write(result, out)
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
