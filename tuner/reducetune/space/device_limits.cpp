#include "reducetune/space/device_limits.hpp"

#include "reducetune/errors.hpp"

#include <algorithm>

namespace reducetune {

namespace {

// Sources:
// - threads per block, warp size, 48 KiB default and the opt-in shared memory per block: CUDA C++
//   Programming Guide, "Technical Specifications per Compute Capability" (CUDA 12.x):
//   opt-in 163 KiB (8.0), 99 KiB (8.6, 8.9, 12.0), 227 KiB (9.0, 10.0).
// - SM counts are those of one representative part per architecture, from NVIDIA's product
//   whitepapers: A100 (108), RTX 3090 (82), RTX 4090 (128), H100 SXM5 (132), B200 (148),
//   RTX 5090 (170). Another part of the same architecture differs (A10: 72, L4: 58, H100 PCIe:
//   114); detect the device when there is one.
struct arch_row {
  int arch;
  int sm_count;
  int optin_kib;
};
constexpr arch_row table[] = {
    {80, 108, 163}, {86, 82, 99}, {89, 128, 99}, {90, 132, 227}, {100, 148, 227}, {120, 170, 99},
};

int parse_arch(const std::string &text) {
  std::string digits;
  for (char c : text.rfind("sm_", 0) == 0 ? text.substr(3) : text)
    if (c != '.')
      digits += c;
  if (digits.empty() || digits.size() > 4 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoi(digits);
}

} // namespace

device_limits device_limits::for_arch(const std::string &arch) {
  const int cc = parse_arch(arch);
  for (const auto &row : table)
    if (row.arch == cc) {
      device_limits d;
      d.arch = row.arch;
      d.max_threads_per_block = 1024;
      d.max_shared_per_block = 48 * 1024;
      d.max_shared_per_block_optin = std::int64_t{row.optin_kib} * 1024;
      d.sm_count = row.sm_count;
      d.warp_size = 32;
      return d;
    }
  std::string known;
  for (const auto &a : known_archs())
    known += (known.empty() ? "" : ", ") + a;
  throw invalid_configuration("unknown architecture '" + arch + "' (known: " + known + ")");
}

std::vector<std::string> device_limits::known_archs() {
  std::vector<std::string> out;
  for (const auto &row : table)
    out.push_back("sm_" + std::to_string(row.arch));
  return out;
}

} // namespace reducetune
