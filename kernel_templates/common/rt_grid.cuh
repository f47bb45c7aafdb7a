// Grid level: how the blocks' results become one value (the launch protocols of
// docs/architecture.md) and the `atomic` protocol's init kernel.
//
//   two_pass  each block writes partials[blockIdx.x]; a second kernel (final) reduces them
//             (a grid of one block writes its result to out: no final pass follows).
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
// them during this launch and L1 is not coherent) into out[0]. Partials and shared slots are
// accumulators (rt_types.cuh): float32 for the half types.
template <class T, class Op, unsigned BS, warp_strategy W, block_strategy B, bool Coherent,
          class Out = T>
__device__ __forceinline__ void reduce_partials(const acc_t<T> *partials, Out *out,
                                                unsigned long long cnt, acc_t<T> *s) {
  using A = acc_t<T>;
  const Op op{};
  A acc = Op::template identity<A>();
  for (unsigned long long i = threadIdx.x; i < cnt; i += BS)
    acc = op(acc, Coherent ? __ldcg(partials + i) : partials[i]);
  const A r = block_reduce<A, Op, BS, W, B>(acc, s);
  if (threadIdx.x == 0) out[0] = from_acc<T, Out>(r);
}

// Called by every thread of every block with the block's result r (valid in thread 0), an
// accumulator; out receives the result as Out (T, or float32 for a half type on request).
template <class T, class Op, unsigned BS, warp_strategy W, block_strategy B, finish F,
          class Out = T>
__device__ __forceinline__ void finish_block(acc_t<T> r, Out *out, acc_t<T> *partials,
                                             unsigned int *ticket, acc_t<T> *s) {
  if constexpr (F == finish::two_pass) {
    // A grid of one block is launched with partials == out and no final pass
    // (space/reduction_plan.cpp): its result goes to out as Out, which for a half type is not
    // the accumulator partials hold.
    if (threadIdx.x == 0) {
      if (gridDim.x == 1)
        out[0] = from_acc<T, Out>(r);
      else
        partials[blockIdx.x] = r;
    }
  } else if constexpr (F == finish::atomic) {
    static_assert(is_same<Out, acc_t<T>>::value,
                  "the atomic finish combines partials in out: out must be an accumulator, a "
                  "16-bit out would keep a partial in 16 bits");
    if (threadIdx.x == 0) Op::atomic(out, r);
  } else {
    if (gridDim.x == 1) { // the only block: no partial, fence or ticket needed
      if (threadIdx.x == 0) *out = from_acc<T, Out>(r);
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
      reduce_partials<T, Op, BS, W, B, true, Out>(partials, out, gridDim.x, s);
    }
  }
}

} // namespace rt
