#include "reducetune/baseline/streaming_reader.hpp"

#include "reducetune/errors.hpp"

#include <string>

namespace reducetune {

std::size_t read_shape_index(std::string_view name) {
  const auto &shapes = read_shapes();
  std::string known;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (name == shapes[i].name) return i;
    known += (i ? ", '" : "'") + std::string(shapes[i].name) + "'";
  }
  throw invalid_configuration("no streaming read shape named '" + std::string(name) +
                              "' (the shapes: " + known + ")");
}

streaming_reader::streaming_reader(const device_info &device)
    : m_device(device), m_sink(sizeof(unsigned)), m_grids(read_shapes().size(), 0) {
  m_sink.zero();
}

unsigned streaming_reader::grid(std::size_t shape) {
  unsigned &g = m_grids.at(shape);
  if (g == 0) g = streaming_read_grid(read_shapes()[shape], m_device);
  return g;
}

void streaming_reader::read(std::size_t shape, const void *data, std::uint64_t bytes,
                            cudaStream_t s) {
  enqueue_streaming_read(read_shapes()[shape], grid(shape), data, bytes, m_sink.as<unsigned>(), s);
}

} // namespace reducetune
