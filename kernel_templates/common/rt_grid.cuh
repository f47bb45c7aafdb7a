// Grid level: how the blocks' results become one value (the launch protocols of
// docs/architecture.md) and the `atomic` protocol's init kernel.
//
//   two_pass  each block writes partials[blockIdx.x]; a second kernel (final) reduces them.
//   atomic    each block combines its result into out[0] with Op::atomic; init_identity runs
//             first.
//   ticket    each block writes its partial, __threadfence(), takes a ticket with atomicInc;
//             the block that takes the last ticket reduces all partials into out[0].
//             atomicInc(ticket, gridDim.x - 1) wraps to 0 on the last ticket, so the counter
//             is reset for the next launch without another store.
#pragma once

#include "common/rt_block.cuh"

namespace rt {

enum class finish { two_pass, atomic, ticket };

// The `atomic` protocol's first launch: one thread writes the identity into out[0].
template <class T, class Op> __global__ void init_identity(const T * /*in*/, T *out) {
  if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = Op::template identity<T>();
}

// One block reduces cnt partials (read through L2: ld.global.cg, since other blocks wrote
// them during this launch and L1 is not coherent) into out[0].
template <class T, class Op, unsigned BS, warp_strategy W, block_strategy B, bool Coherent>
__device__ __forceinline__ void reduce_partials(const T *partials, T *out, unsigned long long cnt,
                                                T *s) {
  const Op op{};
  T acc = Op::template identity<T>();
  for (unsigned long long i = threadIdx.x; i < cnt; i += BS)
    acc = op(acc, Coherent ? __ldcg(partials + i) : partials[i]);
  const T r = block_reduce<T, Op, BS, W, B>(acc, s);
  if (threadIdx.x == 0) out[0] = r;
}

// Called by every thread of every block with the block's result r (valid in thread 0).
template <class T, class Op, unsigned BS, warp_strategy W, block_strategy B, finish F>
__device__ __forceinline__ void finish_block(T r, T *out, T *partials, unsigned int *ticket, T *s) {
  if constexpr (F == finish::two_pass) {
    if (threadIdx.x == 0) partials[blockIdx.x] = r;
  } else if constexpr (F == finish::atomic) {
    if (threadIdx.x == 0) Op::atomic(out, r);
  } else {
    if (gridDim.x == 1) { // the only block: no partial, fence or ticket needed
      if (threadIdx.x == 0) *out = r;
      return;
    }
    __shared__ bool last;
    if (threadIdx.x == 0) {
      partials[blockIdx.x] = r;
      __threadfence(); // the partial is visible device-wide before the ticket is taken
      last = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;
    }
    __syncthreads(); // also orders the reuse of s after block_reduce
    if (last) {
      __threadfence();
      reduce_partials<T, Op, BS, W, B, true>(partials, out, gridDim.x, s);
    }
  }
}

} // namespace rt
