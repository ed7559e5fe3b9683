// Says once, before any GPU test runs, when there is no GPU: every test then skips, and
// `make gpu-test` would otherwise look like a pass ("PASSED 0 tests").
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>

namespace {

class GpuPresence : public ::testing::Environment {
 public:
  void SetUp() override {
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaSuccess && n > 0) return;
    fprintf(stderr, "splitzip_gpu_tests: SKIPPED: no CUDA GPU visible (%s): every GPU test skips. Run make gpu-test "
            "on a machine with an NVIDIA GPU and driver (tests/gpu/run_all.sh runs the whole GPU suite).\n",
            err == cudaSuccess ? "no device" : cudaGetErrorString(err));
    cudaGetLastError();
  }
};

const ::testing::Environment* const kPresence = ::testing::AddGlobalTestEnvironment(new GpuPresence);

}  // namespace
