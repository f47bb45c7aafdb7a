#include "reducetune/measure/host_finish.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/verify/reference.hpp"

#include <cstring>
#include <type_traits>

namespace reducetune {
namespace {

template <class T, class F> T fold(const T *x, std::uint64_t count, F f) {
  T acc = x[0];
  for (std::uint64_t i = 1; i < count; ++i) acc = f(acc, x[i]);
  return acc;
}

template <class T> T combine(reduce_op op, const T *x, std::uint64_t count) {
  // Integers: the exact reference, which wraps as the GPU's add and multiply do (in any order).
  if constexpr (std::is_integral_v<T>) {
    return reference_integer<T>(op, {x, count});
  } else {
    switch (op) { // in T, partial by partial, as the device's operators (rt_ops.cuh)
    case reduce_op::sum: return fold(x, count, [](T a, T b) { return a + b; });
    case reduce_op::prod: return fold(x, count, [](T a, T b) { return a * b; });
    case reduce_op::min: return fold(x, count, [](T a, T b) { return b < a ? b : a; });
    case reduce_op::max: break;
    }
    return fold(x, count, [](T a, T b) { return a < b ? b : a; });
  }
}

} // namespace

void combine_on_host(dtype type, reduce_op op, const void *partials, std::uint64_t count,
                     void *result) {
  if (count == 0) throw invalid_configuration("a host finish needs at least one partial");
  visit_dtype(type, [&](auto zero) {
    using T = decltype(zero);
    const T r = combine(op, static_cast<const T *>(partials), count);
    std::memcpy(result, &r, sizeof(T));
  });
}

host_finish::host_finish(dtype type, reduce_op op, std::uint64_t count)
    : m_partials(count * size_of(type)), m_result(size_of(type)) {
  if (count == 0) throw invalid_configuration("a host finish needs at least one partial");
  m_state = std::make_unique<state>(state{type, op, count, m_partials.data(), m_result.data()});
}

void host_finish::enqueue(cudaStream_t s, const void *device_partials) {
  RT_CUDA_CALL(cudaMemcpyAsync(m_partials.data(), device_partials, m_partials.size(),
                               cudaMemcpyDeviceToHost, s));
  RT_CUDA_CALL(cudaLaunchHostFunc(s, &host_finish::run, m_state.get()));
}

// A host function may not call CUDA, and nothing can catch what it throws: the combine throws
// only for count 0, which the constructor refused.
void CUDART_CB host_finish::run(void *arg) noexcept {
  const auto *st = static_cast<const state *>(arg);
  combine_on_host(st->type, st->op, st->partials, st->count, st->result);
}

} // namespace reducetune
