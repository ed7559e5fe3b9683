// SZ_* environment parameters (base/param.h): numbers >= 0 with optional binary K/M/G; anything
// else falls back to the default (with a line on stderr).
#include <gtest/gtest.h>

#include <cstdlib>

#include "base/param.h"

namespace {

int64_t load(const char* value) {
  setenv("SZ_TEST_PARAM", value, 1);
  return szLoadParam("SZ_TEST_PARAM", 77);
}

TEST(Param, NumbersAndSizes) {
  EXPECT_EQ(load("4096"), 4096);
  EXPECT_EQ(load("0"), 0);
  EXPECT_EQ(load("0x10"), 16);
  EXPECT_EQ(load("512K"), 512 << 10);
  EXPECT_EQ(load("4m"), 4 << 20);
  EXPECT_EQ(load("2G"), int64_t(2) << 30);
  unsetenv("SZ_TEST_PARAM");
  EXPECT_EQ(szLoadParam("SZ_TEST_PARAM", 77), 77);
}

TEST(Param, InvalidValuesTakeTheDefault) {
  for (const char* bad : {"", "abc", "-3", "1M2", "2x", "M", "99999999999999999999", "9000000000G"})
    EXPECT_EQ(load(bad), 77) << "'" << bad << "'";
}

}  // namespace
