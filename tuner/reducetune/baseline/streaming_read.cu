#include "reducetune/baseline/streaming_read.hpp"

#include "reducetune/errors.hpp"

#include <array>
#include <string>

namespace reducetune {
namespace {

__device__ __forceinline__ unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

// The rare value that keeps the loads alive: the compiler cannot prove it is never reached.
__device__ __forceinline__ void keep(unsigned acc, unsigned *sink) {
  if (acc == 0x9e3779b9u) *sink = acc;
}

template <unsigned Unroll>
__global__ void grid_stride_read(const uint4 *__restrict__ data, unsigned long long count,
                                 unsigned *sink) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + (Unroll - 1) * stride < count; i += Unroll * stride) {
    uint4 v[Unroll];
#pragma unroll
    for (unsigned u = 0; u < Unroll; ++u) v[u] = __ldg(data + i + u * stride);
#pragma unroll
    for (unsigned u = 0; u < Unroll; ++u) acc ^= fold(v[u]);
  }
  for (; i < count; i += stride) acc ^= fold(__ldg(data + i));
  keep(acc, sink);
}

// Tiles of Block × Unroll vectors; thread t of a tile loads t, t + Block, …, so every load
// instruction of a warp reads 512 contiguous bytes and a block's tile is one contiguous run.
template <unsigned Block, unsigned Unroll>
__global__ void __launch_bounds__(Block)
    even_share_read(const uint4 *__restrict__ data, unsigned long long count, unsigned *sink) {
  constexpr unsigned long long tile = static_cast<unsigned long long>(Block) * Unroll;
  const unsigned long long tiles = (count + tile - 1) / tile;
  const unsigned long long share = (tiles + gridDim.x - 1) / gridDim.x;
  const unsigned long long first = blockIdx.x * share * tile;
  const unsigned long long last = min(count, first + share * tile);
  unsigned acc = 0;
  unsigned long long base = first;
  for (; base + tile <= last; base += tile) {
    uint4 v[Unroll];
#pragma unroll
    for (unsigned u = 0; u < Unroll; ++u) v[u] = __ldg(data + base + u * Block + threadIdx.x);
#pragma unroll
    for (unsigned u = 0; u < Unroll; ++u) acc ^= fold(v[u]);
  }
  for (unsigned long long i = base + threadIdx.x; i < last; i += Block) acc ^= fold(__ldg(data + i));
  keep(acc, sink);
}

// Tile t of Block x Unroll vectors (a block a tile; grid-stride over tiles beyond the grid)
// writes out's words [t * words / tiles, (t + 1) * words / tiles): the same proportion of
// output to input all along, each word its thread's xor of its loads (threads past the tile's
// loads write their words too: the bytes written, not their values, are the point).
template <unsigned Block, unsigned Unroll>
__global__ void __launch_bounds__(Block)
    mixed_read(const uint4 *__restrict__ data, unsigned long long count, unsigned *out,
               unsigned long long words) {
  constexpr unsigned long long tile = static_cast<unsigned long long>(Block) * Unroll;
  const unsigned long long tiles = (count + tile - 1) / tile;
  const unsigned long long per = words / tiles, extra = words % tiles; // no 64-bit overflow
  for (unsigned long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const unsigned long long base = t * tile;
    unsigned acc = 0;
    if (base + tile <= count) {
      uint4 v[Unroll];
#pragma unroll
      for (unsigned u = 0; u < Unroll; ++u) v[u] = __ldg(data + base + u * Block + threadIdx.x);
#pragma unroll
      for (unsigned u = 0; u < Unroll; ++u) acc ^= fold(v[u]);
    } else {
      for (unsigned long long i = base + threadIdx.x; i < count; i += Block)
        acc ^= fold(__ldg(data + i));
    }
    const unsigned long long w0 = t * per + t * extra / tiles;
    const unsigned long long w1 = (t + 1) * per + (t + 1) * extra / tiles;
    for (unsigned long long w = w0 + threadIdx.x; w < w1; w += Block) out[w] = acc;
  }
}

constexpr unsigned mixed_block = 512, mixed_unroll = 4; // mix_probe.cu's fastest on two H200s
constexpr unsigned long long mixed_max_grid = 1ull << 20;

using kernel_t = void (*)(const uint4 *, unsigned long long, unsigned *);

struct compiled_shape {
  read_shape shape;
  kernel_t kernel;
};

// The first six were the ceiling's shapes until 2026-11-27. On fast H200 hosts CUB's
// DeviceReduce then read 4 GB 1-2 % faster than the best of them in the tuner's protocol (its
// L2 dirty from the flush): CUB reads even shares over 5 waves of 256 x 16 floats
// (docs/results/h200_2026-11-27_ceiling_shapes). The last four add its geometry and the
// 512- and 1024-thread blocks that a read probe found fastest on an idle H200
// (docs/results/h200_2026-11-27_axis_bf16_and_load_hints/peak_probe_30.txt).
constexpr std::array<compiled_shape, 10> compiled{{
    {{read_layout::grid_stride, 256, 4, 1, "grid-stride 256x4"}, grid_stride_read<4>},
    {{read_layout::grid_stride, 256, 8, 1, "grid-stride 256x8"}, grid_stride_read<8>},
    {{read_layout::even_share, 256, 4, 1, "even-share 256x4"}, even_share_read<256, 4>},
    {{read_layout::even_share, 256, 8, 1, "even-share 256x8"}, even_share_read<256, 8>},
    {{read_layout::even_share, 512, 8, 1, "even-share 512x8"}, even_share_read<512, 8>},
    {{read_layout::even_share, 256, 16, 1, "even-share 256x16"}, even_share_read<256, 16>},
    {{read_layout::even_share, 256, 4, 5, "even-share 256x4 x5 waves"}, even_share_read<256, 4>},
    {{read_layout::even_share, 512, 4, 1, "even-share 512x4"}, even_share_read<512, 4>},
    {{read_layout::even_share, 1024, 4, 1, "even-share 1024x4"}, even_share_read<1024, 4>},
    {{read_layout::grid_stride, 1024, 4, 4, "grid-stride 1024x4 x4 waves"}, grid_stride_read<4>},
}};

kernel_t kernel_of(const read_shape &shape) {
  for (const auto &c : compiled)
    if (c.shape.layout == shape.layout && c.shape.block == shape.block &&
        c.shape.unroll == shape.unroll)
      return c.kernel;
  throw invalid_configuration("no streaming read compiled for this shape");
}

} // namespace

void require_streaming_mixed(const void *data, std::uint64_t bytes, const void *out,
                             std::uint64_t out_bytes) {
  require_streaming_read(data, bytes);
  if (reinterpret_cast<std::uintptr_t>(out) % 4 != 0)
    throw invalid_configuration("the mixed stream writes 4-byte words: its output must be "
                                "4-byte aligned");
  if (out_bytes > bytes)
    throw invalid_configuration("the mixed stream writes at most what it reads, not " +
                                std::to_string(out_bytes) + " bytes of " + std::to_string(bytes));
}

void enqueue_streaming_mixed(const void *data, std::uint64_t bytes, void *out,
                             std::uint64_t out_bytes, cudaStream_t s) {
  require_streaming_mixed(data, bytes, out, out_bytes);
  const unsigned long long count = bytes / 16, tile = mixed_block * mixed_unroll;
  const unsigned long long tiles = (count + tile - 1) / tile;
  if (tiles == 0) return;
  const auto grid = static_cast<unsigned>(tiles < mixed_max_grid ? tiles : mixed_max_grid);
  mixed_read<mixed_block, mixed_unroll><<<grid, mixed_block, 0, s>>>(
      static_cast<const uint4 *>(data), count, static_cast<unsigned *>(out), out_bytes / 4);
  RT_CUDA_CALL(cudaGetLastError());
}

const std::vector<read_shape> &read_shapes() {
  static const std::vector<read_shape> shapes = [] {
    std::vector<read_shape> s;
    for (const auto &c : compiled) s.push_back(c.shape);
    return s;
  }();
  return shapes;
}

// Waves of as many blocks as are resident at once: at one wave the even share gives every block
// one long run.
unsigned streaming_read_grid(const read_shape &shape, const device_info &device) {
  int per_sm = 0;
  RT_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_of(shape),
                                                             static_cast<int>(shape.block), 0));
  return static_cast<unsigned>(device.sm_count) * static_cast<unsigned>(per_sm > 0 ? per_sm : 1) *
         shape.waves;
}

void require_streaming_read(const void *data, std::uint64_t bytes) {
  if (bytes % 16 != 0)
    throw invalid_configuration("a streaming read needs a multiple of 16 bytes, not " +
                                std::to_string(bytes));
  if (reinterpret_cast<std::uintptr_t>(data) % 16 != 0)
    throw invalid_configuration("a streaming read needs a 16-byte aligned pointer (its loads "
                                "are 16 bytes wide)");
}

void enqueue_streaming_read(const read_shape &shape, unsigned grid, const void *data,
                            std::uint64_t bytes, unsigned *sink, cudaStream_t s) {
  require_streaming_read(data, bytes);
  kernel_of(shape)<<<grid, shape.block, 0, s>>>(static_cast<const uint4 *>(data), bytes / 16,
                                                sink);
  RT_CUDA_CALL(cudaGetLastError());
}

} // namespace reducetune
