/* A program outside the tree, as a user writes one: built against an installed SplitZip through
 * pkg-config or CMake (tests/install/install_test.sh). Checks the library's version against the
 * header's and round-trips a buffer through the host codec. */
#include <splitzip.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  int version = 0;
  if (szGetVersion(&version) != szSuccess || version != SZ_VERSION_CODE) {
    fprintf(stderr, "consumer: library version %d, header %d\n", version, SZ_VERSION_CODE);
    return 1;
  }
  uint16_t in[4096], back[4096];
  for (size_t i = 0; i < 4096; ++i) in[i] = (uint16_t)(0x3F80 + (i % 97)); /* BF16 values near 1 */
  static uint8_t frame[SZ_FRAME_HEADER_BYTES + sizeof(in)];
  size_t bytes = 0, count = 0;
  if (szEncode(in, 4096, szBfloat16, NULL, SZ_ENCODE_CRC, frame, sizeof(frame), &bytes) != szSuccess ||
      szDecode(frame, bytes, back, sizeof(back), &count, NULL) != szSuccess || count != 4096 ||
      memcmp(in, back, sizeof(in)) != 0) {
    fprintf(stderr, "consumer: round trip failed: %s\n", szGetLastError(NULL));
    return 1;
  }
  printf("consumer: SplitZip %d.%d.%d, %zu -> %zu bytes, bit-exact\n", version / 10000, version / 100 % 100,
         version % 100, sizeof(in), bytes);
  return 0;
}
