"""Device probe (issue 26): why a thread per output over 2 rows of 2^27 columns reaches about
half the peak. Times candidate points of the axis family at (1, 2, 2^27) in float32 and
bfloat16 (hot data, CUDA events, median of 20) beside torch's x[0] + x[1] (the same bytes as an
elementwise add) and torch.compile's sum; run under ncu with PROBE_NCU=1 to profile one call
of each point.   scripts/device-python -- python3 scripts/device-jobs/axis_columns_probe.py"""

import os

import torch

import reducetune
from reducetune import _core
from reducetune.runtime.axis import AxisReducer

R, INNER = 2, 1 << 27


def median_ms(fn, n=20):
    for _ in range(3):
        fn()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return sorted(ts)[n // 2]


def main():
    limits = reducetune.limits_for_arch(_core.query_device(0)["arch"])
    ncu = os.environ.get("PROBE_NCU") == "1"
    only = [n for n in os.environ.get("PROBE_ONLY", "").split(",") if n]
    for dtype in os.environ.get("PROBE_DTYPES", "float32,bfloat16").split(","):
        x = torch.randn(R, INNER, device="cuda", dtype=getattr(torch, dtype))
        space = reducetune.Space("axis", dtype, "sum", limits)
        base = dict(next(p for p in space.presets() if p.name == "thread_columns").point.params)
        points = []
        for vec in (1, 2, 4, 8):
            for bs in (128, 256, 1024):
                for unroll in (1, 4):
                    p = space.point({**base, "vec": vec, "block_size": bs, "unroll": unroll})
                    name = f"thread bs={bs} vec={vec} u={unroll}"
                    if not space.check(p) and (not only or name in only):
                        points.append((name, p))
        gb = x.numel() * x.element_size() * 1.5 / 1e9
        print(f"{torch.cuda.get_device_name()} {dtype} (1, {R}, {INNER}): {gb:.2f} GB moved")
        rows = {"torch x[0] + x[1]": lambda: x[0] + x[1], "torch.sum(x, 0)": lambda: x.sum(0)}
        if not ncu:
            compiled = torch.compile(lambda t: t.sum(0))
            rows["torch.compile sum"] = lambda: compiled(x)
        for name, p in points:
            red = AxisReducer(dtype, "sum", table=[{"outer": 1, "r": R, "inner": INNER,
                                                     "variant": p.variant_label,
                                                     "launch": p.launch_label}])
            rows[name] = (lambda red=red: red(x, 0))
        for name, fn in rows.items():
            if ncu:
                fn()
                torch.cuda.synchronize()
                continue
            ms = median_ms(fn)
            print(f"  {name:32s} {ms * 1e3:8.1f} us {gb / ms * 1e3 / 1e3:7.0f} GB/s")


if __name__ == "__main__":
    main()
