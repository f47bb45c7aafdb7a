// Column tiles (the tile strategy), for inner > 1: a block of BS threads is L lanes along
// inner times W = BS / L rows along r. Lane tx owns VEC adjacent columns c0 .. c0 + VEC - 1
// of a tile of L * VEC columns; row ty of the block takes k = ty, ty + W, ... of its segment,
// UNROLL loads in flight. Neighbouring lanes read neighbouring columns, so each k is one
// contiguous L * VEC-element read. L may exceed a warp (up to BS): a block step then reads
// up to BS * VEC contiguous elements of a row instead of strips of at most 32 lanes' loads;
// at L == BS (W == 1, as the thread strategy with VEC > 1 uses it) each thread walks its
// columns down every row of the segment alone.
//
// The W partials of a column meet in a shared-memory tree over ty (log2(W) levels, the same
// for every column; none where W == 1). Vector loads are used where every row of the tile is aligned (inner a
// multiple of VEC and an aligned input) and the tile is whole; elsewhere the same elements
// are loaded one by one. Either way each column combines the same elements in the same
// order: the order depends on r and the point alone (batch_invariant, whatever VEC is).
//
// S > 1 splits r across S blocks as rows_by_blocks does, with the same partials layout and
// final_pass. Ticket (the tile_ticket strategy) is the same pass, and then the block that
// writes a tile's last partials finishes the tile in this launch (axis_finish.cuh,
// finish_tile_if_last), with final_pass's order per output: the same bits in one launch.
#pragma once

#include "axis/axis_finish.cuh"
#include "axis/axis_thread.cuh"

namespace rt {
namespace axis {

// Lane tx's VEC columns over the rows ty, ty + W, ... of a segment of cnt rows. Flat: the tile
// spans whole rows (inner == its width, L * VEC), so a lane's rows are W * inner = BS * VEC
// elements apart, a constant: the UNROLL loads then take immediate offsets from one address,
// fewer registers (bfloat16 block 512, lanes 8, vec 8: 32 a thread, not 34; docs/results/
// h200x2_2026-11-27_ticket_bound_and_wave_probe/flat_probe). Split (S > 1) with it: the loop
// counts whole groups for the block, so ptxas issues all of a group's 16-byte loads before its
// first add (below; docs/results/h200_2026-11-27_tile_groups, tests/python/
// test_axis_tile_sass.py).
template <class T, class Op, unsigned W, unsigned UNROLL, unsigned VEC, bool Vector,
          unsigned long long Flat = 0, bool Split = false>
__device__ __forceinline__ void tile_columns(const T *__restrict__ p, unsigned long long cnt,
                                             unsigned long long inner, unsigned columns,
                                             unsigned ty, acc_t<T> (&acc)[VEC]) {
  const Op op{};
  // A lane's rows are W * inner elements apart: a pointer stepped by that, not a 64-bit
  // product per load.
  const unsigned long long step = Flat ? Flat : W * inner;
  const T *q = p + ty * inner;
  unsigned long long k = ty;
  // UNROLL rows of the lane, q + u * step: every load issued, then each added in u order.
  const auto group = [&] {
    vec<T, VEC> x[UNROLL];
#pragma unroll
    for (unsigned u = 0; u < UNROLL; ++u) {
      const T *row = q + u * step;
      if constexpr (Vector)
        x[u] = load_vec_nc<T, VEC>(row);
      else
#pragma unroll
        for (unsigned e = 0; e < VEC; ++e) x[u].v[e] = load_or_identity<T, Op>(row, e, columns);
    }
#pragma unroll
    for (unsigned u = 0; u < UNROLL; ++u)
#pragma unroll
      for (unsigned e = 0; e < VEC; ++e) acc[e] = op(acc[e], to_acc(x[u].v[e]));
  };
  if constexpr (Split && Flat != 0 && Vector && UNROLL > 1 && sizeof(T) * VEC == 16 &&
                sizeof(T) <= 4) {
    // A count of whole groups of UNROLL * W rows, the same for the whole block, so that the
    // loop keeps it in uniform registers and the thread only its pointer: with k and cnt
    // tested per thread (a 64-bit k, two more registers) ptxas issued three of bfloat16's four
    // 16-byte loads before the first add, and all four with this. Every thread's own test
    // (k + (UNROLL - 1) * W < cnt) takes these groups too, and at most one more, whose rows the
    // rows-left loop below takes in the same u order: the same loads and adds per column.
    // unroll 1: unrolled twice, the second copy's loads were interleaved with the adds. Not
    // for UNROLL 1, whose loop the compiler unrolls into several loads in flight. Only for a
    // split and 16-byte loads of types of 4 bytes or less: applied more broadly it cost some
    // points occupancy (float16 split 1, block 512, lanes 32, vec 8: 40 -> 42 registers; block
    // 128, vec 2, unroll 4: 32 -> 40-47); so bounded, none of 760 split points swept lost any.
    const unsigned long long groups = cnt / (UNROLL * W);
#pragma unroll 1
    for (unsigned long long g = 0; g < groups; ++g, q += UNROLL * step) group();
    k += groups * (UNROLL * W);
  } else {
    for (; k + (UNROLL - 1) * W < cnt; k += UNROLL * W, q += UNROLL * step) group();
  }
  // The rows left (all of them when cnt < UNROLL * W: a few rows of many columns), with the
  // same loads as above: scalar ones here made vec > 1 slower than vec 1 over 2 rows.
#pragma unroll
  for (unsigned u = 0; u < UNROLL; ++u)
    if (k + u * W < cnt) {
      const T *row = q + u * step;
      if constexpr (Vector) {
        const vec<T, VEC> x = load_vec_nc<T, VEC>(row);
#pragma unroll
        for (unsigned e = 0; e < VEC; ++e) acc[e] = op(acc[e], to_acc(x.v[e]));
      } else {
#pragma unroll
        for (unsigned e = 0; e < VEC; ++e)
          if (e < columns) acc[e] = op(acc[e], to_acc(row[e]));
      }
    }
}

template <class T, class Op, unsigned BS, unsigned L, unsigned UNROLL, unsigned VEC, unsigned S,
          bool Ticket = false>
__device__ __forceinline__ void column_tiles(const T *__restrict__ in, T *out,
                                             unsigned long long outer, unsigned long long r,
                                             unsigned long long inner, acc_t<T> *partials) {
  using A = acc_t<T>;
  static_assert(L >= 1 && L <= BS && BS % L == 0, "lanes along inner divide the block");
  constexpr unsigned W = BS / L, width = L * VEC;
  // The constant row step of a tile that spans whole rows (tile_columns' Flat); 0, none: not
  // for tile_ticket, where beside its finish the second loop took some points to a stack frame
  // (float16 and bfloat16 min and max at split 64, float64 at 16: test_axis_compile).
  constexpr unsigned long long flat = Ticket ? 0 : W * width;
  __shared__ A s[W > 1 ? BS * VEC : 1];
  const Op op{};
  const unsigned tx = threadIdx.x % L, ty = threadIdx.x / L;
  const unsigned long long tiles = ceil_div(inner, width);
  const row_split sp = split_row(r, S);
  const unsigned long long chunk = sp.chunk;
  static_assert(!Ticket || S > 1, "a ticket finishes a split");
  const bool aligned = VEC > 1 && inner % VEC == 0 &&
                       reinterpret_cast<unsigned long long>(in) % (VEC * sizeof(T)) == 0;
  // A lane's VEC results are adjacent outputs too: one vector store where out allows it
  // (strided scalar stores made a thread per output with vec 4 slower than with vec 1).
  const bool out_aligned = VEC > 1 && inner % VEC == 0 &&
                           reinterpret_cast<unsigned long long>(out) % (VEC * sizeof(T)) == 0;
  for (unsigned long long b = blockIdx.x; b < outer * tiles * sp.parts; b += gridDim.x) {
    unsigned long long t, part, o, tile;
    div_mod(b, sp.parts, t, part);
    div_mod(t, tiles, o, tile);
    const unsigned long long c0 = tile * width + tx * VEC;
    const unsigned long long k0 = min_u64(r, part * chunk), cnt = min_u64(r, k0 + chunk) - k0;
    const unsigned columns = c0 < inner ? static_cast<unsigned>(min_u64(VEC, inner - c0)) : 0;
    A acc[VEC];
#pragma unroll
    for (unsigned e = 0; e < VEC; ++e) acc[e] = Op::template identity<A>();
    const T *p = in + (o * r + k0) * inner + c0;
    if (flat && aligned && columns == VEC && inner == width)
      tile_columns<T, Op, W, UNROLL, VEC, true, flat, (S > 1)>(p, cnt, inner, columns, ty, acc);
    else if (aligned && columns == VEC)
      tile_columns<T, Op, W, UNROLL, VEC, true>(p, cnt, inner, columns, ty, acc);
    else if (columns > 0)
      tile_columns<T, Op, W, UNROLL, VEC, false>(p, cnt, inner, columns, ty, acc);
    if constexpr (W > 1) {
#pragma unroll
      for (unsigned e = 0; e < VEC; ++e) s[ty * width + tx * VEC + e] = acc[e];
      __syncthreads();
#pragma unroll
      for (unsigned h = W / 2; h > 0; h >>= 1) {
        if (ty < h)
#pragma unroll
          for (unsigned e = 0; e < VEC; ++e) {
            const unsigned at = ty * width + tx * VEC + e;
            s[at] = op(s[at], s[at + h * width]);
          }
        __syncthreads();
      }
#pragma unroll
      for (unsigned e = 0; e < VEC; ++e) acc[e] = s[tx * VEC + e];
      __syncthreads(); // every lane has read its result before the next tile writes s
    }
    if (ty == 0) {
      const unsigned long long j0 = o * inner + c0;
      if constexpr (S == 1) {
        bool stored = false;
        if constexpr (sizeof(T) * VEC >= 4) {
          if (out_aligned && columns == VEC) {
            vec<T, VEC> y;
#pragma unroll
            for (unsigned e = 0; e < VEC; ++e) y.v[e] = from_acc<T>(acc[e]);
            store_vec(out + j0, y);
            stored = true;
          }
        }
        // e runs to VEC, a constant, so acc stays in registers (a loop to `columns` indexed it
        // at run time and put it in local memory, every lane's accumulators a round trip
        // through L1 and L2)
        if (!stored)
#pragma unroll
          for (unsigned e = 0; e < VEC; ++e)
            if (e < columns) out[j0 + e] = from_acc<T>(acc[e]);
      } else {
#pragma unroll
        for (unsigned e = 0; e < VEC; ++e)
          if (e < columns) partials[(j0 + e) * sp.parts + part] = acc[e];
      }
    }
    if constexpr (Ticket) {
      const unsigned long long first = o * inner + tile * width;
      // the counter's address made here, not kept live through the tile's loop
      finish_tile_if_last<T, Op, S>(out, partials,
                                    tile_counters(partials, outer * inner * sp.parts) + t, first,
                                    min_u64(width, inner - tile * width),
                                    static_cast<unsigned>(sp.parts));
    }
  }
}

} // namespace axis
} // namespace rt
