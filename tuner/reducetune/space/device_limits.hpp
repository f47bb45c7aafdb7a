// The device limits the search space checks points against, and that expressions may name
// (arch, max_threads_per_block, max_shared_per_block, sm_count, warp_size). They come from the
// device when there is one (the cuda layer fills this struct), or from the table below for
// `--arch sm_XX` on a machine without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace reducetune {

struct device_limits {
  int arch = 90; // compute capability × 10
  int max_threads_per_block = 1024;
  // Shared memory a block may use without opting in (cudaFuncAttributeMaxDynamicSharedMemory):
  // 48 KiB on every architecture in the table. Static __shared__ arrays can never exceed it.
  std::int64_t max_shared_per_block = 48 * 1024;
  // What a block may use after opting in to more dynamic shared memory; informational, the
  // space checks against max_shared_per_block because the runner does not opt in.
  std::int64_t max_shared_per_block_optin = 48 * 1024;
  int sm_count = 132;
  int warp_size = 32;

  // The table entry for "sm_90", "90" or "9.0"; throws invalid_configuration listing the
  // known architectures.
  [[nodiscard]] static device_limits for_arch(const std::string &arch);
  // The architectures in the table, as "sm_XX".
  [[nodiscard]] static std::vector<std::string> known_archs();

  friend bool operator==(const device_limits &, const device_limits &) = default;
};

} // namespace reducetune
