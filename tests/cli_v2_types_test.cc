// The `splitzip` tool on format version 2's types: the shipped FP16 and FP8 E4M3 KV samples
// (tests/data), read from safetensors and .npy, compressed with the width calibration picks,
// decompressed bit for bit; `stats` reports both widths' predicted ratios (paper Table 1).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_fixture.h"
#include "kv_samples.h"

namespace {

using clitest::Cli;
using clitest::quote;
using clitest::npyFile;
using clitest::writeBytes;
using nlohmann::json;

class CliV2 : public Cli {};

TEST_F(CliV2, ShippedSamplesRoundTripWithTheirWidth) {
  const struct { const char* file; const char* dtype; double floor; } samples[] = {
      {"tinystories_kv_eval_fp16.safetensors", "fp16", 1.09},
      {"tinystories_kv_eval_e4m3.safetensors", "fp8e4m3", 1.06}};
  for (const auto& s : samples) {
    SCOPED_TRACE(s.file);
    const std::string in = sztest::kvSamplePath(s.file);
    const auto data = sztest::readKvSample(s.file);
    ASSERT_FALSE(data.empty());
    expectRoundTrip(in, s.dtype, data);  // --codebook auto: calibrated on the input
    expectRoundTrip(in, std::string(s.dtype), data, "--codebook default --crc");
    clitest::CliRun r = run(std::string("stats --json --dtype ") + s.dtype + " " + quote(in));
    expectOk(r, "stats");
    const json f = json::parse(r.out)["files"][0];
    const double r3 = f["predicted_ratio_3bit"], r4 = f["predicted_ratio_4bit"];
    EXPECT_GT(r3, r4) << "top-8 coverage near 98 %: 3-bit codes predict the better ratio";
    EXPECT_GE(r3, s.floor);
    EXPECT_EQ(f["oracle_code_bits"], 3);
    EXPECT_EQ(f["codebook"]["exponents"].size(), 8u) << "a 3-bit codebook lists 8 exponents";
    EXPECT_DOUBLE_EQ(f["predicted_ratio"].get<double>(), r3) << "compress's codebook is the calibrated one";
  }
}

TEST_F(CliV2, NpyFp16AndE4m3) {
  const auto fp16 = sztest::readKvSample("tinystories_kv_eval_fp16.safetensors");
  const auto e4m3 = sztest::readKvSample("tinystories_kv_eval_e4m3.safetensors");
  ASSERT_FALSE(fp16.empty());
  ASSERT_FALSE(e4m3.empty());
  std::vector<uint8_t> h(fp16.begin(), fp16.begin() + 20000), e(e4m3.begin(), e4m3.begin() + 10000);
  writeBytes(path("h.npy"), npyFile("<f2", "(10000,)", h));
  expectRoundTrip(path("h.npy"), "fp16", h);
  writeBytes(path("e.npy"), npyFile("float8_e4m3fn", "(100, 100)", e));
  expectRoundTrip(path("e.npy"), "fp8e4m3", e);
  writeBytes(path("bad.npy"), npyFile("float8_e4m3fn", "(100, 100)", e));
  expectError("compress --dtype fp8e5m2 " + quote(path("bad.npy")) + " " + quote(path("x.sz")), "float8_e4m3fn");
}

}  // namespace
