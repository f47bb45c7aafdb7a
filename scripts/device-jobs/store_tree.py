"""Device experiment (issue 26): a copy of kernel_templates/ whose row kernels (rows_by_lanes,
short_rows_by_lanes and the staged paths) store no output, to find what the output's write
stream costs the short rows on the H200. There every point of float32 rows of
2, 16 and 128 and bfloat16 rows of 128 reads at 0.949-0.96 x the read-only streaming kernel
(rates), all points of a shape within 1 % of each other, where the H100 reads them at
0.99-1.0 (docs/results/h200_2026-11-27_axis_bench_climb_ties).

The copy stores an output only where it is NaN (never, for the probe's data): the reads and
adds stay, the write stream goes. A diagnostic, not a kernel: its results are wrong, so probe it
with PROBE_NO_CHECK=1. Its rate against the streaming kernel is what the same loads reach
without the writes; the tree as it is, against it, prices the writes.

Time the copy against the tree as it is with axis_wave_probe.py (REDUCETUNE_TEMPLATE_DIR=OUT_DIR,
PROBE_SET=writes or rows128, PROBE_PRIMED=1) and compare ratios to the streaming kernel, never
the times of two processes.

    python3 scripts/device-jobs/store_tree.py OUT_DIR
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tree_patch import ROOT  # this script's folder is first on sys.path

# put_out stores one output, put_vec a vector of adjacent outputs (W the unsigned word of its
# size: the tree as it is stores the vector in one instruction too). Only where the first is NaN.
# A cache-streaming store (st.global.cs) was the other kind planned; as inline asm (the
# toolkit's __stcs too) it turned the kernels' loads from LDG.E.CONSTANT (the read-only path)
# into plain LDG.E in the SASS of every probed point, a second change beside the store's, so it
# was left out.
HELPER = """
namespace rt {
namespace axis {
// store_tree.py: the output is stored only where it is NaN
template <unsigned B> struct store_word;
template <> struct store_word<2> { using t = unsigned short; };
template <> struct store_word<4> { using t = unsigned; };
template <> struct store_word<8> { using t = uint2; };
template <> struct store_word<16> { using t = uint4; };
template <class T, unsigned N> __device__ __forceinline__ void put_vec(T *o, const vec<T, N> &y) {
  using W = typename store_word<sizeof(T) * N>::t;
  W w;
  memcpy(&w, &y, sizeof(W));
  if (to_acc(y.v[0]) != to_acc(y.v[0])) *reinterpret_cast<W *>(o) = w;
}
template <class T> __device__ __forceinline__ void put_out(T *o, T v) {
  vec<T, 1> y;
  y.v[0] = v;
  put_vec<T, 1>(o, y);
}
} // namespace axis
} // namespace rt
"""
# file: (text, its replacement, times it must occur)
EDITS = {
    "axis/axis_rows.cuh": [("out[j] = from_acc<T>(v);", "put_out<T>(out + j, from_acc<T>(v));", 2)],
    "axis/axis_staged.cuh": [
        ("out[row0 + row] = from_acc<T>(acc);", "put_out<T>(out + row0 + row, from_acc<T>(acc));",
         2),
        ("out[row] = from_acc<T>(acc);", "put_out<T>(out + row, from_acc<T>(acc));", 1),
        ("*reinterpret_cast<vec<T, per> *>(o) = y;", "put_vec<T, per>(o, y);", 1),
        ("for (unsigned q = 0; q < per; ++q) o[q] = y.v[q];",
         "for (unsigned q = 0; q < per; ++q) put_out<T>(o + q, y.v[q]);", 1)],
}


def main(out: str) -> None:
    dest = Path(out)
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(ROOT / "kernel_templates", dest)
    acc = dest / "axis/axis_acc.cuh"
    acc.write_text(acc.read_text() + HELPER)
    for name, edits in EDITS.items():
        path = dest / name
        text = path.read_text()
        for old, new, times in edits:
            if text.count(old) != times:
                raise SystemExit(f"{name} changed: an anchor of this experiment is gone")
            text = text.replace(old, new)
        path.write_text(text)
    print(f"{out}: row kernels store no output (a diagnostic: wrong results)")


if __name__ == "__main__":
    main(sys.argv[1])
