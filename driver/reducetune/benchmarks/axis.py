"""The axis benchmark (issue 26, item 6): reductions along an axis on the GPU at hand, every
shape side by side: reducetune against torch.sum(dim) eager, torch.compile of it, JAX (where it
imports), cupy.sum(axis) with CUB, CUB's DeviceSegmentedReduce from C++, and two ceilings of
the same bytes timed in the same run (benchmarks/_axis_peers.py).

Shapes: totals 2^24 and 2^28 elements, r from 2 to 2^22 by powers of 8, reducing rows (the last
axis of (total / r, r)) and columns (the first axis of (r, total / r)); sums of float32, and of
bfloat16 with --dtypes float32,bfloat16 (accumulated in float32). Reducetune's point for each shape is tuned on the spot
(benchmarks/_axis_tune.py: the axis family's presets and a neighbourhood of the best two,
verified, the fastest kept), since axis tuning is not in ``reducetune tune`` yet; the output
says so. Then every contender is timed as an application calls it: hot data, one call between
two CUDA events, the contenders in rotating rounds, the median.

    python -m reducetune.benchmarks.axis --out docs/results/NAME/axis [--segmented-lib PATH]

Writes PREFIX.json (every number), PREFIX.md (the table), PREFIX.png (the plot) and
PREFIX.table.json (the tuned points, a table for reducetune.AxisReducer(table=...)).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

from reducetune import _core
from reducetune._space import limits_for_arch
from reducetune.benchmarks import _axis_report
from reducetune.benchmarks._axis_peers import Peers, jax_module, segmented_lib, streaming_ceiling_s
from reducetune.benchmarks._axis_tune import Tuner, sum_bound, tune_shape
from reducetune.benchmarks._provenance import reducetune_commit
from reducetune.benchmarks.runtime import _torch_timer, interleaved_stats
from reducetune.cli.args import integer

TOTALS = (1 << 24, 1 << 28)
RS = tuple(1 << k for k in range(1, 23, 3))  # 2, 16, 128, ..., 2^22
KINDS = ("rows", "columns")


def shapes(totals: tuple[int, ...], rs: tuple[int, ...], dtypes: tuple[str, ...] = ("float32",)
           ) -> list[dict[str, Any]]:
    """Each benchmark shape: the element type, the tensor's shape, the axis reduced and its
    view (outer, r, inner)."""
    return [{"dtype": t, **s} for t in dtypes for s in _shapes(totals, rs)]


def _shapes(totals: tuple[int, ...], rs: tuple[int, ...]) -> list[dict[str, Any]]:
    out = []
    for total in totals:
        for kind in KINDS:
            for r in rs:
                if r >= total:
                    continue
                m = total // r
                out.append({"total": total, "kind": kind, "r": r, "axis": 1 if kind == "rows" else 0,
                            "shape": (m, r) if kind == "rows" else (r, m),
                            "view": (m, r, 1) if kind == "rows" else (1, r, m)})
    return out


def _correct(got: Any, x: Any, axis: int) -> bool:
    want = x.double().sum(dim=axis)
    return bool(((got.double().reshape(want.shape) - want).abs() <= sum_bound(x, axis, want))
                .all())


def _direct_timer(reducer: Any, x: Any, view: tuple[int, int, int]) -> Any:
    """The runtime's C++ axis call on the tensor's pointer and stream (what a C++ application
    calls: reducer::reduce_axis), through the extension with its output allocated once."""
    import torch  # optional: only for PyTorch tensors

    out = torch.empty(view[0] * view[2], device=x.device, dtype=x.dtype)
    stream, device, ptr = torch.cuda.current_stream().cuda_stream, x.device.index or 0, x.data_ptr()
    call, optr = reducer._core.reduce_axis, out.data_ptr()
    return _torch_timer(lambda: call(ptr, *view, optr, stream, device))


def _row(s: dict[str, Any], tuner: Tuner, jax: Any, lib: Any, samples: int) -> dict[str, Any]:
    import torch  # optional: only for PyTorch tensors

    x = torch.randn(s["shape"], device="cuda", dtype=getattr(torch, s["dtype"]))
    axis = s["axis"]
    tuned = tune_shape(tuner, x, axis, samples)
    best = tuned["best"]
    reducer = tuner.reducer(best)
    peers = Peers(x, axis, jax, lib)
    try:
        correct = {name: _correct(out, x, axis) for name, out in peers.outputs.items()}
        timers = {"reducetune": _direct_timer(reducer, x, s["view"]),
                  "reducetune_py": _torch_timer(lambda: reducer(x, axis)), **peers.timers}
        app = interleaved_stats(timers, samples)
    finally:
        peers.close()
    bi = tuned["best_batch_invariant"]
    medians = {c["name"]: c["median_s"] for c in tuned["candidates"]}
    return {**{k: s[k] for k in ("dtype", "total", "kind", "r", "axis")},
            "itemsize": x.element_size(), "shape": list(s["shape"]),
            "view": list(s["view"]), "point": {"name": best.name, "variant": best.variant,
                                               "launch": best.launch, **best.choice},
            "app_s": {k: v["median_s"] for k, v in app.items()},
            "app_noise": {k: v["rel_stddev"] for k, v in app.items()},
            "peers_correct": correct,
            "streaming_s": streaming_ceiling_s(x.numel() * x.element_size()),
            "tune": {"candidates": tuned["candidates"], "rejected": tuned["rejected"],
                     "best_s": medians[best.name],
                     "best_batch_invariant": None if bi is None else bi.name,
                     "best_batch_invariant_s": None if bi is None else medians[bi.name]}}


def run(todo: list[dict[str, Any]], samples: int, lib_path: str | None, time_limit: float,
        save: Callable[[dict[str, Any]], None] = lambda result: None) -> dict[str, Any]:
    """Every shape of `todo` (none started after `time_limit` seconds); `save` gets the result
    so far after each shape, so that a run cut short still leaves what it measured."""
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
              "protocol": _protocol(samples)}
    started = time.monotonic()
    for i, s in enumerate(todo):
        if time.monotonic() - started > time_limit:
            result["skipped"] = [{k: t[k] for k in ("dtype", "total", "kind", "r")}
                                 for t in todo[i:]]
            break
        result["rows"].append(_row(s, tuners[s["dtype"]], jax, lib, samples))
        torch.cuda.empty_cache()
        save(result)
        print(f"axis bench: {s['dtype']} {s['kind']} 2^{s['total'].bit_length() - 1} r={s['r']} "
              f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
    return result


def _missing(jax: Any, lib: Any) -> list[str]:
    out = [] if jax is not None else ["jax (not importable)"]
    return out + ([] if lib is not None else ["cub_segmented (helper library not built)"])


def _protocol(samples: int) -> dict[str, str]:
    return {"reducetune_point": ("tuned on the spot for each shape in this run: the axis "
                                 "family's presets, then a neighbourhood of the best two, every "
                                 "point verified against float64, hot CUDA-event medians in "
                                 "rotating rounds; the fastest kept (axis tuning is not in "
                                 "'reducetune tune' yet)"),
            "application": (f"one call between two CUDA events on the current stream (JAX: "
                            f"host clock around the call and block_until_ready), hot data, "
                            f"{samples} calls per contender in rounds whose order rotates "
                            "after 3 warm-up calls each; median and relative standard "
                            "deviation"),
            "ceilings": ("memcpy: cudaMemcpyAsync device to device of (input + output) / 2 "
                         "bytes, so that it reads and writes as many bytes as the reduction, "
                         "in the same rounds; streaming: the project's read-only streaming "
                         "kernel over the input's bytes (cold L2, its fastest shape)")}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m reducetune.benchmarks.axis",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="output prefix: PREFIX.json, .md, .png")
    p.add_argument("--samples", type=integer(3, 100_000), default=30,
                   help="calls timed per contender and per candidate point")
    p.add_argument("--segmented-lib", help="the CUB helper (tuner/tools/segmented_reduce.cu, "
                   "built by nvcc); default $REDUCETUNE_SEGMENTED_LIB or "
                   "build/libreducetune_segmented.so")
    p.add_argument("--totals", default="24,28", help="log2 of the totals, e.g. 24 or 24,28")
    p.add_argument("--dtypes", default="float32",
                   help="element types, e.g. float32,bfloat16 (CUB's helper: float32 only)")
    p.add_argument("--time-limit", type=float, default=1e9,
                   help="start no new shape after this many seconds (the rest is listed)")
    a = p.parse_args(argv)
    totals = tuple(1 << int(t) for t in a.totals.split(","))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    command = "python -m reducetune.benchmarks.axis " + " ".join(
        sys.argv[1:] if argv is None else argv)
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    dtypes = tuple(a.dtypes.split(","))
    result = run(shapes(totals, RS, dtypes), a.samples, a.segmented_lib, a.time_limit,
                 lambda result: _save({**result, "command": command, "date": date}, out))
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
