#include "reducetune/cuda/stream_capture.hpp"

#include "reducetune/errors.hpp"

namespace reducetune {

unsigned long long capture_id(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  RT_CUDA_CALL(cudaStreamGetCaptureInfo(stream, &status, &id));
  if (status == cudaStreamCaptureStatusInvalidated)
    throw launch_error("the stream's CUDA-graph capture was already invalidated by an earlier "
                     "call; end the capture and capture again");
  return status == cudaStreamCaptureStatusActive ? id : 0;
}

relaxed_capture_mode::relaxed_capture_mode() {
  m_previous = cudaStreamCaptureModeRelaxed;
  RT_CUDA_CALL(cudaThreadExchangeStreamCaptureMode(&m_previous));
}

relaxed_capture_mode::~relaxed_capture_mode() {
  cudaStreamCaptureMode mode = m_previous; // destructors never throw: a failure is ignored
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
}

} // namespace reducetune
