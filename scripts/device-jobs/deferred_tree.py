"""Device experiment (issue 26): a copy of kernel_templates/ whose rows_by_lanes (group and warp
strategies, contiguous rows longer than one vector a lane) keeps its outputs in shared memory
and writes them in one burst a block, at its end. Why: the short rows' gap to the read-only
ceiling is their write stream, not their loads (docs/results/h200_2026-11-28_write_stream: the
same loads without the stores beat the streaming kernel; the writes cost 3.5-5 % on an H200,
8 x their bytes at rows of 128). Sparse writes spread over the whole read cost more per byte
than dense ones (a stream writing 1/1024 of its input lost 1 %, 1/128 4.6 %): here the reads
run alone and each block writes its outputs at once.

The copy's family.json gives those points one wave of blocks (132 SMs x 2048 / block_size, the
H100's and H200's SM count; fewer where the rows do not fill it), and each block takes an even
share of the rows (a contiguous run, as the streaming kernel's even-share layout), reducing
them exactly as rows_by_lanes does (lane_reduce, then the group's shuffles): the bits stay. Its
outputs go to a shared buffer of CAP elements, written to out, coalesced, each time it fills
and at the end (one burst where the share is at most CAP rows: rows of 128 at 2^28 give each
block about 1000).

    python3 scripts/device-jobs/deferred_tree.py OUT_DIR [CAP]        (CAP: 1024)
Time it against the tree as it is with axis_wave_probe.py (REDUCETUNE_TEMPLATE_DIR=OUT_DIR,
PROBE_SET=rows128 or writes, PROBE_PRIMED=1); axis_bits.py compares the bits.
"""

from __future__ import annotations

import sys
from pathlib import Path

# this script's folder is first on sys.path
from tree_patch import GROUP_GRID, ROWS_BY_LANES, patched_copy, rows_by_lanes_path

DEFERRED = """  if constexpr (L > 1) {
    if (inner == 1) {
      deferred_rows_by_lanes<T, Op, BS, L, UNROLL, VEC, CAP>(in, out, outputs, r, lane);
      return;
    }
  }
"""
HELPERS = """// An even share of the rows a block, its outputs kept in shared memory and written in bursts.
template <class T, class Op, unsigned BS, unsigned L, unsigned UNROLL, unsigned VEC, unsigned C>
__device__ __forceinline__ void deferred_rows_by_lanes(const T *__restrict__ in, T *out,
                                                       unsigned long long outputs,
                                                       unsigned long long r, unsigned lane) {
  constexpr unsigned rows_per_warp = 32 / L, rows_per_block = BS / L;
  __shared__ T buf[C];
  const unsigned long long steps = (outputs + rows_per_block - 1) / rows_per_block;
  const unsigned long long share = (steps + gridDim.x - 1) / gridDim.x * rows_per_block;
  const unsigned long long first = blockIdx.x * share;
  const unsigned long long last = first + share < outputs ? first + share : outputs;
  for (unsigned long long c0 = first; c0 < last; c0 += C) {
    const unsigned long long c1 = c0 + C < last ? c0 + C : last;
    // the warp's first row bounds the loop: every lane runs the same iterations (shuffles)
    for (unsigned long long base = c0 + (threadIdx.x / 32) * rows_per_warp; base < c1;
         base += rows_per_block) {
      const unsigned long long j = base + lane / L;
      acc_t<T> v = Op::template identity<acc_t<T>>();
      if (j < c1) v = lane_reduce<T, Op, L, UNROLL, VEC>(in + j * r, r, 1, lane % L);
      v = group_reduce<acc_t<T>, Op, L>(v);
      if (lane % L == 0 && j < c1) buf[j - c0] = from_acc<T>(v);
    }
    __syncthreads();
    for (unsigned k = threadIdx.x; k < c1 - c0; k += BS) out[c0 + k] = buf[k];
    __syncthreads(); // the buffer is read before the next chunk overwrites it
  }
}

"""
# family.json's grid of the group and warp strategies: one wave of blocks where the deferred
# path runs (contiguous rows longer than one vector a lane), at most a block per block of rows.
GRID_DEFERRED = ("(inner == 1 && r > lanes * vec ? min(ceil_div(outer, block_size / lanes), "
                 "132 * 2048 / block_size) : " + GROUP_GRID + ")")


def main(out: str, cap: str = "1024") -> None:
    patched_copy(Path(out), {
        "axis/axis_rows.cuh": [rows_by_lanes_path(DEFERRED.replace("CAP", str(int(cap)))),
                               (ROWS_BY_LANES, HELPERS + ROWS_BY_LANES)],
        "axis/family.json": [(GROUP_GRID, GRID_DEFERRED)]})
    print(f"{out}: rows_by_lanes writes its outputs in bursts of up to {cap} a block")


if __name__ == "__main__":
    main(*sys.argv[1:3])
