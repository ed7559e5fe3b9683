// smCopyAsync (kernels/sm_copy.h), the pipeline's copy that never uses a copy engine: every
// alignment of destination and source, device and pinned host memory both ways, zero fill,
// checked byte for byte with the bytes around the range untouched.

#include "../../kernels/sm_copy.h"
#include "gpu_test_util.h"

namespace {

// Copies (or zero-fills, src_kind < 0) `n` bytes between buffers at the given misalignments;
// kind 0 device, 1 pinned host. Returns the wrong bytes, guard bytes included.
size_t copyCase(size_t n, size_t dstOff, size_t srcOff, int dstKind, int srcKind) {
  const size_t pad = 32, total = n + 64;
  uint8_t *dst = nullptr, *src = nullptr;
  auto alloc = [&](uint8_t** p, int kind) {
    return kind == 1 ? cudaHostAlloc(p, total, cudaHostAllocMapped) : cudaMalloc(p, total);
  };
  if (alloc(&dst, dstKind) != cudaSuccess || (srcKind >= 0 && alloc(&src, srcKind) != cudaSuccess)) return SIZE_MAX;
  std::vector<uint8_t> in(total), out(total, 0xA5);
  for (size_t i = 0; i < total; ++i) in[i] = uint8_t(i * 131 + 7);
  cudaMemcpy(dst, out.data(), total, cudaMemcpyDefault);
  if (src) cudaMemcpy(src, in.data(), total, cudaMemcpyDefault);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  size_t wrong = 0;
  if (sz::smCopyAsync(dst + pad + dstOff, src ? src + srcOff : nullptr, n, s) != szSuccess ||
      cudaStreamSynchronize(s) != cudaSuccess)
    wrong = SIZE_MAX;
  cudaMemcpy(out.data(), dst, total, cudaMemcpyDefault);
  for (size_t i = 0; i < total && wrong != SIZE_MAX; ++i) {
    bool inside = i >= pad + dstOff && i < pad + dstOff + n;
    uint8_t want = !inside ? 0xA5 : src ? in[i - pad - dstOff + srcOff] : 0;
    wrong += out[i] != want;
  }
  cudaStreamDestroy(s);
  dstKind == 1 ? cudaFreeHost(dst) : cudaFree(dst);
  if (src) srcKind == 1 ? cudaFreeHost(src) : cudaFree(src);
  return wrong;
}

TEST(SmCopy, EveryAlignmentAndSize) {
  SKIP_WITHOUT_GPU();
  for (size_t n : {size_t(0), size_t(1), size_t(15), size_t(16), size_t(17), size_t(100), size_t(4099)})
    for (size_t d = 0; d < 17; d += 3)
      for (size_t s = 0; s < 17; s += 4) EXPECT_EQ(copyCase(n, d, s, 0, 0), 0u) << n << " bytes, offsets " << d << " " << s;
}

TEST(SmCopy, PinnedHostBothWaysAndZeroFill) {
  SKIP_WITHOUT_GPU();
  for (size_t n : {size_t(8), size_t(24), size_t((3 << 20) + 5)}) {
    EXPECT_EQ(copyCase(n, 0, 0, 1, 0), 0u) << "device to pinned, " << n;
    EXPECT_EQ(copyCase(n, 3, 3, 0, 1), 0u) << "pinned to device, " << n;
    EXPECT_EQ(copyCase(n, 5, 2, 1, 0), 0u) << "device to pinned, misaligned apart, " << n;
    EXPECT_EQ(copyCase(n, 1, 0, 0, -1), 0u) << "zero fill, device, " << n;
    EXPECT_EQ(copyCase(n, 0, 0, 1, -1), 0u) << "zero fill, pinned, " << n;
  }
}


// Pieces of every size class (16-byte, 4-byte and byte moves) gathered from device memory into
// pinned memory in one launch, the rest of the destination untouched.
TEST(SmCopy, PiecesInOneLaunch) {
  SKIP_WITHOUT_GPU();
  const size_t total = 4 << 20;  // 3000 pieces of 4745 bytes per 10, plus gaps
  uint8_t *src = nullptr, *dst = nullptr;
  sz::SmCopyPiece* table = nullptr;
  ASSERT_EQ(cudaMalloc(&src, total), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(&dst, total, cudaHostAllocMapped), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(&table, 4096 * sizeof(sz::SmCopyPiece), cudaHostAllocMapped), cudaSuccess);
  std::vector<uint8_t> in(total);
  for (size_t i = 0; i < total; ++i) in[i] = uint8_t(i * 7 + 3);
  cudaMemcpy(src, in.data(), total, cudaMemcpyHostToDevice);
  memset(dst, 0xA5, total);
  std::vector<uint8_t> want(total, 0xA5);
  size_t n = 0, from = 0, to = 0;
  for (uint64_t len : {512u, 64u, 4u, 12u, 1u, 7u, 4096u, 33u, 16u, 0u}) {
    for (int rep = 0; rep < 300; ++rep) {
      table[n] = sz::SmCopyPiece{dst + to, src + from, len};
      memcpy(want.data() + to, in.data() + from, len);
      ++n;
      from += len + (len % 4 ? 1 : 0);
      to += len + 16;
    }
  }
  ASSERT_LT(to, total);
  ASSERT_LT(from, total);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  ASSERT_EQ(sz::smCopyPiecesAsync(table, n, s), szSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  size_t wrong = 0;
  for (size_t i = 0; i < total; ++i) wrong += dst[i] != want[i];
  EXPECT_EQ(wrong, 0u);
  cudaStreamDestroy(s);
  cudaFree(src);
  cudaFreeHost(dst);
  cudaFreeHost(table);
}

}  // namespace
