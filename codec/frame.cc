// Words for the header validation errors of frame.h.
#include "frame.h"

namespace sz {

const char* headerErrorString(HeaderError e) {
  switch (e) {
    case kHeaderOk: return "valid";
    case kHeaderTruncated: return "frame shorter than its 96-byte header";
    case kHeaderMagic: return "bad frame magic (not a SplitZip frame)";
    case kHeaderReserved: return "frame reserved fields are not zero";
    case kHeaderVersion: return "unsupported frame version (this library reads versions 1 and 2)";
    case kHeaderFlags: return "frame has unknown flags";
    case kHeaderType: return "frame has an invalid data type";
    case kHeaderChunk: return "frame chunk size is not 1024";
    case kHeaderCountOverflow: return "frame element count overflows the size arithmetic";
    case kHeaderRawFields: return "raw frame with non-zero section fields";
    case kHeaderRawType: return "compressed frame of a type its version stores raw only";
    case kHeaderSections: return "frame section sizes disagree with its element count";
    case kHeaderEscapeCount: return "frame escape count is inconsistent";
    case kHeaderCodebook: return "frame codebook is invalid (used, range or duplicates)";
    case kHeaderFrameTruncated: return "frame truncated: sections extend past the bytes available";
    case kHeaderCodeBits: return "frame code width is not 3 or 4 bits";
  }
  return "unknown header error";
}

}  // namespace sz
