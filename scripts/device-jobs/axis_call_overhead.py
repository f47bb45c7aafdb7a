"""Device probe (issue 26 item 5): the host time of one axis call, each way an application
makes it, on a small tensor whose kernel is short (so that the host time is what is timed):
the C++ call through the extension (reducer._core.reduce_axis), reducetune.reduce, an
AxisReducer's call, torch.sum; then cProfile of reducetune.reduce's calls, by own time.
Run as  scripts/device-python -- python3 scripts/device-jobs/axis_call_overhead.py"""

import cProfile
import io
import pstats
import time

import torch

import reducetune
from reducetune.runtime.axis import default_reducer

CALLS = 3000


def per_call_us(fn) -> float:
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(CALLS):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / CALLS * 1e6


def main() -> None:
    x = torch.randn(4096, 16, device="cuda")
    red = default_reducer("float32", "sum")
    out = torch.empty(4096, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    core = red._core.reduce_axis
    ptr, optr = x.data_ptr(), out.data_ptr()
    ways = {
        "C++ call (reduce_axis on pointers)": lambda: core(ptr, 4096, 16, 1, optr, stream, 0),
        "reducetune.reduce(x, 'sum', axis=1)": lambda: reducetune.reduce(x, "sum", axis=1),
        "AxisReducer(x, 1)": lambda: red(x, 1),
        "torch.sum(x, 1)": lambda: torch.sum(x, 1),
        "torch.empty(4096)": lambda: torch.empty(4096, device="cuda"),
    }
    print(f"{torch.cuda.get_device_name()}: host time per call, {CALLS} calls, (4096, 16) float32")
    for name, fn in ways.items():
        print(f"  {name:40s} {per_call_us(fn):7.1f} us")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(CALLS):
        reducetune.reduce(x, "sum", axis=1)
    prof.disable()
    torch.cuda.synchronize()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(18)
    print(s.getvalue())


if __name__ == "__main__":
    main()
