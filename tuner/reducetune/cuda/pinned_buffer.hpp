// Move-only owner of page-locked host memory (cudaMallocHost / cudaFreeHost): what an
// asynchronous device-to-host copy needs to be part of a stream, and of a captured graph.
#pragma once

#include <cstddef>

#include "reducetune/cuda/owned_memory.hpp"

namespace reducetune {

struct pinned_memory {
  static void allocate(void **out, std::size_t bytes);
  static void release(void *data) noexcept;
};

using pinned_buffer = owned_memory<pinned_memory>;

} // namespace reducetune
