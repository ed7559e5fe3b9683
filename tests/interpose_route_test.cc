// The interposer's routing decision (interpose/route.h): which send or receive goes through
// SplitZip and which to NCCL untouched, and the mapping of SplitZip's results to NCCL's.
#include <gtest/gtest.h>

#include <cstdlib>

#include "interpose/route.h"
#include "splitzip.h"

namespace {

using szi::Decision;
using szi::Policy;
using szi::Route;

Policy autoPolicy() {
  Policy p;
  p.codec = SZ_CODEC_AUTO;
  p.minBytes = 256 << 10;
  return p;
}

Route route(bool interposed, int type, size_t count, int peer = 1, bool capturing = false,
            const Policy& p = autoPolicy()) {
  return szi::decide(interposed, type, count, peer, 0, capturing, p).route;
}

TEST(InterposeRoute, CompressibleLargeMessagesAreIntercepted) {
  EXPECT_EQ(route(true, szBfloat16, 1 << 17), Route::Intercept) << "256 KiB of bf16";
  EXPECT_EQ(route(true, szFloat32, 1 << 16), Route::Intercept);
  EXPECT_EQ(route(true, szFloat8e5m2, 1 << 18), Route::Intercept);
  EXPECT_EQ(route(true, szFloat16, 1 << 17), Route::Intercept) << "FP16: the slot kernels' format version 2";
  EXPECT_EQ(route(true, szFloat8e4m3, 1 << 18), Route::Intercept) << "E4M3: the slot kernels' format version 2";
}

TEST(InterposeRoute, EverythingElseIsForwarded) {
  EXPECT_EQ(route(false, szBfloat16, 1 << 20), Route::Forward) << "a communicator without SplitZip side";
  for (int t : {szInt8, szUint8, szInt32, szUint32, szInt64, szUint64, szFloat64})
    EXPECT_EQ(route(true, t, 1 << 22), Route::Forward) << "type " << t;
  EXPECT_EQ(route(true, -1, 1 << 20), Route::Forward) << "an invalid type goes to NCCL, which reports it";
  EXPECT_EQ(route(true, szNumTypes, 1 << 20), Route::Forward);
  EXPECT_EQ(route(true, szBfloat16, (1 << 17) - 1), Route::Forward) << "one element below SZ_AUTO_MIN_BYTES";
  EXPECT_EQ(route(true, szBfloat16, 0), Route::Forward);
  EXPECT_EQ(route(true, szBfloat16, SIZE_MAX), Route::Forward) << "a byte count that overflows";
  EXPECT_EQ(route(true, szBfloat16, 1 << 20, 0), Route::Forward) << "peer == own rank";
  EXPECT_EQ(route(true, szBfloat16, 1 << 20, 1, true), Route::Forward) << "a capturing stream";
}

TEST(InterposeRoute, CodecModesAndSwitch) {
  Policy on = autoPolicy();
  on.codec = SZ_CODEC_ON;
  on.minBytes = 1;
  EXPECT_EQ(route(true, szBfloat16, 1, 1, false, on), Route::Intercept) << "codec on: any message with an element";
  EXPECT_EQ(route(true, szBfloat16, 0, 1, false, on), Route::Forward);
  Policy off = autoPolicy();
  off.codec = SZ_CODEC_OFF;
  EXPECT_FALSE(szi::interposing(off));
  EXPECT_EQ(route(true, szBfloat16, 1 << 20, 1, false, off), Route::Forward);
  Policy disabled = autoPolicy();
  disabled.enabled = false;
  EXPECT_FALSE(szi::interposing(disabled));
  EXPECT_EQ(route(true, szBfloat16, 1 << 20, 1, false, disabled), Route::Forward);
  Policy invalid = autoPolicy();
  invalid.valid = false;
  EXPECT_EQ(route(true, szBfloat16, 1 << 20, 1, false, invalid), Route::Forward);
  EXPECT_TRUE(szi::interposing(autoPolicy()));
}

TEST(InterposeRoute, DigestSeparatesSettings) {
  Policy a = autoPolicy(), b = autoPolicy(), c = autoPolicy();
  b.minBytes = 1 << 20;
  c.codec = SZ_CODEC_ON;
  EXPECT_EQ(szi::policyDigest(a), szi::policyDigest(autoPolicy()));
  EXPECT_NE(szi::policyDigest(a), szi::policyDigest(b));
  EXPECT_NE(szi::policyDigest(a), szi::policyDigest(c));
}

TEST(InterposeRoute, PolicyFromEnvironment) {
  const char* saved = getenv("SZ_CODEC");
  std::string keep = saved ? saved : "";
  setenv("SZ_CODEC", "ON", 1);
  EXPECT_EQ(szi::readPolicy().codec, SZ_CODEC_ON);
  EXPECT_EQ(szi::readPolicy().minBytes, 1u);
  setenv("SZ_CODEC", "off", 1);
  EXPECT_FALSE(szi::interposing(szi::readPolicy()));
  setenv("SZ_CODEC", "maybe", 1);
  EXPECT_FALSE(szi::readPolicy().valid);
  EXPECT_FALSE(szi::interposing(szi::readPolicy()));
  unsetenv("SZ_CODEC");
  EXPECT_EQ(szi::readPolicy().codec, SZ_CODEC_AUTO);
  EXPECT_TRUE(szi::interposing(szi::readPolicy())) << "SZ_INTERPOSE defaults to 1";
  if (saved) setenv("SZ_CODEC", keep.c_str(), 1);
}

TEST(InterposeRoute, ResultsMapToNccl) {
  EXPECT_EQ(szi::toNcclResult(szSuccess), 0);
  EXPECT_EQ(szi::toNcclResult(szUnhandledCudaError), 1);
  EXPECT_EQ(szi::toNcclResult(szSystemError), 2);
  EXPECT_EQ(szi::toNcclResult(szInternalError), 3);
  EXPECT_EQ(szi::toNcclResult(szInvalidArgument), 4);
  EXPECT_EQ(szi::toNcclResult(szInvalidUsage), 5);
  EXPECT_EQ(szi::toNcclResult(szRemoteError), 6);
  EXPECT_EQ(szi::toNcclResult(szInProgress), 7);
  EXPECT_EQ(szi::toNcclResult(szCorruptFrame), 2) << "NCCL has no code for it";
  EXPECT_EQ(szi::toNcclResult(szTimeout), 2);
}

}  // namespace
