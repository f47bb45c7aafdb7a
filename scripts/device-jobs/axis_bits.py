"""Device check: the bits of a few axis points' results on seeded inputs, saved to a file, or
compared with such a file from another template tree (REDUCETUNE_TEMPLATE_DIR): a kernel
change that keeps each lane's order (tworow_tree.py) must give every output the same bits.
Rows include misaligned ones (r odd: a vector row's head and tail scalars) and rows longer
than the vectors a lane loads ahead.

    python3 scripts/device-jobs/axis_bits.py save FILE
    REDUCETUNE_TEMPLATE_DIR=TREE python3 scripts/device-jobs/axis_bits.py compare FILE
"""

from __future__ import annotations

import sys

import torch

from reducetune.runtime.axis import AxisReducer

CASES = [("bfloat16", (2097152, 128), "s_group.bs_128.l_4.v_8.u_1.sp_1"),
         ("bfloat16", (4099, 127), "s_group.bs_128.l_4.v_8.u_1.sp_1"),
         ("bfloat16", (4099, 127), "s_group.bs_128.l_4.v_4.u_1.sp_1"),
         ("bfloat16", (1000, 1001), "s_group.bs_256.l_8.v_2.u_2.sp_1"),
         ("bfloat16", (5, 100003), "s_warp.bs_256.l_32.v_8.u_1.sp_1"),
         ("float32", (70001, 129), "s_warp.bs_128.l_32.v_4.u_1.sp_1"),
         ("float32", (333, 4097), "s_group.bs_128.l_16.v_4.u_2.sp_1"),
         ("float32", (65536, 3), "s_thread.bs_256.l_1.v_2.u_2.sp_1")]


def results() -> dict[str, torch.Tensor]:
    out = {}
    for dtype, shape, variant in CASES:
        g = torch.Generator(device="cuda").manual_seed(26)
        x = torch.randn(shape, device="cuda", generator=g).to(getattr(torch, dtype))
        x[::7] *= 1e4  # large and small values in one row: the order shows in the bits
        outer, r = shape
        reducer = AxisReducer(dtype, "sum", table=[{"outer": outer, "r": r, "inner": 1,
                                                    "variant": f"axis.{dtype}.sum.{variant}",
                                                    "launch": ""}])
        out[f"{dtype} {shape} {variant}"] = reducer(x, axis=1).cpu()
    return out


def _bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bits as integers (NaN != NaN, and -0.0 == 0.0, as floats)."""
    return t.view(torch.int16 if t.element_size() == 2 else torch.int32)


def main(mode: str, path: str) -> int:
    got = results()
    if mode == "save":
        torch.save(got, path)
        print(f"saved {len(got)} results to {path}")
        return 0
    kept = torch.load(path)
    bad = [k for k in kept if not torch.equal(_bits(kept[k]), _bits(got[k]))]
    for k in kept:
        print(("DIFFERENT " if k in bad else "same bits ") + k)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
