"""Device probe (issue 26): where the split column tiles lose against the streaming kernel. The
H200's bfloat16 column shapes at 2^28 read at 0.95-0.97 x it (docs/results/
h200x2_2026-11-27_ticket_bound_and_wave_probe, which this probe's runs fill).

Each shape's candidate points (axis variant labels) and the streaming kernel over the same
input are timed as the benchmark's rounds time them (the C++ axis call between two CUDA events,
the GPU idle before it, hot data): 3 warm-up calls each, then SAMPLES rounds in a new shuffled
order each, the benchmarks' own loop (_axis_stats.round_times; the runs recorded on 2026-11-27
shuffled with a seed of their own). Per point the median and its ratio to the streaming
kernel's median of the same rounds. Run it once per template tree (REDUCETUNE_TEMPLATE_DIR: a
tree with one change, e.g. a pass bounded to 2048 / BS registers a thread) and compare the
ratios, never the absolute times of two processes.
PROBE_NO_CHECK=1 skips the check of each point's result against float32, for a tree whose finish
is cut short on purpose (to time a split's pass without its finish). PROBE_STREAMING_SHAPES=1
times every read shape of the streaming kernel beside them ("stream:NAME"), one wave or several;
PROBE_SHAPES=N keeps the first N shapes. PROBE_SET=rows128 times the candidates of bfloat16 rows
(2097152, 128) instead, the H200's thinnest margin to the ceiling in primed rounds (0.950 x,
docs/results/h200x2_2026-11-27_axis_bench_primed; the H100 reads it at 0.986 with another point).
PROBE_SET=writes times float32 rows of 2, 16 and 128 (WRITES) instead. PROBE_PRIMED=1 primes the
rounds as the axis benchmark does since e6b864f.

    PYTHONPATH=<site> python3 scripts/device-jobs/axis_wave_probe.py --out $OUT/wave.md
"""

from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path

import torch
from reducetune import _core
from reducetune.benchmarks._axis_peers import cxx_axis_timer, streaming_protocol
from reducetune.benchmarks._axis_stats import round_times
from reducetune.runtime.axis import AxisReducer

TILES = {
    (1, 4194304, 64): ["s_tile.bs_512.l_32.v_2.u_8.sp_512", "s_tile.bs_512.l_8.v_8.u_4.sp_512",
                       "s_tile.bs_512.l_8.v_8.u_2.sp_512", "s_tile.bs_256.l_8.v_8.u_4.sp_512",
                       "s_tile.bs_256.l_8.v_8.u_8.sp_512", "s_tile.bs_256.l_8.v_8.u_4.sp_1024",
                       "s_tile.bs_1024.l_8.v_8.u_4.sp_256", "s_tile.bs_512.l_16.v_4.u_8.sp_512"],
    (1, 524288, 512): ["s_tile.bs_128.l_32.v_4.u_4.sp_512", "s_tile.bs_512.l_64.v_8.u_4.sp_512",
                       "s_tile.bs_512.l_64.v_8.u_2.sp_512", "s_tile.bs_256.l_64.v_8.u_4.sp_512",
                       "s_tile.bs_512.l_32.v_4.u_4.sp_512", "s_tile.bs_1024.l_64.v_8.u_4.sp_256"],
    (1, 65536, 4096): ["s_tile.bs_256.l_64.v_4.u_8.sp_32", "s_tile.bs_512.l_64.v_8.u_4.sp_32",
                       "s_tile.bs_512.l_128.v_8.u_4.sp_32", "s_tile.bs_256.l_64.v_8.u_4.sp_32"],
    (1, 8192, 32768): ["s_tile.bs_256.l_64.v_4.u_8.sp_4", "s_tile.bs_512.l_64.v_8.u_4.sp_4",
                       "s_tile.bs_512.l_128.v_8.u_4.sp_4", "s_tile.bs_256.l_64.v_8.u_4.sp_4"],
}
# Rows of 128: the tune's best on each GPU (H200: group lanes 4 vec 4 unroll 1; H100: group
# lanes 8 vec 2 unroll 2) and their neighbours in lanes, vec, unroll and block, and a warp a row.
ROWS128 = {(2097152, 128, 1): [
    "s_group.bs_128.l_4.v_4.u_1.sp_1", "s_group.bs_128.l_4.v_4.u_2.sp_1",
    "s_group.bs_256.l_4.v_4.u_1.sp_1", "s_group.bs_128.l_4.v_8.u_1.sp_1",
    "s_group.bs_128.l_8.v_4.u_1.sp_1", "s_group.bs_128.l_8.v_8.u_1.sp_1",
    "s_group.bs_128.l_16.v_8.u_1.sp_1", "s_group.bs_256.l_16.v_8.u_2.sp_1",
    "s_group.bs_256.l_8.v_2.u_2.sp_1", "s_group.bs_128.l_8.v_2.u_1.sp_1",
    "s_warp.bs_256.l_32.v_4.u_1.sp_1",
    "s_warp.bs_256.l_32.v_4.u_2.sp_1"]}
# Float32 short rows: on the H200 every point of a shape reads within 1 % of the others, at
# 0.949-0.953 x the streaming kernel (rates; the H100: 0.99-1.0): the best three of each on the
# fourth H200 host (docs/results/h200_2026-11-27_axis_bench_climb_ties), to time against
# store_tree.py's copy that writes no output.
WRITES = {(134217728, 2, 1): ["s_staged.bs_128.l_1.v_4.u_2.sp_1", "s_staged.bs_512.l_1.v_4.u_2.sp_1",
                              "s_staged.bs_1024.l_1.v_2.u_4.sp_1"],
          (16777216, 16, 1): ["s_staged.bs_64.l_1.v_4.u_8.sp_1", "s_staged.bs_128.l_1.v_4.u_4.sp_1",
                              "s_staged.bs_256.l_1.v_4.u_4.sp_1"],
          (2097152, 128, 1): ["s_warp.bs_128.l_32.v_4.u_4.sp_1", "s_group.bs_128.l_8.v_1.u_8.sp_1",
                              "s_group.bs_128.l_8.v_4.u_2.sp_1"]}
SETS = {"tiles": ("bfloat16", TILES), "rows128": ("bfloat16", ROWS128),
        "writes": ("float32", WRITES)}
DTYPE, CANDIDATES = SETS[os.environ.get("PROBE_SET", "tiles")]
T = f"axis.{DTYPE}.sum."
SAMPLES = 40


def probe(view: tuple[int, int, int], variants: list[str]) -> list[str]:
    outer, r, inner = view
    x = torch.randn(outer, r, inner, device="cuda", dtype=getattr(torch, DTYPE))
    exact = x.float().sum(dim=1)
    size = x.numel() * x.element_size()
    shape = streaming_protocol(size)["shape"]
    stream = torch.cuda.current_stream().cuda_stream
    args = (x.data_ptr(), size - size % 16, stream, shape, 0)
    _core.streaming_read(*args)
    timers = {"streaming": lambda: _core.app_time_streaming_read(*args)[0]}
    if os.environ.get("PROBE_STREAMING_SHAPES") == "1":
        for s in _core.streaming_ceiling(0, size - size % 16)["shapes"]:
            a = (*args[:3], str(s["shape"]), 0)
            _core.streaming_read(*a)
            timers[f"stream:{s['shape']}"] = lambda a=a: _core.app_time_streaming_read(*a)[0]
    for v in variants:
        reducer = AxisReducer(DTYPE, "sum", table=[
            {"outer": outer, "r": r, "inner": inner, "variant": T + v, "launch": ""}])
        got = reducer(x, axis=1).float()
        err = float((got - exact).abs().max() / exact.abs().max())
        if err > 1e-2 and os.environ.get("PROBE_NO_CHECK") != "1":
            raise SystemExit(f"{v}: wrong result (relative error {err:.3g})")
        timers[v] = cxx_axis_timer(reducer, x, view)
    # the benchmarks' rounds: warm-up calls, then SAMPLES rounds in runtime.rounds' shuffles
    times, _ = round_times(timers, SAMPLES, close=set(), max_calls=SAMPLES,
                           primed=os.environ.get("PROBE_PRIMED") == "1")
    med = {k: statistics.median(v) for k, v in times.items()}
    peak = _core.query_device(0)["peak_bytes_per_s"]
    moved = size * (1 + 1 / r)
    lines = []
    for k in sorted(med, key=med.get):
        read_only = k.startswith("stream")  # the streaming kernel reads; a reduction also writes
        rate = (size if read_only else moved) / med[k]
        lines.append(f"| {view} | {k} | {1e6 * med[k]:.1f} | {100 * rate / peak:.1f} | "
                     f"{med['streaming'] / med[k] * (1 if read_only else 1 + 1 / r):.3f} |")
    return lines


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args()
    out = [f"# Wave probe: {torch.cuda.get_device_name()}, {SAMPLES} shuffled rounds, medians", "",
           "| shape | point | us | % peak | x streaming (rates) |", "|---|---|---|---|---|"]
    shapes = list(CANDIDATES.items())[:int(os.environ.get("PROBE_SHAPES", len(CANDIDATES)))]
    for view, variants in shapes:
        out += probe(view, variants)
        print("\n".join(out[-len(variants) - 1:]), flush=True)
        a.out.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
