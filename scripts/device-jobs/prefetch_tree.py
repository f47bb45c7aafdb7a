"""Device experiment (issue 26): a copy of kernel_templates/ whose rows_by_lanes loop (the
thread, group and warp strategies on rows longer than one vector a lane) prefetches into L2 the
row its group reduces DISTANCE grid steps later, while it sums this one. Why: at bfloat16 rows
(2097152, 128) the H200's best group point reads at 0.95-0.96 x the streaming kernel; each
lane's loads of a row wait for the previous row's shuffles and store, so few bytes are in
flight (docs/results/h200_2026-11-27_axis_bench_primed_host3). A prefetch changes no load and
no add: the bits stay the same. Time the copy against the tree as it is with
axis_wave_probe.py (REDUCETUNE_TEMPLATE_DIR=OUT_DIR, PROBE_SET=rows128 PROBE_PRIMED=1) and
compare the ratios to the streaming kernel, never the times of two processes.

    python3 scripts/device-jobs/prefetch_tree.py OUT_DIR DISTANCE
"""

from __future__ import annotations

import sys
from pathlib import Path

from tree_patch import patched_copy  # this script's folder is first on sys.path
ANCHOR = """    const unsigned long long j = base + lane / L;
    acc_t<T> v = Op::template identity<acc_t<T>>();
"""
PREFETCH = """    const unsigned long long j = base + lane / L;
    if (inner == 1) { // the row DISTANCE steps on: into L2 while this one is summed
      const unsigned long long jn =
          j + DISTANCE * static_cast<unsigned long long>(gridDim.x) * rows_per_block;
      if (jn < outputs) {
        const char *p = reinterpret_cast<const char *>(in + jn * r);
        const unsigned long long bytes = r * sizeof(T);
        for (unsigned long long b = (lane % L) * 128ull; b < bytes + 127; b += L * 128ull)
          asm volatile("prefetch.global.L2 [%0];" ::"l"(p + (b < bytes ? b : bytes - 1)));
      }
    }
    acc_t<T> v = Op::template identity<acc_t<T>>();
"""


def main(out: str, distance: str) -> None:
    patched_copy(Path(out), {"axis/axis_rows.cuh": [
        (ANCHOR, PREFETCH.replace("DISTANCE", str(int(distance))))]})
    print(f"{out}: rows_by_lanes prefetches {distance} grid step(s) ahead")


if __name__ == "__main__":
    main(*sys.argv[1:3])
