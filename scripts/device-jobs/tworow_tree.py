"""Device experiment (issue 26): a copy of kernel_templates/ whose rows_by_lanes loop takes two
rows a group per step on contiguous rows (inner = 1) and issues the loads of both before it
adds any. Why: at bfloat16 rows (2097152, 128) the H200's best group point reads at 0.95-0.96 x
the streaming kernel: each lane's loads of a row wait for the previous row's shuffles and store
(docs/results/h200_2026-11-27_rows128_prefetch: a prefetch into L2 does not help).

The copy's family.json gives those points half the blocks, so that each group has two rows a
step (group and warp strategies; a thread per output is left as it is).

A lane's order stays lane_reduce_vector's (head scalars, its vectors in increasing index, the
tail), so a row's bits do not change: the first M vectors of each of the two rows are loaded
into registers ahead, the rest and the scalars when they are added. Both rows' shuffles run on
every lane (the loop bound is the warp's first row, as in rows_by_lanes).

    python3 scripts/device-jobs/tworow_tree.py OUT_DIR [M]     (M: vectors a lane ahead, 4)
Time it against the tree as it is with axis_wave_probe.py (REDUCETUNE_TEMPLATE_DIR=OUT_DIR,
PROBE_SET=rows128 PROBE_PRIMED=1); scripts/device-jobs/axis_bits.py compares the bits.
"""

from __future__ import annotations

import sys
from pathlib import Path

# this script's folder is first on sys.path
from tree_patch import GROUP_GRID, ROWS_BY_LANES, patched_copy, rows_by_lanes_path

TWO_ROWS = """  if constexpr (VEC > 1 && L > 1) {
    if (inner == 1) {
      two_rows_by_lanes<T, Op, BS, L, VEC, AHEAD>(in, out, outputs, r, lane);
      return;
    }
  }
"""
HELPERS = """// One lane's first M vectors of a contiguous row, loaded ahead; `row_fold` adds them in
// lane_reduce_vector's order with the rest of the lane's share.
template <class T, unsigned VEC, unsigned M> struct ahead {
  vec<T, VEC> x[M];
};

template <class T, unsigned L, unsigned VEC, unsigned M>
__device__ __forceinline__ ahead<T, VEC, M>
row_load(const T *__restrict__ p, unsigned long long cnt, unsigned lane) {
  ahead<T, VEC, M> a;
  const unsigned long long mis = (reinterpret_cast<unsigned long long>(p) / sizeof(T)) % VEC;
  const unsigned long long head = min_u64((VEC - mis) % VEC, cnt);
  const unsigned long long nvec = (cnt - head) / VEC;
  const vec<T, VEC> *pv = reinterpret_cast<const vec<T, VEC> *>(p + head);
#pragma unroll
  for (unsigned m = 0; m < M; ++m)
    if (lane + m * L < nvec) a.x[m] = pv[lane + m * L];
  return a;
}

template <class T, class Op, unsigned L, unsigned VEC, unsigned M>
__device__ __forceinline__ acc_t<T>
row_fold(const ahead<T, VEC, M> &a, const T *__restrict__ p, unsigned long long cnt,
         unsigned lane) {
  const Op op{};
  acc_t<T> acc = Op::template identity<acc_t<T>>();
  const unsigned long long mis = (reinterpret_cast<unsigned long long>(p) / sizeof(T)) % VEC;
  const unsigned long long head = min_u64((VEC - mis) % VEC, cnt);
  for (unsigned long long k = lane; k < head; k += L) acc = op(acc, to_acc(p[k]));
  const T *aligned = p + head;
  const unsigned long long m_el = cnt - head, nvec = m_el / VEC;
  const vec<T, VEC> *pv = reinterpret_cast<const vec<T, VEC> *>(aligned);
#pragma unroll
  for (unsigned m = 0; m < M; ++m)
    if (lane + m * L < nvec) acc = fold<Op>(acc, a.x[m]);
  for (unsigned long long i = lane + M * L; i < nvec; i += L) acc = fold<Op>(acc, pv[i]);
  for (unsigned long long k = nvec * VEC + lane; k < m_el; k += L)
    acc = op(acc, to_acc(aligned[k]));
  return acc;
}

template <class T, class Op, unsigned BS, unsigned L, unsigned VEC, unsigned M>
__device__ __forceinline__ void two_rows_by_lanes(const T *__restrict__ in, T *out,
                                                  unsigned long long outputs,
                                                  unsigned long long r, unsigned lane) {
  constexpr unsigned rows_per_block = BS / L;
  const unsigned long long step = static_cast<unsigned long long>(gridDim.x) * rows_per_block;
  for (unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * rows_per_block +
                                 (threadIdx.x / 32) * (32 / L);
       base < outputs; base += 2 * step) {
    const unsigned long long j1 = base + lane / L, j2 = j1 + step;
    const T *p1 = in + (j1 < outputs ? j1 : 0) * r, *p2 = in + (j2 < outputs ? j2 : 0) * r;
    const unsigned long long c1 = j1 < outputs ? r : 0, c2 = j2 < outputs ? r : 0;
    const ahead<T, VEC, M> a1 = row_load<T, L, VEC, M>(p1, c1, lane % L);
    const ahead<T, VEC, M> a2 = row_load<T, L, VEC, M>(p2, c2, lane % L);
    acc_t<T> v1 = row_fold<T, Op, L, VEC, M>(a1, p1, c1, lane % L);
    if constexpr (L > 1) v1 = group_reduce<acc_t<T>, Op, L>(v1);
    if (lane % L == 0 && j1 < outputs) out[j1] = from_acc<T>(v1);
    acc_t<T> v2 = row_fold<T, Op, L, VEC, M>(a2, p2, c2, lane % L);
    if constexpr (L > 1) v2 = group_reduce<acc_t<T>, Op, L>(v2);
    if (lane % L == 0 && j2 < outputs) out[j2] = from_acc<T>(v2);
  }
}

"""


# family.json's grid of the group and warp strategies: half the blocks where the step takes two
# rows (contiguous rows longer than one vector a lane), so that a group has two rows a step. The
# first trial (a92639e, docs/results/h200_2026-11-27_rows128_two_rows) kept the grid: each group
# had one row and the step's second row was always past the end.
GRID_TWO = GROUP_GRID.replace(": 1))", ": inner == 1 && vec > 1 ? 2 : 1))")


def main(out: str, ahead: str = "4") -> None:
    patched_copy(Path(out), {
        "axis/axis_rows.cuh": [rows_by_lanes_path(TWO_ROWS.replace("AHEAD", str(int(ahead)))),
                               (ROWS_BY_LANES, HELPERS + ROWS_BY_LANES)],
        "axis/family.json": [(GROUP_GRID, GRID_TWO)]})
    print(f"{out}: rows_by_lanes takes two contiguous rows a step, {ahead} vectors ahead")


if __name__ == "__main__":
    main(*sys.argv[1:3])
