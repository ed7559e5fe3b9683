// CRC32C (Castagnoli) of frame headers and payloads, computed by ISA-L's crc32_iscsi.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sz {

// Standard CRC32C of `len` bytes (check value of "123456789" is 0xE3069283).
uint32_t crc32c(const void* data, size_t len);

}  // namespace sz
