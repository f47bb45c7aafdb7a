"""Device experiment (issue 26): a copy of kernel_templates/ whose row kernels (rows_by_lanes,
short_rows_by_lanes and the staged paths) store their outputs another way, to find what the
output's write stream costs the short rows on the H200. There every point of float32 rows of
2, 16 and 128 and bfloat16 rows of 128 reads at 0.949-0.96 x the read-only streaming kernel
(rates), all points of a shape within 1 % of each other, where the H100 reads them at
0.99-1.0 (docs/results/h200_2026-11-27_axis_bench_climb_ties).

KIND:
  nowrite  an output is stored only where it is NaN (never, for the probe's data): the reads and
           adds stay, the write stream goes. A diagnostic, not a kernel: its results are wrong,
           so probe it with PROBE_NO_CHECK=1. Its rate against the streaming kernel is what the
           same loads reach without the writes; the tree as it is, against it, prices them.
  cs       the outputs stored with st.global.cs (cache streaming: evict first), so that their
           lines leave L2 first instead of ageing among the input's; the main loads spelled
           ld.global.nc (__ldg), since an asm store costs the kernel its read-only loads.
  nc       the control of cs: the same loads, plain stores.

Time the copy against the tree as it is with axis_wave_probe.py (REDUCETUNE_TEMPLATE_DIR=OUT_DIR,
PROBE_SET=writes or rows128, PROBE_PRIMED=1) and compare ratios to the streaming kernel, never
the times of two processes.

    python3 scripts/device-jobs/store_tree.py OUT_DIR KIND
"""

from __future__ import annotations

import sys
from pathlib import Path

from tree_patch import patched_copy  # this script's folder is first on sys.path

# put_vec stores a vector of adjacent outputs (W: the unsigned word of its size; the tree as it
# is stores the vector in one instruction too), put_out one output through it.
PUT = {
    "nowrite": "if (to_acc(y.v[0]) != to_acc(y.v[0])) *reinterpret_cast<W *>(o) = w;",
    "nc": "*reinterpret_cast<W *>(o) = w;",
    "cs": "st_cs(reinterpret_cast<W *>(o), w);",
}
HELPER = """
namespace rt {
namespace axis {
// store_tree.py: how this copy loads and stores
template <unsigned B> struct store_word;
template <> struct store_word<2> { using t = unsigned short; };
template <> struct store_word<4> { using t = unsigned; };
template <> struct store_word<8> { using t = uint2; };
template <> struct store_word<16> { using t = uint4; };
__device__ __forceinline__ void st_cs(unsigned short *p, unsigned short v) {
  asm volatile("st.global.cs.u16 [%0], %1;" ::"l"(p), "h"(v) : "memory");
}
__device__ __forceinline__ void st_cs(unsigned *p, unsigned v) {
  asm volatile("st.global.cs.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_cs(uint2 *p, uint2 v) {
  asm volatile("st.global.cs.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(v.x), "r"(v.y) : "memory");
}
__device__ __forceinline__ void st_cs(uint4 *p, uint4 v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w) : "memory");
}
template <class T, unsigned N> __device__ __forceinline__ void put_vec(T *o, const vec<T, N> &y) {
  using W = typename store_word<sizeof(T) * N>::t;
  W w;
  memcpy(&w, &y, sizeof(W));
  PUT_VEC
}
template <class T> __device__ __forceinline__ void put_out(T *o, T v) {
  vec<T, 1> y;
  y.v[0] = v;
  put_vec<T, 1>(o, y);
}
// ld.global.nc spelled out (__ldg): with an asm store in the kernel the compiler no longer
// proves the input read-only and gives up LDG.E.CONSTANT for plain LDG.E
template <class T, unsigned N> __device__ __forceinline__ vec<T, N> get_vec(const vec<T, N> *p) {
  using W = typename store_word<sizeof(T) * N>::t;
  const W w = __ldg(reinterpret_cast<const W *>(p));
  vec<T, N> y;
  memcpy(&y, &w, sizeof(W));
  return y;
}
template <class T> __device__ __forceinline__ T get_one(const T *p) {
  return get_vec<T, 1>(reinterpret_cast<const vec<T, 1> *>(p)).v[0];
}
} // namespace axis
} // namespace rt
"""
# file: (text, its replacement, times it must occur)
STORES = {
    "axis/axis_rows.cuh": [("out[j] = from_acc<T>(v);", "put_out<T>(out + j, from_acc<T>(v));", 2)],
    "axis/axis_staged.cuh": [
        ("out[row0 + row] = from_acc<T>(acc);", "put_out<T>(out + row0 + row, from_acc<T>(acc));",
         2),
        ("out[row] = from_acc<T>(acc);", "put_out<T>(out + row, from_acc<T>(acc));", 1),
        ("*reinterpret_cast<vec<T, per> *>(o) = y;", "put_vec<T, per>(o, y);", 1),
        ("for (unsigned q = 0; q < per; ++q) o[q] = y.v[q];",
         "for (unsigned q = 0; q < per; ++q) put_out<T>(o + q, y.v[q]);", 1)],
}
# the main loads of the probed points (the rows' vectors and strided scalars, the staged tiles)
LOADS = {
    "axis/axis_thread.cuh": [
        ("x[u] = p[(k + u * L) * stride];", "x[u] = get_one<T>(p + (k + u * L) * stride);", 1),
        ("x[u] = pv[i + u * L];", "x[u] = get_vec<T, VEC>(pv + i + u * L);", 1),
        ("const vec<T, VEC> x = pv[i + u * L];", "const vec<T, VEC> x = get_vec<T, VEC>(pv + i + u * L);", 1),
        ("x.body = reinterpret_cast<const vec<T, VEC> *>(aligned)[lane];",
         "x.body = get_vec<T, VEC>(reinterpret_cast<const vec<T, VEC> *>(aligned) + lane);", 1)],
    "axis/axis_staged.cuh": [
        ("x[u] = pv[threadIdx.x + u * BS];", "x[u] = get_vec<T, VEC>(pv + threadIdx.x + u * BS);", 2),
        ("const vec<T, VEC> v = pv[first + u * 32 + lane];",
         "const vec<T, VEC> v = get_vec<T, VEC>(pv + first + u * 32 + lane);", 1)],
}


# the end of axis/axis_acc.cuh, after which HELPER goes (its names are used by the edits)
ACC_END = "} // namespace axis\n} // namespace rt\n"


def main(out: str, kind: str) -> None:
    helper = ACC_END + HELPER.replace("PUT_VEC", PUT[kind])
    edits = {"axis/axis_acc.cuh": [(ACC_END, helper)], **STORES}
    if kind != "nowrite":
        edits["axis/axis_thread.cuh"] = LOADS["axis/axis_thread.cuh"]
        edits["axis/axis_staged.cuh"] = STORES["axis/axis_staged.cuh"] + LOADS["axis/axis_staged.cuh"]
    patched_copy(Path(out), edits)
    print(f"{out}: the row kernels' outputs stored as '{kind}'")


if __name__ == "__main__":
    main(*sys.argv[1:3])
