// Empties the L2 cache before a cold sample by writing a buffer twice its size (nvbench's
// l2flush): what the kernel then reads comes from DRAM, as in an application whose data was
// not just touched.
#pragma once

#include "reducetune/cuda/device_buffer.hpp"

#include <cstdint>

#include <cuda_runtime_api.h>

namespace reducetune {

class l2_flush {
public:
  explicit l2_flush(std::uint64_t l2_bytes); // allocates 2 × l2_bytes (nothing when 0)
  void enqueue(cudaStream_t s);              // asynchronous; outside the timed events

private:
  device_buffer m_buffer;
};

} // namespace reducetune
