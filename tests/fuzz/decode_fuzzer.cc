// libFuzzer target for the host decoder: any bytes go to szFrameGetInfo and szDecode. `make fuzz`
// builds it with ASan and UBSan, so a read or write outside the frame or the output is a crash.
// The output is a heap block of exactly info.count elements, so a write past it is caught too.
// Beyond "no crash" it checks that the two calls agree, that a too-small output is refused, and
// that the decoded elements survive a re-encode / decode round trip.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "splitzip.h"

namespace {

void require(bool ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "decode_fuzzer: %s (%s)\n", what, szGetLastError(nullptr));
    abort();
  }
}

// Encodes `n` elements of `type` with the codebook a frame carried and decodes them again.
void requireRoundTrip(const uint8_t* elems, size_t n, szDataType_t type, const szFrameInfo_t& info) {
  const szCodebook_t* cb = (!info.raw && szTypeIsCompressible(type)) ? &info.codebook : nullptr;
  size_t max = 0, frameBytes = 0;
  require(szEncodeMaxSize(n, type, &max) == szSuccess, "szEncodeMaxSize of a decoded frame");
  std::vector<uint8_t> frame(max);
  require(szEncode(elems, n, type, cb, info.crc ? SZ_ENCODE_CRC : 0, frame.data(), max, &frameBytes) ==
              szSuccess,
          "re-encoding decoded elements");
  const size_t bytes = n * szTypeSize(type);
  std::unique_ptr<uint8_t[]> again(new uint8_t[bytes + 1]);
  require(szDecode(frame.data(), frameBytes, again.get(), bytes, nullptr, nullptr) == szSuccess,
          "decoding a re-encoded frame");
  require(memcmp(again.get(), elems, bytes) == 0, "round trip changed the elements");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  szFrameInfo_t info;
  szResult_t res = szFrameGetInfo(data, size, &info);
  if (res != szSuccess) {
    require(res == szCorruptFrame, "szFrameGetInfo failed with an unexpected code");
    uint8_t small[64];
    require(szDecode(data, size, small, sizeof(small), nullptr, nullptr) == szCorruptFrame,
            "szDecode disagrees with szFrameGetInfo about a bad header");
    return 0;
  }
  require(info.frameBytes <= size, "frame larger than the bytes given");
  const size_t need = info.count * szTypeSize(info.type);
  // A valid header bounds the output by the frame size (a raw frame holds every byte, a
  // compressed one at least 3 bits per element), so this stays small for fuzzer-sized inputs.
  require(need <= 8 * size, "frame claims more output than it can encode");
  std::unique_ptr<uint8_t[]> out(new uint8_t[need]);
  if (need > 0)
    require(szDecode(data, size, out.get(), need - 1, nullptr, nullptr) != szSuccess,
            "szDecode accepted an output one byte too small");
  size_t count = 0;
  szDataType_t type = szNumTypes;
  res = szDecode(data, size, need ? out.get() : nullptr, need, &count, &type);
  if (res != szSuccess) {
    require(res == szCorruptFrame, "szDecode failed with an unexpected code");
    return 0;
  }
  require(count == info.count && type == info.type, "szDecode and szFrameGetInfo disagree");
  requireRoundTrip(out.get(), count, type, info);
  return 0;
}
