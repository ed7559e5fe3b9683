// The codebook file of docs/FORMAT.md §Codebook file: szCodebookSave / szCodebookLoad round
// trips for every compressible type, and malformed files rejected with szInvalidArgument.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "splitzip.h"

namespace {

class CodebookFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sz_codebook_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  // Loads `text` as a codebook file; on failure `cb` keeps its sentinel contents.
  szResult_t load(const std::string& text, szCodebook_t* cb) {
    memset(cb, 0x5A, sizeof(*cb));
    return szCodebookLoad(write("cb", text).c_str(), cb);
  }

  std::string dir_;
};

TEST_F(CodebookFile, SaveLoadRoundTripEveryType) {
  szHistogram_t h;
  ASSERT_EQ(szHistogramInit(&h, szFloat32), szSuccess);
  for (int e = 100; e < 105; ++e) h.counts[e] = 1000 - e;  // 5 seen exponents: used = 5
  szCodebook_t fromHist;
  ASSERT_EQ(szCodebookFromHistogram(&h, &fromHist), szSuccess);
  ASSERT_EQ(fromHist.used, 5);
  szCodebook_t bf16, fp8;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &bf16), szSuccess);
  ASSERT_EQ(szCodebookDefault(szFloat8e5m2, &fp8), szSuccess);
  for (const szCodebook_t& cb : {bf16, fp8, fromHist}) {
    const std::string path = dir_ + "/rt.codebook";
    ASSERT_EQ(szCodebookSave(&cb, path.c_str()), szSuccess) << szGetLastError(nullptr);
    szCodebook_t back;
    memset(&back, 0, sizeof(back));
    ASSERT_EQ(szCodebookLoad(path.c_str(), &back), szSuccess) << szGetLastError(nullptr);
    EXPECT_EQ(back.type, cb.type);
    EXPECT_EQ(back.used, cb.used);
    EXPECT_EQ(memcmp(back.exponents, cb.exponents, SZ_CODEBOOK_SIZE), 0);
  }
  // The saved text is the documented format.
  ASSERT_EQ(szCodebookSave(&fromHist, (dir_ + "/f.codebook").c_str()), szSuccess);
  std::ifstream f(dir_ + "/f.codebook");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("splitzip-codebook 1\ntype fp32\nused 5\nexponents 100 101 102 103 104 ", 0), 0u)
      << text;
}

TEST_F(CodebookFile, CommentsBlankLinesAndKeyOrderAccepted) {
  szCodebook_t cb;
  ASSERT_EQ(load("# made by hand\n\nsplitzip-codebook 1   # version\n"
                 "exponents 15 14 16 13 17 12 18 11 19 10 20 9 21 8 22 0\n"
                 "used 3\n  type fp8e5m2\n",
                 &cb),
            szSuccess)
      << szGetLastError(nullptr);
  EXPECT_EQ(cb.type, szFloat8e5m2);
  EXPECT_EQ(cb.used, 3);
  EXPECT_EQ(cb.exponents[0], 15);
  EXPECT_EQ(cb.exponents[15], 0);
}

TEST_F(CodebookFile, MalformedFilesRejected) {
  const std::string head = "splitzip-codebook 1\ntype bf16\nused 16\n";
  const std::string narrow = "splitzip-codebook 1\ntype bf16\nused 8\ncode_bits 3\n";  // 3-bit codes: 8 exponents
  const std::string exps = "exponents 120 121 119 122 118 123 117 124 116 125 115 126 114 127 113 128\n";
  const struct {
    const char* why;
    std::string text;
  } cases[] = {
      {"empty file", ""},
      {"only comments", "# nothing\n"},
      {"missing magic", "type bf16\nused 16\n" + exps},
      {"version 2", "splitzip-codebook 2\ntype bf16\nused 16\n" + exps},
      {"magic without version", "splitzip-codebook\ntype bf16\nused 16\n" + exps},
      {"missing type", "splitzip-codebook 1\nused 16\n" + exps},
      {"unknown type", "splitzip-codebook 1\ntype fp16\nused 16\n" + exps},
      {"incompressible type", "splitzip-codebook 1\ntype int8\nused 16\n" + exps},
      {"missing used", "splitzip-codebook 1\ntype bf16\n" + exps},
      {"used 0", "splitzip-codebook 1\ntype bf16\nused 0\n" + exps},
      {"used 17", "splitzip-codebook 1\ntype bf16\nused 17\n" + exps},
      {"used not a number", "splitzip-codebook 1\ntype bf16\nused many\n" + exps},
      {"missing exponents", head},
      {"15 exponents", head + "exponents 120 121 119 122 118 123 117 124 116 125 115 126 114 127 113\n"},
      {"17 exponents", head + "exponents 120 121 119 122 118 123 117 124 116 125 115 126 114 127 113 128 1\n"},
      {"duplicate exponent", head + "exponents 120 120 119 122 118 123 117 124 116 125 115 126 114 127 113 128\n"},
      {"exponent 256", head + "exponents 256 121 119 122 118 123 117 124 116 125 115 126 114 127 113 128\n"},
      {"negative exponent", head + "exponents -1 121 119 122 118 123 117 124 116 125 115 126 114 127 113 128\n"},
      {"non-numeric exponent", head + "exponents x 121 119 122 118 123 117 124 116 125 115 126 114 127 113 128\n"},
      {"16 exponents, then junk", head + "exponents 120 121 119 122 118 123 117 124 116 125 115 126 114 127 113 128 x\n"},
      {"16 exponents, then an int's overflow",
       head + "exponents 120 121 119 122 118 123 117 124 116 125 115 126 114 127 113 128 99999999999\n"},
      {"8 exponents at 3 bits, then an int's overflow",
       narrow + "exponents 120 121 119 122 118 123 117 124 99999999999\n"},
      {"an exponent with junk", head + "exponents 120x 121 119 122 118 123 117 124 116 125 115 126 114 127 113 128\n"},
      {"E5M2 exponent 32", "splitzip-codebook 1\ntype fp8e5m2\nused 16\n"
                           "exponents 15 14 16 13 17 12 18 11 19 10 20 9 21 8 22 32\n"},
      {"unknown key", head + exps + "extra 1\n"},
      {"trailing token", "splitzip-codebook 1\ntype bf16 fp32\nused 16\n" + exps},
      {"binary junk", std::string("\x00\x01\xff\xfe splitzip", 13)},
      {"exponents twice", head + exps + exps},
      {"a second, invalid type", head + exps + "type nonsense\n"},
      {"type twice", head + "type fp32\n" + exps},
      {"a very long file", head + exps + std::string(2000, '\n')},
  };
  for (const auto& c : cases) {
    szCodebook_t cb;
    EXPECT_EQ(load(c.text, &cb), szInvalidArgument) << c.why;
    EXPECT_STRNE(szGetLastError(nullptr), "") << c.why;
    EXPECT_EQ(cb.used, 0x5A5A5A5A) << c.why << ": the output is left alone on failure";
  }
  // The messages name what is wrong, and quote a binary line's bytes escaped (never raw).
  const std::pair<std::string, std::string> messages[] = {
      {head + "exponents 120 121 119 122 118 123 117 124 116 125 115 126 114 127 113 128 1\n", "more than 16 exponents"},
      {head + "exponents 300 121 119 122 118 123 117 124 116 125 115 126 114 127 113 128\n", "exponent 300 is outside 0-255"},
      {head + "exponents 1.5 121 119 122 118 123 117 124 116 125 115 126 114 127 113 128\n", "exponent '1.5' is not a number"},
      {head + "bogus \x1b[2J\xff\n" + exps, "malformed codebook line 'bogus \\x1B[2J\\xFF'"},
  };
  for (const auto& [text, expected] : messages) {
    szCodebook_t cb;
    EXPECT_EQ(load(text, &cb), szInvalidArgument) << expected;
    EXPECT_NE(std::string(szGetLastError(nullptr)).find(expected), std::string::npos) << szGetLastError(nullptr);
  }
  szCodebook_t ok;
  EXPECT_EQ(load(head + exps, &ok), szSuccess) << "the valid file these cases break";
  EXPECT_EQ(load(narrow + "exponents 120 121 119 122 118 123 117 124  \n", &ok), szSuccess)
      << "the valid 3-bit file the overflow case breaks" << szGetLastError(nullptr);
  EXPECT_EQ(load(std::string(100, '#') + "\n" + std::string(100, '\n') + head + exps, &ok), szSuccess)
      << "a hundred comment lines first";
}

TEST_F(CodebookFile, IoErrorsAndBadArguments) {
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &cb), szSuccess);
  EXPECT_EQ(szCodebookLoad((dir_ + "/missing.codebook").c_str(), &cb), szSystemError);
  EXPECT_EQ(szCodebookSave(&cb, (dir_ + "/no/such/dir/x.codebook").c_str()), szSystemError);
  EXPECT_EQ(szCodebookLoad(nullptr, &cb), szInvalidArgument);
  EXPECT_EQ(szCodebookLoad((dir_ + "/x").c_str(), nullptr), szInvalidArgument);
  EXPECT_EQ(szCodebookSave(&cb, nullptr), szInvalidArgument);
  szCodebook_t bad = cb;
  bad.exponents[1] = bad.exponents[0];
  EXPECT_EQ(szCodebookSave(&bad, (dir_ + "/bad.codebook").c_str()), szInvalidArgument);
  EXPECT_NE(access((dir_ + "/bad.codebook").c_str(), F_OK), 0) << "an invalid codebook is not written";
}

}  // namespace
