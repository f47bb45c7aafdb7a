// The search space's view of a real device (space/device_limits.hpp), read off device_info.
#pragma once

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/space/device_limits.hpp"

namespace reducetune {

// Shared memory is the 48 KiB a block gets without opting in: the runner never raises
// cudaFuncAttributeMaxDynamicSharedMemory, so a point that needs more must be invalid.
[[nodiscard]] device_limits limits_of(const device_info &device);

} // namespace reducetune
