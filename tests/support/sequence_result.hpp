// One run of a launch sequence and its result's bytes: what the GPU tests verify or compare
// bit for bit. The sequence is enqueued whole (its init kernel included, for atomic) on the
// default stream, as one sample of evaluate() would be, and the device synchronised after it.
#pragma once

#include "reducetune/errors.hpp"
#include "reducetune/measure/launch_sequence.hpp"
#include "reducetune/space/element.hpp"

#include <cuda_runtime.h>
#include <vector>

namespace rt_test {

inline std::vector<unsigned char> run_for_result(reducetune::launch_sequence &seq,
                                                 reducetune::dtype t) {
  seq.enqueue(nullptr);
  RT_CUDA_CALL(cudaDeviceSynchronize());
  std::vector<unsigned char> got(reducetune::size_of(t));
  RT_CUDA_CALL(cudaMemcpy(got.data(), seq.result(), got.size(), cudaMemcpyDefault));
  return got;
}

} // namespace rt_test
