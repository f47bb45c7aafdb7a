#include "reducetune/measure/evaluate.hpp"

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/measure/bandwidth.hpp"
#include "reducetune/measure/launch_sequence.hpp"
#include "reducetune/measure/sampler.hpp"

#include <vector>

namespace reducetune {
namespace {

// Runs the sequence once and verifies its result against the host reference.
verdict run_and_verify(launch_sequence &seq, stream &s, const workload &w,
                       const std::vector<unsigned char> &host, const evaluate_options &options) {
  seq.enqueue(s.get());
  s.synchronize();
  std::vector<unsigned char> got(size_of(w.type));
  RT_CUDA_CALL(cudaMemcpy(got.data(), seq.result(), got.size(), cudaMemcpyDeviceToHost));
  return verify(w.type, w.op, host.data(), w.n, got.data(), options.tolerance);
}

evaluation measure(const compiled_program &program, const launch_plan &plan, const workload &w,
                   const device_info &device, const evaluate_options &options) {
  const std::vector<unsigned char> host = generate_bytes(w.type, w.pattern, w.op, w.n, w.seed);
  const std::size_t elem = size_of(w.type);
  device_buffer input((w.n + w.offset_elements) * elem);
  input.upload(host.data(), host.size(), w.offset_elements * elem);
  const void *in = static_cast<const char *>(input.data()) + w.offset_elements * elem;

  const loaded_module module(program);
  launch_sequence seq(module, plan, w.type, in, w.n);
  stream s;

  measurement m;
  m.bytes_read = w.bytes_read();
  m.launches = seq.launches();
  m.check = run_and_verify(seq, s, w, host, options); // also the warm-up run
  if (!m.check.ok) return failure{failure_kind::wrong_result, m.check.reason};

  l2_flush flush(device.l2_bytes);
  const auto enqueue = [&](cudaStream_t st) { seq.enqueue(st); };
  m.cold = sample(enqueue, s.get(), &flush, options.cold_rule);
  if (options.hot) m.hot = sample(enqueue, s.get(), nullptr, options.hot_rule);

  // Once more after all samples: a racy variant may be right once and wrong later.
  const verdict again = run_and_verify(seq, s, w, host, options);
  if (!again.ok)
    return failure{failure_kind::wrong_result, "after sampling: " + again.reason};

  m.bytes_per_s = bandwidth_bytes_per_s(m.bytes_read, m.cold.stats.median);
  m.percent_of_peak = percent_of(m.bytes_per_s, device.peak_bytes_per_s());
  m.percent_of_ceiling = percent_of(m.bytes_per_s, options.ceiling_bytes_per_s);
  return m;
}

} // namespace

evaluation evaluate(const compiled_program &program, const launch_plan &plan, const workload &w,
                    const device_info &device, const evaluate_options &options) {
  try {
    return measure(program, plan, w, device, options);
  } catch (const invalid_configuration &e) {
    return failure{failure_kind::invalid_configuration, e.what()};
  } catch (const device_error &e) {
    return failure{failure_kind::device_error, e.what()};
  } catch (const launch_error &e) {
    return failure{failure_kind::launch_error, e.what()};
  }
}

} // namespace reducetune
