// szEncodeBatchAsync / szDecodeBatchAsync (include/splitzip.h): the checks of everything the
// host can see (types, flags, the arrays' presence, the batch's codebook), then one launch
// (kernels/batch.h). Plain C++, built with and without CUDA: in a build without CUDA the
// launchers fail (src/proto/device_stub.cc), so bad arguments are reported the same everywhere.
#include <cstring>
#include <initializer_list>
#include <utility>

#include "base/checks.h"
#include "codec/dtype.h"
#include "kernels/batch.h"

using namespace sz;

namespace {

// The name of the first NULL array, or nullptr when all are there.
const char* firstNull(std::initializer_list<std::pair<const void*, const char*>> arrays) {
  for (const auto& a : arrays)
    if (a.first == nullptr) return a.second;
  return nullptr;
}

}  // namespace

extern "C" szResult_t szEncodeBatchAsync(const void* const* d_ins, const size_t* d_counts, size_t batchSize,
                                         szDataType_t type, const szCodebook_t* codebook, int flags,
                                         void* const* d_outs, const size_t* d_outCapacities, size_t* d_outBytes,
                                         szResult_t* d_statuses, cudaStream_t stream) {
  const TypeTraits t = typeTraits(type);
  if (t.elemBytes == 0)
    return szSetError(szInvalidArgument, "szEncodeBatchAsync: invalid data type %d (szDataType_t has 0..%d)",
                      (int)type, szNumTypes - 1);
  if (flags & SZ_ENCODE_CRC)
    return szSetError(szInvalidUsage, "szEncodeBatchAsync: CRC frames are encoded on the host only");
  if (flags & SZ_ENCODE_CALIBRATE)
    return szSetError(szInvalidUsage, "szEncodeBatchAsync: one codebook serves the batch: calibrate with "
                                      "szHistogramAsync and szCodebookFromHistogram, then pass it");
  if (flags != 0) return szSetError(szInvalidArgument, "szEncodeBatchAsync: unknown flags 0x%x", flags);
  const char* missing = firstNull({{d_ins, "d_ins"}, {d_counts, "d_counts"}, {d_outs, "d_outs"},
                                   {d_outCapacities, "d_outCapacities"}, {d_outBytes, "d_outBytes"},
                                   {d_statuses, "d_statuses"}});
  if (batchSize > 0 && missing != nullptr)
    return szSetError(szInvalidArgument, "szEncodeBatchAsync: %s is NULL (batch of %zu)", missing, batchSize);
  EncodeBatch b{d_ins, d_counts, d_outs, d_outCapacities, d_outBytes, d_statuses, batchSize, type, {}, 0};
  if (t.expBits != 0) {  // a caller's codebook is checked even if every frame goes raw
    szCodebook_t cb{};
    if (codebook != nullptr) cb = *codebook;
    else SZCHECK(szCodebookDefault(type, &cb));
    SZCHECK(szCodebookValidate(&cb));
    if (cb.type != type)
      return szSetError(szInvalidArgument, "szEncodeBatchAsync: codebook is for %s, data is %s", szTypeName(cb.type),
                        szTypeName(type));
    memcpy(b.codebook, cb.exponents, sizeof(b.codebook));
    b.used = cb.used;
  }
  return launchEncodeBatch(b, stream);
}

extern "C" szResult_t szDecodeBatchAsync(const void* const* d_frames, const size_t* d_frameBytes, size_t batchSize,
                                         void* const* d_outs, const size_t* d_outCapacities, size_t* d_outCounts,
                                         szResult_t* d_statuses, cudaStream_t stream) {
  const char* missing = firstNull({{d_frames, "d_frames"}, {d_frameBytes, "d_frameBytes"}, {d_outs, "d_outs"},
                                   {d_outCapacities, "d_outCapacities"}, {d_statuses, "d_statuses"}});
  if (batchSize > 0 && missing != nullptr)
    return szSetError(szInvalidArgument, "szDecodeBatchAsync: %s is NULL (batch of %zu)", missing, batchSize);
  return launchDecodeBatch(DecodeBatch{d_frames, d_frameBytes, d_outs, d_outCapacities, d_outCounts, d_statuses, batchSize},
                           stream);
}
