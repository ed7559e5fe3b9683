// CRC32C through ISA-L, fed in pieces because crc32_iscsi takes an int length.
#include "checksum.h"

#include <isa-l/crc.h>

#include <climits>

namespace sz {

uint32_t crc32c(const void* data, size_t len) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  unsigned int crc = 0xFFFFFFFFu;
  constexpr size_t kPiece = size_t(1) << 30;
  while (len > 0) {
    size_t n = len < kPiece ? len : kPiece;
    crc = crc32_iscsi(const_cast<unsigned char*>(p), static_cast<int>(n), crc);
    p += n;
    len -= n;
  }
  return crc ^ 0xFFFFFFFFu;
}

}  // namespace sz
