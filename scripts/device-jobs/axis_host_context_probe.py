"""Device probe (issue 26): why the public Python call's host time in the axis benchmark's
process (38-86 us on an H100, 2026-11-27) is several times the call probe's (14 us,
axis_call_overhead.py, 2026-11-26), and the C++ call's own host time (measured in C++) 6-16 us.
The same calls timed in one process in three states: fresh; after JAX is imported and a jitted
sum has run (the benchmark's JAX peer); after torch.compile has compiled and run a sum (its
torch_compile peer). Each call alone after the GPU finished the previous one (as the rounds
call them), on a small tensor (a short kernel) and a large one (the host waits ~350 us for each).

    PYTHONPATH=<site> python3 scripts/device-jobs/axis_host_context_probe.py
"""

from __future__ import annotations

import os
import statistics
import time

import torch

import reducetune
from reducetune import _core
from reducetune.runtime.axis import default_reducer

SHAPES = ((4096, 16), (32768, 8192))
CALLS = 300


def host_us(fn) -> float:
    """The median host time of one call made after the GPU finished the one before."""
    times = []
    for _ in range(CALLS):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e6 * statistics.median(times)


def row(state: str) -> None:
    for shape in SHAPES:
        x = torch.randn(*shape, device="cuda")
        out = torch.empty(shape[0], device="cuda")
        red = default_reducer("float32", "sum")
        args = (x.data_ptr(), shape[0], shape[1], 1, out.data_ptr(),
                torch.cuda.current_stream().cuda_stream, 0)
        core = red._core.reduce_axis
        reducetune.reduce(x, "sum", axis=1)
        cxx = []
        for _ in range(CALLS):
            cxx.append(_core.app_time_axis_call(red._core, *args)[1])
        cells = {"C++ call, its own clock": 1e6 * statistics.median(cxx),
                 "C++ call from Python": host_us(lambda: core(*args)),
                 "reducetune.reduce": host_us(lambda: reducetune.reduce(x, "sum", axis=1)),
                 "torch.sum": host_us(lambda: torch.sum(x, 1)),
                 "torch.empty": host_us(lambda: torch.empty(shape[0], device="cuda"))}
        print(f"| {state} | {shape} | " + " | ".join(f"{k} {v:.1f}" for k, v in cells.items())
              + " |", flush=True)


def main() -> None:
    print(f"# {torch.cuda.get_device_name()}: host us per call (median of {CALLS}), "
          f"{os.cpu_count()} CPUs")
    row("fresh")
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax  # the benchmark's peer

    xj = jax.dlpack.from_dlpack(torch.randn(4096, 16, device="cuda"))
    jax.jit(lambda a: jax.numpy.sum(a, axis=1))(xj).block_until_ready()
    row("after jax")
    compiled = torch.compile(lambda t: t.sum(dim=1), dynamic=False)
    compiled(torch.randn(4096, 16, device="cuda"))
    row("after jax and torch.compile")


if __name__ == "__main__":
    main()
