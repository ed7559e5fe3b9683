// base/auth.h's AES-256-GCM (the slices' protection, SZ_AUTH_DATA and SZ_ENCRYPT): sealing in
// place hides the plaintext and opening restores it bit for bit; one changed bit of ciphertext,
// tag, additional data, nonce or key is refused. GMAC (no plaintext) likewise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/auth.h"

namespace {

struct Sealed {
  uint8_t key[kSzKeyBytes];
  uint8_t nonce[12];
  uint64_t fields[3] = {7, 11, 13};  // stands for a slot header's fields
  std::vector<uint8_t> plain, data;
  uint8_t tag[16];
  explicit Sealed(size_t bytes) : plain(bytes), data(bytes) {
    for (size_t i = 0; i < kSzKeyBytes; i++) key[i] = uint8_t(i * 5 + 1);
    for (size_t i = 0; i < sizeof(nonce); i++) nonce[i] = uint8_t(i + 100);
    for (size_t i = 0; i < bytes; i++) plain[i] = uint8_t(i * 31 + i / 256);
    data = plain;
    szAuthSeal(key, nonce, {{fields, sizeof(fields)}}, data.data(), data.size(), tag);
  }
  bool open() { return szAuthOpen(key, nonce, {{fields, sizeof(fields)}}, data.data(), data.size(), tag); }
};

TEST(AuthSeal, SealingHidesThePlaintextAndOpeningRestoresIt) {
  for (size_t bytes : {size_t(1), size_t(4096), size_t(262144 + 3)}) {
    Sealed s(bytes);
    size_t same = 0;
    for (size_t i = 0; i < bytes; i++) same += s.data[i] == s.plain[i];
    EXPECT_LT(same, bytes / 64 + 2) << bytes << " bytes: the ciphertext keeps the plaintext's bytes";
    ASSERT_TRUE(s.open()) << bytes << " bytes";
    EXPECT_TRUE(s.data == s.plain) << bytes << " bytes: opened bytes differ";
  }
}

TEST(AuthSeal, AnyChangedBitIsRefused) {
  const size_t bytes = 1000;
  auto refused = [&](const char* what, auto change) {
    Sealed s(bytes);
    change(s);
    EXPECT_FALSE(s.open()) << what;
  };
  refused("ciphertext", [](Sealed& s) { s.data[500] ^= 0x10; });
  refused("tag", [](Sealed& s) { s.tag[15] ^= 0x01; });
  refused("additional data", [](Sealed& s) { s.fields[1] ^= 1; });
  refused("nonce", [](Sealed& s) { s.nonce[11] ^= 0x80; });
  refused("key", [](Sealed& s) { s.key[0] ^= 0x02; });
  Sealed s(bytes);
  EXPECT_TRUE(s.open()) << "unchanged";
}

TEST(AuthSeal, GmacTagsTheBytesWithoutEncryptingThem) {
  uint8_t key[kSzKeyBytes] = {1}, nonce[12] = {2}, tag[16];
  std::vector<uint8_t> payload(4096, 0x5A);
  const std::vector<uint8_t> before = payload;
  szAuthSeal(key, nonce, {{payload.data(), payload.size()}}, nullptr, 0, tag);
  EXPECT_TRUE(payload == before);
  EXPECT_TRUE(szAuthOpen(key, nonce, {{payload.data(), payload.size()}}, nullptr, 0, tag));
  payload[4095] ^= 1;
  EXPECT_FALSE(szAuthOpen(key, nonce, {{payload.data(), payload.size()}}, nullptr, 0, tag));
}

}  // namespace
