"""Device probe (issue 26): what a call's predecessor costs it. The axis benchmark times every
contender in shuffled rounds, each call finding the GPU (its L2 above all) as the call before
left it: a copy or a peer that writes its output leaves dirty lines that the next call's reads
must first write back (scripts/device-jobs/peak_probe.cu: a plain read of 512 MB on an H200 at
90.5 % of the HBM peak after itself, 84.4 % after a memset of twice the L2). Here the
benchmark's own contenders (the same timers: reducetune's C++ axis call with the benchmark's
tuned point, the streaming and memcpy ceilings timed in C++, torch, torch.compile, JAX) are
timed after each predecessor in turn: per (contender, predecessor) the median of SAMPLES pairs
"predecessor, then the timed call", each call alone on an idle GPU as in the rounds.

    PYTHONPATH=<site> python3 scripts/device-jobs/axis_predecessor_probe.py \
        --table docs/results/h200x4_2026-11-27_axis_cxx_timed_pdl/28_bfloat16/axis.table.json \
        --out $OUT/predecessors.md
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import torch

from reducetune import _core
from reducetune.benchmarks._axis_peers import Peers, jax_module, streaming_protocol
from reducetune.benchmarks._axis_peers import cxx_axis_timer
from reducetune.runtime.axis import AxisReducer

SHAPES = ((2097152, 128, 1), (1, 16, 16777216), (1, 524288, 512), (1, 4194304, 64),
          (32768, 8192, 1))
SAMPLES = 40
TIMED = ("reducetune", "streaming")


def _tensor(view: tuple[int, int, int], dtype: str) -> tuple[torch.Tensor, int]:
    outer, r, inner = view
    if outer == 1:
        return torch.randn(r, inner, device="cuda", dtype=getattr(torch, dtype)), 0
    return torch.randn(outer, r, device="cuda", dtype=getattr(torch, dtype)), 1


def probe(view: tuple[int, int, int], dtype: str, table: Path, jax) -> list[str]:
    x, axis = _tensor(view, dtype)
    streaming = streaming_protocol(x.numel() * x.element_size())
    peers = Peers(x, axis, jax, None, streaming["shape"])
    timers = {"reducetune": cxx_axis_timer(AxisReducer(dtype, "sum", table=table), x, view),
              **peers.timers}
    for t in timers.values():
        for _ in range(3):
            t()
    moved = x.numel() * x.element_size() * (1 + 1 / view[1])
    peak = _core.query_device(0)["peak_bytes_per_s"]
    lines = []
    for name in TIMED:
        cells = []
        for before in ["itself", *timers]:
            pred = timers[name] if before == "itself" else timers[before]
            times = []
            for _ in range(SAMPLES):
                pred()
                times.append(timers[name]())
            m = statistics.median(times)
            bytes_ = moved if name == "reducetune" else x.numel() * x.element_size()
            cells.append(f"{before} {1e6 * m:.1f} us ({100 * bytes_ / m / peak:.1f} %)")
        lines.append(f"| {dtype} {view} | {name} | " + " | ".join(cells) + " |")
    peers.close()
    return lines


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--table", type=Path, required=True)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args()
    jax = jax_module()
    out = [f"# Predecessors: {torch.cuda.get_device_name()}, {SAMPLES} pairs each, median "
           "(% of the HBM peak: bytes read + written; the streaming kernel: read)", ""]
    for view in SHAPES:
        out += probe(view, a.dtype, a.table, jax)
        print("\n".join(out[-2:]), flush=True)
    a.out.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
