#include "reducetune/cuda/device_info.hpp"

#include "reducetune/errors.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>

namespace reducetune {
namespace {

int attribute(cudaDeviceAttr what, int ordinal) {
  int value = 0;
  RT_CUDA_CALL(cudaDeviceGetAttribute(&value, what, ordinal));
  return value;
}

std::string format_uuid(const cudaUUID_t &uuid) {
  const auto *b = reinterpret_cast<const unsigned char *>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

} // namespace

double theoretical_peak_bytes_per_s(std::uint64_t memory_clock_khz,
                                    std::uint64_t bus_width_bits) noexcept {
  return 2.0 * static_cast<double>(memory_clock_khz) * 1000.0 *
         static_cast<double>(bus_width_bits) / 8.0;
}

double device_info::peak_bytes_per_s() const noexcept {
  return theoretical_peak_bytes_per_s(memory_clock_khz, static_cast<std::uint64_t>(bus_width_bits));
}

device_info query_device(int ordinal) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    throw device_error(std::string{"no usable CUDA device: "} +
                       (status != cudaSuccess ? cudaGetErrorString(status) : "0 devices"));
  }
  if (ordinal < 0 || ordinal >= count)
    throw device_error("device " + std::to_string(ordinal) + " does not exist (" +
                       std::to_string(count) + " devices)");
  device_info d;
  d.ordinal = ordinal;
  cudaDeviceProp prop{};
  RT_CUDA_CALL(cudaGetDeviceProperties(&prop, ordinal));
  d.name = prop.name;
  d.uuid = format_uuid(prop.uuid);
  d.global_memory_bytes = prop.totalGlobalMem;
  d.cc_major = attribute(cudaDevAttrComputeCapabilityMajor, ordinal);
  d.cc_minor = attribute(cudaDevAttrComputeCapabilityMinor, ordinal);
  d.sm_count = attribute(cudaDevAttrMultiProcessorCount, ordinal);
  d.l2_bytes = static_cast<std::uint64_t>(attribute(cudaDevAttrL2CacheSize, ordinal));
  d.bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  d.memory_clock_khz = static_cast<std::uint64_t>(attribute(cudaDevAttrMemoryClockRate, ordinal));
  d.max_threads_per_block = attribute(cudaDevAttrMaxThreadsPerBlock, ordinal);
  d.max_shared_per_block =
      static_cast<std::uint64_t>(attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal));
  RT_CUDA_CALL(cudaDriverGetVersion(&d.driver_version));
  RT_CUDA_CALL(cudaRuntimeGetVersion(&d.runtime_version));
  return d;
}

} // namespace reducetune
