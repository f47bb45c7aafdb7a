// The kernel of launch_probe.cu, compiled twice: by nvcc into the probe (as CUB's kernels are
// compiled into an application) and by NVRTC at run time, loaded with cuModuleLoadData (as
// reducetune loads its points). One block of 256 threads sums n4 float4 (4096 floats: the
// float32 sum unit at 2^12 whose best point stays 0.96-0.98 x CUB in the tuner's protocol).
extern "C" __global__ void __launch_bounds__(256)
    probe_sum(const float4 *__restrict__ in, float *out, unsigned long long n4) {
  float acc = 0.f;
  for (unsigned long long i = threadIdx.x; i < n4; i += 256) {
    const float4 v = in[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  __shared__ float s[8];
  if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < 8 ? s[threadIdx.x] : 0.f;
    for (int o = 4; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) *out = v;
  }
}
