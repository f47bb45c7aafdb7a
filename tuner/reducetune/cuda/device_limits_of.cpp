#include "reducetune/cuda/device_limits_of.hpp"

#include <algorithm>

namespace reducetune {

device_limits limits_of(const device_info &device) {
  device_limits limits;
  limits.arch = device.arch();
  limits.max_threads_per_block = device.max_threads_per_block;
  limits.max_shared_per_block = 48 * 1024;
  limits.max_shared_per_block_optin =
      std::max<std::int64_t>(limits.max_shared_per_block,
                             static_cast<std::int64_t>(device.max_shared_per_block));
  limits.sm_count = device.sm_count;
  limits.warp_size = 32;
  return limits;
}

} // namespace reducetune
