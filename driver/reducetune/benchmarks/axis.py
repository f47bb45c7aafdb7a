"""The axis benchmark (issue 26, item 6): reductions along an axis on the GPU at hand, every
shape side by side: reducetune against torch.sum(dim) eager, torch.compile of it, JAX (where it
imports), cupy.sum(axis) with CUB, CUB's DeviceSegmentedReduce from C++, and two ceilings of
the same bytes timed in the same rounds, the streaming one in the tuner's protocol beside them
as a reference (benchmarks/_axis_peers.py).

Shapes: totals 2^24 and 2^28 elements, r from 2 to 2^22 by powers of 8, reducing rows (the last
axis of (total / r, r)) and columns (the first axis of (r, total / r)); sums of float32, and of
bfloat16 with --dtypes float32,bfloat16 (accumulated in float32). Reducetune's point for each
shape is tuned on the spot (benchmarks/_axis_tune.py: the axis family's presets and the
neighbourhood of the best three, then the best's while it moves, verified, screened, the close
ones timed in rounds, the fastest kept; ``reducetune tune --family axis --shapes default`` tunes
a grid into a results file instead) and measured in the tuner's protocol too (cold L2, the
tune's stopping rule).
Then every contender is timed as an application calls it: hot data, one call between two CUDA
events, the contenders in shuffled rounds, each timed call right after an untimed call of its
own (primed: the L2 as its own call left it), until each close one's median is known to 1 %
(benchmarks/_axis_stats.py), the median and its 95 % interval; a peer far slower than the
fastest (screened first) gets 3 calls. A shape is a tie when the interval of the ratio to the
fastest peer holds 1. --transfer another GPU's axis.json times its best point of each shape
beside this run's (issue 26, item 7: how far a tuned point transfers). Progress and an ETA go
to stderr after each shape.

    python -m reducetune.benchmarks.axis --out docs/results/NAME/axis [--segmented-lib PATH]
        [--transfer OTHER_GPU/axis.json]

Writes PREFIX.json (every number), PREFIX.md (the table), PREFIX.png (the plot) and
PREFIX.table.json (the tuned points, a table for reducetune.AxisReducer(table=...)). PREFIX.md
ends its summary with issue 26's targets, each met or MISSED (benchmarks/_axis_targets.py;
scripts/axis-targets judges recorded runs).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from reducetune import _core
from reducetune._space import limits_for_arch
from reducetune.benchmarks import _axis_alloc, _axis_report
from reducetune.benchmarks._axis_peers import (CEILINGS_TIMING, PEERS, Peers, cxx_axis_timer,
                                               jax_module, segmented_lib, streaming_protocol)
from reducetune.benchmarks._axis_shapes import RS, TOTALS, only, shapes
from reducetune.benchmarks._axis_stats import MAX_CALLS, MAX_NOISE, PRIMED, TIME_CAP_S, rounds
from reducetune.benchmarks._axis_tune import (CLIMB_ROUNDS, CLIMB_TIES, CLIMB_WIDTH, GIVE_UP,
                                              KEEP_WITHIN, Candidate, Tuner, own_name,
                                              protocol_time, screen, sum_bound, transfer_name,
                                              tune_shape)
from reducetune.benchmarks._provenance import reducetune_commit
from reducetune.benchmarks.runtime import _torch_timer
from reducetune.cli.args import integer
from reducetune.evaluate.gpu import GpuEvaluator
from reducetune.runtime import axis as axis_runtime
from reducetune.runtime.reducer import reduce  # the public call: what reducetune.reduce names
from reducetune.tuning.config import TuneConfig

SLOW_PEER = 5.0  # a peer screened at more than this many times the fastest contender ...
SLOW_PEER_SAMPLES = 3  # ... gets this many samples in the rounds (CUB's segmented reduce
# takes 150-220 ms a call over 2^27 rows or columns of 2 on an H100, the fastest 0.6 ms)


def _correct(got: Any, x: Any, axis: int) -> bool:
    want = x.double().sum(dim=axis)
    return bool(((got.double().reshape(want.shape) - want).abs() <= sum_bound(x, axis, want))
                .all())


def _host_timed(call: Callable[[], Any], host: list[float]) -> Callable[[], None]:
    """`call`, its host time (until it returns: the Python around the launch and the launch)
    appended to `host`: what a call's time between the events owes to the host."""
    def once() -> None:
        t0 = time.perf_counter()
        call()
        host.append(time.perf_counter() - t0)

    return once


def app_stats(timers: dict[str, Callable[[], float]], samples: int
              ) -> tuple[dict[str, dict[str, Any]], dict[str, float], list[str]]:
    """Every contender timed as an application calls it, in shuffled rounds, after a screening
    pass (benchmarks._axis_tune.screen); a peer screened at more than SLOW_PEER times the
    fastest contender (the streaming ceiling apart) gets SLOW_PEER_SAMPLES samples only: far
    slower, it can never be the fastest peer wrongly. The rounds go on (from `samples` on)
    until the median of reducetune and of each contender screened within KEEP_WITHIN of it,
    faster or slower (those a tie or a ratio could hinge on, the two ceilings included), is
    known to MAX_NOISE (_axis_stats.rounds). The stats, the
    screening times and the peers so screened."""
    screened = {k: v["screen_s"] for k, v in screen(timers).items()}
    # the streaming ceiling reads the input only (2/3 of a reduction's bytes at r = 2): its
    # time would move which peers count as far slower; memcpy moves the reduction's bytes
    lead = min(v for k, v in screened.items() if k != "streaming")
    mine = screened["reducetune"]
    slow = [k for k in PEERS if k in screened and screened[k] > SLOW_PEER * lead]
    close = {k for k, v in screened.items()
             if mine / KEEP_WITHIN <= v <= KEEP_WITHIN * mine} | {"reducetune"}
    app = rounds(timers, samples, close, {k: SLOW_PEER_SAMPLES for k in slow})
    return app, screened, slow


def _app_call_timer(best: Candidate, s: dict[str, Any], x: Any, folder: str, host: list[float]
                    ) -> tuple[Callable[[], float], Callable[[], None], str]:
    """The timer of an application's call, ``reducetune.reduce(x, "sum", axis=...)`` with a
    table file that names the tuned point for this shape (the public call, its Python, checks
    and result allocation included); what frees the reducer reduce() keeps for that file
    (runtime/axis.py keeps one per file for the process's life; a split point's partials are
    gigabytes); and where that reducer's point comes from ("table": the tuned point, not the
    rule's)."""

    outer, r, inner = s["view"]
    path = str(Path(folder) / f"{s['dtype']}_{outer}_{r}_{inner}.json")
    Path(path).write_text(json.dumps({"entries": [{"outer": outer, "r": r, "inner": inner,
                                                   "variant": best.variant,
                                                   "launch": best.launch}]}))
    axis = s["axis"]
    reduce(x, "sum", axis=axis, table=path)  # makes the file's reducer
    source = axis_runtime.choice(s["dtype"], "sum", (outer, r, inner), table=path)
    call = _host_timed(lambda: reduce(x, "sum", axis=axis, table=path), host)
    return _torch_timer(call), lambda: axis_runtime.release(table=path), str(source["source"])


def _key(row: dict[str, Any]) -> tuple[str, int, str, int]:
    return row.get("dtype", "float32"), row["total"], row["kind"], row["r"]


def read_transfer(path: str | None) -> dict[tuple[str, int, str, int], dict[str, Any]]:
    """Another GPU's axis.json: its device and best point for each of its shapes, the point
    under its own name (where that GPU's best was a point its run was given, the name
    recorded there says "transfer ...")."""
    if path is None:
        return {}
    doc = _axis_report.load(path)
    return {_key(r): {"from_device": doc["device"]["name"],
                      "point": {**r["point"], "name": own_name(r["point"]["name"])}}
            for r in doc["rows"]}


def _transfer_candidate(entry: dict[str, Any] | None) -> Candidate | None:
    if entry is None:
        return None
    p = entry["point"]
    return Candidate(transfer_name(p["name"]), p["variant"], p["launch"])


def _row(s: dict[str, Any], tuner: Tuner, jax: Any, lib: Any, samples: int,
         transfer: dict[str, Any] | None = None, ev: Any = None, folder: str = "."
         ) -> dict[str, Any]:
    import torch  # optional: only for PyTorch tensors

    x = torch.randn(s["shape"], device="cuda", dtype=getattr(torch, s["dtype"]))
    axis = s["axis"]
    clock = [time.monotonic()]
    tuned = tune_shape(tuner, x, axis, samples, _transfer_candidate(transfer))
    best = tuned["best"]
    reducer = tuner.reducer(best)
    clock.append(time.monotonic())
    protocol = None if ev is None else protocol_time(ev, tuner, best, tuple(s["view"]))
    clock.append(time.monotonic())
    streaming = streaming_protocol(x.numel() * x.element_size())
    peers = Peers(x, axis, jax, lib, None if streaming is None else streaming["shape"])
    host: dict[str, list[float]] = {"reducetune": [], "reducetune_py": []}
    py_timer, release, py_source = _app_call_timer(best, s, x, folder, host["reducetune_py"])
    try:
        clock.append(time.monotonic())
        correct = {name: _correct(out, x, axis) for name, out in peers.outputs.items()}
        timers = {"reducetune": cxx_axis_timer(reducer, x, tuple(s["view"]),
                                                 host["reducetune"]),
                  "reducetune_py": py_timer, **peers.timers}
        alloc_before = _axis_alloc.counters()
        app, screened, slow = app_stats(timers, samples)
        clock.append(time.monotonic())
        alloc = _axis_alloc.record(alloc_before, {k: t for k, t in timers.items()
                                                  if k not in slow}, "reducetune_py", host.values())
    finally:
        peers.close()
        release()
    bi = tuned["best_batch_invariant"]
    medians = {c["name"]: c["median_s"] for c in tuned["candidates"] if "median_s" in c}
    row = {**{k: s[k] for k in ("dtype", "total", "kind", "r", "axis")},
           "itemsize": x.element_size(), "shape": list(s["shape"]),
           "view": list(s["view"]), "point": {"name": best.name, "variant": best.variant,
                                              "launch": best.launch, **best.choice},
           "app_s": {k: v["median_s"] for k, v in app.items()},
           "app_interval": {k: [v["median_low_s"], v["median_high_s"]] for k, v in app.items()},
           "app_noise": {k: v["rel_stddev"] for k, v in app.items()},
           "app_samples": {k: v["samples"] for k, v in app.items()},
           "app_stopped": {k: v["stopped"] for k, v in app.items()},
           "app_screen_s": screened, "screened": slow,
           "host_s": {k: statistics.median(v) for k, v in host.items() if v},
           "python_call_point": py_source, "alloc": alloc,
           "peers_correct": correct, "protocol": protocol,
           "streaming_protocol_s": None if streaming is None else streaming["s"],
           "streaming_shape": None if streaming is None else streaming["shape"],
           "phase_s": dict(zip(("tune_s", "protocol_s", "peers_setup_s", "rounds_s"),
                               (b - a for a, b in zip(clock, clock[1:])))),
           "transfer": None if transfer is None else {**transfer, **tuned["transfer"]},
           "tune": {"candidates": tuned["candidates"], "rejected": tuned["rejected"],
                    "best_s": medians[best.name],
                    "best_batch_invariant": None if bi is None else bi.name,
                    "best_batch_invariant_s": None if bi is None else medians[bi.name]}}
    return {**row, "versus_peer": _axis_report.versus_peer(row)}


def progress(done: int, total: int, elapsed: float) -> str:
    """Shapes done of the total, the time so far and the time left at the mean shape's."""
    eta = elapsed / done * (total - done) if done else float("nan")
    return (f"{done}/{total} shapes, {elapsed:.0f} s elapsed, ETA {eta:.0f} s "
            f"({elapsed / max(done, 1):.1f} s a shape)")


def run(todo: list[dict[str, Any]], samples: int, lib_path: str | None, time_limit: float,
        save: Callable[[dict[str, Any]], None] = lambda result: None,
        transfer: dict[tuple[str, int, str, int], dict[str, Any]] | None = None,
        protocol: bool = True) -> dict[str, Any]:
    """Every shape of `todo` (none started after `time_limit` seconds); `save` gets the result
    so far after each shape, so that a run cut short still leaves what it measured; `transfer`
    (read_transfer) adds another GPU's best point to a shape's candidates; `protocol` measures
    each chosen point in the tuner's protocol too (a worker process, the tune's sampling)."""
    with contextlib.ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="axis_bench_"))
        ev = None
        if protocol:
            ev = stack.enter_context(contextlib.closing(GpuEvaluator(0)))
            ev.set_sampling(TuneConfig().sampling())
        return _run(todo, samples, lib_path, time_limit, save, transfer or {}, ev, folder)


def _run(todo: list[dict[str, Any]], samples: int, lib_path: str | None, time_limit: float,
         save: Callable[[dict[str, Any]], None],
         transfer: dict[tuple[str, int, str, int], dict[str, Any]], ev: Any, folder: str
         ) -> dict[str, Any]:
    import torch  # optional: only for PyTorch tensors

    device = dict(_core.query_device(0))
    views = [tuple(s["view"]) for s in todo]
    tuners = {t: Tuner(t, "sum", limits_for_arch(device["arch"]), views)
              for t in {s["dtype"] for s in todo}}
    jax, lib = jax_module(), segmented_lib(lib_path)
    result = {"device": device, "rows": [], "skipped": [], "samples": samples,
              "commit": reducetune_commit(), "peers_missing": _missing(jax, lib),
              "versions": {"torch": torch.__version__,
                           "jax": getattr(jax, "__version__", None) if jax else None},
              "protocol": _protocol(samples, ev)}
    started = time.monotonic()
    for i, s in enumerate(todo):
        if time.monotonic() - started > time_limit:
            result["skipped"] = [{k: t[k] for k in ("dtype", "total", "kind", "r")}
                                 for t in todo[i:]]
            break
        result["rows"].append(_row(s, tuners[s["dtype"]], jax, lib, samples,
                                   transfer.get(_key(s)), ev, folder))
        tuners[s["dtype"]].release()
        torch.cuda.empty_cache()
        save(result)
        print(f"axis bench: {s['dtype']} {s['kind']} 2^{s['total'].bit_length() - 1} r={s['r']}: "
              f"{progress(i + 1, len(todo), time.monotonic() - started)}", file=sys.stderr)
    return result


def _missing(jax: Any, lib: Any) -> list[str]:
    out = [] if jax is not None else ["jax (not importable)"]
    return out + ([] if lib is not None else ["cub_segmented (helper library not built)"])


def _protocol(samples: int, ev: Any) -> dict[str, str]:
    return {"reducetune_point": ("tuned on the spot for each shape in this run: the axis "
                                 "family's valid presets, then the neighbourhood of the best "
                                 "three (vec at every valid width), then, up to "
                                 f"{CLIMB_ROUNDS} times, those of the best and of the points "
                                 f"screened within {100 * CLIMB_TIES:g} % of it (at most "
                                 f"{CLIMB_WIDTH}) whose neighbourhoods were not screened, "
                                 "every point verified "
                                 "against float64 and screened (up to 3 hot calls, one "
                                 f"only where it took over {GIVE_UP:g}x the fastest first "
                                 "call); those "
                                 f"within {KEEP_WITHIN:g}x of the best screened, the best "
                                 "batch_invariant one and a transferred point timed in "
                                 f"shuffled rounds ({_rounds(samples)}); the fastest kept "
                                 "('reducetune tune --family axis --shapes default' tunes a "
                                 "grid into a results file instead; the benchmark tunes its "
                                 "own shapes)"),
            "application": ("one call between two CUDA events on the current stream, the "
                            "stream synchronised after it (the GPU idle before the next): "
                            "the C++ contenders (reducetune's C++ axis call, CUB's segmented "
                            "reduce and both ceilings) timed in C++, no Python between the "
                            "events, as a C++ application calls them and as the runtime "
                            "benchmark times the Reducer; the Python contenders (torch, "
                            "torch.compile, CuPy, reducetune's Python call) with their own "
                            "events around the Python call (JAX: "
                            "host clock around the call and block_until_ready), hot data, "
                            "a screening pass first (up to 3 calls), then every contender in "
                            "rounds in a new order each (a seeded shuffle) after 3 warm-up "
                            f"calls each, {_rounds(samples)}; "
                            "the rounds wait for reducetune and every contender screened "
                            f"within {KEEP_WITHIN:g}x of it, faster or slower (the ceilings "
                            "too); a peer screened at over "
                            f"{SLOW_PEER:g}x the fastest contender (the streaming ceiling, "
                            f"which writes nothing, apart) gets {SLOW_PEER_SAMPLES} "
                            "calls in the rounds after 1 warm-up ('screened'); the median and "
                            "its distribution-free 95 % interval (order statistics, as the "
                            "tuner's stopping rule)"),
            "tuner": ("not measured (--no-protocol)" if ev is None else
                      "the chosen point in the tuner's protocol, in its worker process: the "
                      "tune's workload data (uniform, its seed), verified, cold samples with "
                      "L2 flushed before each, the stopping rule of 'reducetune tune' "
                      f"({TuneConfig().sample_time_s:g} s, {TuneConfig().max_samples} samples "
                      "at most, 1 % noise); median and its 95 % interval"),
            "ceilings": CEILINGS_TIMING}


def _rounds(samples: int) -> str:
    primer = ("each timed call right after an untimed call of the same contender (primed: "
              "it finds the L2 as its own call left it, not another contender's), "
              if PRIMED else "")
    return (f"{primer}from {samples} calls on until each median's 95 % interval is within "
            f"{100 * MAX_NOISE:g} % (half-width), {MAX_CALLS} calls or {TIME_CAP_S:g} s of "
            "rounds")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m reducetune.benchmarks.axis",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="output prefix: PREFIX.json, .md, .png")
    p.add_argument("--samples", type=integer(3, MAX_CALLS), default=30,
                   help="the fewest calls timed per contender and per candidate point (the "
                   f"rounds go on until each close median is known to {100 * MAX_NOISE:g} %%, "
                   f"or {MAX_CALLS} calls)")
    p.add_argument("--segmented-lib", help="the CUB helper (tuner/tools/segmented_reduce.cu, "
                   "built by nvcc); default $REDUCETUNE_SEGMENTED_LIB or "
                   "build/libreducetune_segmented.so")
    p.add_argument("--totals", default=",".join(str(t.bit_length() - 1) for t in TOTALS),
                   help="log2 of the totals, e.g. 24 or 24,28 (the default: every total)")
    p.add_argument("--dtypes", default="float32",
                   help="element types, e.g. float32,bfloat16 (CUB's helper: float32 only)")
    p.add_argument("--time-limit", type=float, default=1e9,
                   help="start no new shape after this many seconds (the rest is listed)")
    p.add_argument("--transfer", metavar="FILE.json",
                   help="another GPU's axis.json: its best point for each shape it holds is "
                   "timed beside this run's candidates (how far a tuned point transfers)")
    p.add_argument("--protocol", action=argparse.BooleanOptionalAction, default=True,
                   help="also measure each chosen point in the tuner's protocol")
    p.add_argument("--only", nargs="+", metavar="KIND:R",
                   help="only these shapes, e.g. rows:128 columns:524288 (every total and "
                   "dtype of each)")
    a = p.parse_args(argv)
    totals = tuple(1 << int(t) for t in a.totals.split(","))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    command = "python -m reducetune.benchmarks.axis " + " ".join(
        sys.argv[1:] if argv is None else argv)
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    dtypes = tuple(a.dtypes.split(","))
    result = run(only(shapes(totals, RS, dtypes), a.only), a.samples, a.segmented_lib,
                 a.time_limit,
                 lambda result: _save({**result, "command": command, "date": date}, out),
                 read_transfer(a.transfer), a.protocol)
    _save({**result, "command": command, "date": date}, out)
    print(out.with_suffix(".md").read_text())
    return 0


def _save(result: dict[str, Any], out: Path) -> None:
    """PREFIX.json, PREFIX.table.json (the tuned points, for AxisReducer(table=...)), the
    report and the plot."""
    out.with_suffix(".json").write_text(json.dumps(result, indent=1))
    out.with_suffix(".table.json").write_text(json.dumps({"entries": [
        {"outer": r["view"][0], "r": r["view"][1], "inner": r["view"][2],
         "variant": r["point"]["variant"], "launch": r["point"]["launch"]}
        for r in result["rows"]]}, indent=1))
    if result["rows"]:
        _axis_report.write(result, out)


if __name__ == "__main__":
    sys.exit(main())
