"""Host time per call of each piece of reducetune.reduce on a PyTorch tensor and a CuPy
array, beside torch.sum / cupy.sum (diagnostic for issue 13: where the microseconds between
the events go). Batches of 200 calls, synchronised between batches so the launch queue never
fills; the median batch's time per call.

    python3 scripts/device-jobs/host_overhead.py [--db DB]
"""

import statistics
import sys
import time

import cupy
import torch

import reducetune
from reducetune._fast_call import prepare


def per_call_us(f, batches=15, calls=200):
    f()
    torch.cuda.synchronize()
    times = []
    for _ in range(batches):
        t = time.perf_counter()
        for _ in range(calls):
            f()
        times.append((time.perf_counter() - t) / calls)
        torch.cuda.synchronize()
    return statistics.median(times) * 1e6


db = sys.argv[sys.argv.index("--db") + 1] if "--db" in sys.argv else None
x = torch.randn(1 << 14, device="cuda")
xc = cupy.from_dlpack(x)
r = reducetune.Reducer("float32", "sum", db=db)
p = prepare(x)
rows = {
    "torch.sum(x)": lambda: torch.sum(x),
    "cupy.sum(xc)": lambda: cupy.sum(xc),
    "reducetune.reduce(x)": lambda: reducetune.reduce(x, db=db),
    "Reducer(x)": lambda: r(x),
    "reducetune.reduce(xc)": lambda: reducetune.reduce(xc, db=db),
    "prepare(x) [torch]": lambda: prepare(x),
    "prepare(xc) [cupy]": lambda: prepare(xc),
    "x.new_empty(())": lambda: x.new_empty(()),
    "torch.empty((), device=x.device)": lambda: torch.empty((), device=x.device),
    "cupy.empty(())": lambda: cupy.empty((), dtype=cupy.float32),
    "raw stream": lambda: torch._C._cuda_getCurrentRawStream(0),
    "core.reduce (C++ call)": lambda: r._launch(p[0], p[1], p[6], p[4], p[3]),
    "torch event record": lambda: torch.cuda.Event(enable_timing=True).record(),
}
for name, f in rows.items():
    print(f"{name:36s} {per_call_us(f):8.2f} us/call")
