"""Short rows on the GPU at hand (issue 26, item 2): the axis family's staged strategy against
thread_columns and group_short_rows, with torch.sum eager and torch.compile beside them, for
rows of 2, 16 and 8 elements (views (2^27, 2, 1), (2^24, 16, 1), (2^25, 8, 1)) in float32 and
bfloat16. Every point runs through the runtime (an AxisReducer whose table names it, as the
benchmark's on-the-spot tune does, benchmarks/_axis_tune.py), is verified against a float64
sum first, and is timed as an application calls it: hot data, one call between two CUDA events,
the contenders in rounds of seeded shuffled orders, the median
(benchmarks.runtime.interleaved_stats).

    scripts/device-python -- python3 scripts/device-jobs/axis_short_rows.py [--samples 20]
        [--no-compile]   (device call: carry [".deps", ".whl"]; not run yet: an estimated 1-2
                          minutes after device-python's package build)

Prints one table per shape: median µs, GB/s counting bytes read + written, % of the HBM peak,
and the ratio to torch.sum eager and to torch.compile (> 1: faster).
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from reducetune import _core
from reducetune._space import limits_for_arch
from reducetune.benchmarks._axis_tune import Candidate, Tuner, _verified, sum_bound
from reducetune.benchmarks.runtime import _torch_timer, interleaved_stats

SHAPES = ((1 << 27, 2), (1 << 24, 16), (1 << 25, 8))
PRESETS = ("thread_columns", "group_short_rows", "staged_short_rows")


def staged_variants(t: Tuner) -> list[Candidate]:
    """The staged preset's neighbours that matter for short rows: 16-byte loads (vec 4 of
    float32, vec 8 of bfloat16) with 2 or 4 of them in flight, and 512-thread blocks."""
    base = dict(t.space.parse(*_preset(t, "staged_short_rows")).params)
    wide = 16 // {"float32": 4, "bfloat16": 2}[t.dtype]
    out = []
    for change in ({"vec": wide, "unroll": 4}, {"vec": wide, "unroll": 2},
                   {"block_size": 512, "unroll": 4}):
        p = t.space.point({**base, **change})
        if not t.space.check(p):
            name = "staged " + " ".join(f"{k}={v}" for k, v in change.items())
            out.append(Candidate(name, str(p.variant_label), str(p.launch_label)))
    return out


def _preset(t: Tuner, name: str) -> tuple[str, str]:
    p = t.space.preset(name)
    return p.variant_label, p.launch_label


def one_shape(t: Tuner, shape: tuple[int, int], samples: int, compiled: bool, peak: float
              ) -> None:
    x = torch.randn(shape, device="cuda", dtype=getattr(torch, t.dtype))
    want = x.double().sum(dim=1)
    bound = sum_bound(x, 1, want)
    cands = [Candidate(n, *_preset(t, n)) for n in PRESETS] + staged_variants(t)
    ok = [c for c in cands if _verified(t, c, x, 1, want, bound)]
    for c in cands:
        if c not in ok:
            print(f"  {c.name}: not verified ({c.choice})")
    timers = {c.name: _torch_timer(lambda c=c: t.reducer(c)(x, 1)) for c in ok}
    timers["torch.sum"] = _torch_timer(lambda: torch.sum(x, dim=1))
    if compiled:
        f = torch.compile(lambda y: torch.sum(y, dim=1))
        f(x)
        timers["torch.compile"] = _torch_timer(lambda: f(x))
    stats = interleaved_stats(timers, samples)
    moved = (x.numel() + shape[0]) * x.element_size()
    print(f"{t.dtype} rows {shape}: view ({shape[0]}, {shape[1]}, 1), {moved / 1e9:.2f} GB moved")
    print(f"  {'contender':<28} {'µs':>9} {'GB/s':>7} {'% peak':>7} {'x eager':>8} "
          f"{'x compile':>9} {'noise':>6}")
    for name, s in sorted(stats.items(), key=lambda kv: kv[1]["median_s"]):
        m = s["median_s"]
        vs = {k: stats[k]["median_s"] / m if k in stats else float("nan")
              for k in ("torch.sum", "torch.compile")}
        print(f"  {name:<28} {m * 1e6:9.1f} {moved / m / 1e9:7.0f} {100 * moved / m / peak:7.1f} "
              f"{vs['torch.sum']:8.2f} {vs['torch.compile']:9.2f} {s['rel_stddev']:6.3f}")
    sys.stdout.flush()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    a = p.parse_args()
    device = dict(_core.query_device(0))
    print(f"{device['name']}, HBM peak {device['peak_bytes_per_s'] / 1e9:.0f} GB/s")
    views = [(m, r, 1) for m, r in SHAPES]
    started = time.monotonic()
    for dtype in ("float32", "bfloat16"):
        t = Tuner(dtype, "sum", limits_for_arch(device["arch"]), views)
        for shape in SHAPES:
            one_shape(t, shape, a.samples, not a.no_compile, device["peak_bytes_per_s"])
            torch.cuda.empty_cache()
    print(f"({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
