#include "reducetune/measure/graph_replay.hpp"

#include "reducetune/errors.hpp"

namespace reducetune {
namespace {

cudaGraph_t capture(const graph_replay::runner &run, std::size_t i, cudaStream_t s) {
  RT_CUDA_CALL(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    run(s, i);
  } catch (...) {
    RT_CUDA_CALL_NOEXCEPT(cudaStreamEndCapture(s, &graph)); // leave the stream usable
    if (graph) RT_CUDA_CALL_NOEXCEPT(cudaGraphDestroy(graph));
    throw;
  }
  RT_CUDA_CALL(cudaStreamEndCapture(s, &graph));
  return graph;
}

} // namespace

graph_replay::graph_replay(const runner &run, std::size_t copies, cudaStream_t s) {
  try {
    for (std::size_t i = 0; i < copies; ++i) {
      cudaGraph_t graph = capture(run, i, s);
      cudaGraphExec_t exec = nullptr;
      const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
      RT_CUDA_CALL_NOEXCEPT(cudaGraphDestroy(graph));
      RT_CUDA_CALL(made);
      m_execs.push_back(exec);
    }
  } catch (...) {
    for (auto e : m_execs) RT_CUDA_CALL_NOEXCEPT(cudaGraphExecDestroy(e));
    throw;
  }
}

graph_replay::~graph_replay() {
  for (auto e : m_execs) RT_CUDA_CALL_NOEXCEPT(cudaGraphExecDestroy(e));
}

void graph_replay::launch(cudaStream_t s, std::size_t i) {
  RT_CUDA_CALL(cudaGraphLaunch(m_execs[i], s));
}

} // namespace reducetune
