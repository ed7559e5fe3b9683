// The GPU encoder's FP16 and FP8 E4M3 frames (format version 2, 3- or 4-bit exponent codes):
// szEncodeAsync's kernels (kernels/encode_grid.cuh) for these two types, in a translation unit
// of their own so the version 1 types' build does not grow and the two compile side by side.
#include "encode_grid.cuh"

namespace sz {

// E4M3 with 4-bit codes has no kernels: 4 symbol bits and 4 code bits are the element's 8, so
// the sections alone reach the raw size and szEncodeAsync stores every such frame raw (its
// forceRaw), as szEncode does.
szResult_t launchNarrowEncode(int type, uint32_t codeBits, const ChunkParams* c, const PlaceParams& p,
                              uint64_t placeBlocks, bool aligned, cudaStream_t stream) {
  if (type == szFloat16)
    return codeBits == 3 ? launchType<szFloat16, 3>(c, p, placeBlocks, aligned, stream)
                         : launchType<szFloat16, 4>(c, p, placeBlocks, aligned, stream);
  if (type == szFloat8e4m3 && codeBits == 3) return launchType<szFloat8e4m3, 3>(c, p, placeBlocks, aligned, stream);
  return szSetError(szInternalError, "launchNarrowEncode: no kernels for %s with %u-bit codes (stored raw)",
                    szTypeName(type), codeBits);
}

}  // namespace sz
