// szEncodeBatchAsync / szDecodeBatchAsync (include/splitzip.h): the checks of everything the
// host can see (types, flags, the arrays' presence, the batch's codebooks), then one launch
// (kernels/batch.h). Plain C++, built with and without CUDA: in a build without CUDA the
// launchers fail (kernels/launch_stubs.cc), so bad arguments are reported the same everywhere.
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>

#include "base/checks.h"
#include "codec/code_bits.h"
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
                                         szDataType_t type, const szCodebook_t* codebooks, size_t numCodebooks,
                                         const uint32_t* d_codebookIds, int flags, void* const* d_outs,
                                         const size_t* d_outCapacities, size_t* d_outBytes, szResult_t* d_statuses,
                                         cudaStream_t stream) {
  const TypeTraits t = typeTraits(type);
  if (t.elemBytes == 0)
    return szSetError(szInvalidArgument, "szEncodeBatchAsync: invalid data type %d (szDataType_t has 0..%d)",
                      (int)type, szNumTypes - 1);
  if (flags & SZ_ENCODE_CRC)
    return szSetError(szInvalidUsage, "szEncodeBatchAsync: CRC frames are encoded on the host only");
  if (flags & SZ_ENCODE_CALIBRATE)
    return szSetError(szInvalidUsage, "szEncodeBatchAsync: the batch's codebooks are given: calibrate with "
                                      "szHistogramAsync and szCodebookFromHistogram, then pass them");
  if (flags != 0) return szSetError(szInvalidArgument, "szEncodeBatchAsync: unknown flags 0x%x", flags);
  const char* missing = firstNull({{d_ins, "d_ins"}, {d_counts, "d_counts"}, {d_outs, "d_outs"},
                                   {d_outCapacities, "d_outCapacities"}, {d_outBytes, "d_outBytes"},
                                   {d_statuses, "d_statuses"}});
  if (batchSize > 0 && missing != nullptr)
    return szSetError(szInvalidArgument, "szEncodeBatchAsync: %s is NULL (batch of %zu)", missing, batchSize);
  if (numCodebooks > SZ_BATCH_MAX_CODEBOOKS)
    return szSetError(szInvalidArgument, "szEncodeBatchAsync: %zu codebooks, at most %d (SZ_BATCH_MAX_CODEBOOKS)",
                      numCodebooks, SZ_BATCH_MAX_CODEBOOKS);
  if ((codebooks == nullptr) != (numCodebooks == 0))
    return szSetError(szInvalidArgument, "szEncodeBatchAsync: codebooks is %s with numCodebooks %zu",
                      codebooks == nullptr ? "NULL" : "given", numCodebooks);
  if (numCodebooks == 0 && d_codebookIds != nullptr)
    return szSetError(szInvalidArgument, "szEncodeBatchAsync: d_codebookIds given without codebooks");
  EncodeBatch b{d_ins, d_counts, d_outs, d_outCapacities, d_outBytes, d_statuses, batchSize, type, d_codebookIds, 0, {}, 4};
  if (t.expBits != 0) {  // the caller's codebooks are checked even if every frame goes raw
    szCodebook_t fallback{};
    if (numCodebooks == 0) {
      SZCHECK(szCodebookDefault(type, &fallback));
      codebooks = &fallback;
      numCodebooks = 1;
    }
    for (size_t k = 0; k < numCodebooks; ++k) {
      const szCodebook_t& cb = codebooks[k];
      if (szCodebookValidate(&cb) != szSuccess) {
        const std::string why = szGetLastError(nullptr);  // copied: szSetError rewrites it
        return szSetError(szInvalidArgument, "szEncodeBatchAsync: codebooks[%zu]: %s", k, why.c_str());
      }
      if (cb.type != type)
        return szSetError(szInvalidArgument, "szEncodeBatchAsync: codebooks[%zu] is for %s, data is %s", k,
                          szTypeName(cb.type), szTypeName(type));
      if (deviceCodecType(type) && codebookBits(cb) != 4)
        return szSetError(szInvalidUsage, "szEncodeBatchAsync: codebooks[%zu] has 3-bit codes (format version 2), "
                                          "which the CPU codec encodes for %s; the GPU codec takes 4-bit codebooks of it",
                          k, szTypeName(type));
      // One kernel a batch: FP16's and E4M3's codebooks share a width (3 or 4 bits).
      if (k > 0 && codebookBits(cb) != b.codeBits)
        return szSetError(szInvalidUsage, "szEncodeBatchAsync: codebooks[%zu] has %u-bit codes, codebooks[0] %u-bit: "
                                          "one batch takes one code width", k, codebookBits(cb), b.codeBits);
      b.codeBits = codebookBits(cb);
      memcpy(b.codebooks[k].exponents, cb.exponents, sizeof(b.codebooks[k].exponents));
      b.codebooks[k].used = uint8_t(cb.used);
    }
    b.numCodebooks = uint32_t(numCodebooks);
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
