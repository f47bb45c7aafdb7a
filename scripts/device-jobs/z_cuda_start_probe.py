#!/usr/bin/env python3
"""Device probe, issue 25: how CUDA's start behaves when N processes start it at once, one GPU
each, as the GPU workers of ``reducetune tune --devices 0,1,2,3`` do.

In the 768-point sweep on 4 x H200 (docs/results/h200x4_2026-11-27_z_visible_gpus) a lone GPU
worker answered 0.67 s after the command began, two at once 1.02 s, four at once 1.71 s, all
four at the same moment. Is CUDA's start serialised by the driver, and is it the GPU's own
start (no persistence mode: a GPU no process holds is shut down and started again)?

For N in 1, 2, 4 (as many as there are): N children started at once, each with
CUDA_VISIBLE_DEVICES naming its own GPU, each printing when (seconds after the parent started
it) it finished: its Python start, libcuda's load, cuInit, the primary context made current,
a first cuMemAlloc; and with all N importing reducetune._core first. Three rounds each; then
the same while a holder process keeps a context on every GPU (so no GPU is shut down between
rounds). Also nvidia-smi's persistence mode.

    python3 scripts/device-jobs/z_cuda_start_probe.py > $OUT/cuda_start_probe.txt
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import ctypes, json, sys, time
t0 = float(sys.argv[1])
out = {"python": time.time() - t0}
if "core" in sys.argv[2:]:  # the extension first, as a GPU worker loads it
    from reducetune import _core
out["core"] = time.time() - t0
cu = ctypes.CDLL("libcuda.so.1")
out["load"] = time.time() - t0
assert cu.cuInit(0) == 0
out["cuInit"] = time.time() - t0
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
out["context"] = time.time() - t0
p = ctypes.c_uint64()
assert cu.cuMemAlloc_v2(ctypes.byref(p), 1 << 20) == 0
out["alloc"] = time.time() - t0
print(json.dumps(out))
if "hold" in sys.argv[2:]:  # the holder: keep the context until stdin closes
    sys.stdin.read()
"""

STEPS = ("python", "core", "load", "cuInit", "context", "alloc")


def gpus() -> int:
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def at_once(n: int, core: bool = False) -> list[dict[str, float]]:
    """N children started at once, child k on GPU k: each one's step times (``core``: each
    imports reducetune._core first)."""
    t0 = time.time()
    procs = [subprocess.Popen([sys.executable, "-S", "-c", CHILD, repr(t0)] + ["core"] * core,
                              env={**os.environ, "CUDA_VISIBLE_DEVICES": str(k)},
                              stdout=subprocess.PIPE, text=True) for k in range(n)]
    return [json.loads(p.communicate()[0]) for p in procs]


def report(label: str, n: int, rounds: int = 3, core: bool = False) -> None:
    runs = [at_once(n, core) for _ in range(rounds)]
    for k in range(n):
        med = {s: statistics.median(r[k][s] for r in runs) for s in STEPS}
        print(f"{label:<14} N={n} child {k}: " +
              "  ".join(f"{s} {med[s]:.3f}" for s in STEPS))


def main() -> int:
    n_max = gpus()
    smi = subprocess.run(["nvidia-smi", "--query-gpu=index,persistence_mode,name",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout
    print("# persistence mode (nvidia-smi):", "; ".join(smi.strip().splitlines()))
    print(f"# {n_max} GPUs, {os.cpu_count()} cores; seconds after the parent started the "
          "children, medians of 3 rounds, at the end of each step")
    counts = [n for n in (1, 2, 4) if n <= n_max]
    for n in counts:
        report("no holder", n)
    report("no holder+core", counts[-1], core=True)  # PYTHONPATH: the built package
    holders = [subprocess.Popen([sys.executable, "-S", "-c", CHILD, repr(time.time()), "hold"],
                                env={**os.environ, "CUDA_VISIBLE_DEVICES": str(k)},
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
               for k in range(n_max)]
    for h in holders:
        assert h.stdout
        h.stdout.readline()  # its context is made
    try:
        for n in counts:
            report("holder", n)
        report("holder+core", counts[-1], core=True)
    finally:
        for h in holders:
            h.communicate("")
    return 0


if __name__ == "__main__":
    sys.exit(main())
