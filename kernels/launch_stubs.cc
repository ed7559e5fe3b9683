// The GPU entry points in a build without CUDA (make CUDA=0): every call says so.
#include "base/checks.h"

namespace {
szResult_t noCuda(const char* fn) {
  return szSetError(szUnhandledCudaError, "%s: SplitZip was built without CUDA", fn);
}
}  // namespace

extern "C" szResult_t szEncodeTempSize(size_t, szDataType_t, size_t*) { return noCuda(__func__); }
extern "C" szResult_t szEncodeAsync(const void*, size_t, szDataType_t, const szCodebook_t*, int,
                                    void*, size_t, uint64_t*, void*, size_t, cudaStream_t) {
  return noCuda(__func__);
}
extern "C" szResult_t szDecodeAsync(const void*, size_t, void*, size_t, int*, cudaStream_t) {
  return noCuda(__func__);
}
extern "C" szResult_t szHistogramAsync(const void*, size_t, szDataType_t, unsigned long long*,
                                       cudaStream_t) {
  return noCuda(__func__);
}

// The batched calls check their arguments in any build (kernels/batch_api.cc); their launch fails.
#include "kernels/batch.h"

szResult_t sz::launchEncodeBatch(const EncodeBatch&, cudaStream_t) { return noCuda("szEncodeBatchAsync"); }
szResult_t sz::launchDecodeBatch(const DecodeBatch&, cudaStream_t) { return noCuda("szDecodeBatchAsync"); }

#include "kernels/device_props.h"

szResult_t sz::currentDeviceSms(int*) { return noCuda(__func__); }
szResult_t sz::currentDeviceDramBps(double*) { return noCuda(__func__); }
