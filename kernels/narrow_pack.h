// The bit packing of the GPU codec's FP16 and FP8 E4M3 lanes (docs/FORMAT.md §Sections, §Code
// width), as shifts, masks and byte permutes compiled for the host and the device (bytePerm:
// CUDA's __byte_perm on the device, its emulation on the host): the kernels
// (kernels/encode_lanes.cuh, decode_lanes.cuh) call these, and tests/codec_narrow_pack_test.cc
// runs the same functions on the host lane by lane against the CPU codec's frames, since a
// lane's section bytes are a pure function of its elements.
// A lane holds 16 input bytes: 8 FP16 elements (element k in half k of the four words) or 16
// E4M3 elements (element k in byte k). Its sign-mantissa symbols are 88 bits (11 bytes, FP16) or
// 64 bits (E4M3), its codes 8 or 16 codes at 3 or 4 bits, all LSB first as the sections hold them.
#pragma once

#include <cstdint>

#include "codec/dtype.h"

namespace sz {

// The byte permute of PTX (prmt, CUDA's __byte_perm) on the host and the device: byte k of the
// result is byte (selector nibble k, 0..7) of b:a (a's bytes 0-3, b's 4-7).
SZ_HD uint32_t bytePerm(uint32_t a, uint32_t b, uint32_t sel) {
#ifdef __CUDA_ARCH__
  return __byte_perm(a, b, sel);
#else
  const uint64_t x = a | uint64_t(b) << 32;
  uint32_t r = 0;
  for (uint32_t k = 0; k < 4; ++k) r |= uint32_t(x >> (8 * ((sel >> (4 * k)) & 7)) & 0xFF) << (8 * k);
  return r;
#endif
}

// The two FP16 symbols (sign << 10 | mantissa, 11 bits) of the halves of w as 22 bits: the low
// half's at bit 0, the high half's at bit 11.
SZ_HD uint32_t fp16SymbolPair(uint32_t w) {
  const uint32_t u = (w & 0x03FF03FFu) | ((w >> 5) & 0x04000400u);  // symbols at bits 0 and 16
  return (u & 0x7FFu) | ((u >> 5) & ~0x7FFu);
}

// The 8 FP16 symbols of a lane at bits 11k of sm[0..2] (88 bits: sm[2] holds 24), in 32-bit
// operations: a pair of symbols a word.
SZ_HD void packFp16Symbols(const uint32_t (&v)[4], uint32_t (&sm)[3]) {
  const uint32_t p0 = fp16SymbolPair(v[0]), p1 = fp16SymbolPair(v[1]);
  const uint32_t p2 = fp16SymbolPair(v[2]), p3 = fp16SymbolPair(v[3]);
  sm[0] = p0 | p1 << 22;
  sm[1] = p1 >> 10 | p2 << 12;
  sm[2] = p2 >> 20 | p3 << 2;
}

// The 8 FP16 elements of a lane from its symbols and exponents (ex[j] byte b: element 4j + b).
SZ_HD void joinFp16(const uint32_t (&sm)[3], const uint32_t (&ex)[2], uint32_t (&out)[4]) {
  const uint64_t half[2] = {sm[0] | uint64_t(sm[1] & 0xFFF) << 32, (sm[1] >> 12) | uint64_t(sm[2]) << 20};
  for (uint32_t k = 0; k < 8; ++k) {
    const uint32_t s = uint32_t(half[k / 4] >> (11 * (k % 4))) & 0x7FF;
    const uint32_t e = (ex[k / 4] >> (8 * (k % 4))) & 0x1F;
    const uint32_t h = ((s >> 10) << 15) | (e << 10) | (s & 0x3FF);
    if (k % 2 == 0) out[k / 2] = h;
    else out[k / 2] |= h << 16;
  }
}

// The E4M3 symbols (sign << 3 | mantissa) of the bytes of x in pairs: byte 0 holds those of
// bytes 0 and 1 (low nibble first), byte 2 those of bytes 2 and 3; bytes 1 and 3 are not used.
SZ_HD uint32_t e4m3SymbolPairs(uint32_t x) {
  const uint32_t y = ((x >> 4) & 0x08080808u) | (x & 0x07070707u);  // per byte: the symbol
  return y | (y >> 4);
}

// The 16 E4M3 symbols of a lane, element k in nibble k of the 64 bits sm[0], sm[1].
SZ_HD void packE4m3Symbols(const uint32_t (&v)[4], uint32_t (&sm)[2]) {
  for (uint32_t j = 0; j < 2; ++j) sm[j] = bytePerm(e4m3SymbolPairs(v[2 * j]), e4m3SymbolPairs(v[2 * j + 1]), 0x6420);
}

// The 4 E4M3 bytes of symbols s4 (nibble b: element b) and exponents ex4 (byte b, already
// shifted to bits 3..6 of the byte).
SZ_HD uint32_t joinE4m3x4(uint32_t s4, uint32_t ex4) {
  const uint32_t y = (s4 & 0xF) | ((s4 & 0xF0) << 4) | ((s4 & 0xF00) << 8) | ((s4 & 0xF000) << 12);
  return ((y & 0x08080808u) << 4) | (y & 0x07070707u) | ex4;
}

// 8 code-table entries as the section's 3-bit codes: wa's bytes are elements 0-3's entries,
// wb's 4-7's (a code 0..7, or 0x80 for an escape, which codes as 0); returns 24 bits, element k
// at bit 3k. Even and odd elements are gathered by two byte permutes, so each byte of z holds a
// pair's 6 bits.
SZ_HD uint32_t entriesToCodes3(uint32_t wa, uint32_t wb) {
  const uint32_t a = wa & 0x07070707u, b = wb & 0x07070707u;
  const uint32_t z = bytePerm(a, b, 0x6420) | bytePerm(a, b, 0x7531) << 3;  // byte j: elements 2j, 2j+1
  return (z & 0x3Fu) | ((z >> 2) & 0xFC0u) | ((z >> 4) & 0x3F000u) | ((z >> 6) & 0xFC0000u);
}

// 8 codes of 3 bits (element k at bit 3k) as nibbles, element k in nibble k.
SZ_HD uint32_t codes3ToNibbles(uint32_t c) {
  const uint32_t z = (c & 0x3Fu) | ((c << 2) & 0x3F00u) | ((c << 4) & 0x3F0000u) | ((c << 6) & 0x3F000000u);
  return (z & 0x07070707u) | ((z << 1) & 0x70707070u);
}

// The offset in the code section of element e (a multiple of 8) at kBits-bit codes; 4-bit
// codes keep version 1's e / 2.
template <uint32_t kBits, class T>
SZ_HD T codeByte(T e) {
  if constexpr (kBits == 4) return e / 2;
  else return e * kBits / 8;
}

// A lane's codes as the section holds them (n = 8 or 16 codes at kBits bits) as nibbles,
// element k in nibble k.
template <uint32_t kBits>
SZ_HD uint64_t codesToNibbles(uint64_t codes) {
  if constexpr (kBits == 4) return codes;
  else return codes3ToNibbles(uint32_t(codes) & 0xFFFFFF) | uint64_t(codes3ToNibbles(uint32_t(codes >> 24) & 0xFFFFFF)) << 32;
}

// Lanes whose field of kBytes bytes (3 or 11: FP16's codes and symbols) is not whole words: a
// warp's 32 fields lie back to back from a 4-byte aligned base, lane l's at kBytes * l. Each
// lane stores the aligned words that start inside its field; the last of them runs up to 3
// bytes into the next lane's field, so the lane takes the next lane's first word (`next`).
// Returns the offset of the first such word in the lane's field (`head`, 0..3); word i, at
// head + 4 * i, is written where head + 4 * i < kBytes.
template <uint32_t kBytes, uint32_t kWords>
SZ_HD uint32_t spanWords(const uint32_t (&x)[kWords], uint32_t next, uint32_t lane, uint32_t (&word)[kWords]) {
  static_assert(kBytes >= 3 && kBytes % 4 != 0 && (kBytes + 3) / 4 == kWords, "a field of 3 bytes or more, not whole words");
  constexpr uint32_t q = kBytes / 4, r = kBytes % 4;
  uint32_t z[kWords + 1];  // the field then the next lane's first bytes
  for (uint32_t i = 0; i < kWords; ++i) z[i] = x[i];
  z[q] = (z[q] & ((1u << (8 * r)) - 1)) | next << (8 * r);
  z[q + 1] = next >> (32 - 8 * r);
  const uint32_t head = (4 - (kBytes * lane) % 4) % 4;
  for (uint32_t i = 0; i < kWords; ++i)
    word[i] = head == 0 ? z[i] : (z[i] >> (8 * head)) | (z[i + 1] << (32 - 8 * head));
  return head;
}

// The kBytes bytes of a lane's field (as spanWords lays them out) from the aligned words `w`
// that hold them: w[i] at the field's start rounded down to 4, plus 4 * i; `lead` = the field's
// offset in w[0] (0..3). Words past the field's end may be anything.
template <uint32_t kBytes, uint32_t kWords>
SZ_HD void fieldFromWords(const uint32_t (&w)[kWords + 1], uint32_t lead, uint32_t (&x)[kWords]) {
  for (uint32_t i = 0; i < kWords; ++i) x[i] = lead == 0 ? w[i] : (w[i] >> (8 * lead)) | (w[i + 1] << (32 - 8 * lead));
  if constexpr (kBytes % 4 != 0) x[kWords - 1] &= (1u << (8 * (kBytes % 4))) - 1;
}

}  // namespace sz
