// What a library call must know when its stream may be capturing a CUDA graph
// (torch.cuda.graph, cudaStreamBeginCapture): which capture sequence it is in, and a way to
// prepare resources without breaking the capture.
#pragma once

#include <cuda_runtime_api.h>

namespace reducetune {

// The capture sequence `stream` is recording into, or 0 when it is not capturing. Each
// capture sequence has its own id (CUDA never reuses one in a process).
[[nodiscard]] unsigned long long capture_id(cudaStream_t stream);

// While alive, this thread may make calls that a capture in "global" or "thread-local" mode
// prohibits (cudaMalloc, module loads, cudaDeviceSetLimit): calls that enqueue nothing on the
// capturing stream and so cannot corrupt the graph. Restores the thread's mode when it ends.
class relaxed_capture_mode {
public:
  relaxed_capture_mode();
  ~relaxed_capture_mode();
  relaxed_capture_mode(const relaxed_capture_mode &) = delete;
  relaxed_capture_mode &operator=(const relaxed_capture_mode &) = delete;

private:
  cudaStreamCaptureMode m_previous = cudaStreamCaptureModeRelaxed;
};

} // namespace reducetune
