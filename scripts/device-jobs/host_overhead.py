"""Host time per call of each piece of reducetune.reduce on a PyTorch tensor and a CuPy
array, beside torch.sum / cupy.sum (diagnostic for issue 13: where the microseconds between
the events go). Batches of 200 calls, synchronised between batches so the launch queue never
fills; the median batch's time per call.

Then the same calls timed as the runtime benchmark times them (benchmarks/runtime.py: two
reused events of the library around one call, the GPU idle before each), at n = 2^10 … 2^16:
this is where reduce(torch) trailed torch.sum by 2-4 µs. "no pool" is the path before the
result pool (a new 0-d tensor per call), measured in the same run for the ratio.

    python3 scripts/device-jobs/host_overhead.py [--db DB]
"""

import statistics
import sys
import time

import cupy
import torch

import reducetune
from reducetune.runtime.fast_call import prepare


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


from reducetune.benchmarks.runtime import _cupy_timer, _torch_timer, interleaved_medians  # noqa: E402

raw = torch._C._cuda_getCurrentRawStream
print("\nbetween events (median of 400 calls, contenders in rotating rounds), µs")
print(f"{'n':>6s} " + " ".join(f"{k:>12s}" for k in (
    "nothing", "torch.sum", "reduce(x)", "Reducer(x)", "no pool", "C++ launch",
    "cupy.sum", "reduce(xc)")))
for k in (10, 12, 14, 16):
    x = torch.randn(1 << k, device="cuda")
    xc = cupy.from_dlpack(x)
    n = x.numel()
    out = torch.empty((), device="cuda")
    optr = out.data_ptr()
    launch = r._launch

    def no_pool():
        o = x.new_empty(())
        launch(x.data_ptr(), n, o.data_ptr(), raw(0), 0)
        return o

    med = interleaved_medians({
        "nothing": _torch_timer(lambda: None),
        "torch.sum": _torch_timer(lambda: torch.sum(x)),
        "reduce(x)": _torch_timer(lambda: reducetune.reduce(x, db=db)),
        "Reducer(x)": _torch_timer(lambda: r(x)),
        "no pool": _torch_timer(no_pool),
        "C++ launch": _torch_timer(lambda: launch(x.data_ptr(), n, optr, 0, 0)),
        "cupy.sum": _cupy_timer(lambda: cupy.sum(xc)),
        "reduce(xc)": _cupy_timer(lambda: reducetune.reduce(xc, db=db)),
    }, 400)
    row = list(med.values())
    print(f"{'2^' + str(k):>6s} " + " ".join(f"{t * 1e6:12.2f}" for t in row))
print("choice at 2^14:", r.choice(1 << 14))
