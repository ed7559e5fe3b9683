// The `splitzip` command-line tool, run as a program on temporary files: bit-exact round trips
// of raw, .npy and .safetensors inputs, `stats --json` values checked against numbers worked
// out by hand, calibration, and one-line errors (exit status 1, never a crash) for missing,
// corrupted, truncated and hostile files. The binary is $SPLITZIP_CLI, or ../bin/splitzip next
// to this test binary's folder (build/tests -> build/bin).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli_fixture.h"
#include "splitzip.h"

using nlohmann::json;
using namespace clitest;

namespace {

// Elements of `dtype` with exponents from the default codebook and `escapes` rare ones.
std::vector<uint8_t> kvLike(szDataType_t type, size_t count, size_t escapes, uint32_t seed) {
  szCodebook_t cb;
  EXPECT_EQ(szCodebookDefault(type, &cb), szSuccess);
  std::mt19937 rng(seed);
  const size_t eb = szTypeSize(type);
  std::vector<uint8_t> v(count * eb);
  for (size_t i = 0; i < count; ++i) {
    uint32_t r = rng(), e = i < escapes ? (type == szFloat8e5m2 ? 31 : 200) : cb.exponents[r % 16], w;
    if (type == szBfloat16) w = (r >> 16 & 0x807F) | e << 7;
    else if (type == szFloat32) w = (r & 0x807FFFFF) | e << 23;
    else w = (r >> 8 & 0x83) | e << 2;
    memcpy(&v[i * eb], &w, eb);
  }
  return v;
}

std::vector<uint8_t> safetensorsFile(const json& header, const std::vector<uint8_t>& data) {
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');
  std::string f;
  for (int i = 0; i < 8; ++i) f += char(uint64_t(h.size()) >> (8 * i));
  f += h;
  f.append(data.begin(), data.end());
  return std::vector<uint8_t>(f.begin(), f.end());
}

std::vector<uint8_t> concat(std::vector<uint8_t> a, const std::vector<uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_F(Cli, RoundTripRawFilesEveryType) {
  const struct {
    szDataType_t type;
    const char* name;
  } types[] = {{szBfloat16, "bf16"}, {szFloat32, "fp32"}, {szFloat8e5m2, "fp8e5m2"}};
  for (const auto& t : types) {
    for (size_t count : {size_t(0), size_t(1), size_t(5001), size_t(300007)}) {
      auto data = kvLike(t.type, count, count / 500, 7);
      writeBytes(path("in.raw"), data);
      expectRoundTrip(path("in.raw"), t.name, data);
      expectRoundTrip(path("in.raw"), t.name, data, "--crc");
    }
  }
  // Random bits: stored raw, still bit-exact.
  std::vector<uint8_t> noise(100000);
  std::mt19937 rng(3);
  for (auto& b : noise) b = uint8_t(rng());
  writeBytes(path("noise.raw"), noise);
  expectRoundTrip(path("noise.raw"), "bf16", noise);
  CliRun r = run("compress --dtype bf16 " + quote(path("noise.raw")) + " " + quote(path("n.sz")));
  EXPECT_NE(r.out.find("stored raw"), std::string::npos) << r.out;
  EXPECT_EQ(readBytes(path("n.sz")).size(), noise.size() + SZ_FRAME_HEADER_BYTES);
}

// More codec threads than the address-space limit lets the process create: the ranges no
// thread could be made for run on the calling thread, and the output is the same.
TEST_F(Cli, ThreadsBeyondTheLimitsStillCompress) {
  auto data = kvLike(szBfloat16, 4000037, 600, 9);  // ~1000 ranges
  writeBytes(path("in.raw"), data);
  expectOk(run("compress --dtype bf16 " + quote(path("in.raw")) + " " + quote(path("one.sz"))), "one thread");
  std::string cmd = "ulimit -v 3000000; SZ_CPU_THREADS=1000 SZ_CPU_PARALLEL_BYTES=0 " + quote(cli_) +
                    " compress --dtype bf16 " + quote(path("in.raw")) + " " + quote(path("many.sz")) + " >/dev/null";
  int rc = std::system(("sh -c " + quote(cmd)).c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << "status " << rc;
  EXPECT_EQ(readBytes(path("many.sz")), readBytes(path("one.sz")));
}

// bench's memcpy row with more threads than the address-space limit lets its child create: the
// ranges no thread could be made for are copied on the calling thread (was: std::terminate).
TEST_F(Cli, BenchThreadsBeyondTheLimits) {
  writeBytes(path("b.bf16"), kvLike(szBfloat16, 2000000, 100, 11));
  std::string cmd = "ulimit -v 3000000; " + quote(cli_) + " bench --json --iters 1 --threads 1000 --dtype bf16 " +
                    quote(path("b.bf16")) + " >" + quote(path("b.json")) + " 2>" + quote(path("b.err"));
  int rc = std::system(("sh -c " + quote(cmd)).c_str());
  std::vector<uint8_t> out = readBytes(path("b.json"));
  std::vector<uint8_t> err = readBytes(path("b.err"));
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << "status " << rc << ": " << std::string(err.begin(), err.end());
  json j = json::parse(std::string(out.begin(), out.end()));
  ASSERT_EQ(j["modes"].size(), 2u);
  EXPECT_EQ(j["modes"][1]["threads"], 1000);
  EXPECT_GT(j["modes"][1]["memcpy_gbps"].get<double>(), 0.0);
}

TEST_F(Cli, RoundTripNpy) {
  auto bf16 = kvLike(szBfloat16, 3000, 6, 1);
  for (const char* descr : {"<u2", "<i2", "<V2", "bfloat16"}) {
    writeBytes(path("a.npy"), npyFile(descr, "(3, 1000)", bf16));
    expectRoundTrip(path("a.npy"), "bf16", bf16);
  }
  writeBytes(path("v2.npy"), npyFile("<u2", "(3000,)", bf16, 2));
  expectRoundTrip(path("v2.npy"), "bf16", bf16);
  auto f32 = kvLike(szFloat32, 2000, 3, 2);
  writeBytes(path("f.npy"), npyFile("<f4", "(2, 10, 100)", f32));
  expectRoundTrip(path("f.npy"), "fp32", f32);
  auto f8 = kvLike(szFloat8e5m2, 4096, 4, 3);
  writeBytes(path("e.npy"), npyFile("|u1", "(4096,)", f8));
  expectRoundTrip(path("e.npy"), "fp8e5m2", f8);
  writeBytes(path("scalar.npy"), npyFile("<u2", "()", {1, 2}));  // a 0-d array: one element
  expectRoundTrip(path("scalar.npy"), "bf16", {1, 2});
}

TEST_F(Cli, RoundTripSafetensorsTakesTheTypeInOffsetOrder) {
  auto a = kvLike(szBfloat16, 1000, 2, 4), b = kvLike(szBfloat16, 600, 1, 5);
  auto f = kvLike(szFloat32, 250, 0, 6);
  // Data section: a (BF16), f (F32), b (BF16); names listed out of offset order.
  json header = {{"__metadata__", {{"format", "pt"}}},
                 {"z.b", {{"dtype", "BF16"}, {"shape", {20, 30}}, {"data_offsets", {3000, 4200}}}},
                 {"m.f", {{"dtype", "F32"}, {"shape", {250}}, {"data_offsets", {2000, 3000}}}},
                 {"a.a", {{"dtype", "BF16"}, {"shape", {10, 10, 10}}, {"data_offsets", {0, 2000}}}}};
  writeBytes(path("kv.safetensors"), safetensorsFile(header, concat(concat(a, f), b)));
  expectRoundTrip(path("kv.safetensors"), "bf16", concat(a, b));
  expectRoundTrip(path("kv.safetensors"), "fp32", f);
  expectError("compress --dtype fp8e5m2 " + quote(path("kv.safetensors")) + " " + quote(path("x.sz")),
              "no F8_E5M2 tensors");
}

TEST_F(Cli, StatsJsonMatchesHandComputedValues) {
  // 10000 BF16 elements: exponent 127 x4000, 126 x3000, 125 x2000, 124 x990, 200 x10.
  std::vector<uint16_t> v;
  for (auto [e, n] : {std::pair<int, int>{127, 4000}, {126, 3000}, {125, 2000}, {124, 990}, {200, 10}})
    for (int i = 0; i < n; ++i) v.push_back(uint16_t((i & 0x807F) | (e << 7)));
  writeBytes(path("h.bf16"), v.data(), 2 * v.size());
  CliRun r = run("stats --json --codebook default --dtype bf16 " + quote(path("h.bf16")) + " " + quote(path("h.bf16")));
  expectOk(r, "stats");
  json j = json::parse(r.out);
  EXPECT_EQ(j["dtype"], "bf16");
  EXPECT_EQ(j["codebook_source"], "built-in default");
  ASSERT_EQ(j["files"].size(), 2u);
  const json& s = j["files"][0];
  EXPECT_EQ(s["elements"], 10000);
  EXPECT_EQ(s["raw_bytes"], 20000);
  ASSERT_EQ(s["histogram"].size(), 256u);
  EXPECT_EQ(s["histogram"][127], 4000);
  EXPECT_EQ(s["histogram"][200], 10);
  EXPECT_EQ(s["distinct_exponents"], 5);
  double h = 0;
  for (double p : {0.4, 0.3, 0.2, 0.099, 0.001}) h -= p * std::log2(p);
  EXPECT_NEAR(s["entropy_bits"].get<double>(), h, 1e-12);
  EXPECT_DOUBLE_EQ(s["top8_coverage"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(s["top16_coverage"].get<double>(), 1.0);
  EXPECT_EQ(s["escapes"], 10);  // 200 is not in the default codebook (116..130 and 0)
  EXPECT_EQ(s["codebook"]["exponents"][15], 0);
  EXPECT_DOUBLE_EQ(s["escape_rate"].get<double>(), 0.001);
  EXPECT_EQ(s["oracle_escapes"], 0);
  EXPECT_EQ(s["oracle_codebook"][4], 200);
  // 96 + align16(10000 sign-mantissa) + align16(5000 codes) + align16(8 + 2 * 10 index) + 3 * 10.
  const int frame = 96 + 10000 + 5008 + 32 + 30;
  EXPECT_EQ(s["predicted_frame_bytes"], frame);
  EXPECT_EQ(s["encoded_frame_bytes"], frame);
  EXPECT_DOUBLE_EQ(s["predicted_ratio"].get<double>(), 20000.0 / frame);
  EXPECT_DOUBLE_EQ(s["oracle_predicted_ratio"].get<double>(), 20000.0 / (frame - 30));
  EXPECT_EQ(j["total"]["elements"], 20000);
  EXPECT_EQ(j["total"]["escapes"], 20);
  // The compressed file is exactly the predicted size.
  r = run("compress --dtype bf16 --codebook default " + quote(path("h.bf16")) + " " + quote(path("h.sz")));
  expectOk(r, "compress");
  EXPECT_EQ(readBytes(path("h.sz")).size(), size_t(frame));
  EXPECT_NE(r.out.find("codebook built-in default"), std::string::npos) << r.out;
  // Text mode names the same numbers.
  r = run("stats --codebook default --dtype bf16 " + quote(path("h.bf16")));
  expectOk(r, "stats text");
  EXPECT_NE(r.out.find("codebook: built-in default"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("10 escapes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5 distinct exponents"), std::string::npos) << r.out;
}

TEST_F(Cli, CompressAndStatsCalibrateOnTheInputByDefault) {
  // Exponents 60..75 and 200, none but 0 in the default codebook: the default escapes nearly
  // everything (stored raw), the input's own top-16 escapes only exponent 200's 10 elements.
  std::vector<uint16_t> v;
  for (int i = 0; i < 20000; ++i) v.push_back(uint16_t((i & 0x807F) | ((i < 10 ? 200 : 60 + i % 16) << 7)));
  writeBytes(path("far.bf16"), v.data(), 2 * v.size());
  CliRun r = run("stats --json --dtype bf16 " + quote(path("far.bf16")));
  expectOk(r, "stats");
  json j = json::parse(r.out);
  EXPECT_EQ(j["codebook_source"], "calibrated on the input");
  const json& s = j["files"][0];
  EXPECT_EQ(s["codebook"]["used"], 16);
  EXPECT_EQ(s["codebook"]["exponents"], s["oracle_codebook"]);
  EXPECT_EQ(s["escapes"], 10);
  EXPECT_EQ(s["escapes"], s["oracle_escapes"]);
  // 96 + 20000 sign-mantissa + 10000 codes + align16(8 + 2 * 20 index) + 3 * 10 escapes.
  const size_t frame = 96 + 20000 + 10000 + 48 + 30;
  EXPECT_EQ(s["predicted_frame_bytes"], frame);
  r = run("compress --dtype bf16 " + quote(path("far.bf16")) + " " + quote(path("far.sz")));
  expectOk(r, "compress");
  EXPECT_EQ(readBytes(path("far.sz")).size(), frame);
  EXPECT_NE(r.out.find("codebook calibrated on the input: 70 71 72"), std::string::npos) << r.out;
  r = run("compress --dtype bf16 --codebook default " + quote(path("far.bf16")) + " " + quote(path("def.sz")));
  expectOk(r, "compress --codebook default");
  EXPECT_NE(r.out.find("stored raw"), std::string::npos) << r.out;
  EXPECT_EQ(readBytes(path("def.sz")).size(), 96 + 2 * v.size());
  expectRoundTrip(path("far.bf16"), "bf16", readBytes(path("far.bf16")));
  r = run("stats --dtype bf16 " + quote(path("far.bf16")));
  expectOk(r, "stats text");
  EXPECT_NE(r.out.find("codebook: calibrated on the input"), std::string::npos) << r.out;
}

TEST_F(Cli, CalibrateThenCompressWithTheCodebook) {
  std::vector<uint8_t> v;
  for (int i = 0; i < 20000; ++i) v.push_back(uint8_t((i & 0x83) | ((i % 7 == 0 ? 30 : 1 + i % 3) << 2)));
  writeBytes(path("e.fp8"), v);
  CliRun r = run("calibrate --dtype fp8e5m2 -o " + quote(path("e.codebook")) + " " + quote(path("e.fp8")));
  expectOk(r, "calibrate");
  szCodebook_t cb;
  ASSERT_EQ(szCodebookLoad(path("e.codebook").c_str(), &cb), szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(cb.type, szFloat8e5m2);
  EXPECT_EQ(cb.used, 4);
  EXPECT_EQ(cb.exponents[3], 30) << "the rarest seen exponent comes last";
  r = run("stats --json --dtype fp8e5m2 --codebook " + quote(path("e.codebook")) + " " + quote(path("e.fp8")));
  expectOk(r, "stats --codebook");
  EXPECT_EQ(json::parse(r.out)["files"][0]["escapes"], 0);
  expectRoundTrip(path("e.fp8"), "fp8e5m2", v, "--codebook " + quote(path("e.codebook")));
  expectError("compress --dtype bf16 --codebook " + quote(path("e.codebook")) + " " + quote(path("e.fp8")) +
                  " " + quote(path("x.sz")),
              "is for fp8e5m2");
}

// Frames on disk carry CRC32C by default: a flipped bit is refused without --crc; --no-crc leaves
// the checksums out, and decompress then says the frame is unchecked.
TEST_F(Cli, FramesAreCheckedByDefault) {
  auto data = kvLike(szBfloat16, 50000, 40, 8);
  writeBytes(path("in.raw"), data);
  expectOk(run("compress --dtype bf16 " + quote(path("in.raw")) + " " + quote(path("d.sz"))), "compress");
  auto flipped = readBytes(path("d.sz"));
  flipped[flipped.size() / 2] ^= 0x10;
  writeBytes(path("dflip.sz"), flipped);
  expectError("decompress " + quote(path("dflip.sz")) + " " + quote(path("out.raw")), "CRC32C");
  expectOk(run("compress --no-crc --dtype bf16 " + quote(path("in.raw")) + " " + quote(path("n.sz"))), "compress");
  const auto r = run("decompress " + quote(path("n.sz")) + " " + quote(path("n.raw")));
  expectOk(r, "decompress");
  EXPECT_NE(r.out.find("unchecked"), std::string::npos) << r.out;
  EXPECT_EQ(readBytes(path("n.raw")), data);
}

TEST_F(Cli, CorruptedOrTruncatedFramesFailWithOneLine) {
  auto data = kvLike(szBfloat16, 50000, 40, 8);
  writeBytes(path("in.raw"), data);
  expectOk(run("compress --crc --dtype bf16 " + quote(path("in.raw")) + " " + quote(path("c.sz"))), "compress");
  const auto frame = readBytes(path("c.sz"));
  ASSERT_GT(frame.size(), size_t(SZ_FRAME_HEADER_BYTES));
  auto flipped = frame;
  flipped[frame.size() / 2] ^= 0x10;
  writeBytes(path("flip.sz"), flipped);
  expectError("decompress " + quote(path("flip.sz")) + " " + quote(path("out.raw")), "CRC32C");
  EXPECT_FALSE(fs::exists(path("out.raw"))) << "no output file from a corrupt frame";
  for (size_t len : {size_t(0), size_t(50), size_t(96), frame.size() / 2, frame.size() - 1}) {
    writeBytes(path("trunc.sz"), frame.data(), len);
    expectError("decompress " + quote(path("trunc.sz")) + " " + quote(path("out.raw")), "trunc.sz");
  }
  writeBytes(path("long.sz"), concat(frame, {1, 2, 3}));
  expectError("decompress " + quote(path("long.sz")) + " " + quote(path("out.raw")), "after the end of the frame");
  expectError("decompress " + quote(path("in.raw")) + " " + quote(path("out.raw")), "magic");
  EXPECT_FALSE(fs::exists(path("out.raw")));
}

TEST_F(Cli, MissingFilesAndUsageErrors) {
  const std::string missing = quote(path("missing.bf16"));
  expectError("compress --dtype bf16 " + missing + " " + quote(path("x.sz")), "No such file");
  expectError("decompress " + missing + " " + quote(path("x.raw")), "No such file");
  expectError("stats --dtype bf16 " + missing, "No such file");
  expectError("calibrate --dtype bf16 -o " + quote(path("x.cb")) + " " + missing, "No such file");
  expectError("bench --dtype bf16 " + missing, "No such file");
  expectError("stats --dtype bf16 " + quote(dir_), "not a regular file");
  expectError("decompress " + quote(dir_) + " " + quote(path("x.raw")), "not a regular file");
  expectError("decompress /dev/zero " + quote(path("x.raw")), "not a regular file");  // never read to the end
  writeBytes(path("empty.sz"), std::vector<uint8_t>());
  expectError("decompress " + quote(path("empty.sz")) + " " + quote(path("x.raw")), "empty file");
  expectError("calibrate --dtype bf16 -o " + quote(path("x.cb")) + " " + quote(path("empty.sz")), "no elements");
  writeBytes(path("odd.bf16"), std::vector<uint8_t>(7, 0));
  expectError("compress --dtype bf16 " + quote(path("odd.bf16")) + " " + quote(path("x.sz")), "whole number");
  writeBytes(path("ok.bf16"), std::vector<uint8_t>(8, 0));
  expectError("compress --dtype bf16 " + quote(path("ok.bf16")) + " " + quote(path("no/dir/x.sz")), "cannot create");
  expectError("stats --dtype bf16 --codebook " + missing + " " + quote(path("ok.bf16")), "codebook");
  // Usage errors: non-zero, one line, no crash.
  for (const char* args : {"", "frobnicate", "stats", "stats --dtype fp16 x", "compress --dtype bf16 onlyone",
                           "bench --dtype bf16 --iters 0 x"}) {
    CliRun r = run(args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_LT(r.status, 128) << args;
    EXPECT_EQ(r.err.rfind("splitzip: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
  // bench's bounds, on a file that exists (so only the bound can refuse it).
  for (const auto& [args, bound] : {std::pair<std::string, std::string>{"--iters 0", "1 to 100000"},
                                    {"--threads 100000", "0 to 1024"}, {"--threads -1", "0 to 1024"}}) {
    CliRun r = run("bench --dtype bf16 " + args + " " + quote(path("ok.bf16")));
    EXPECT_NE(r.status, 0) << args;
    EXPECT_LT(r.status, 128) << args;
    EXPECT_NE(r.err.find(bound), std::string::npos) << args << ": " << r.err;
  }
  CliRun help = run("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("decompress"), std::string::npos);
}

TEST_F(Cli, HostileSafetensorsRejected) {
  auto data = kvLike(szBfloat16, 100, 0, 9);
  auto tensor = [](uint64_t b, uint64_t e, json shape = {100}) {
    return json{{"dtype", "BF16"}, {"shape", shape}, {"data_offsets", {b, e}}};
  };
  auto lenPrefixed = [](uint64_t len, const std::string& rest) {
    std::vector<uint8_t> f(8);
    for (int i = 0; i < 8; ++i) f[i] = uint8_t(len >> (8 * i));
    f.insert(f.end(), rest.begin(), rest.end());
    return f;
  };
  const struct {
    const char* why;
    std::vector<uint8_t> file;
    const char* mention;
  } cases[] = {
      {"empty", {}, "header length"},
      {"5 bytes", {1, 2, 3, 4, 5}, "header length"},
      {"huge header length", lenPrefixed(uint64_t(1) << 62, "{}"), "limit"},
      {"header length 2^64-1", lenPrefixed(~uint64_t(0), "{}"), "limit"},
      {"just over the limit", lenPrefixed((uint64_t(100) << 20) + 1, "{}"), "limit"},
      {"header past the file", lenPrefixed(1000, "{\"a\": 1}"), "exceeds the file"},
      {"not JSON", lenPrefixed(6, "{nope}"), "not a JSON object"},
      {"JSON array", lenPrefixed(2, "[]"), "not a JSON object"},
      {"tensor not an object", safetensorsFile({{"t", 5}}, data), "not a JSON object"},
      {"no dtype", safetensorsFile({{"t", {{"shape", {100}}, {"data_offsets", {0, 200}}}}}, data), "no dtype"},
      {"offsets past the file", safetensorsFile({{"t", tensor(0, 400)}}, data), "outside"},
      {"offsets far past the file", safetensorsFile({{"t", tensor(uint64_t(1) << 60, (uint64_t(1) << 60) + 200)}}, data), "outside"},
      {"begin after end", safetensorsFile({{"t", tensor(200, 0)}}, data), "outside"},
      {"negative offset", safetensorsFile({{"t", {{"dtype", "BF16"}, {"shape", {100}}, {"data_offsets", {-2, 198}}}}}, data), "non-integer"},
      {"one offset", safetensorsFile({{"t", {{"dtype", "BF16"}, {"shape", {100}}, {"data_offsets", {200}}}}}, data), "outside"},
      {"shape too big", safetensorsFile({{"t", tensor(0, 200, {101})}}, data), "shape"},
      {"shape overflows", safetensorsFile({{"t", tensor(0, 200, {uint64_t(1) << 40, uint64_t(1) << 40})}}, data), "shape"},
      {"overlapping tensors", safetensorsFile({{"a", tensor(0, 200)}, {"b", tensor(100, 200, {50})}}, data), "overlap"},
      {"other dtypes only", safetensorsFile({{"t", {{"dtype", "F16"}, {"shape", {100}}, {"data_offsets", {0, 200}}}}}, data), "no BF16"},
  };
  for (const auto& c : cases) {
    writeBytes(path("h.safetensors"), c.file);
    SCOPED_TRACE(c.why);
    expectError("compress --dtype bf16 " + quote(path("h.safetensors")) + " " + quote(path("x.sz")), c.mention);
    expectError("stats --dtype bf16 " + quote(path("h.safetensors")), c.mention);
  }
}

TEST_F(Cli, HostileNpyRejected) {
  std::vector<uint8_t> data(200, 1);
  auto withLen = [](int major, uint64_t len) {
    std::vector<uint8_t> f = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
    for (int i = 0; i < (major == 1 ? 2 : 4); ++i) f.push_back(uint8_t(len >> (8 * i)));
    return concat(f, {'{'});
  };
  auto dict = [&](const std::string& d) {
    std::vector<uint8_t> f = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(d.size()), uint8_t(d.size() >> 8)};
    f.insert(f.end(), d.begin(), d.end());
    return concat(f, data);
  };
  const struct {
    const char* why;
    std::vector<uint8_t> file;
    const char* mention;
  } cases[] = {
      {"bad magic", {'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0, 0, 0}, "magic"},
      {"4 bytes", {0x93, 'N', 'U', 'M'}, "magic"},
      {"version 9", withLen(9, 10), "version 9"},
      {"header past the file", withLen(1, 500), "truncated"},
      {"v2 header length 2^32-1", withLen(2, 0xFFFFFFFFu), "implausible"},
      {"v2 without its length", {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 5, 0}, "truncated"},
      {"shape larger than the data", npyFile("<u2", "(101,)", data), "shape"},
      {"shape smaller than the data", npyFile("<u2", "(99,)", data), "shape"},
      {"shape overflows", npyFile("<u2", "(4294967296, 4294967296)", data), "overflows"},
      {"huge dimension", npyFile("<u2", "(99999999999999999999999,)", data), "overflows"},
      {"float64", npyFile("<f8", "(25,)", data), "'<f8'"},
      {"float16 is not bfloat16", npyFile("<f2", "(100,)", data), "'<f2'"},
      {"big-endian", npyFile(">u2", "(100,)", data), "'>u2'"},
      {"Fortran order", npyFile("<u2", "(10, 10)", data, 1, "True"), "Fortran"},
      {"structured dtype", dict("{'descr': [('a', '<u2')], 'fortran_order': False, 'shape': (100,), }"), "structured"},
      {"unknown key", dict("{'descr': '<u2', 'fortran_order': False, 'shape': (100,), 'x': 1}"), "unknown key"},
      {"missing shape", dict("{'descr': '<u2', 'fortran_order': False}"), "needs"},
      {"negative dimension", dict("{'descr': '<u2', 'fortran_order': False, 'shape': (-100,)}"), "shape"},
      {"unterminated", dict("{'descr': '<u2"), "unterminated"},
      {"not a dict", dict("hello"), "expected '{'"},
  };
  for (const auto& c : cases) {
    writeBytes(path("h.npy"), c.file);
    SCOPED_TRACE(c.why);
    expectError("compress --dtype bf16 " + quote(path("h.npy")) + " " + quote(path("x.sz")), c.mention);
  }
}

TEST_F(Cli, BenchJsonReportsThroughputAndRatio) {
  auto data = kvLike(szBfloat16, 200000, 100, 10);
  writeBytes(path("b.bf16"), data);
  CliRun r = run("bench --json --iters 3 --threads 2 --dtype bf16 " + quote(path("b.bf16")));
  expectOk(r, "bench");
  json j = json::parse(r.out);
  EXPECT_EQ(j["elements"], 200000);
  EXPECT_EQ(j["raw_bytes"], 400000);
  expectOk(run("compress --dtype bf16 " + quote(path("b.bf16")) + " " + quote(path("b.sz"))), "compress");
  const size_t frame = readBytes(path("b.sz")).size();
  EXPECT_EQ(j["frame_bytes"], frame);
  EXPECT_DOUBLE_EQ(j["ratio"].get<double>(), 400000.0 / double(frame));
  ASSERT_EQ(j["modes"].size(), 2u);
  EXPECT_EQ(j["modes"][0]["mode"], "single-core");
  EXPECT_EQ(j["modes"][0]["threads"], 1);
  EXPECT_EQ(j["modes"][1]["threads"], 2);
  for (const auto& m : j["modes"])
    for (const char* k : {"encode_gbps", "decode_gbps", "memcpy_gbps"}) {
      EXPECT_GT(m[k].get<double>(), 0.01) << k;
      EXPECT_LT(m[k].get<double>(), 10000.0) << k;
    }
}

// Issue 14, item 12: --version, an unknown subcommand named, --dtype in any case, ml_dtypes'
// float8 .npy ('<f1'), the accepted .npy forms listed, and no ratio for an empty input.
TEST_F(Cli, VersionSubcommandsDtypeCaseAndEmptyInput) {
  CliRun v = run("--version");
  EXPECT_EQ(v.status, 0) << v.err;
  EXPECT_EQ(v.out.rfind("splitzip " + std::to_string(SZ_MAJOR) + "." + std::to_string(SZ_MINOR) + ".", 0), 0u) << v.out;
  CliRun unknown = run("frobnicate");
  EXPECT_NE(unknown.err.find("unknown subcommand 'frobnicate'"), std::string::npos) << unknown.err;
  std::vector<uint8_t> bf16(2000);
  for (size_t i = 0; i < bf16.size(); ++i) bf16[i] = uint8_t(i % 2 ? 0x3F : i);
  writeBytes(path("x.bf16"), bf16);
  CliRun upper = run("compress --dtype BF16 " + quote(path("x.bf16")) + " " + quote(path("x.sz")));
  EXPECT_EQ(upper.status, 0) << upper.err;
  std::vector<uint8_t> f8(4096, 0x3C);
  writeBytes(path("f8.npy"), npyFile("<f1", "(4096,)", f8));
  expectRoundTrip(path("f8.npy"), "fp8e5m2", f8);
  writeBytes(path("half.npy"), npyFile("<f2", "(1000,)", bf16));
  expectError("stats --dtype bf16 " + quote(path("half.npy")), "accepted: '<u2'");
  writeBytes(path("empty.bf16"), std::vector<uint8_t>());
  CliRun st = run("stats --dtype bf16 " + quote(path("empty.bf16")));
  EXPECT_EQ(st.status, 0) << st.err;
  EXPECT_EQ(st.out.find("ratio 0.0000"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("no elements"), std::string::npos) << st.out;
  CliRun c = run("compress --dtype bf16 " + quote(path("empty.bf16")) + " " + quote(path("e.sz")));
  EXPECT_NE(c.out.find("ratio n/a"), std::string::npos) << c.out;
}

}  // namespace
